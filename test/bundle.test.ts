import { describe, expect, it } from "@effect/vitest"
import { bundle as bundleBytes } from "../scripts/bundle.js"

const bundle = async (contents: string) => new TextDecoder().decode(await bundleBytes(contents))

describe("tree-shaking", () => {
  it("a program that only lists pools bundles without the replay, computer and deployment code", async () => {
    const onlyPools = await bundle(`
      import { FetchHttpClient } from "@effect/platform"
      import { Effect, Layer, Redacted } from "effect"
      import { BrowserPools, KernelClient, KernelConfig } from "effect-kernel"
      const layer = BrowserPools.layerList.pipe(
        Layer.provide(KernelClient.layer),
        Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })),
        Layer.provide(FetchHttpClient.layer)
      )
      Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)
    `)
    expect(onlyPools).toContain("Kernel.")
    expect(onlyPools).toContain("/browser_pools")
    // the error classes are one shared module; the operations are not
    for (
      const absent of [
        "/replays/",
        "ReplayPending",
        "downloadReplay",
        "get_mouse_position",
        "/deployments/",
        "KernelSimulator"
      ]
    ) {
      expect(onlyPools).not.toContain(absent)
    }
    const everything = await bundle(`
      import { FetchHttpClient } from "@effect/platform"
      import { Effect, Layer, Redacted } from "effect"
      import { BrowserPools, Kernel, KernelConfig } from "effect-kernel"
      const layer = Kernel.layer.pipe(Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })), Layer.provide(FetchHttpClient.layer))
      Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)
    `)
    expect(everything).toContain("/replays/")
    expect(onlyPools.length).toBeLessThan(everything.length)
  }, 60_000)

  it("a program that uses one generated area bundles none of the other 21", async () => {
    const onlyBrowsers = await bundle(`
      import { FetchHttpClient } from "@effect/platform"
      import { Effect, Layer, Redacted } from "effect"
      import { Browsers, KernelClient, KernelConfig } from "effect-kernel"
      const layer = Browsers.layer.pipe(
        Layer.provide(KernelClient.layer),
        Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })),
        Layer.provide(FetchHttpClient.layer)
      )
      Effect.runPromise(Browsers.retrieve({ id: "b1" }).pipe(Effect.provide(layer))).then(console.log)
    `)
    expect(onlyBrowsers).toContain("/browsers/{id}/curl")
    for (
      const absent of [
        "/browser_pools",
        "/computer/",
        "/fs/",
        "/process/",
        "/replays",
        "/auth/connections",
        "/credentials",
        "/deployments",
        "/invocations",
        "/api_keys",
        "KernelSimulator"
      ]
    ) {
      expect(onlyBrowsers).not.toContain(absent)
    }
  }, 60_000)
})
