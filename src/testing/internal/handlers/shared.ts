/**
 * What the simulator's handler modules share: the organization's live state (browsers with their
 * replays, deployments), the context a handler gets, and small readers of untyped bodies.
 *
 * @internal
 */
import type * as Sim from "../../KernelSimulator.js"
import * as engine from "../engine.js"
import type { Call, Reply, Store } from "../engine.js"
import * as values from "../values.js"

export interface Replay {
  readonly id: string
  readonly size: number
  readonly retryAfter: number
  pollsLeft: number
  readonly readyAt: number
  readonly startedAt: string
  stopped: boolean
}

export interface Browser extends engine.BrowserState {
  readonly replays: Map<string, Replay>
}

export interface Deployment {
  readonly id: string
  state: Sim.DeploymentState
  markedForDeletion: boolean
}

export interface Organization {
  readonly id: string
  readonly token: string
  readonly plan: Sim.Plan
  readonly store: Store
  readonly browsers: Map<string, Browser>
  readonly deployments: Map<string, Deployment>
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

/** A behaviour of one operation. */
export type Handler = (context: Context) => Reply

/** An area's behaviours, by operation name. */
export type Handlers = { readonly [name: string]: Handler }

/** A behaviour of an operation under `/browsers/{id}/`: given the browser, which exists. */
export const onBrowser = (f: (context: Context, browser: Browser) => Reply): Handler => (context) =>
  context.browser === undefined ? error(404, "not_found", "browser not found") : f(context, context.browser)

/** A browser's stored fields: ids, URLs and what it was created with. */
export const browserFields = (id: string, given: Record<string, unknown>): Record<string, unknown> => ({
  ...given,
  id,
  session_id: id,
  cdp_ws_url: `wss://sim.kernel.local/browsers/${id}/cdp`,
  webdriver_ws_url: `wss://sim.kernel.local/browsers/${id}/webdriver`,
  base_url: `https://sim.kernel.local/browsers/${id}`,
  ...(given["headless"] === true ? {} : { browser_live_view_url: `https://sim.kernel.local/browsers/${id}/live` })
})

export const ok = (operation: Call["operation"], fields?: unknown): Reply => engine.reply(operation, fields)
export const error = (status: number, code: string, message: string): Reply => ({
  _tag: "Error",
  status,
  code,
  message
})

export const obj = (u: unknown): Record<string, unknown> => values.isObject(u) ? u : {}
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
export const parentOf = (path: string): string =>
  path === "/" ? "/" : normalize(path.slice(0, path.lastIndexOf("/")) || "/")
export const baseName = (path: string): string => path === "/" ? "/" : path.slice(path.lastIndexOf("/") + 1)

export const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64")

/** The last resource put in a collection (the one a generic create just made). */
export const lastOf = (store: Store, collection: string): engine.Resource | undefined =>
  [...(store.collections.get(collection)?.values() ?? [])].at(-1)
