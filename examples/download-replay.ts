/**
 * Waits for a replay to finish recording, then streams it to a file.
 * Usage: tsx examples/download-replay.ts BROWSER_ID REPLAY_ID [out.mp4]
 */
import { Console, Effect } from "effect"
import { Replays } from "effect-kernel"
import { arg, runExample } from "./runtime.js"

const program = Replays.downloadToFile(
  { id: arg(0, "browser_1"), replayId: arg(1, "replay_1") },
  arg(2, "replay.mp4"),
  { maxWait: "10 minutes" }
).pipe(
  Effect.flatMap(({ bytes, path }) => Console.log(`wrote ${bytes} bytes to ${path}`)),
  Effect.catchTag("ReplayNotReady", (error) => Console.error(error.message))
)

runExample(program)
