/**
 * The simulator's browser telemetry: an event per interaction done through the computer controls
 * (`interaction_click`, `interaction_key`, `interaction_scroll_settled`) as it happens, numbered by
 * `seq` (the SSE id); `Last-Event-ID` resumes after that `seq` from what the browser still keeps.
 * The stream ends when the browser does.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as live from "../live.js"
import { expiry } from "./Browsers.js"
import type { Handlers } from "./shared.js"
import { liveReply, onBrowser } from "./shared.js"

export const handlers: Handlers = {
  streamTelemetry: onBrowser(({ call, op, org }, browser) => {
    const given = call.headers["last-event-id"]
    const last = given !== undefined && /^\d{1,15}$/.test(given.trim()) ? Number(given.trim()) : undefined
    return liveReply(
      op,
      {
        hub: browser.events,
        from: last === undefined ? live.now(browser.events) : 0,
        select: (event) =>
          event._tag === "Telemetry" && (last === undefined || event.seq > last)
            ? Option.some({ seq: event.seq, event: event.event })
            : Option.none(),
        // "the stream closes when the browser session terminates": an idle time-out too
        deadline: expiry(org, browser)
      },
      (envelope) => String(envelope.seq)
    )
  })
}
