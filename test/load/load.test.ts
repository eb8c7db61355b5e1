/**
 * Load: 20,000 calls at 256 in flight against the simulator over loopback HTTP, with 2 % of
 * requests answered 503. Run with `npm run test:load` (also from .ci/run); not part of `npm test`.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Computer, Kernel, KernelConfig } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

const calls = 20_000
const inFlight = 256

const gc = () => (globalThis as { gc?: () => void }).gc?.()
const heapMiB = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 1024 / 1024
}

describe("load", () => {
  it.live(`${calls} calls at ${inFlight} in flight with 2 % injected 503s all succeed`, () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.serve({
        // the whole run is counted from the log, so it keeps every request here
        requestLogSize: 100_000,
        requestLogBytes: 256 * 1024 * 1024,
        seed: { organizations: [{ id: "o", token: "t", browsers: [{ id: "b", mouse: { x: 5, y: 6 } }] }] }
      })
      const KernelLive = Kernel.layer.pipe(
        Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("t"), baseUrl: simulator.url, maxRetries: 5 })),
        Layer.provide(NodeHttpClient.layerUndici)
      )
      yield* Effect.gen(function*() {
        // warm up, then take the baseline
        yield* Effect.forEach(Array.from({ length: 2000 }), () => Computer.getMousePosition({ id: "b" }), {
          concurrency: inFlight,
          discard: true
        })
        const heapBefore = heapMiB()
        const socketsBefore = yield* simulator.openConnections
        yield* simulator.clearRequests
        yield* simulator.injectFault({ route: "getMousePosition", status: 503, probability: 0.02 })

        const started = Date.now()
        const results = yield* Effect.forEach(
          Array.from({ length: calls }),
          () => Effect.either(Computer.getMousePosition({ id: "b" })),
          { concurrency: inFlight }
        )
        const seconds = (Date.now() - started) / 1000
        const failures = results.filter((r) => r._tag === "Left")
        const requests = yield* simulator.requests
        const injected = requests.filter((r) => r.status === 503).length

        yield* simulator.clearFaults
        yield* simulator.clearRequests
        const heapAfter = heapMiB()
        // idle keep-alive connections are closed by the server after 5 s: none may be left behind
        const socketsPeak = yield* simulator.openConnections
        const idleSince = Date.now()
        while ((yield* simulator.openConnections) > 0 && Date.now() - idleSince < 8000) yield* Effect.sleep("50 millis")
        const socketsAfter = yield* simulator.openConnections
        console.log(
          `load: ${calls} calls in ${seconds.toFixed(2)} s (${Math.round(calls / seconds)} calls/s), ` +
            `${requests.length} requests, ${injected} injected 503s (${
              (100 * injected / requests.length).toFixed(1)
            } %), ` +
            `${failures.length} failures; heap ${heapBefore.toFixed(1)} -> ${heapAfter.toFixed(1)} MiB; ` +
            `sockets ${socketsBefore} before, ${socketsPeak} after the run, ${socketsAfter} once idle`
        )
        expect(failures).toEqual([])
        expect(injected).toBeGreaterThan(calls * 0.01)
        expect(requests.length).toBe(calls + injected)
        expect(socketsAfter).toBe(0)
        expect(heapAfter - heapBefore).toBeLessThan(16)
      }).pipe(Effect.provide(KernelLive))
    }).pipe(Effect.scoped), 300_000)
})
