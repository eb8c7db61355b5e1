/**
 * The simulator's browser pools: create and update keep the counts, acquire takes an available
 * browser, release gives it back (or not, `reuse: false`), flush empties the pool.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import { makeBrowser } from "./Browsers.js"
import type { Context, Handlers } from "./shared.js"
import { error, lastOf, num, obj, ok } from "./shared.js"

const poolOf = ({ call, store }: Context): engine.Resource | undefined =>
  engine.find(store, "/browser_pools", call.segments[1]!, call.project)

const poolNotFound: Reply = error(404, "not_found", "browser pool not found")

export const handlers: Handlers = {
  acquireBrowser: (context) => {
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    const available = num(pool.fields["available_count"], 0)
    // nothing available within the wait: 204
    if (available <= 0) return engine.reply(context.op, undefined, 204)
    pool.fields = {
      ...pool.fields,
      available_count: available - 1,
      acquired_count: num(pool.fields["acquired_count"], 0) + 1
    }
    return makeBrowser(context, pool)
  },
  releaseBrowser: (context) => {
    const { body, call, op, org, store } = context
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    const sessionId = String(body["session_id"] ?? "")
    const resource = engine.find(store, "/browsers", sessionId, call.project)
    if (resource === undefined) return error(404, "not_found", "browser not found")
    store.collections.get("/browsers")?.delete(resource.id)
    org.browsers.delete(resource.id)
    pool.fields = {
      ...pool.fields,
      available_count: num(pool.fields["available_count"], 0) + (body["reuse"] === false ? 0 : 1),
      acquired_count: Math.max(0, num(pool.fields["acquired_count"], 0) - 1)
    }
    return ok(op)
  },
  flushBrowserPool: (context) => {
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    pool.fields = { ...pool.fields, available_count: 0 }
    return ok(context.op)
  },
  createBrowserPool: ({ body, call, op, store }) => {
    const reply = engine.generic(store, call, () => "pool")
    const created = lastOf(store, "/browser_pools")
    if (created === undefined) return reply
    const size = num(body["size"], 1)
    created.fields = {
      ...created.fields,
      available_count: size,
      acquired_count: 0,
      browser_pool_config: { ...body }
    }
    return ok(op, created.fields)
  },
  updateBrowserPool: (context) => {
    const { body, op } = context
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    const config = { ...obj(pool.fields["browser_pool_config"]), ...body }
    pool.fields = {
      ...pool.fields,
      ...(typeof body["name"] === "string" ? { name: body["name"] } : {}),
      browser_pool_config: config,
      available_count: Math.max(0, num(config["size"], 1) - num(pool.fields["acquired_count"], 0))
    }
    return ok(op, pool.fields)
  }
}
