/**
 * What the bin's load (test/load/mixed-driver.ts, `npm run load`) found in the simulator, each
 * fixed with its own check here.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Browsers, Deployments, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { png } from "../src/testing/internal/values.js"

/** The SDK against the in-memory simulator of the default seed. */
const simulated = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(KernelSimulator.defaultSeed)))

describe("the simulator under load", () => {
  it("a screenshot of a size already served is not made again (bounded cache of PNGs)", () => {
    // deflating 1920 × 1080 pixels per screenshot was an eighth of the bin's CPU under the mixed load
    const first = png(1920, 1080)
    expect(png(1920, 1080)).toBe(first)
    expect(png(1920, 1080, [0, 0, 0])).not.toBe(first)
    // bounded: sixteen other sizes later, the first is made anew (same bytes, another array)
    for (let i = 1; i <= 16; i++) png(10 + i, 10)
    const again = png(1920, 1080)
    expect(again).not.toBe(first)
    expect(again).toEqual(first)
  })
})

describe("the simulator's bounded collections under load", () => {
  it.effect(
    "deleted browsers beyond the limit are evicted before a live one created earlier",
    () =>
      Effect.gen(function*() {
        // the mixed load creates and deletes a browser per flow: the deleted ones (kept for
        // include_deleted) filled /browsers and evicted the seed's browser_1, still in use (404)
        for (let i = 0; i <= KernelSimulator.collectionLimit; i++) {
          const { session_id } = yield* Browsers.create({})
          yield* Browsers.delete({ id: session_id })
        }
        expect((yield* Browsers.retrieve({ id: "browser_1" })).session_id).toBe("browser_1")
        const evictions = yield* Effect.flatMap(KernelSimulator.KernelSimulator, (s) => s.evictions)
        expect(evictions.length).toBeGreaterThan(0)
        expect(evictions.map((e) => e.id)).not.toContain("browser_1")
      }).pipe(Effect.provide(simulated)),
    60_000
  )
})

describe("the simulator's deployments under load", () => {
  it.effect(
    "deployments deleted (stopped, still listed) beyond the limit are evicted before a live one",
    () =>
      Effect.gen(function*() {
        // the mixed load deploys and deletes an app per flow: a deleted deployment stays (stopped,
        // marked for deletion), they filled /deployments and evicted the seed's deployments (404)
        const zip = new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)])
        for (let i = 0; i <= KernelSimulator.collectionLimit; i++) {
          const { id } = yield* Deployments.create({ entrypoint_rel_path: "index.ts", file: zip })
          yield* Deployments.delete({ id })
        }
        yield* Deployments.delete({ id: "dep_stopped" })
        expect((yield* Deployments.retrieve({ id: "dep_running" })).status).toBe("running")
      }).pipe(Effect.provide(simulated)),
    60_000
  )
})
