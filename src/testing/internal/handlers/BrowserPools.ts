/**
 * The simulator's browser pools keep `size` browsers: `available_count` idle ones beside the
 * `acquired_count` acquired ones. Acquire takes an available browser (one released with `reuse: true`
 * comes back under its session id) or waits for one (up to the request's `acquire_timeout_seconds`, on
 * the simulator's clock); release gives it back (to the oldest waiting acquire first), or, with
 * `reuse: false`, destroys it and a new browser takes its place at once, as when an acquired browser
 * times out; flush destroys the idle browsers, which new ones replace.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import { endPoolBrowsers, giveBack, renamePoolBrowsers, takeFromPool } from "./Browsers.js"
import type { Context, Handlers, Organization, PoolWaiter } from "./shared.js"
import { endPoolWaiters, error, lastOf, num, obj, ok, unresolvedReference } from "./shared.js"

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
      Effect.onInterrupt(() =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) => Effect.sync(() => given === undefined ? undefined : giveBack(org, pool, given, true, now))
        )
      ),
      Effect.map(() => {
        // a hand-over that raced the end of the wait still counts
        const browser = given === undefined ? undefined : engine.find(store, "/browsers", given, undefined)
        return browser === undefined ? engine.reply(op, undefined, 204) : ok(op, browser.fields)
      })
    )
  })

/** An available browser of `pool` acquired at `now`: its fields. */
const acquireOne = (org: Organization, pool: engine.Resource, now: number): Record<string, unknown> => {
  pool.fields = {
    ...pool.fields,
    available_count: num(pool.fields["available_count"], 0) - 1,
    acquired_count: num(pool.fields["acquired_count"], 0) + 1
  }
  return takeFromPool(org, pool, now)
}

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
    return ok(context.op, acquireOne(context.org, pool, context.call.now))
  },
  releaseBrowser: (context) => {
    const { body, call, op, org, store } = context
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    const sessionId = String(body["session_id"] ?? "")
    const resource = engine.find(store, "/browsers", sessionId, call.project)
    // a deleted browser is not released (nor handed out again): it freed its slot when it was deleted
    if (resource === undefined || resource.deleted) return error(404, "not_found", "browser not found")
    // only a browser this pool handed out goes back to it (a standalone browser is not ended)
    if (obj(resource.fields["pool"])["id"] !== pool.id) {
      return error(400, "bad_request", "the browser was not acquired from this pool")
    }
    giveBack(org, pool, resource.id, body["reuse"] !== false, call.now)
    return ok(op)
  },
  flushBrowserPool: (context) => {
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    // the idle browsers are destroyed, and new ones take their places: the counts stay
    context.org.poolIdle.delete(pool.id)
    return ok(context.op)
  },
  deleteBrowserPool: (context) => {
    const { body, org, stamp } = context
    const pool = poolOf(context)
    // the document: "deletion is blocked if browsers are currently leased. Use force=true to terminate
    // leased browsers" (its only client error besides 404 is the 400)
    const leased = pool === undefined ? 0 : num(pool.fields["acquired_count"], 0)
    if (leased > 0 && body["force"] !== true) {
      return error(
        400,
        "bad_request",
        `the browser pool has ${leased} leased browser${
          leased === 1 ? "" : "s"
        }: delete it with force to terminate them`
      )
    }
    const reply = engine.generic(context.store, context.call, () => "pool")
    if (pool !== undefined && reply._tag !== "Error") {
      // the acquires waiting on it get their 204 now, not at the end of their wait; its browsers go with it
      endPoolWaiters(org, pool.id)
      endPoolBrowsers(org, pool.id, stamp)
    }
    return reply
  },
  createBrowserPool: ({ body, call, op, org, store }) => {
    const unresolved = unresolvedReference(store, body, call.project)
    if (unresolved !== undefined) return unresolved
    // a pool evicted from the bounded store takes its waiting acquires with it (204 now)
    const reply = engine.generic(store, call, () => "pool", (evicted) => {
      endPoolWaiters(org, evicted)
      endPoolBrowsers(org, evicted, engine.isoAt(call.now))
    })
    const created = lastOf(store, "/browser_pools")
    if (created === undefined) return reply
    const size = num(body["size"], 1)
    created.fields = {
      ...created.fields,
      available_count: size,
      acquired_count: 0,
      // the document's defaults where the request gives none
      browser_pool_config: { timeout_seconds: 600, fill_rate_per_minute: 10, ...body }
    }
    return ok(op, created.fields)
  },
  updateBrowserPool: (context) => {
    const { body, call, op, org } = context
    const pool = poolOf(context)
    if (pool === undefined) return poolNotFound
    // what the new configuration names must exist, as for a create (400)
    const unresolved = unresolvedReference(context.store, body, call.project)
    if (unresolved !== undefined) return unresolved
    const config = { ...obj(pool.fields["browser_pool_config"]), ...body }
    const available = Math.max(0, num(config["size"], 1) - num(pool.fields["acquired_count"], 0))
    pool.fields = {
      ...pool.fields,
      ...(typeof body["name"] === "string" ? { name: body["name"] } : {}),
      browser_pool_config: config,
      available_count: available
    }
    if (typeof body["name"] === "string") renamePoolBrowsers(org, pool)
    // a smaller pool destroys idle browsers (the oldest released stay); `discard_all_idle` destroys them all
    const idle = org.poolIdle.get(pool.id) ?? []
    idle.splice(body["discard_all_idle"] === true ? 0 : available)
    if (idle.length === 0) org.poolIdle.delete(pool.id)
    // a larger pool has browsers for the acquires waiting on it
    const waiters = org.poolWaiters.get(pool.id) ?? []
    while (waiters.length > 0 && num(pool.fields["available_count"], 0) > 0) {
      waiters.shift()?.hand(String(acquireOne(org, pool, call.now)["id"]))
    }
    return ok(op, pool.fields)
  }
}
