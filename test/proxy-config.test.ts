/**
 * A union told apart by its members' fields only (a proxy's `config`: datacenter, ISP, residential,
 * mobile, custom): every field of the member that fits exactly is kept, both ways (the request's
 * body encoded, the answer decoded), not just those of the first member that fits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Kernel, Proxies } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

const TestKernel = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))

const residential = { country: "US", city: "sanfrancisco", zip: "94107", os: "macos" } as const
const mobile = { country: "US", city: "austin", carrier: "verizon" } as const

describe("a proxy's config", () => {
  it("decodes as the member it fits exactly", () => {
    const decode = Schema.decodeUnknownSync(Proxies.Proxy)
    expect(decode({ name: "r", type: "residential", config: residential }).config).toEqual(residential)
    expect(decode({ name: "m", type: "mobile", config: mobile }).config).toEqual(mobile)
    expect(decode({ name: "d", type: "datacenter", config: { country: "FR" } }).config).toEqual({ country: "FR" })
    // a field the document does not know yet still decodes (as the first member that fits)
    expect(decode({ name: "x", type: "datacenter", config: { country: "FR", future: 1 } }).config).toEqual({
      country: "FR"
    })
  })

  it.effect("keeps every field through create and retrieve", () =>
    Effect.gen(function*() {
      const created = yield* Proxies.create({ type: "residential", name: "r", config: residential })
      expect(created.config).toEqual(residential)
      const id = created.id
      expect(id).toBeDefined()
      const retrieved = yield* Proxies.retrieve({ id: id ?? "" })
      expect(retrieved.config).toEqual(residential)
      const simulator = yield* KernelSimulator.KernelSimulator
      const requests = yield* simulator.requests
      expect(JSON.parse(String(requests[0]!.body)).config).toEqual(residential)
    }).pipe(Effect.provide(TestKernel)))
})
