import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Redacted, Stream, Supervisor } from "effect"
import { BrowserPools, Computer, Deployments, Kernel, KernelConfig, Replays } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

const seed: KernelSimulator.Seed = {
  organizations: [{
    id: "o",
    token: "t",
    browsers: [{ id: "b", replays: [{ id: "huge", size: 8 * 1024 * 1024 * 1024 }, { id: "small", size: 4096 }] }],
    pools: [{ id: "p" }],
    deployments: [{ id: "d", state: "running" }]
  }]
}

const served = (f: (served: KernelSimulator.Served) => Effect.Effect<void, unknown, Kernel.Services>) =>
  Effect.gen(function*() {
    const simulator = yield* KernelSimulator.serve({ seed })
    const KernelLive = Kernel.layer.pipe(
      Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("t"), baseUrl: simulator.url })),
      Layer.provide(NodeHttpClient.layerUndici)
    )
    yield* f(simulator).pipe(Effect.provide(KernelLive))
  }).pipe(Effect.scoped)

/** Polls `count` until it is at most `target`, for at most `ms`; returns the time it took. */
const settleTo = (count: Effect.Effect<number>, target: number, ms: number) =>
  Effect.gen(function*() {
    const started = Date.now()
    while ((yield* count) > target) {
      if (Date.now() - started > ms) return Infinity
      yield* Effect.sleep("5 millis")
    }
    return Date.now() - started
  })

/** Starts a download of an endless replay and resolves once bytes are flowing. */
const startDownload = Effect.gen(function*() {
  const flowing = yield* Deferred.make<void>()
  const fiber = yield* Replays.download({ id: "b", replayId: "huge" }).pipe(
    Stream.tap(() => Deferred.succeed(flowing, undefined)),
    Stream.runDrain,
    Effect.fork
  )
  yield* Deferred.await(flowing)
  return fiber
})

describe("interruption and resources (loopback HTTP)", () => {
  it.live("interrupting a download mid-body closes its socket within 3 s (at once: not on an idle time-out)", () =>
    served((simulator) =>
      Effect.gen(function*() {
        const fiber = yield* startDownload
        expect(yield* simulator.openConnections).toBe(1)
        yield* Fiber.interrupt(fiber)
        const took = yield* settleTo(simulator.openConnections, 0, 3000)
        expect(took).toBeLessThan(3000)
      })
    ))

  it.live(
    "200 downloads interrupted in a row leave the open-socket count where it started",
    () =>
      served((simulator) =>
        Effect.gen(function*() {
          yield* BrowserPools.list() // one keep-alive connection, the baseline
          const baseline = yield* simulator.openConnections
          let peak = baseline
          for (let i = 0; i < 200; i++) {
            const fiber = yield* startDownload
            peak = Math.max(peak, yield* simulator.openConnections)
            yield* Fiber.interrupt(fiber)
          }
          // no growth: at most the pooled connection and the one download in flight
          expect(peak).toBeLessThanOrEqual(baseline + 1)
          // undici may keep an aborted download's socket until its pool's keep-alive ends (5 s here)
          expect(yield* settleTo(simulator.openConnections, baseline, 6000)).toBeLessThan(6000)
          // and the client still works
          expect(yield* BrowserPools.list()).toHaveLength(1)
        })
      ),
    60_000
  )

  it.live("no fiber an operation started is left running after it completes, fails or is interrupted", () =>
    served(() =>
      Effect.gen(function*() {
        const supervisor = yield* Supervisor.track
        const operations: ReadonlyArray<Effect.Effect<unknown, unknown, Kernel.Services>> = [
          BrowserPools.list(),
          Computer.getMousePosition({ id: "b" }),
          Computer.getMousePosition({ id: "missing" }),
          Computer.setCursorVisibility({ id: "b", hidden: true }),
          Deployments.delete({ id: "d" }),
          Stream.runDrain(Replays.download({ id: "b", replayId: "small" })),
          Stream.runDrain(Replays.download({ id: "b", replayId: "huge" }).pipe(Stream.take(3))),
          Effect.flatMap(startDownload, Fiber.interrupt)
        ]
        for (const operation of operations) {
          yield* Effect.exit(Effect.supervised(operation, supervisor))
        }
        const fibers = yield* supervisor.value
        yield* settleTo(Effect.sync(() => fibers.filter((f) => f.unsafePoll() === null).length), 0, 1000)
        const running = fibers.filter((f) => f.unsafePoll() === null)
        expect(running.map((f) => f.id())).toEqual([])
      })
    ))
})
