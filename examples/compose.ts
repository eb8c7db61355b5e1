/**
 * Composes the operations: for every pool, report; then hide the cursor of a browser, read its
 * mouse position, and download its replay — in parallel where independent, with one typed error
 * pipeline. Usage: tsx examples/compose.ts BROWSER_ID REPLAY_ID
 */
import { Console, Effect, Stream } from "effect"
import { BrowserPools, Computer, Replays } from "effect-kernel"
import { arg, runExample } from "./runtime.js"

const id = arg(0, "browser_1")
const replayId = arg(1, "replay_1")

const program = Effect.gen(function*() {
  const [pools, position] = yield* Effect.all([
    BrowserPools.list(),
    Computer.setCursorVisibility({ id, hidden: true }).pipe(Effect.zipRight(Computer.getMousePosition({ id })))
  ], { concurrency: "unbounded" })
  const free = pools.reduce((n, pool) => n + pool.available_count, 0)
  yield* Console.log(
    `${pools.length} pools, ${free} browsers available; cursor hidden at (${position.x}, ${position.y})`
  )
  const bytes = yield* Replays.download({ id, replayId }).pipe(Stream.runFold(0, (n, chunk) => n + chunk.length))
  yield* Console.log(`replay ${replayId}: ${bytes} bytes`)
}).pipe(
  Effect.catchTags({
    NotFound: (error) => Console.error(`not found: ${error.message} (${error.method} ${error.path})`),
    Unauthorized: () => Console.error("check KERNEL_API_KEY"),
    ReplayNotReady: (error) => Console.error(error.message)
  })
)

runExample(program)
