/**
 * The simulator's request handling alone (no sockets, no HTTP parsing or writing), over requests
 * recorded from the bin under the mixed load: the CPU a request costs the handler in each phase
 * (the mixed flow, the five original routes), as medians of passes that alternate the two phases.
 * On a shared machine the bin's CPU per request moves with what else runs (it idles and wakes per
 * request when starved); the handler's alone moves less (about ±1 µs in 12-14), so two builds are
 * compared by it too.
 *
 *   node --import tsx test/load/handler-bench.ts <recorded.jsonl> <mixed requests> [passes]
 *
 * (or an esbuild bundle of it). The recording is JSON lines `{ method, url, headers, body }` (body in
 * base64) in the order the bin received them, e.g. from a build of the bin whose server writes each
 * request it is handed (its head in `onRequest`, its body as `readBody` reads it): the first
 * `<mixed requests>` of the mixed phase (the driver's "of N" issued), the rest of the five routes.
 * Each pass replays its phase on a fresh world of the load's seed, so the ids the recorded requests
 * name are made again in the same order.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as schema from "../../src/testing/internal/schema.js"
import * as internal from "../../src/testing/internal/simulator.js"
import { seed } from "./seed.js"

const [file, mixedCount, passesArg] = process.argv.slice(2)
if (file === undefined || mixedCount === undefined) throw new Error("usage: handler-bench <recorded.jsonl> <mixed>")
const passes = Number(passesArg ?? 7)

interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

const recorded: Array<Recorded> = fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line))
const phases = {
  mixed: recorded.slice(0, Number(mixedCount)),
  five: recorded.slice(Number(mixedCount))
}

const world = Either.getOrThrow(schema.decodeSeed(seed))

const requests = (list: ReadonlyArray<Recorded>): Array<internal.SimRequest> =>
  list.map((r) => {
    const at = r.url.indexOf("?")
    const bytes = new Uint8Array(Buffer.from(r.body, "base64"))
    return {
      method: r.method,
      path: at < 0 ? r.url : r.url.slice(0, at),
      query: at < 0 ? "" : r.url.slice(at + 1),
      headers: r.headers,
      readBody: (limit: number) =>
        Effect.succeed<internal.BodyRead>(bytes.length > limit ? { _tag: "TooLarge" } : { _tag: "Read", bytes })
    }
  })

const made = { mixed: requests(phases.mixed), five: requests(phases.five) }

/** One pass of a phase on a fresh world: CPU µs per request, and how many answers were 2xx. */
const pass = async (list: ReadonlyArray<internal.SimRequest>) => {
  const simulator = Effect.runSync(internal.make(world))
  const before = process.cpuUsage()
  let ok = 0
  const fibers: Array<Fiber.RuntimeFiber<unknown>> = []
  for (const request of list) {
    const fiber = Effect.runFork(Effect.map(simulator.handle(request), (response) => {
      if (response.status >= 200 && response.status < 300) ok++
    }))
    // only the fibers still running are kept (holding every one made the collections those of the bench's)
    if (fiber.unsafePoll() === null) fibers.push(fiber)
  }
  // an acquire may wait (at most its 1 s timeout): not counted, stopped
  await new Promise((resolve) => setTimeout(resolve, 50))
  const used = process.cpuUsage(before)
  await Effect.runPromise(Fiber.interruptAll(fibers))
  return { us: (used.user + used.system) / list.length, ok: ok / list.length }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  // warm-up: the code compiled as it is under the load
  for (let i = 0; i < 2; i++) {
    await pass(made.mixed)
    await pass(made.five)
  }
  const mixed: Array<number> = []
  const five: Array<number> = []
  let okMixed = 0
  let okFive = 0
  for (let i = 0; i < passes; i++) {
    const m = await pass(made.mixed)
    const f = await pass(made.five)
    mixed.push(m.us)
    five.push(f.us)
    okMixed = m.ok
    okFive = f.ok
  }
  console.log(
    `handler CPU per request (median of ${passes}): mixed ${
      median(mixed).toFixed(2)
    } µs (${made.mixed.length} requests, ${(100 * okMixed).toFixed(1)} % 2xx), five routes ${
      median(five).toFixed(2)
    } µs (${made.five.length}, ${(100 * okFive).toFixed(1)} % 2xx); ` +
      `mixed passes ${mixed.map((x) => x.toFixed(1)).join(" ")}`
  )
}

await main()
