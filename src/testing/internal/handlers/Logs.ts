/**
 * The simulator's browser logs: two lines when the stream opens, then (unless `follow=false`) a line
 * per operation done on the browser as it happens, until the browser is deleted.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as live from "../live.js"
import { expiry } from "./Browsers.js"
import type { Handlers } from "./shared.js"
import { liveReply, onBrowser, wholeReply } from "./shared.js"

export const handlers: Handlers = {
  streamLogs: onBrowser(({ call, op, org, stamp }, browser) => {
    const opening = [
      { event: "log", timestamp: stamp, message: "browser started" },
      { event: "log", timestamp: stamp, message: `session ${browser.id} ready` }
    ]
    // `follow` defaults to true (the document): only `follow=false` ends after the opening lines
    if (call.query.get("follow") === "false") return wholeReply(op, opening)
    return liveReply(op, {
      hub: browser.events,
      from: live.now(browser.events),
      first: opening,
      select: (event) =>
        event._tag === "Log"
          ? Option.some({ event: "log", timestamp: new Date(event.at).toISOString(), message: event.message })
          : Option.none(),
      // it ends with the browser, a browser idle for its time-out too
      deadline: expiry(org, browser)
    })
  })
}
