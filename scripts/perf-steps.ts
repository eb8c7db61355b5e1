// Where the SDK's per-call time goes on KernelTransport: the bare call, then one piece of the
// SDK's path added at a time. Usage: tsx scripts/perf-steps.ts [rounds=3] [calls=20000]
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Exit, Layer, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import { startBenchServer } from "../bench/fixtures.mjs"
import { Computer, Kernel, KernelConfig, KernelTransport } from "../src/index.js"
import * as Timeout from "../src/internal/timeout.js"

const rounds = Number(process.argv[2] ?? 3)
const calls = Number(process.argv[3] ?? 20_000)
const { base, child } = await startBenchServer({ POOLS: "10" })
const rt = ManagedRuntime.make(
  Layer.merge(
    Kernel.layer.pipe(
      Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base }))
    ),
    Layer.empty
  ).pipe(Layer.provideMerge(KernelTransport.layerUndici))
)
const Mouse = Schema.Struct({ x: Schema.Number, y: Schema.Number })
const decode = Schema.decodeUnknownEither(Mouse)
const req = () =>
  HttpClientRequest.post(`${base}/browsers/b1/computer/get_mouse_position`).pipe(
    HttpClientRequest.bearerToken("sk_bench")
  )
const bare = Effect.flatMap(HttpClient.HttpClient, (c) => Effect.flatMap(c.execute(req()), (r) => r.json))
const scoped = Effect.flatMap(HttpClient.HttpClient, (c) => {
  const s = HttpClient.withScope(c)
  return Effect.acquireUseRelease(
    Scope.make(),
    (scope) => Scope.extend(Effect.flatMap(s.execute(req()), (r) => r.json), scope),
    (scope) => Scope.close(scope, Exit.void)
  )
})
const scopedDecoded = Effect.flatMap(scoped, (json) => decode(json))
const spanned = Effect.withSpan(scopedDecoded, "Kernel.x", { kind: "client", captureStackTrace: false })
const timed = Effect.withSpan(
  Timeout.timeoutFail(scopedDecoded, Duration.seconds(30), () => "timeout"),
  "Kernel.x",
  { kind: "client", captureStackTrace: false }
)
const sdk = Computer.getMousePosition({ id: "b1" })
const variants: Record<string, Effect.Effect<unknown, unknown, ManagedRuntime.ManagedRuntime.Context<typeof rt>>> = {
  bare,
  scoped,
  scopedDecoded,
  spanned,
  timed,
  sdk
}
const run = (call: Effect.Effect<unknown, unknown, ManagedRuntime.ManagedRuntime.Context<typeof rt>>, n = calls) =>
  rt.runPromise(
    Effect.gen(function*() {
      const start = performance.now()
      yield* Effect.forEach(Array.from({ length: n }), () => call, { concurrency: 32, discard: true })
      return n / ((performance.now() - start) / 1000)
    })
  )
// raw undici.request + body.json(), 32 in flight, no Effect: the floor
const { Agent, request } = await import("undici")
const agent = new Agent()
const raw = async (n = calls) => {
  const start = performance.now()
  let next = 0
  const worker = async () => {
    while (next++ < n) {
      const { body } = await request(`${base}/browsers/b1/computer/get_mouse_position`, {
        method: "POST",
        headers: { authorization: "Bearer sk_bench" },
        dispatcher: agent
      })
      await body.json()
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
  return n / ((performance.now() - start) / 1000)
}
const results: Record<string, Array<number>> = {}
await raw(2000)
for (const v of Object.values(variants)) await run(v, 2000)
for (let i = 0; i < rounds; i++) {
  ;(results.raw ??= []).push(await raw())
  for (const [name, v] of Object.entries(variants)) (results[name] ??= []).push(await run(v))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const b = median(results.raw)
for (const [name, xs] of Object.entries(results)) {
  const m = median(xs)
  console.log(
    `${name.padEnd(16)} ${Math.round(m).toString().padStart(7)} calls/s  ${(m / b).toFixed(2)}×  ${
      (1e6 / m).toFixed(1)
    } µs`
  )
}
await rt.dispose()
await agent.close()
child.kill()
