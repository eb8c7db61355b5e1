/**
 * The simulator's replays (recordings) of the new operations: start, list, stop. Their download
 * and the original five operations' replay behaviour are in `simulator.ts`.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Browser, Context, Handlers, Replay } from "./shared.js"
import { error, ok, onBrowser, recording, stopIfLapsed } from "./shared.js"

/** A new recording of `browser`, started now (for at most `seconds`, when given): its id. */
const record = ({ call, stamp, store }: Context, browser: Browser, seconds?: number): string => {
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
    stopped: false,
    endsAt: seconds === undefined ? undefined : call.now + seconds * 1000
  })
  return id
}

/**
 * The recording `active` stopped now, and another started (a forced resize: the new size as a new segment),
 * ending when `active` would have (its `max_duration_in_seconds`).
 */
export const restartRecording = (context: Context, browser: Browser, active: Replay): void => {
  stop(active, context.stamp)
  record(context, browser, active.endsAt === undefined ? undefined : (active.endsAt - context.call.now) / 1000)
}

/** Whether a browser was created with GPU acceleration (its stored `gpu`). */
const gpuOf = (store: engine.Store, browser: Browser, project: string | undefined): unknown =>
  engine.find(store, "/browsers", browser.id, project)?.fields["gpu"]

const stop = (replay: Replay, stamp: string): void => {
  // the list tells a stopped recording by its `finished_at` (the first stop's)
  if (!replay.stopped) replay.finishedAt = stamp
  replay.stopped = true
}

export const handlers: Handlers = {
  startReplay: onBrowser((context, browser) => {
    const { body, call, store } = context
    // the document: "Values above 20 require GPU to be enabled on the browser session"
    const framerate = body["framerate"]
    if (typeof framerate === "number" && framerate > 20 && gpuOf(store, browser, call.project) !== true) {
      return error(
        400,
        "bad_request",
        `framerate ${framerate} requires GPU on the browser session (20 at most without)`
      )
    }
    // one recording at a time per browser (the document's 409); one past its maximum duration has stopped
    for (const replay of browser.replays.values()) {
      stopIfLapsed(replay, call.now)
      if (!replay.stopped) return error(409, "conflict", `replay ${replay.id} is already recording on this browser`)
    }
    const seconds = body["max_duration_in_seconds"]
    const id = record(context, browser, typeof seconds === "number" ? seconds : undefined)
    return ok(context.op, { replay_id: id, started_at: context.stamp })
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
    // one past its maximum duration stopped then
    stopIfLapsed(replay, call.now)
    stop(replay, stamp)
    return ok(op)
  })
}
