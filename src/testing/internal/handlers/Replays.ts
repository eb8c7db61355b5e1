/**
 * The simulator's replays (recordings) of the new operations: start, list, stop. Their download
 * and the original five operations' replay behaviour are in `simulator.ts`.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error, ok, onBrowser, recording } from "./shared.js"

export const handlers: Handlers = {
  startReplay: onBrowser(({ call, op, stamp, store }, browser) => {
    // one recording at a time per browser (the document's 409)
    for (const replay of browser.replays.values()) {
      if (!replay.stopped) return error(409, "conflict", `replay ${replay.id} is already recording on this browser`)
    }
    const id = engine.nextId(store, "replay")
    engine.put(store, `/browsers/${browser.id}/replays`, {
      id,
      project: call.project,
      deleted: false,
      fields: { id }
    }, (evicted) => browser.replays.delete(evicted))
    browser.replays.set(id, {
      id,
      size: 64 * 1024,
      retryAfter: 1,
      pollsLeft: 0,
      readyAt: call.now,
      startedAt: stamp,
      stopped: false
    })
    return ok(op, { replay_id: id, started_at: stamp })
  }),
  listReplays: onBrowser(({ call, op }, browser) =>
    ok(
      op,
      [...browser.replays.values()].map((r) => ({
        replay_id: r.id,
        started_at: r.startedAt,
        // as its download tells: still recording (202) until it is stopped, its pending polls are
        // given and its `readyAfter` has passed
        finished_at: recording(r, call.now) ? null : r.finishedAt ?? null
      }))
    )
  ),
  stopReplay: onBrowser(({ call, op, stamp }, browser) => {
    const replay = browser.replays.get(call.segments[3]!)
    if (replay === undefined) return error(404, "not_found", "replay not found")
    // the list tells a stopped recording by its `finished_at` (the first stop's)
    if (!replay.stopped) replay.finishedAt = stamp
    replay.stopped = true
    return ok(op)
  })
}
