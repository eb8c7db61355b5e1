// Cold start in a fresh process: importing effect + @effect/platform ("base"), the same plus
// effect-kernel ("sdk"), and for "sdk" the first call against the bench server.
// Usage: node bench/cold.mjs base|sdk BASE_URL -> prints JSON
const mode = process.argv[2]
const base = process.argv[3]
const t0 = performance.now()
await import("effect")
await import("@effect/platform")
const t1 = performance.now()
let sdkImportMs = 0
let firstCallMs = 0
if (mode === "sdk") {
  const { Computer, Kernel, KernelConfig } = await import("effect-kernel") // the package itself, through its exports (dist/esm)
  sdkImportMs = performance.now() - t1
  const { Effect, Layer, Redacted } = await import("effect")
  const { NodeHttpClient } = await import("@effect/platform-node")
  const layer = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
  const t2 = performance.now()
  await Effect.runPromise(Effect.provide(Computer.getMousePosition({ id: "b1" }), layer))
  firstCallMs = performance.now() - t2
}
process.stdout.write(JSON.stringify({ baseImportMs: t1 - t0, sdkImportMs, firstCallMs }) + "\n")
process.exit(0)
