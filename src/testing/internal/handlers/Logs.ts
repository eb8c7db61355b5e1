/**
 * The simulator's browser logs.
 *
 * @internal
 */
import type { Handlers } from "./shared.js"
import { ok, onBrowser } from "./shared.js"

export const handlers: Handlers = {
  streamLogs: onBrowser(({ op, stamp }, browser) =>
    ok(op, [
      { event: "log", timestamp: stamp, message: "browser started" },
      { event: "log", timestamp: stamp, message: `session ${browser.id} ready` }
    ])
  )
}
