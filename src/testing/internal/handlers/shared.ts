/**
 * What the simulator's handler modules share: the organization's live state (browsers with their
 * replays, deployments), the context a handler gets, and small readers of untyped bodies.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import type * as Sim from "../../KernelSimulator.js"
import * as engine from "../engine.js"
import type { Call, Reply, Store } from "../engine.js"
import * as live from "../live.js"
import * as values from "../values.js"

export interface Replay {
  readonly id: string
  readonly size: number
  readonly retryAfter: number
  pollsLeft: number
  readonly readyAt: number
  readonly startedAt: string
  stopped: boolean
  /** When it was stopped (an ISO date); `undefined` while it records. */
  finishedAt?: string | undefined
  /** When it stops by itself (epoch milliseconds): started with `max_duration_in_seconds`. */
  readonly endsAt?: number | undefined
}

/** A recording whose `max_duration_in_seconds` has run out by `now`: stopped then, as a stop would. */
export const stopIfLapsed = (replay: Replay, now: number): void => {
  if (!replay.stopped && replay.endsAt !== undefined && now >= replay.endsAt) {
    replay.stopped = true
    replay.finishedAt = new Date(replay.endsAt).toISOString()
  }
}

/**
 * Whether a replay still records at `now`, as its download (202) and its list (`finished_at: null`) tell:
 * not stopped (nor past its maximum duration), a pending poll left, or before its `readyAfter`.
 */
export const recording = (replay: Replay, now: number): boolean => {
  stopIfLapsed(replay, now)
  return !replay.stopped || replay.pollsLeft > 0 || now < replay.readyAt
}

export interface Browser extends engine.BrowserState {
  readonly replays: Map<string, Replay>
  /** When a request last addressed it (epoch milliseconds, the simulator's clock). */
  activeAt: number
  /** Its `timeout_seconds` in milliseconds: it ends after that long without activity (a seeded one: never). */
  readonly idleMs: number
}

export interface Deployment {
  readonly id: string
  state: Sim.DeploymentState
  markedForDeletion: boolean
  /**
   * The actions its app registers (`app.action("name", ...)`, read from its zip's source files, or
   * seeded); `undefined` when they could not be read: any action is then taken.
   */
  readonly actions?: ReadonlyArray<string> | undefined
}

/**
 * The simulator's budget of stored bytes (files, uploads, saved profiles), shared by its
 * organizations: what it may hold, and what it holds now.
 */
export interface ByteBudget {
  readonly limit: number
  readonly used: () => number
}

export interface Organization {
  /** The simulator's budget of stored bytes (the same object for every organization). */
  readonly budget: ByteBudget
  readonly id: string
  readonly token: string
  readonly plan: Sim.Plan
  readonly store: Store
  readonly browsers: Map<string, Browser>
  readonly deployments: Map<string, Deployment>
  /** Per pool, the acquires waiting for a browser, oldest first (at most `engine.collectionLimit` in all). */
  readonly poolWaiters: Map<string, Array<PoolWaiter>>
  /**
   * Per pool, the browsers released with `reuse: true` that no acquire has taken yet (their stored fields),
   * oldest first: the next acquires hand them out again, under the same session id.
   */
  readonly poolIdle: Map<string, Array<Record<string, unknown>>>
  /**
   * No browser of the organization times out before this (epoch milliseconds): the idle browsers are looked
   * for only once a request comes at or after it (see `Browsers.expireIdle`).
   */
  idleCheckAt: number
  /**
   * Per auth connection with a login flow in progress, the flow's state events (`managed_auth_state`), for its
   * followers; it ends with the flow (at most one per connection: bounded with the connections).
   */
  readonly authFlows: Map<string, live.Hub<Record<string, unknown>>>
  /**
   * The API keys created in the organization, by the SHA-256 of their value (the value itself is given
   * once and never kept): a request bearing one is the organization's (and its project's, if the key has
   * one) while the key exists.
   */
  readonly apiKeys: Map<string, string>
}

/** The digest by which {@link Organization.apiKeys} knows a key. */
export const keyDigest = (key: string): string => Crypto.createHash("sha256").update(key).digest("hex")

/**
 * An acquire waiting for a browser: a release hands it the released browser's id; `end` answers
 * it 204 at once (its pool is gone, or the simulator was reset).
 */
export interface PoolWaiter {
  readonly hand: (browserId: string) => void
  readonly end: () => void
}

/**
 * Every acquire waiting on the pool `poolId` (every pool: `undefined`) of `org` gets its 204 now, and the
 * pool's idle reused browsers are gone (the pool is).
 */
export const endPoolWaiters = (org: Organization, poolId?: string): void => {
  for (const id of [...org.poolIdle.keys()]) if (poolId === undefined || id === poolId) org.poolIdle.delete(id)
  for (const [id, queue] of [...org.poolWaiters]) {
    if (poolId !== undefined && id !== poolId) continue
    org.poolWaiters.delete(id)
    for (const waiter of queue.splice(0)) waiter.end()
  }
}

/** What a handler is given: the organization, the call, and the call's browser when its path names one. */
export interface Context {
  readonly org: Organization
  readonly call: Call
  readonly op: Call["operation"]
  readonly body: Record<string, unknown>
  readonly store: Store
  /** The call's time as an ISO date. */
  readonly stamp: string
  /** The browser of a `/browsers/{id}/...` path (the dispatcher answers 404 when it does not exist). */
  readonly browser: Browser | undefined
}

/** A behaviour of one operation: its reply, or an effect that waits for it (on the simulator's clock). */
export type Handler = (context: Context) => Reply | Effect.Effect<Reply>

/** An area's behaviours, by operation name. */
export type Handlers = { readonly [name: string]: Handler }

/** A behaviour of an operation under `/browsers/{id}/`: given the browser, which exists. */
export const onBrowser = (f: (context: Context, browser: Browser) => ReturnType<Handler>): Handler => (context) =>
  context.browser === undefined ? error(404, "not_found", "browser not found") : f(context, context.browser)

/** A browser's stored fields: ids, URLs and what it was created with. */
export const browserFields = (id: string, given: Record<string, unknown>): Record<string, unknown> => {
  // an id in a URL is one segment, encoded (a seeded id may hold `/`, `?`, `#` or a space)
  const segment = encodeURIComponent(id)
  return {
    ...given,
    id,
    session_id: id,
    cdp_ws_url: `wss://sim.kernel.local/browsers/${segment}/cdp`,
    webdriver_ws_url: `wss://sim.kernel.local/browsers/${segment}/webdriver`,
    base_url: `https://sim.kernel.local/browsers/${segment}`,
    ...(given["headless"] === true
      ? {}
      : { browser_live_view_url: `https://sim.kernel.local/browsers/${segment}/live` })
  }
}

export const ok = (operation: Call["operation"], fields?: unknown): Reply => engine.reply(operation, fields)
export const error = (status: number, code: string, message: string): Reply => ({
  _tag: "Error",
  status,
  code,
  message
})

/**
 * Whether storing `adding` bytes in place of `freeing` would take the simulator over its byte budget:
 * the 400 that refuses the write (the filesystem's entry limit's policy), or `undefined` when it fits.
 */
export const overBudget = (org: Organization, adding: number, freeing = 0): Reply | undefined =>
  adding > freeing && org.budget.used() - freeing + adding > org.budget.limit
    ? error(400, "bad_request", `the simulator holds at most ${org.budget.limit} bytes of files and uploads`)
    : undefined

export const obj = (u: unknown): Record<string, unknown> => values.isObject(u) ? u : {}

/**
 * The first reference of a browser's (or a pool's) configuration that names nothing of the caller's
 * (the document: profiles "must be created beforehand", a proxy "must reference a proxy belonging to
 * the caller's org"): its 400, or `undefined` when every one resolves.
 */
export const unresolvedReference = (
  store: Store,
  config: Record<string, unknown>,
  project: string | undefined
): Reply | undefined => {
  const exists = (collection: string, key: unknown): boolean => {
    if (typeof key !== "string") return true
    const found = engine.find(store, collection, key, project)
    return found !== undefined && !found.deleted
  }
  // an `id` and a `name` given together must name the same resource
  const byIdOrName = (collection: string, ref: unknown): boolean => {
    const fields = obj(ref)
    if (!exists(collection, fields["id"]) || !exists(collection, fields["name"])) return false
    return typeof fields["id"] !== "string" || typeof fields["name"] !== "string" ||
      engine.find(store, collection, fields["id"], project) === engine.find(store, collection, fields["name"], project)
  }
  if ("profile" in config && !byIdOrName("/profiles", config["profile"])) {
    return error(400, "bad_request", "profile not found: create it first")
  }
  // `proxy_id` is the proxy's id (the document: "ID of the proxy"), never its name
  const proxyId = config["proxy_id"]
  if (typeof proxyId === "string") {
    const proxy = engine.findById(store, "/proxies", proxyId, project)
    if (proxy === undefined || proxy.deleted) return error(400, "bad_request", "proxy not found")
  }
  // a browser's `invocation_id` (the document: "action invocation ID") is an invocation's id
  const invocationId = config["invocation_id"]
  if (typeof invocationId === "string") {
    const invocation = engine.findById(store, "/invocations", invocationId, project)
    if (invocation === undefined || invocation.deleted) return error(400, "bad_request", "invocation not found")
  }
  const extensions = Array.isArray(config["extensions"]) ? config["extensions"] : []
  if (!extensions.every((ref) => byIdOrName("/extensions", ref))) {
    return error(400, "bad_request", "extension not found")
  }
  return undefined
}
/**
 * The profile a browser session loads (its `profile`, `{ id }` or `{ name }`, as the request gives it) as the
 * session answers it: the stored profile's own fields (`Profile`: its id, name and times), with the request's
 * `save_changes` kept for when the session ends; the reference as given when it names no stored profile.
 */
export const loadedProfile = (store: Store, ref: unknown, project: string | undefined): unknown => {
  const fields = obj(ref)
  const key = typeof fields["id"] === "string" ? fields["id"] : fields["name"]
  const stored = typeof key === "string" ? engine.find(store, "/profiles", key, project) : undefined
  if (stored === undefined || stored.deleted) return ref
  const { __bytes: _bytes, ...profile } = stored.fields
  return {
    ...profile,
    id: stored.id,
    ...(fields["save_changes"] === undefined ? {} : { save_changes: fields["save_changes"] })
  }
}

export const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

export const num = (u: unknown, fallback: number): number => typeof u === "number" && Number.isFinite(u) ? u : fallback

export const normalize = (path: string): string => {
  const parts: Array<string> = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") parts.pop()
    else parts.push(part)
  }
  return `/${parts.join("/")}`
}
/**
 * The first file a path goes through as if it were a directory: a component of `raw` (absolute) with
 * anything after it, a trailing `/` or `/.` included (`/t/f.txt/` where `/t/f.txt` is a file). Linux
 * answers such a path `ENOTDIR`; `undefined` when the path goes through directories (or nothing) only.
 */
export const fileInTheWay = (tree: ReadonlyMap<string, { readonly dir: boolean }>, raw: string): string | undefined => {
  const parts = raw.split("/")
  const at: Array<string> = []
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]!
    if (part === "" || part === ".") {
      // the same directory
    } else if (part === "..") {
      at.pop()
    } else {
      at.push(part)
      const path = `/${at.join("/")}`
      if (tree.get(path)?.dir === false) return path
    }
  }
  return undefined
}
export const parentOf = (path: string): string =>
  path === "/" ? "/" : normalize(path.slice(0, path.lastIndexOf("/")) || "/")
export const baseName = (path: string): string => path === "/" ? "/" : path.slice(path.lastIndexOf("/") + 1)

/** The last resource put in a collection (the one a generic create just made). */
export const lastOf = (store: Store, collection: string): engine.Resource | undefined => {
  const last = store.lastPut
  // the one put last, when it is still there (not evicted since)
  if (last !== undefined && last.collection === collection) {
    const items = store.collections.get(collection)
    if (items?.get(last.resource.id) === last.resource) return last.resource
  }
  let found: engine.Resource | undefined = undefined
  for (const resource of store.collections.get(collection)?.values() ?? []) found = resource
  return found
}

/**
 * An open-ended event stream of the operation: a hub followed, its events as they come, with keep-alives. Sent
 * over HTTP by `follow`, without a `Stream`; the in-memory transport's `Stream` is built only when it runs.
 */
export const liveReply = <A, S>(
  operation: Call["operation"],
  events: live.Following<S, A>,
  idOf?: (event: A, index: number) => string
): Reply => {
  const [status, answer] = engine.mainAnswer(operation)
  return answer.kind === "sse"
    ? {
      _tag: "Live",
      status,
      frames: Stream.suspend(() => live.frames(answer.schema.ast, live.following(events), idOf)),
      keepAlive: live.keepAlive(answer.schema.ast),
      follow: live.followFrames(answer.schema.ast, events, idOf),
      deadline: events.deadline
    }
    : error(500, "internal_error", `${operation.name} is not an event stream`)
}

/**
 * An event stream of the operation whose every event is known when it is answered (logs without
 * `follow`, the output of a process that has exited): its frames sent whole and ended, as
 * {@link liveReply} would send them, without a subscription, a timer or a fiber per frame.
 */
export const wholeReply = <A>(
  operation: Call["operation"],
  events: ReadonlyArray<A>,
  idOf?: (event: A, index: number) => string
): Reply => {
  const [status, answer] = engine.mainAnswer(operation)
  return answer.kind === "sse"
    ? { _tag: "Events", status, text: live.framesText(answer.schema.ast, events, idOf) }
    : error(500, "internal_error", `${operation.name} is not an event stream`)
}

/** The browser is gone: its open streams, and its processes', end. */
export const endBrowser = (browser: Browser): void => {
  live.end(browser.events)
  for (const process of browser.processes.values()) live.end(process.output)
}
