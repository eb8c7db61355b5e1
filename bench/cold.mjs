// Cold start in a fresh process, over the built package (`npm run build` first): the whole package through its
// exports (what Node loads: dist/node), one area through dist/esm (what a bundler's output or a deep import loads).
// Usage: node bench/cold.mjs MODE BASE_URL -> prints JSON
//   base          importing effect + @effect/platform (baseImportMs)
//   sdk           the same, then the whole package through its exports (sdkImportMs), then the first
//                 call, incl. building Kernel.layer and the transport (firstCallMs)
//   area:<Area>[,<Second>]
//                 the same base, then the shared client (dist/esm/KernelClient.js and KernelConfig.js:
//                 clientImportMs), then one area module on top of it (dist/esm/<Area>.js: areaImportMs),
//                 then, if named, a second area above the first (secondAreaImportMs).
//                 The package exports only "." (the index evaluates every area): this is what one area
//                 costs a bundler's output or a deep import, the ESM graph of that area alone.
//                 dist/esm is chunked (scripts/build.mjs): KernelClient.js loads the shared runtime chunk
//                 (dist/esm/internal/runtime.js: the call pipeline, errors, events, retry, config, common
//                 schemas), the code every area shares, so clientImportMs includes it and areaImportMs is
//                 the area's own files; secondAreaImportMs is the true marginal cost of one more area
//   layer         the whole package imported and the config + transport built, then the first build of
//                 Kernel.layer (118 operations and the client) in this process (layerBuildMs) and the
//                 median of 20 builds after it (layerRebuildMs)
// Each phase is also given in CPU time (`...CpuMs`: user + system of this process, process.cpuUsage), which
// moves less than the wall clock when other work shares the cores
// EFFECT_KERNEL_DIST=<dir>: another build's dist/esm (e.g. an earlier revision built into .tmp) instead of
// this package's, imported by path; the figures of two builds then come from the same machine and hour
import { pathToFileURL } from "node:url"
const [mode = "base", base = "http://127.0.0.1:1"] = process.argv.slice(2)
const otherDist = process.env.EFFECT_KERNEL_DIST
const dist = otherDist === undefined
  ? new URL("../dist/esm/", import.meta.url)
  : pathToFileURL(otherDist.endsWith("/") ? otherDist : `${otherDist}/`)
// the package itself, through its exports (dist/node), or the other build's index
const importPackage = () => otherDist === undefined ? import("effect-kernel") : import(new URL("index.js", dist).href)
const cpu = () => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1000
}
const c0 = cpu()
const t0 = performance.now()
await import("effect")
await import("@effect/platform")
const t1 = performance.now()
const c1 = cpu()
const result = { baseImportMs: t1 - t0, baseImportCpuMs: c1 - c0 }
if (mode === "sdk") {
  const { Computer, Kernel, KernelConfig } = await importPackage()
  result.sdkImportMs = performance.now() - t1
  result.sdkImportCpuMs = cpu() - c1
  const { Effect, Layer, Redacted } = await import("effect")
  const { NodeHttpClient } = await import("@effect/platform-node")
  const layer = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
  const t2 = performance.now()
  await Effect.runPromise(Effect.provide(Computer.getMousePosition({ id: "b1" }), layer))
  result.firstCallMs = performance.now() - t2
} else if (mode.startsWith("area:")) {
  await import(new URL("KernelConfig.js", dist).href)
  await import(new URL("KernelClient.js", dist).href)
  const t2 = performance.now()
  const c2 = cpu()
  result.clientImportMs = t2 - t1
  result.clientImportCpuMs = c2 - c1
  const [first, second] = mode.slice("area:".length).split(",")
  const area = await import(new URL(`${first}.js`, dist).href)
  const t3 = performance.now()
  const c3 = cpu()
  result.areaImportMs = t3 - t2
  result.areaImportCpuMs = c3 - c2
  if (area.layer === undefined) throw new Error(`${mode}: no layer exported`)
  if (second !== undefined) {
    const next = await import(new URL(`${second}.js`, dist).href)
    result.secondAreaImportMs = performance.now() - t3
    result.secondAreaImportCpuMs = cpu() - c3
    if (next.layer === undefined) throw new Error(`${mode}: no layer exported by ${second}`)
  }
} else if (mode === "layer") {
  const { Kernel, KernelConfig } = await importPackage()
  const { Effect, Layer, Redacted, Scope, Exit } = await import("effect")
  const { FetchHttpClient } = await import("@effect/platform")
  const needs = await Effect.runPromise(
    Effect.scoped(
      Layer.build(
        Layer.merge(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base }), FetchHttpClient.layer)
      )
    )
  )
  const build = Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(Kernel.layer, scope).pipe(Effect.provide(needs))
    yield* Scope.close(scope, Exit.void)
    return context
  })
  const t2 = performance.now()
  const c2 = cpu()
  await Effect.runPromise(build)
  result.layerBuildMs = performance.now() - t2
  result.layerBuildCpuMs = cpu() - c2
  const times = []
  for (let i = 0; i < 20; i++) {
    const t = performance.now()
    await Effect.runPromise(build)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  result.layerRebuildMs = (times[9] + times[10]) / 2
} else if (mode !== "base") {
  throw new Error(`unknown mode ${mode}`)
}
process.stdout.write(JSON.stringify(result) + "\n")
process.exit(0)
