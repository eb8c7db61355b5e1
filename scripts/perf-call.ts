// Per-call overhead of the SDK on one transport: getMousePosition N times, K in flight, against
// bench/server.mjs in a child process, interleaved with the bare transport (`execute` + `json`).
// Usage: tsx scripts/perf-call.ts [rounds=5] [calls=20000] [only=sdk|bare|all] [transport=undici|kernel]
// (under `node --cpu-prof --import tsx scripts/perf-call.ts 1 20000 sdk` it profiles one client)
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { startBenchServer } from "../bench/fixtures.mjs"
import { Computer, Kernel, KernelConfig, KernelTransport } from "../src/index.js"

const rounds = Number(process.argv[2] ?? 5)
const calls = Number(process.argv[3] ?? 20_000)
const only = process.argv[4] === "all" ? undefined : process.argv[4]
const transport = process.argv[5] === "kernel" ? KernelTransport.layerUndici : NodeHttpClient.layerUndici
const inFlight = 32

const { base, child } = await startBenchServer({ POOLS: "10" })

const sdk = ManagedRuntime.make(
  Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base })),
    Layer.provide(transport)
  )
)
const bare = ManagedRuntime.make(transport)

const sdkCall = Computer.getMousePosition({ id: "b1" })
const bareCall = Effect.flatMap(HttpClient.HttpClient, (client) =>
  Effect.flatMap(
    client.execute(
      HttpClientRequest.post(`${base}/browsers/b1/computer/get_mouse_position`).pipe(
        HttpClientRequest.bearerToken("sk_bench")
      )
    ),
    (response) => response.json
  ))

const run = <E, R, ER>(runtime: ManagedRuntime.ManagedRuntime<R, ER>, call: Effect.Effect<unknown, E, R>, n = calls) =>
  runtime.runPromise(
    Effect.gen(function*() {
      const start = performance.now()
      yield* Effect.forEach(Array.from({ length: n }), () => call, { concurrency: inFlight, discard: true })
      return n / ((performance.now() - start) / 1000)
    })
  )

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const results: Record<string, Array<number>> = { bare: [], sdk: [] }
// warm-up
if (only !== "bare") await run(sdk, sdkCall, 2000)
if (only !== "sdk") await run(bare, bareCall, 2000)
for (let i = 0; i < rounds; i++) {
  if (only !== "sdk") results.bare.push(await run(bare, bareCall))
  if (only !== "bare") results.sdk.push(await run(sdk, sdkCall))
}
const b = results.bare.length ? median(results.bare) : NaN
const s = results.sdk.length ? median(results.sdk) : NaN
console.log(
  JSON.stringify({
    transport: process.argv[5] ?? "undici",
    calls,
    inFlight,
    rounds,
    bare: Math.round(b),
    sdk: Math.round(s),
    ratio: +(s / b).toFixed(3)
  })
)
await sdk.dispose()
await bare.dispose()
child.kill()
