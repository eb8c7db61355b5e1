/**
 * The simulator's browsers: ids and URLs, the status filter of the list, soft delete, viewport
 * updates. A browser acquired from a pool is made here too (`BrowserPools.ts`).
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import type * as live from "../live.js"
import * as values from "../values.js"
import { saveProfile } from "./Profiles.js"
import { restartRecording } from "./Replays.js"
import type { Browser, Context, Handlers, Organization } from "./shared.js"
import {
  browserFields,
  endBrowser,
  error,
  loadedProfile,
  num,
  obj,
  ok,
  onBrowser,
  stopIfLapsed,
  unresolvedReference
} from "./shared.js"

/** Makes a browser, from the call's body or, when acquired, from its pool's configuration. */
export const makeBrowser = (context: Context, pool: engine.Resource | undefined): Reply => {
  const { body, call, op, org, stamp, store } = context
  const unresolved = pool === undefined ? unresolvedReference(store, body, call.project) : undefined
  if (unresolved !== undefined) return unresolved
  // the document: `gpu` "Requires Start-Up or Enterprise plan and headless=false"
  if (pool === undefined && body["gpu"] === true) {
    if (org.plan === "free") return error(403, "forbidden", "your plan does not include GPU acceleration")
    if (body["headless"] === true) return error(400, "bad_request", "gpu requires a headful browser (headless: false)")
  }
  return ok(op, newBrowser(org, call.project, call.now, stamp, pool === undefined ? body : undefined, pool))
}

/**
 * A new browser in the store (new id), from `body` or, acquired, from its pool's configuration: its
 * stored fields.
 */
const newBrowser = (
  org: Organization,
  project: string | undefined,
  now: number,
  stamp: string,
  body: Record<string, unknown> | undefined,
  pool: engine.Resource | undefined
): Record<string, unknown> => {
  // an acquired browser is made as the pool's configuration says (its profile, proxy, extensions,
  // kiosk mode...), as a created one as its body says; the pool's own fields are not the browser's
  const { fill_rate_per_minute: _rate, name: _name, size: _size, ...configured } = obj(
    pool?.fields["browser_pool_config"]
  )
  const source = body ?? configured
  const given = obj(source["viewport"])
  const viewport = { ...given, width: num(given["width"], 1920), height: num(given["height"], 1080) }
  // the document's defaults: 60 s for a browser, 600 s for one acquired from a pool
  const timeout = num(source["timeout_seconds"], pool === undefined ? 60 : 600)
  const fields = browserFields(engine.nextId(org.store, "browser"), {
    ...source,
    ...("profile" in source ? { profile: loadedProfile(org.store, source["profile"], project) } : {}),
    headless: source["headless"] === true,
    stealth: source["stealth"] === true,
    timeout_seconds: timeout,
    viewport,
    created_at: stamp,
    ...(pool === undefined ? {} : { pool: poolRef(pool) })
  })
  placeBrowser(org, project, fields, now)
  return fields
}

/** A browser with these stored fields put in the store, with fresh live state, active from `now`. */
const placeBrowser = (org: Organization, project: string | undefined, fields: Record<string, unknown>, now: number) => {
  const id = String(fields["id"])
  const viewport = obj(fields["viewport"])
  const timeout = num(fields["timeout_seconds"], 60)
  // an acquired browser evicted frees its pool's slot, as its delete would (once this browser is placed:
  // the slot may go at once to a waiting acquire, a new browser)
  const freed: Array<engine.Resource> = []
  engine.put(org.store, "/browsers", { id, project, deleted: false, fields }, (evicted, resource) => {
    const pool = resource.deleted ? undefined : poolOfBrowser(org, resource)
    dropBrowser(org, evicted)
    if (pool !== undefined) freed.push(pool)
  })
  org.browsers.set(id, {
    ...engine.newBrowserState(id, {
      viewport: { width: num(viewport["width"], 1920), height: num(viewport["height"], 1080) },
      telemetry: fields["telemetry"]
    }),
    replays: new Map(),
    activeAt: now,
    idleMs: timeout * 1000
  })
  org.idleCheckAt = Math.min(org.idleCheckAt, now + timeout * 1000)
  for (const pool of freed) freeSlot(org, pool, undefined, now)
}

/** A browser's live state is gone: its streams end, its processes, replays and files are gone. */
const dropBrowser = (org: Organization, id: string): void => {
  const gone = org.browsers.get(id)
  if (gone !== undefined) endBrowser(gone)
  org.browsers.delete(id)
  engine.dropNested(org.store, `/browsers/${id}`)
}

/**
 * A browser `pool` hands out at `now`: the oldest one released with `reuse: true` (the same session
 * id, its live state fresh), or else a new one (a new id).
 */
export const takeFromPool = (org: Organization, pool: engine.Resource, now: number): Record<string, unknown> => {
  const idle = org.poolIdle.get(pool.id)?.shift()
  if (idle === undefined) return newBrowser(org, pool.project, now, engine.isoAt(now), undefined, pool)
  // under the pool's name of now (renamed since the browser was released)
  const reused = { ...idle, pool: poolRef(pool) }
  placeBrowser(org, pool.project, reused, now)
  return reused
}

/** How a browser names the pool it was acquired from: its id, and its name when it has one. */
const poolRef = (pool: engine.Resource): Record<string, unknown> => ({
  id: pool.id,
  ...(pool.fields["name"] === undefined ? {} : { name: pool.fields["name"] })
})

/** The browsers acquired from `pool`, renamed: named by its new name (`GET /browsers?query=` finds them by it). */
export const renamePoolBrowsers = (org: Organization, pool: engine.Resource): void => {
  for (const resource of engine.currentOf(org.store, "/browsers")) {
    if (obj(resource.fields["pool"])["id"] === pool.id) resource.fields = { ...resource.fields, pool: poolRef(pool) }
  }
}

/**
 * An acquired browser back to its pool at `now` (released, or timed out): kept for the next acquire
 * with `reuse`, or else destroyed and replaced at once by a new browser, so that the pool keeps its
 * `size`. The oldest waiting acquire is handed that browser (the counts do not change); with none
 * waiting it is available again.
 */
export const giveBack = (org: Organization, pool: engine.Resource, id: string, reuse: boolean, now: number): void => {
  const fields = org.store.collections.get("/browsers")?.get(id)?.fields
  engine.remove(org.store, "/browsers", id)
  dropBrowser(org, id)
  freeSlot(org, pool, reuse ? fields : undefined, now)
}

/**
 * The slot of an acquired browser of `pool` is free at `now` (released, timed out or deleted): the
 * browser `reused` (its stored fields) waits for the next acquire, or else a new one takes the slot.
 * A pool made smaller than its acquired browsers (`updateBrowserPool`) does not refill the slot: the
 * browser is destroyed, and `available_count` never takes the pool past its `size`.
 */
const freeSlot = (
  org: Organization,
  pool: engine.Resource,
  reused: Record<string, unknown> | undefined,
  now: number
): void => {
  const acquired = Math.max(0, num(pool.fields["acquired_count"], 0) - 1)
  const available = num(pool.fields["available_count"], 0)
  const size = num(obj(pool.fields["browser_pool_config"])["size"], acquired + available + 1)
  const room = size - acquired
  if (room <= 0) {
    pool.fields = { ...pool.fields, acquired_count: acquired, available_count: 0 }
    return
  }
  const idle = org.poolIdle.get(pool.id) ?? []
  // a reused browser waits its turn behind the ones released before it (at most the collection limit of them)
  if (reused !== undefined && idle.length < engine.collectionLimit) {
    idle.push(reused)
    org.poolIdle.set(pool.id, idle)
  }
  const waiter = org.poolWaiters.get(pool.id)?.shift()
  if (waiter !== undefined) return waiter.hand(String(takeFromPool(org, pool, now)["id"]))
  pool.fields = { ...pool.fields, available_count: Math.min(available + 1, room), acquired_count: acquired }
}

/** The pool a browser was acquired from, while the pool exists. */
const poolOfBrowser = (org: Organization, resource: engine.Resource | undefined): engine.Resource | undefined => {
  const poolId = obj(resource?.fields["pool"])["id"]
  return typeof poolId === "string" ? engine.find(org.store, "/browser_pools", poolId, undefined) : undefined
}

/** What `GET /browsers?query=` searches (the document): the session id, profile id, proxy id and pool name. */
const searched = (fields: Record<string, unknown>): ReadonlyArray<string> =>
  [fields["session_id"], obj(fields["profile"])["id"], fields["proxy_id"], obj(fields["pool"])["name"]].filter(
    (field): field is string => typeof field === "string"
  )

/** A browser session ends (deleted, or timed out at `stamp`): kept as deleted, its live state gone, its profile saved. */
const endSession = (org: Organization, resource: engine.Resource, stamp: string): void => {
  engine.markDeleted(org.store, "/browsers", resource)
  resource.fields = { ...resource.fields, deleted_at: stamp }
  const browser = org.browsers.get(resource.id)
  if (browser !== undefined) endBrowser(browser)
  org.browsers.delete(resource.id)
  saveProfile(org.store, resource, stamp, Date.parse(stamp))
}

/**
 * The browsers acquired from the pool `poolId` end at `stamp`, as deletes would (the pool is deleted with
 * `force`, or evicted): kept as deleted, their live state gone. Its idle reused browsers go with the pool
 * (`endPoolWaiters`).
 */
export const endPoolBrowsers = (org: Organization, poolId: string, stamp: string): void => {
  const leased: Array<engine.Resource> = []
  for (const resource of engine.currentOf(org.store, "/browsers")) {
    if (obj(resource.fields["pool"])["id"] === poolId) leased.push(resource)
  }
  for (const resource of leased) endSession(org, resource, stamp)
}

/** A browser idle for its `timeout_seconds` ends then: as a delete, or, acquired from a pool, as a release without reuse. */
const timeOut = (org: Organization, browser: Browser, at: number): void => {
  const resource = org.store.collections.get("/browsers")?.get(browser.id)
  const pool = poolOfBrowser(org, resource)
  if (pool !== undefined) return giveBack(org, pool, browser.id, false, at)
  if (resource === undefined) {
    endBrowser(browser)
    org.browsers.delete(browser.id)
    return
  }
  endSession(org, resource, engine.isoAt(at))
}

/**
 * Before a request is answered at `now`: the browsers idle for their `timeout_seconds` end (looked for only
 * once the earliest of their deadlines has passed, not at every request), then the browser the request
 * addresses (`/browsers/{touched}...`), if still there, is active from now on.
 */
export const expireIdle = (org: Organization, now: number, touched: string | undefined): void => {
  if (now >= org.idleCheckAt) {
    let next = Number.POSITIVE_INFINITY
    // a pool's browser that times out is replaced by a new one, whose deadline lowers this
    org.idleCheckAt = Number.POSITIVE_INFINITY
    for (const browser of [...org.browsers.values()]) {
      const endsAt = browser.activeAt + browser.idleMs
      if (endsAt <= now) timeOut(org, browser, endsAt)
      else next = Math.min(next, endsAt)
    }
    org.idleCheckAt = Math.min(org.idleCheckAt, next)
  }
  const browser = touched === undefined ? undefined : org.browsers.get(touched)
  if (browser !== undefined) browser.activeAt = now
}

/**
 * A browser's idle time-out as the deadline of a stream of it (its stdout, logs, watch events, telemetry):
 * due when the browser has been idle for its `timeout_seconds` (its activity moves it on), when it ends as a
 * delete would and its streams with it, not when a request next comes. None for a browser that never times out.
 */
export const expiry = (org: Organization, browser: Browser): live.Deadline | undefined => {
  const endsAt = (): number | undefined =>
    org.browsers.get(browser.id) === browser && Number.isFinite(browser.idleMs)
      ? browser.activeAt + browser.idleMs
      : undefined
  const at = endsAt()
  return at === undefined ? undefined : { at, run: (now) => expireIdle(org, now, undefined), next: endsAt }
}

/** The active browsers a caller of `project` sees that were created within the invocation `invocation`. */
const browsersOfInvocation = (
  store: engine.Store,
  invocation: string,
  project: string | undefined
): ReadonlyArray<engine.Resource> => {
  const made: Array<engine.Resource> = []
  for (const resource of engine.currentOf(store, "/browsers")) {
    if (resource.fields["invocation_id"] === invocation && engine.visible(resource, project)) made.push(resource)
  }
  return made
}

/** The invocation a request names (`/invocations/{id}/...`), by its id; `undefined` when the caller sees none. */
const invocationOf = ({ call, store }: Context): engine.Resource | undefined => {
  const invocation = engine.find(store, "/invocations", call.segments[1]!, call.project)
  return invocation === undefined || invocation.deleted ? undefined : invocation
}

/**
 * What the browser's `curl` answers: a page of the URL's host (the simulator reaches no network), 200, its
 * headers as lists (the document's multi-value map), its body UTF-8 or base64 as asked.
 */
const curled = (body: Record<string, unknown>): Record<string, unknown> => {
  const url = String(body["url"] ?? "")
  const host = URL.canParse(url) ? new URL(url).host : "the page"
  const page = `<!doctype html><html><head><title>${host}</title></head><body>simulated page of ${
    url
      .replace(/[<>&"]/g, "")
      .slice(0, 512)
  }</body></html>`
  return {
    status: 200,
    headers: { "content-type": ["text/html; charset=utf-8"], "content-length": [String(Buffer.byteLength(page))] },
    // a HEAD's answer has no body (its headers say the page's length)
    body: body["method"] === "HEAD"
      ? ""
      : body["response_encoding"] === "base64"
      ? Buffer.from(page).toString("base64")
      : page,
    duration_ms: 1
  }
}

export const handlers: Handlers = {
  // the URL is fetched by the browser, whose network the simulator does not have: a page of the URL's host
  curlBrowser: onBrowser(({ body, op }) => ok(op, curled(body))),
  createBrowser: (context) => makeBrowser(context, undefined),
  // the browsers created with `invocation_id` (the document: "all active browser sessions created within the
  // specified invocation")
  listInvocationBrowsers: (context) => {
    const invocation = invocationOf(context)
    if (invocation === undefined) return error(404, "not_found", "invocation not found")
    return ok(context.op, {
      browsers: browsersOfInvocation(context.store, invocation.id, context.call.project).map((r) => r.fields)
    })
  },
  // each ends as its delete would (one acquired from a pool frees its slot)
  deleteInvocationBrowsers: (context) => {
    const { call, op, org, stamp, store } = context
    const invocation = invocationOf(context)
    if (invocation === undefined) return error(404, "not_found", "invocation not found")
    for (const resource of browsersOfInvocation(store, invocation.id, call.project)) {
      const pool = poolOfBrowser(org, resource)
      endSession(org, resource, stamp)
      if (pool !== undefined) freeSlot(org, pool, undefined, call.now)
    }
    return ok(op)
  },
  listBrowsers: ({ call, op, store }) => {
    const status = call.query.get("status") ?? (call.query.get("include_deleted") === "true" ? "all" : "active")
    const query = call.query.get("query")?.toLowerCase() ?? ""
    return engine.list(
      op,
      // the active ones without a walk past the deleted ones kept beside them
      status === "active" ? engine.currentOf(store, "/browsers") : store.collections.get("/browsers")?.values() ?? [],
      call.query,
      (r) => r.fields,
      (r) =>
        (r.project === undefined || call.project === undefined || r.project === call.project) &&
        (status === "all" || (status === "deleted") === r.deleted) &&
        (query === "" || searched(r.fields).some((field) => field.toLowerCase().includes(query)))
    )
  },
  getBrowser: ({ call, op, store }) => {
    const resource = engine.find(store, "/browsers", call.segments[1]!, call.project)
    if (resource === undefined || (resource.deleted && call.query.get("include_deleted") !== "true")) {
      return error(404, "not_found", "browser not found")
    }
    return ok(op, resource.fields)
  },
  deleteBrowser: ({ call, op, org, stamp, store }) => {
    const resource = engine.find(store, "/browsers", call.segments[1]!, call.project)
    if (resource === undefined || resource.deleted) return error(404, "not_found", "browser not found")
    // a browser acquired from a pool frees its slot: a new browser takes it, as after a release without reuse
    const pool = poolOfBrowser(org, resource)
    endSession(org, resource, stamp)
    if (pool !== undefined) freeSlot(org, pool, undefined, call.now)
    return ok(op)
  },
  updateBrowser: (context) => {
    const { body, call, op, org, store } = context
    const resource = engine.find(store, "/browsers", call.segments[1]!, call.project)
    const browser = resource === undefined ? undefined : org.browsers.get(resource.id)
    if (resource === undefined || resource.deleted || browser === undefined) {
      return error(404, "not_found", "browser not found")
    }
    // what it names must exist, as for a create (400); a profile only when the session has none loaded (the
    // document); `proxy_id: ""` removes the proxy
    const proxyId = body["proxy_id"]
    const unresolved = unresolvedReference(store, {
      ...(typeof proxyId === "string" && proxyId !== "" ? { proxy_id: proxyId } : {}),
      ...("profile" in body ? { profile: body["profile"] } : {})
    }, call.project)
    if (unresolved !== undefined) return unresolved
    if ("profile" in body && resource.fields["profile"] !== undefined) {
      return error(400, "bad_request", "the browser session already has a profile loaded")
    }
    const viewport = values.isObject(body["viewport"]) ? body["viewport"] : undefined
    // the document (`BrowserViewportUpdate.force`): a resize while a recording is active is refused, unless
    // forced: then the recording is stopped and restarted at the new size, as separate segments
    const resized = viewport !== undefined &&
      (num(viewport.width, browser.viewport.width) !== browser.viewport.width ||
        num(viewport.height, browser.viewport.height) !== browser.viewport.height)
    // a recording past its `max_duration_in_seconds` has stopped
    const active = resized
      ? [...browser.replays.values()].find((replay) => {
        stopIfLapsed(replay, call.now)
        return !replay.stopped
      })
      : undefined
    if (active !== undefined && viewport?.["force"] !== true) {
      return error(
        400,
        "bad_request",
        `replay ${active.id} is recording: resize with viewport.force to stop it and record the new size as a new segment`
      )
    }
    if (active !== undefined) restartRecording(context, browser, active)
    if (viewport !== undefined) {
      browser.viewport = {
        width: num(viewport.width, browser.viewport.width),
        height: num(viewport.height, browser.viewport.height)
      }
      // the mouse stays on the screen (a smaller screen puts it at its nearest edge), as a move keeps it
      browser.mouse = {
        x: Math.max(0, Math.min(browser.viewport.width - 1, browser.mouse.x)),
        y: Math.max(0, Math.min(browser.viewport.height - 1, browser.mouse.y))
      }
    }
    const { force: _force, ...rest } = viewport ?? {}
    // `proxy_id` and `telemetry` omitted or null leave them as they are; so does an empty `telemetry` ({})
    const { proxy_id: _proxy, telemetry, ...given } = body
    const { proxy_id: current, ...kept } = resource.fields
    const proxy = proxyId === "" ? undefined : typeof proxyId === "string" ? proxyId : current
    resource.fields = {
      ...kept,
      ...given,
      ...("profile" in body ? { profile: loadedProfile(store, body["profile"], call.project) } : {}),
      ...(proxy === undefined ? {} : { proxy_id: proxy }),
      ...(values.isObject(telemetry) && Object.keys(telemetry).length > 0 ? { telemetry } : {}),
      ...(viewport === undefined ? {} : { viewport: rest })
    }
    browser.capturesInteractions = engine.capturesInteractions(resource.fields["telemetry"])
    return ok(op, resource.fields)
  }
}
