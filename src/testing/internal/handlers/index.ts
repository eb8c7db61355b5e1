/**
 * The simulator's real behaviours, over the generic engine, one module per API area: browsers
 * (ids, URLs, status filter, soft delete), the computer (mouse, cursor, keys, clipboard, a real PNG
 * screenshot of the viewport, batches), the per-browser filesystem, processes (deterministic
 * `echo`, `cat`, `ls`), replays, pools (acquire / release / flush), TOTP codes, deployments,
 * invocations, and the event streams. An operation without one here answers by convention
 * (`engine.ts`).
 *
 * @internal
 */
import type { Call } from "../engine.js"
import * as engine from "../engine.js"
import * as live from "../live.js"
import * as ApiKeys from "./ApiKeys.js"
import * as Apps from "./Apps.js"
import * as AuthConnections from "./AuthConnections.js"
import * as BrowserPools from "./BrowserPools.js"
import * as Browsers from "./Browsers.js"
import * as Computer from "./Computer.js"
import * as Credentials from "./Credentials.js"
import * as Deployments from "./Deployments.js"
import * as Extensions from "./Extensions.js"
import * as Filesystem from "./Filesystem.js"
import * as FilesystemWatch from "./FilesystemWatch.js"
import * as Invocations from "./Invocations.js"
import * as Logs from "./Logs.js"
import { conflict } from "./Names.js"
import * as Playwright from "./Playwright.js"
import * as Processes from "./Processes.js"
import * as Profiles from "./Profiles.js"
import * as Projects from "./Projects.js"
import * as Proxies from "./Proxies.js"
import * as Replays from "./Replays.js"
import type { Handler, Organization } from "./shared.js"
import { error } from "./shared.js"
import * as Telemetry from "./Telemetry.js"

export { expireIdle, takeFromPool } from "./Browsers.js"
export type { Browser, ByteBudget, Deployment, Organization, Replay } from "./shared.js"
export { browserFields, keyDigest, overBudget } from "./shared.js"

const handlers: ReadonlyMap<string, Handler> = new Map(
  [
    ApiKeys,
    Apps,
    AuthConnections,
    BrowserPools,
    Browsers,
    Computer,
    Credentials,
    Deployments,
    Extensions,
    Filesystem,
    FilesystemWatch,
    Invocations,
    Logs,
    Playwright,
    Processes,
    Profiles,
    Projects,
    Proxies,
    Replays,
    Telemetry
  ].flatMap((area) => Object.entries(area.handlers))
)

const isStream = (call: Call): boolean => engine.mainAnswer(call.operation)[1].kind === "sse"

/** A behaviour of the operation, or `undefined` to answer by convention. */
export const handle = (org: Organization, call: Call): ReturnType<Handler> | undefined => {
  const browserId = call.template.startsWith("/browsers/{id}/") ? call.segments[1]! : undefined
  const browser = browserId === undefined ? undefined : org.browsers.get(browserId)
  if (browserId !== undefined && browser === undefined) return error(404, "not_found", "browser not found")
  // what is done on a browser is a line of its log (its event streams excepted)
  if (browser !== undefined && !isStream(call)) {
    live.publish(browser.events, {
      _tag: "Log",
      at: call.now,
      message: `${call.operation.method} /${call.segments.join("/")}`
    })
  }
  const context = {
    org,
    call,
    op: call.operation,
    body: call.body,
    store: org.store,
    stamp: engine.isoAt(call.now),
    browser
  }
  return conflict(context) ?? handlers.get(call.operation.name)?.(context)
}
