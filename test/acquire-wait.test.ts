import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import { BrowserPools, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

// A pool's `acquire` is held by the service until a browser is free, up to `acquire_timeout_seconds`: a wait
// longer than the call's `timeout` (60 s by default) ended in a `Timeout` at 60 s, where the service answers
// 204 at 90 s (NoBrowserAvailable), or the browser a release gives at 75 s (a lease the client lost).
const simulator = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))

const seconds = (n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) yield* TestClock.adjust("1 second")
  })

describe("an acquire that waits longer than the call's timeout", () => {
  it.effect("none comes within acquire_timeout_seconds (90 s): NoBrowserAvailable, not Timeout", () =>
    Effect.gen(function*() {
      const held = yield* BrowserPools.acquire({ idOrName: "pool_kiosk" })
      expect(held).toBeDefined()
      const waiting = yield* Effect.fork(
        Effect.either(
          Effect.scoped(BrowserPools.acquireScoped({ idOrName: "pool_kiosk", acquire_timeout_seconds: 90 }))
        )
      )
      yield* seconds(100)
      const result = yield* Fiber.join(waiting)
      expect(result._tag === "Left" && result.left._tag).toBe("NoBrowserAvailable")
    }).pipe(Effect.provide(simulator)))

  it.effect("a browser released at 75 s is the waiter's", () =>
    Effect.gen(function*() {
      const held = yield* BrowserPools.acquire({ idOrName: "pool_kiosk" })
      const waiting = yield* Effect.fork(
        Effect.either(BrowserPools.acquire({ idOrName: "pool_kiosk", acquire_timeout_seconds: 90 }))
      )
      yield* seconds(75)
      if (held._tag !== "Ok") return expect.unreachable("the pool has a browser")
      yield* BrowserPools.release({ idOrName: "pool_kiosk", session_id: held.value.session_id })
      yield* seconds(2)
      const result = yield* Fiber.join(waiting)
      expect(result._tag === "Right" && result.right._tag).toBe("Ok")
    }).pipe(Effect.provide(simulator)))
})
