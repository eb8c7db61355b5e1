import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Stream, TestClock } from "effect"
import { BrowserPools, Computer, Kernel, Replays } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { spawn } from "node:child_process"
import { simulatorBin } from "./utils/bin.js"
import { settle } from "./utils/mock.js"

const kernel = (seed?: KernelSimulator.Seed, options?: KernelSimulator.LayerOptions) =>
  Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(seed, options)))

describe("KernelSimulator in memory", () => {
  it.effect("serves the default seed with its token", () =>
    Effect.gen(function*() {
      const pools = yield* BrowserPools.list()
      expect(pools.map((p) => p.id)).toEqual(["pool_small", "pool_stealth", "pool_kiosk"])
      expect(yield* Computer.getMousePosition({ id: "browser_1" })).toEqual({ x: 640, y: 360 })
    }).pipe(Effect.provide(kernel())))

  it.effect("makes a replay ready on the Effect clock (TestClock)", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      const fiber = yield* Effect.fork(
        Replays.download({ id: "b", replayId: "r" }).pipe(Stream.runFold(0, (n, c) => n + c.length))
      )
      yield* settle
      yield* TestClock.adjust("29 seconds")
      yield* settle
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toBe(2048)
      // polls at 0, 5, ..., 30 seconds
      expect((yield* simulator.requests).map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202, 200])
    }).pipe(
      Effect.provide(
        kernel({
          organizations: [{
            id: "o",
            token: "t",
            browsers: [{ id: "b", replays: [{ id: "r", size: 2048, readyAfter: "30 seconds", retryAfter: 5 }] }]
          }]
        })
      )
    ))

  it.effect("an injected delay runs on the Effect clock and trips the client's timeout", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* simulator.injectFault({ route: "getMousePosition", delay: "1 minute" })
      const fiber = yield* Effect.fork(Effect.flip(Computer.getMousePosition({ id: "browser_1" })))
      yield* settle
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "Timeout", path: "/browsers/browser_1/computer/get_mouse_position" })
    }).pipe(Effect.provide(kernel(undefined, { config: { timeout: "2 seconds", maxRetries: 0 } }))))

  it.effect("a stalled replay body trips the idle timeout", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* simulator.injectFault({ route: "downloadReplay", stallAt: 1000 })
      const fiber = yield* Effect.fork(
        Effect.flip(
          Stream.runDrain(Replays.download({ id: "browser_1", replayId: "replay_1" }, { maxWait: "1 minute" }))
        )
      )
      yield* settle
      yield* TestClock.adjust("2 seconds") // the two 202s
      yield* settle
      yield* TestClock.adjust("10 seconds")
      expect((yield* Fiber.join(fiber))._tag).toBe("Timeout")
    }).pipe(Effect.provide(kernel(undefined, { config: { idleTimeout: "10 seconds" } }))))

  it.effect("a token of another organization cannot see the first one's browsers", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(Computer.getMousePosition({ id: "browser_1" })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(BrowserPools.list()))._tag).toBe("Forbidden")
    }).pipe(Effect.provide(kernel(undefined, { token: "sk_sim_free" }))))
})

describe("effect-kernel-simulator bin", () => {
  it("serves over HTTP on the port it prints, to any client", async () => {
    const child = spawn(process.execPath, [await simulatorBin(), "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.on("data", (data: Buffer) => {
          out += data.toString()
          const match = /listening on (http:\/\/\S+)/.exec(out)
          if (match) resolve(match[1]!)
        })
        child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)))
      })
      const ok = await fetch(`${url}/browser_pools`, {
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      })
      expect(ok.status).toBe(200)
      expect(((await ok.json()) as Array<unknown>).length).toBe(3)
      const denied = await fetch(`${url}/browser_pools`)
      expect(denied.status).toBe(401)
      expect(await denied.json()).toMatchObject({ code: "unauthorized" })
      const pending = await fetch(`${url}/browsers/browser_1/replays/replay_1`, {
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      })
      expect(pending.status).toBe(202)
      expect(pending.headers.get("retry-after")).toBe("1")
    } finally {
      child.kill("SIGTERM")
    }
  }, 30_000)
})
