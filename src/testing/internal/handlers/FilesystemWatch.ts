/**
 * The simulator's filesystem watches: a watch tells the changes of the browser's tree under its
 * path (its direct entries, or every one with `recursive`) as they happen — `CREATE`, `WRITE`,
 * `DELETE`, `RENAME` — until it is stopped or the browser is deleted.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as engine from "../engine.js"
import * as live from "../live.js"
import { expiry } from "./Browsers.js"
import type { Handlers } from "./shared.js"
import { baseName, error, fileInTheWay, lastOf, liveReply, normalize, ok, onBrowser, parentOf } from "./shared.js"

const within = (watch: { readonly path: string; readonly recursive: boolean }, path: string): boolean =>
  watch.recursive
    ? path === watch.path || path.startsWith(watch.path === "/" ? "/" : `${watch.path}/`)
    : path === watch.path || parentOf(path) === watch.path

export const handlers: Handlers = {
  startFilesystemWatch: onBrowser(({ body, call, op, store }, browser) => {
    // a path through a file (`/t/f.txt/x`): not a directory, as the filesystem's operations answer
    const file = fileInTheWay(browser.fs, String(body["path"] ?? "/"))
    if (file !== undefined) return error(400, "bad_request", `${file} is not a directory`)
    // a path that does not exist: the document's 404 (the service stats it before it watches)
    const path = normalize(String(body["path"] ?? "/"))
    if (!browser.fs.has(path)) return error(404, "not_found", `${path}: path not found`)
    const reply = engine.generic(store, call, () => "watch")
    const created = lastOf(store, `/browsers/${browser.id}/fs/watch`)
    if (reply._tag !== "Json" || created === undefined) return reply
    browser.watches.set(created.id, {
      path,
      recursive: body["recursive"] === true
    })
    if (browser.watches.size > engine.collectionLimit) browser.watches.delete(browser.watches.keys().next().value!)
    return ok(op, { watch_id: created.id })
  }),
  stopFilesystemWatch: onBrowser(({ call, store }, browser) => {
    const reply = engine.generic(store, call, () => "watch")
    const id = call.segments[4]!
    if (reply._tag !== "Error" && browser.watches.delete(id)) live.publish(browser.events, { _tag: "WatchStopped", id })
    return reply
  }),
  streamFilesystemEvents: onBrowser(({ call, op, org }, browser) => {
    const id = call.segments[4]!
    const watch = browser.watches.get(id)
    if (watch === undefined) return error(404, "not_found", "watch not found")
    return liveReply(
      op,
      {
        hub: browser.events,
        from: live.now(browser.events),
        select: (event) =>
          event._tag === "WatchStopped" && event.id === id
            ? "stop"
            : event._tag === "Fs" && within(watch, event.path)
            ? Option.some({ type: event.type, path: event.path, name: baseName(event.path), is_dir: event.isDir })
            : Option.none(),
        // it ends with the browser, a browser idle for its time-out too
        deadline: expiry(org, browser)
      }
    )
  })
}
