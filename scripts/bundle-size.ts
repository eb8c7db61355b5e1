// Minified bundle sizes of a program that lists browser pools: effect-kernel (only the pools
// operation) against the official @onkernel/sdk. Usage: npx tsx scripts/bundle-size.ts
import { gzipSync } from "node:zlib"
import { bundle } from "./bundle.js"
const programs = {
  "effect-kernel (BrowserPools.list only, FetchHttpClient)": `
    import { FetchHttpClient } from "@effect/platform"
    import { Effect, Layer, Redacted } from "effect"
    import { BrowserPools, KernelClient, KernelConfig } from "effect-kernel"
    const layer = BrowserPools.layerList.pipe(Layer.provide(KernelClient.layer),
      Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })), Layer.provide(FetchHttpClient.layer))
    Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)`,
  "effect-kernel (Kernel.layer, all five operations)": `
    import { FetchHttpClient } from "@effect/platform"
    import { Effect, Layer, Redacted } from "effect"
    import { BrowserPools, Kernel, KernelConfig } from "effect-kernel"
    const layer = Kernel.layer.pipe(Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })), Layer.provide(FetchHttpClient.layer))
    Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)`,
  "@onkernel/sdk (browserPools.list)": `
    import Kernel from "@onkernel/sdk"
    new Kernel({ apiKey: "k" }).browserPools.list().then(console.log)`
}
for (const [name, contents] of Object.entries(programs)) {
  const code = await bundle(contents)
  console.log(
    `${name.padEnd(56)} ${(code.length / 1024).toFixed(1).padStart(7)} KiB minified, ${
      (gzipSync(code).length / 1024).toFixed(1).padStart(6)
    } KiB gzip`
  )
}
