/**
 * The per-call sweep (issue 18: "per-call throughput holds for every operation"): every operation's
 * accessor, as a user calls it (the built package, `Kernel.layer` on `KernelTransport.layerUndici`,
 * the params of test/utils/exampleParams.ts), against raw undici sending the same request (captured
 * from the SDK's first call: method, URL, headers, body) to the same server (bench/sweep-server.ts,
 * every operation's main answer filled to its schema), `inFlight` at a time, in alternating rounds.
 *
 * Raw undici reads a JSON answer with `body.json()` and any other with `body.dump()`. An operation
 * whose answer is a stream (bytes, events) is also compared with raw undici's body run as an Effect
 * `Stream` (`Stream.fromAsyncIterable`): what returning a `Stream` costs by itself (the issue's "real
 * floor": Effect around raw undici), which raw undici alone does not pay.
 */
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { request } from "undici"
import { examples } from "../test/generated/examples.js"
import { paramsOf } from "../test/utils/exampleParams.js"
import { inFlight as runInFlight } from "./inFlight.js"
import { loadSdk } from "./sdk.js"

const Sdk = await loadSdk()

/** One operation's figures: medians of the rounds' ratios of calls/s. */
export interface SweepRow {
  readonly name: string
  readonly kind: string
  /** The SDK's calls/s over raw undici's. */
  readonly ratio: number
  /** For a stream answer: over raw undici's body run as an Effect `Stream`. */
  readonly overStreamFloor: number | undefined
  readonly sdkPerSecond: number
}

interface Captured {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u

/** What a call succeeded with, read to its end when it is a stream (or an outcome holding one). */
const drain = (value: unknown): Effect.Effect<void, unknown> => {
  if (isStream(value)) return Stream.runDrain(value)
  if (typeof value === "object" && value !== null && "value" in value && isStream(value.value)) {
    return Stream.runDrain(value.value)
  }
  return Effect.void
}

/** An accessor of the package by module and name, called with `params`; its answer read to the end. */
const callOf = (module: string, accessor: string, params: unknown): Effect.Effect<void, unknown, unknown> => {
  const area: unknown = Reflect.get(Sdk, module)
  const fn: unknown = typeof area === "object" && area !== null ? Reflect.get(area, accessor) : undefined
  if (typeof fn !== "function") return Effect.die(new Error(`no accessor ${module}.${accessor}`))
  const result: unknown = fn(params)
  if (isStream(result)) return drain(result)
  if (!Effect.isEffect(result)) return Effect.die(new Error(`${module}.${accessor}: not an Effect`))
  return Effect.flatMap(result, drain)
}

/**
 * The operations the sweep does not call, and why: each is measured elsewhere or cannot be called
 * against a server that answers every call alike.
 */
export const unmeasured: Readonly<Record<string, string>> = {
  downloadReplay: "its answer must be a real mp4 (the replay rows of the benchmark measure it)",
  streamTelemetry: "an endless event stream: its end is a drop, which it resumes",
  streamLogs: "an endless event stream: its end is a drop",
  streamFilesystemEvents: "an endless event stream: its end is a drop",
  streamProcessStdout: "its stream ends with the process's exit event, which a filled answer does not send"
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const startServer = (tsxLoader: string) =>
  new Promise<{ child: ChildProcess; base: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", tsxLoader, new URL("sweep-server.ts", import.meta.url).pathname],
      { stdio: ["pipe", "pipe", "inherit"] }
    )
    child.stdout!.on("data", (data: Buffer) => {
      const port = /port (\d+)/.exec(data.toString())?.[1]
      if (port !== undefined) resolve({ child, base: `http://127.0.0.1:${port}` })
    })
    child.once("exit", (code) => reject(new Error(`sweep server exited ${code}`)))
  })

/** What a sweep measured, and the operations whose first call failed. */
export interface SweepResult {
  readonly rows: ReadonlyArray<SweepRow>
  readonly failed: ReadonlyArray<string>
}

/** Runs the sweep: `calls` calls per client and round, `inFlight` at a time, `rounds` alternating rounds. */
export const runSweep = async (options: {
  readonly calls: number
  readonly inFlight: number
  readonly rounds: number
  /** Only the operations whose name it matches (all when absent). */
  readonly only?: RegExp | undefined
}): Promise<SweepResult> => {
  const { calls, inFlight, rounds } = options
  const { base, child } = await startServer(createRequire(import.meta.url).resolve("tsx"))
  const runtime = ManagedRuntime.make(
    Sdk.Kernel.layer.pipe(
      Layer.provide(Sdk.KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base, maxRetries: 0 })),
      Layer.provide(Sdk.KernelTransport.layerUndici),
      Layer.orDie
    )
  )
  const pooled = async (n: number, call: () => Promise<unknown>) => {
    let next = 0
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next++ < n) await call()
    }))
  }
  const rate = async (n: number, run: () => Promise<unknown>) => {
    const started = performance.now()
    await run()
    return n / ((performance.now() - started) / 1000)
  }
  const rows: Array<SweepRow> = []
  const failed: Array<string> = []
  try {
    for (const example of examples) {
      if (unmeasured[example.name] !== undefined || options.only?.test(example.name) === false) continue
      const call = Effect.suspend(() =>
        callOf(example.module, example.accessor, paramsOf(example.name, example.params))
      ) as Effect.Effect<void, unknown, ManagedRuntime.ManagedRuntime.Context<typeof runtime>>
      const many = (n: number) =>
        runtime.runPromise(
          runInFlight(call, n, inFlight)
        )
      const first = await runtime.runPromiseExit(call)
      const captured: Record<string, Captured | undefined> = JSON.parse(
        await (await request(`${base}/__captured`)).body.text()
      )
      const sent = captured[example.name]
      if (first._tag === "Failure" || sent === undefined) {
        failed.push(example.name)
        continue
      }
      const body = Buffer.from(sent.body, "base64")
      const json = example.answers[0] === "json" || example.answers[0] === "page"
      const stream = example.answers.includes("bytes") || example.answers.includes("sse")
      const send = () =>
        request(base + sent.url, {
          method: sent.method as "GET",
          headers: sent.headers,
          ...(body.length > 0 ? { body } : {})
        })
      const raw = async () => {
        const response = await send()
        return json && response.statusCode !== 204 ? response.body.json() : response.body.dump()
      }
      const floor = Stream.runDrain(
        Stream.unwrap(Effect.map(
          Effect.promise(send),
          (response) => Stream.fromAsyncIterable(response.body as AsyncIterable<Uint8Array>, (error) => error)
        ))
      )
      const floorMany = (n: number) =>
        Effect.runPromise(
          runInFlight(floor, n, inFlight)
        )
      // warm-up: each side's path compiled (and re-optimised for this operation's shapes) before it is timed
      const warm = Math.min(1000, calls)
      await pooled(warm, raw)
      await many(warm)
      if (stream) await floorMany(warm)
      const ratios: Array<number> = []
      const overFloor: Array<number> = []
      const sdkRates: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const rawRate = await rate(calls, () => pooled(calls, raw))
        const sdkRate = await rate(calls, () => many(calls))
        ratios.push(sdkRate / rawRate)
        sdkRates.push(sdkRate)
        if (stream) overFloor.push(sdkRate / await rate(calls, () => floorMany(calls)))
      }
      rows.push({
        name: example.name,
        kind: `${example.method} ${example.answers.join("/")}${
          example.body === undefined ? "" : ` (${example.body} body)`
        }`,
        ratio: median(ratios),
        overStreamFloor: stream ? median(overFloor) : undefined,
        sdkPerSecond: median(sdkRates)
      })
    }
  } finally {
    await runtime.dispose()
    child.kill()
  }
  return { rows, failed }
}
