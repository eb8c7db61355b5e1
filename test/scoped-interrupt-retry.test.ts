import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, type Scope, TestClock } from "effect"
import { BrowserPools, Browsers, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

// An interrupted `Browsers.scoped` / `BrowserPools.acquireScoped` waits for the attempt in flight only: it
// waited out the retry's back-off (a 429's Retry-After), then made the browser (or lease) anyway, and
// deleted (released) it, all for a caller that was gone.
const simulator = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))

const routes = Effect.map(
  Effect.flatMap(KernelSimulator.KernelSimulator, (simulator) => simulator.requests),
  (requests) => requests.map((request) => `${request.route}:${request.status}`)
)

describe("interrupted between attempts", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly route: KernelSimulator.Fault["route"]
    readonly scoped: Effect.Effect<unknown, unknown, Scope.Scope | Kernel.Services>
  }> = [
    { name: "Browsers.scoped", route: "createBrowser", scoped: Browsers.scoped({}) },
    {
      name: "BrowserPools.acquireScoped",
      route: "acquireBrowser",
      scoped: BrowserPools.acquireScoped({ idOrName: "pool_kiosk" })
    }
  ]
  for (const { name, route, scoped } of cases) {
    it.effect(`${name}: no second attempt, nothing to delete or release, the interruption at once`, () =>
      Effect.gen(function*() {
        const control = yield* KernelSimulator.KernelSimulator
        yield* control.injectFault({ route, status: 429, retryAfter: 4, times: 1 })
        const fiber = yield* Effect.fork(Effect.scoped(Effect.andThen(scoped, Effect.never)))
        yield* TestClock.adjust("200 millis")
        // no clock moves after this: the interruption must not wait for the 4 s back-off
        yield* Fiber.interrupt(fiber)
        expect(yield* routes).toEqual([`${route}:429`])
      }).pipe(Effect.provide(simulator)))
  }

  it.effect("not interrupted: the retry goes on, and the browser is deleted when the scope closes", () =>
    Effect.gen(function*() {
      const control = yield* KernelSimulator.KernelSimulator
      yield* control.injectFault({ route: "createBrowser", status: 429, retryAfter: 4, times: 1 })
      const fiber = yield* Effect.fork(Effect.scoped(Browsers.scoped({})))
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(fiber)
      expect(yield* routes).toEqual(["createBrowser:429", "createBrowser:200", "deleteBrowser:204"])
    }).pipe(Effect.provide(simulator)))
})
