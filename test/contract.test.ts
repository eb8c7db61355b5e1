import { NodeFileSystem } from "@effect/platform-node"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import { BrowserPools, Computer, Deployments, KernelClient, Replays } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { targets } from "./utils/targets.js"

const seed: KernelSimulator.Seed = {
  organizations: [
    {
      id: "org_a",
      token: "sk_contract_a",
      browsers: [
        {
          id: "browser_a",
          mouse: { x: 10, y: 20 },
          replays: [
            { id: "ready", size: 100_000 },
            { id: "recording", size: 5000, pendingPolls: 1, retryAfter: 1 },
            { id: "forever", pendingPolls: 1_000_000, retryAfter: 1 }
          ]
        },
        { id: "a/b ü?#", mouse: { x: 1, y: 2 } }
      ],
      pools: [{ id: "pool_a1", name: "a1" }, { id: "pool_a2", browser_pool_config: { size: 5, stealth: true } }],
      deployments: [
        { id: "running", state: "running" },
        { id: "stopped", state: "stopped" },
        { id: "failed", state: "failed" }
      ]
    },
    { id: "org_b", token: "sk_contract_b", pools: [{ id: "pool_b" }], browsers: [{ id: "browser_b" }] },
    { id: "org_free", token: "sk_contract_free", plan: "free", browsers: [{ id: "browser_f", replays: [{ id: "r" }] }] }
  ]
}

const fast = { maxRetries: 0 }

describe.each(targets)("contract: $name", (target) => {
  const provide = (options: { token?: string; config?: object } = {}) =>
    Effect.provide(
      target.layer({ seed, token: options.token ?? "sk_contract_a", config: { ...fast, ...options.config } })
    )

  it.live("lists only the caller's pools, decoded", () =>
    Effect.gen(function*() {
      const pools = yield* BrowserPools.list()
      expect(pools.map((p) => p.id)).toEqual(["pool_a1", "pool_a2"])
      expect(pools[1]!.browser_pool_config.stealth).toBe(true)
      const simulator = yield* KernelSimulator.KernelSimulator
      const [recorded] = yield* simulator.requests
      expect(recorded).toMatchObject({ method: "GET", path: "/browser_pools", route: "listBrowserPools", status: 200 })
      expect(recorded!.headers["authorization"]).toBe("Bearer <redacted>")
    }).pipe(provide()))

  it.live("another organization sees its own pools", () =>
    Effect.gen(function*() {
      const pools = yield* BrowserPools.list()
      expect(pools.map((p) => p.id)).toEqual(["pool_b"])
    }).pipe(provide({ token: "sk_contract_b" })))

  it.live("an unknown token is Unauthorized on every route", () =>
    Effect.gen(function*() {
      const tags = [
        (yield* Effect.flip(BrowserPools.list()))._tag,
        (yield* Effect.flip(Computer.getMousePosition({ id: "browser_a" })))._tag,
        (yield* Effect.flip(Computer.setCursorVisibility({ id: "browser_a", hidden: true })))._tag,
        (yield* Effect.flip(Deployments.delete({ id: "running" })))._tag,
        (yield* Effect.flip(Stream.runDrain(Replays.download({ id: "browser_a", replayId: "ready" }))))._tag
      ]
      expect(tags).toEqual(Array(5).fill("Unauthorized"))
    }).pipe(provide({ token: "sk_nobody" })))

  it.live("a plan without access is Forbidden on pools and replays", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(BrowserPools.list()))._tag).toBe("Forbidden")
      const error = yield* Effect.flip(Stream.runDrain(Replays.download({ id: "browser_f", replayId: "r" })))
      expect(error).toMatchObject({ _tag: "Forbidden", status: 403, code: "forbidden" })
    }).pipe(provide({ token: "sk_contract_free" })))

  it.live("reads the mouse position; unknown and foreign browsers are NotFound", () =>
    Effect.gen(function*() {
      expect(yield* Computer.getMousePosition({ id: "browser_a" })).toEqual({ x: 10, y: 20 })
      expect(yield* Computer.getMousePosition({ id: "a/b ü?#" })).toEqual({ x: 1, y: 2 })
      expect((yield* Effect.flip(Computer.getMousePosition({ id: "nope" })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(Computer.getMousePosition({ id: "browser_b" })))._tag).toBe("NotFound")
    }).pipe(provide()))

  it.live("sets cursor visibility and the simulator's state follows", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      expect(yield* Computer.setCursorVisibility({ id: "browser_a", hidden: true })).toEqual({ ok: true })
      expect(Option.map(yield* simulator.browser("browser_a"), (b) => b.cursorHidden)).toEqual(Option.some(true))
      yield* Computer.setCursorVisibility({ id: "browser_a", hidden: false })
      expect(Option.map(yield* simulator.browser("browser_a"), (b) => b.cursorHidden)).toEqual(Option.some(false))
      const [first] = yield* simulator.requests
      expect(first!.body).toBe("{\"hidden\":true}")
      expect((yield* Effect.flip(Computer.setCursorVisibility({ id: "nope", hidden: true })))._tag).toBe("NotFound")
    }).pipe(provide()))

  it.live("answers a malformed cursor body with 400 and the Error shape", () =>
    Effect.gen(function*() {
      const { httpClient } = yield* KernelClient.KernelClient
      for (const body of ["not json", "{}", "{\"hidden\":\"yes\"}"]) {
        const request = HttpClientRequest.post("/browsers/browser_a/computer/cursor").pipe(
          HttpClientRequest.bodyText(body, "application/json")
        )
        const response = yield* Effect.orDie(httpClient.execute(request))
        expect(response.status).toBe(400)
        const json = yield* Effect.orDie(response.json)
        expect(json).toMatchObject({ code: "bad_request", details: [{ code: "invalid_input" }] })
      }
    }).pipe(provide()))

  it.live("deletes a running deployment (stopped, marked) and leaves terminal ones", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* Deployments.delete({ id: "running" })
      expect(yield* simulator.deployment("running")).toEqual(
        Option.some({ id: "running", state: "stopped", markedForDeletion: true })
      )
      yield* Deployments.delete({ id: "stopped" })
      yield* Deployments.delete({ id: "failed" })
      expect(yield* simulator.deployment("stopped")).toEqual(
        Option.some({ id: "stopped", state: "stopped", markedForDeletion: false })
      )
      expect(yield* simulator.deployment("failed")).toEqual(
        Option.some({ id: "failed", state: "failed", markedForDeletion: false })
      )
      expect((yield* Effect.flip(Deployments.delete({ id: "nope" })))._tag).toBe("NotFound")
      const statuses = (yield* simulator.requests).map((r) => r.status)
      expect(statuses).toEqual([204, 204, 204, 404])
    }).pipe(provide()))

  it.live("downloads a ready replay with the deterministic mp4 content", () =>
    Effect.gen(function*() {
      const chunks = yield* Stream.runCollect(Replays.download({ id: "browser_a", replayId: "ready" }))
      const bytes = new Uint8Array(100_000)
      let offset = 0
      for (const chunk of chunks) {
        bytes.set(chunk, offset)
        offset += chunk.length
      }
      expect(offset).toBe(100_000)
      // the top-level ISO-BMFF boxes: ftyp, moov, mdat, whose sizes add up exactly
      const view = new DataView(bytes.buffer)
      const boxes: Array<[string, number]> = []
      for (let at = 0; at < bytes.length;) {
        const size = view.getUint32(at)
        boxes.push([new TextDecoder().decode(bytes.subarray(at + 4, at + 8)), size])
        expect(size).toBeGreaterThanOrEqual(8)
        at += size
        expect(at).toBeLessThanOrEqual(bytes.length)
      }
      expect(boxes.map(([type]) => type)).toEqual(["ftyp", "moov", "mdat"])
      expect(boxes.reduce((n, [, size]) => n + size, 0)).toBe(100_000)
      for (const at of [0, 31, 32, 65_535, 65_536, 99_999]) {
        expect(bytes[at]).toBe(KernelSimulator.replayByteAt(100_000, at))
      }
    }).pipe(provide()))

  it.live("waits out a replay that is still recording, end to end", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      const started = Date.now()
      const size = yield* Replays.download({ id: "browser_a", replayId: "recording" }).pipe(
        Stream.runFold(0, (n, chunk) => n + chunk.length)
      )
      expect(size).toBe(5000)
      expect(Date.now() - started).toBeGreaterThanOrEqual(950)
      expect((yield* simulator.requests).map((r) => r.status)).toEqual([202, 200])
    }).pipe(provide()))

  it.live("fails with ReplayNotReady when maxWait runs out", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Stream.runDrain(Replays.download({ id: "browser_a", replayId: "forever" }, { maxWait: "1 second" }))
      )
      expect(error).toMatchObject({ _tag: "ReplayNotReady", polls: 2 })
    }).pipe(provide()))

  it.live("unknown replay or browser is NotFound", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(Stream.runDrain(Replays.download({ id: "browser_a", replayId: "x" }))))._tag).toBe(
        "NotFound"
      )
      expect((yield* Effect.flip(Stream.runDrain(Replays.download({ id: "x", replayId: "ready" }))))._tag).toBe(
        "NotFound"
      )
    }).pipe(provide()))

  it.live("injected faults: statuses, reset, truncation", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      for (
        const [status, tag] of [[400, "BadRequest"], [404, "NotFound"], [500, "InternalServerError"], [
          502,
          "UnexpectedStatus"
        ]] as const
      ) {
        yield* simulator.injectFault({ route: "getMousePosition", status, times: 1 })
        expect((yield* Effect.flip(Computer.getMousePosition({ id: "browser_a" })))._tag).toBe(tag)
      }
      yield* simulator.injectFault({ route: "listBrowserPools", reset: true, times: 1 })
      expect((yield* Effect.flip(BrowserPools.list()))._tag).toBe("TransportError")
      yield* simulator.injectFault({ route: "downloadReplay", truncateAt: 50_000, times: 1 })
      const truncated = yield* Effect.flip(Stream.runDrain(Replays.download({ id: "browser_a", replayId: "ready" })))
      expect(truncated._tag).toBe("TransportError")
      // faults were used up: everything answers normally again
      expect(yield* BrowserPools.list()).toHaveLength(2)
    }).pipe(provide()))

  it.live("retries an injected 503 and succeeds", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* simulator.injectFault({
        route: "*",
        status: 503,
        times: 2,
        headers: { "retry-after-ms": "5" }
      })
      expect(yield* Computer.getMousePosition({ id: "browser_a" })).toEqual({ x: 10, y: 20 })
      expect((yield* simulator.requests).map((r) => r.status)).toEqual([503, 503, 200])
    }).pipe(provide({ config: { maxRetries: 2 } })))

  it.live("a stalled header times out", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* simulator.injectFault({ route: "getMousePosition", delay: "10 seconds", times: 1 })
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "browser_a" }))
      expect(error._tag).toBe("Timeout")
    }).pipe(provide({ config: { timeout: "200 millis" } })))

  it.live("streams a 256 MiB replay to a file in bounded memory", () => {
    const size = 256 * 1024 * 1024
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kernel-contract-"))
    const file = path.join(dir, "big.mp4")
    const bigSeed: KernelSimulator.Seed = {
      organizations: [{ id: "o", token: "t", browsers: [{ id: "b", replays: [{ id: "big", size }] }] }]
    }
    return Effect.gen(function*() {
      const before = process.memoryUsage().rss
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss)
      }, 20)
      const result = yield* Replays.downloadToFile({ id: "b", replayId: "big" }, file).pipe(
        Effect.ensuring(Effect.sync(() => clearInterval(sampler)))
      )
      peak = Math.max(peak, process.memoryUsage().rss)
      expect(result.bytes).toBe(size)
      expect(fs.statSync(file).size).toBe(size)
      const growth = (peak - before) / 1024 / 1024
      console.log(`a 256 MiB replay to a file: RSS growth ${growth.toFixed(1)} MiB`)
      // a buffered download would hold the whole 256 MiB; streaming grows by the heap's working set
      // only (about 40 MiB on Node 20, near 70 on Node 24, whose V8 keeps a larger young generation,
      // and more on a loaded machine, where the garbage is collected later)
      expect(growth).toBeLessThan(192)
      fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(Layer.merge(target.layer({ seed: bigSeed, token: "t" }), NodeFileSystem.layer)))
  }, 120_000)
})
