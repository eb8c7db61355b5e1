/**
 * The simulator's browser logs. `source=supervisor`: two lines when the stream opens, then (unless
 * `follow=false`) a line per operation done on the browser as it happens, until the browser is deleted.
 * `source=path`: the file at `path` in the browser's filesystem, as the browser's own server reads it
 * (`kernel-images`' `LogsStream`): each complete, non-empty line an event; `follow=false` from the file's
 * start, `follow=true` (the default) from its end, each write that makes it longer telling the lines it
 * added (one that makes it shorter moves the reading back to its new end). A path that is not absolute is
 * one event `logs source not available`, one that is not a file one event `failed to open log path`.
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as engine from "../engine.js"
import * as live from "../live.js"
import { expiry } from "./Browsers.js"
import type { Handlers } from "./shared.js"
import { liveReply, normalize, onBrowser, wholeReply } from "./shared.js"

interface LogEvent {
  readonly event: "log"
  readonly timestamp: string
  readonly message: string
}

const line = (timestamp: string, message: string): LogEvent => ({ event: "log", timestamp, message })

const decoder = new TextDecoder()

/** A file's bytes from `offset` read as the server reads them: its complete, non-empty lines, and what follows the last. */
const linesOf = (bytes: Uint8Array, offset: number, remainder: string) => {
  const parts = (remainder + decoder.decode(bytes.subarray(offset))).split("\n")
  const rest = parts.pop()!
  return { lines: parts.filter((part) => part !== ""), rest }
}

export const handlers: Handlers = {
  streamLogs: onBrowser(({ call, op, org, stamp }, browser) => {
    // `follow` defaults to true (the document)
    const follow = call.query.get("follow") !== "false"
    if (call.query.get("source") === "path") {
      const given = call.query.get("path") ?? ""
      if (!given.startsWith("/")) return wholeReply(op, [line(stamp, "logs source not available")])
      const path = normalize(given)
      const file: engine.FsNode | undefined = browser.fs.get(path)
      if (file === undefined || file.dir) return wholeReply(op, [line(stamp, "failed to open log path")])
      const at = (node: engine.FsNode) => new Date(node.modTime).toISOString()
      if (!follow) return wholeReply(op, linesOf(file.bytes, 0, "").lines.map((text) => line(at(file), text)))
      let offset = file.bytes.length
      let remainder = ""
      return liveReply(op, {
        hub: browser.events,
        from: live.now(browser.events),
        select: (event) => {
          // the file as each write left it (the stream may read the event after later writes)
          const now = event._tag === "Fs" && event.path === path ? event.written : undefined
          if (now === undefined) return Option.none()
          if (now.bytes.length <= offset) {
            offset = now.bytes.length
            return Option.none()
          }
          const read = linesOf(now.bytes, offset, remainder)
          offset = now.bytes.length
          remainder = read.rest
          return new live.Several(read.lines.map((text) => line(at(now), text)))
        },
        deadline: expiry(org, browser)
      })
    }
    const opening = [line(stamp, "browser started"), line(stamp, `session ${browser.id} ready`)]
    if (!follow) return wholeReply(op, opening)
    return liveReply(op, {
      hub: browser.events,
      from: live.now(browser.events),
      first: opening,
      select: (event) =>
        event._tag === "Log" ? Option.some(line(new Date(event.at).toISOString(), event.message)) : Option.none(),
      // it ends with the browser, a browser idle for its time-out too
      deadline: expiry(org, browser)
    })
  })
}
