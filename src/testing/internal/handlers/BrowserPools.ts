/**
 * The simulator's browser pools: create and update keep the counts, acquire takes an available
 * browser or waits for one (up to the request's `acquire_timeout_seconds`, on the simulator's
 * clock), release gives it back (to the oldest waiting acquire first; not at all with
 * `reuse: false`), flush empties the pool.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import { makeBrowser } from "./Browsers.js"
import type { Context, Handlers, Organization, PoolWaiter } from "./shared.js"
import { endPoolWaiters, error, giveBack, lastOf, num, obj, ok, unresolvedReference } from "./shared.js"

const poolOf = ({ call, store }: Context): engine.Resource | undefined =>
  engine.find(store, "/browser_pools", call.segments[1]!, call.project)

const poolNotFound: Reply = error(404, "not_found", "browser pool not found")

const waiting = (org: Organization): number => {
  let count = 0
  for (const waiters of org.poolWaiters.values()) count += waiters.length
  return count
}

/** Waits up to `seconds` for a release to hand a browser over; 204 when none comes. */
const waitFor = (context: Context, pool: engine.Resource, seconds: number): Effect.Effect<Reply> =>
  Effect.flatMap(Deferred.make<void>(), (handed) => {
    const { op, org, store } = context
    let given: string | undefined
    const waiter: PoolWaiter = {
      hand: (id) => {
        given = id
        Deferred.unsafeDone(handed, Exit.void)
      },
      end: () => Deferred.unsafeDone(handed, Exit.void)
    }
    const queue = org.poolWaiters.get(pool.id) ?? []
    queue.push(waiter)
    org.poolWaiters.set(pool.id, queue)
    const leave = Effect.sync(() => {
      const at = queue.indexOf(waiter)
      if (at >= 0) queue.splice(at, 1)
      if (queue.length === 0 && org.poolWaiters.get(pool.id) === queue) org.poolWaiters.delete(pool.id)
    })
    return Deferred.await(handed).pipe(
      Effect.timeoutOption(Duration.seconds(seconds)),
      Effect.ensuring(leave),
      // a browser handed to a waiter whose client went away goes back to the pool
      Effect.onInterrupt(() => Effect.sync(() => given === undefined ? undefined : giveBack(org, pool, given, true))),
      Effect.map(() => {
        // a hand-over that raced the end of the wait still counts
        const browser = given === undefined ? undefined : engine.find(store, "/browsers", given, undefined)
        return browser === undefined ? engine.reply(op, undefined, 204) : ok(op, browser.fields)
      })
    )
  })

export const handlers: Handlers = {
  acquireBrowser: (context) => {
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    const available = num(pool.fields["available_count"], 0)
    if (available <= 0) {
      const seconds = num(context.body["acquire_timeout_seconds"], 0)
      // nothing available, and no wait asked (or too many waiting already): 204 at once
      if (seconds <= 0 || waiting(context.org) >= engine.collectionLimit) {
        return engine.reply(context.op, undefined, 204)
      }
      return waitFor(context, pool, seconds)
    }
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
    // only a browser this pool handed out goes back to it (a standalone browser is not ended)
    if (obj(resource.fields["pool"])["id"] !== pool.id) {
      return error(400, "bad_request", "the browser was not acquired from this pool")
    }
    // the release is activity on the browser: handed to a waiter, its idle time starts again
    const browser = org.browsers.get(resource.id)
    if (browser !== undefined) browser.activeAt = call.now
    giveBack(org, pool, resource.id, body["reuse"] !== false)
    return ok(op)
  },
  flushBrowserPool: (context) => {
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    pool.fields = { ...pool.fields, available_count: 0 }
    return ok(context.op)
  },
  deleteBrowserPool: (context) => {
    const pool = poolOf(context)
    const reply = engine.generic(context.store, context.call, () => "pool")
    // the acquires waiting on it get their 204 now, not at the end of their wait
    if (pool !== undefined && reply._tag !== "Error") endPoolWaiters(context.org, pool.id)
    return reply
  },
  createBrowserPool: ({ body, call, op, org, store }) => {
    const unresolved = unresolvedReference(store, body, call.project)
    if (unresolved !== undefined) return unresolved
    // a pool evicted from the bounded store takes its waiting acquires with it (204 now)
    const reply = engine.generic(store, call, () => "pool", (evicted) => endPoolWaiters(org, evicted))
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
