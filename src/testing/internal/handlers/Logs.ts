/**
 * The simulator's browser logs. `source=supervisor`: two lines when the stream opens, then (unless
 * `follow=false`) a line per operation done on the browser as it happens, until the browser is deleted.
 * `source=path`: the file at `path` in the browser's filesystem, as the browser's own server reads it
 * (`kernel-images`' `LogsStream`): each complete, non-empty line an event; `follow=false` from the file's
 * start, `follow=true` (the default) from its end, each write that makes it longer telling the lines it
 * added (at most {@link linesPerWrite} of its first MiB; one that makes it shorter moves the reading back
 * to its new end). A path that is not absolute is one event `logs source not available`, one that is not a
 * file one event `failed to open log path`.
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

/** The most lines one write tells a followed log (what a write adds past them is not told). */
const linesPerWrite = 10_000

/** The longest partial line kept waiting for its end (its start is dropped past it). */
const maxLine = 64 * 1024

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
      // the file's writes carry what they add while this stream follows it
      browser.logTails.set(path, (browser.logTails.get(path) ?? 0) + 1)
      const untail = () => {
        const left = (browser.logTails.get(path) ?? 1) - 1
        if (left > 0) browser.logTails.set(path, left)
        else browser.logTails.delete(path)
      }
      return liveReply(op, {
        hub: browser.events,
        from: live.now(browser.events),
        select: (event) => {
          // what each write added (the stream may read the event after later writes)
          const added = event._tag === "Fs" && event.path === path ? event.appended : undefined
          if (added === undefined) return Option.none()
          if (added.length <= offset) {
            // cut shorter (or not longer): read on from its new end, a partial line dropped
            offset = added.length
            remainder = ""
            return Option.none()
          }
          const read = linesOf(added.bytes, Math.max(0, offset - added.from), remainder)
          offset = added.length
          remainder = read.rest.slice(-maxLine)
          const at = new Date(added.at).toISOString()
          return new live.Several(read.lines.slice(0, linesPerWrite).map((text) => line(at, text)))
        },
        deadline: expiry(org, browser),
        onEnd: untail
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
