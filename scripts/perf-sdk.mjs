// The SDK alone on KernelTransport, over the built package (`npm run build` first): getMousePosition,
// 32 in flight, against bench/server.mjs in a child process; prints calls/s for 3 rounds.
// Usage: node [--cpu-prof] scripts/perf-sdk.mjs [calls=30000]
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Computer, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
import { startBenchServer } from "../bench/fixtures.mjs"
const { base, child } = await startBenchServer()
const rt = ManagedRuntime.make(
  Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base })),
    Layer.provide(KernelTransport.layerUndici)
  )
)
const n = Number(process.argv[2] ?? 30000)
const run = (n) =>
  rt.runPromise(Effect.gen(function*() {
    const start = performance.now()
    yield* Effect.forEach(Array.from({ length: n }), () => Computer.getMousePosition({ id: "b1" }), {
      concurrency: 32,
      discard: true
    })
    return n / ((performance.now() - start) / 1000)
  }))
await run(3000)
for (let i = 0; i < 3; i++) console.log(Math.round(await run(n)))
await rt.dispose()
child.kill()
