import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber, Layer, Redacted, Scheduler, Supervisor } from "effect"
import { BrowserPools, Computer, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
import * as Zlib from "node:zlib"
import { httpServer as serve, waitUntil } from "./utils/loopback.js"

// An operation's attempt on KernelTransport owns its request through the transport (no scope, no
// AbortController) and its deadline is the live clock's timer cancelling the request (no forked
// fiber). These tests hold that path to what the generic one guarantees: time-outs fire where
// the attempt is (before the headers, mid-body), the connection is closed, and nothing is lost.

const sdk = (url: string, options: Partial<KernelConfig.Options> = {}) =>
  Kernel.layer.pipe(
    Layer.provide(
      KernelConfig.layer({ apiKey: Redacted.make("sk_attempt"), baseUrl: url, maxRetries: 0, ...options })
    ),
    Layer.provide(KernelTransport.layerUndici)
  )

const mouse = JSON.stringify({ x: 1, y: 2 })

describe("KernelTransport: an operation's attempt", () => {
  it.scopedLive("headers that never come: Timeout at the deadline, the connection closed", () =>
    Effect.gen(function*() {
      const served = yield* serve(() => {})
      const start = Date.now()
      const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
        Effect.provide(sdk(served.url, { timeout: "300 millis" })),
        Effect.either
      )
      const elapsed = Date.now() - start
      expect(Either.isLeft(result) && result.left._tag).toBe("Timeout")
      expect(elapsed).toBeGreaterThanOrEqual(290)
      expect(elapsed).toBeLessThan(5_000)
      expect(yield* waitUntil(() => served.open() === 0)).toBe(true)
    }))

  it.scopedLive(
    "a deadline that passes before the request is sent: Timeout, nothing left in flight",
    () =>
      Effect.gen(function*() {
        // headers never come; a timer-driven scheduler that yields after every step makes the 1 ms
        // deadline fire between the attempt taking its owner and the transport sending the request
        const served = yield* serve(() => {})
        const service = Context.get(
          yield* Layer.build(sdk(served.url, { timeout: "1 millis" })),
          Computer.GetMousePosition
        )
        const outcomes: Array<string> = []
        // yielding every 10 to 20 steps puts a yield at each point of the attempt in turn (below 10,
        // Effect's own scheduler stalls)
        for (let ops = 10; ops <= 20; ops++) {
          const result = yield* service.getMousePosition({ id: "b1" }).pipe(
            Effect.withScheduler(Scheduler.timer(5)),
            Effect.withMaxOpsBeforeYield(ops),
            Effect.either,
            Effect.timeout("2 seconds"),
            Effect.either
          )
          outcomes.push(
            `${ops}: ${Either.isLeft(result) ? "hung" : Either.isLeft(result.right) ? result.right.left._tag : "Right"}`
          )
        }
        expect(outcomes.filter((outcome) => !outcome.endsWith(": Timeout"))).toEqual([])
        expect(yield* waitUntil(() => served.open() === 0)).toBe(true)
      }),
    60_000
  )

  const stalls: ReadonlyArray<{
    readonly name: string
    readonly status: number
    readonly body: string
    readonly call: Effect.Effect<
      unknown,
      { readonly _tag: string },
      BrowserPools.ListBrowserPools | Computer.GetMousePosition
    >
  }> = [
    { name: "a JSON body", status: 200, body: "[{\"id\":", call: BrowserPools.list() },
    { name: "an error body", status: 500, body: "{\"code\":", call: Computer.getMousePosition({ id: "b1" }) }
  ]
  for (const { body, call, name, status } of stalls) {
    it.scopedLive(`${name} that stalls after the headers: Timeout (not a transport error), connection closed`, () =>
      Effect.gen(function*() {
        const served = yield* serve((_req, res) => {
          res.writeHead(status, { "content-type": "application/json", "content-length": "1000" })
          res.write(body)
        })
        const result = yield* call.pipe(
          Effect.provide(sdk(served.url, { timeout: "300 millis" })),
          Effect.either
        )
        expect(Either.isLeft(result) && result.left._tag).toBe("Timeout")
        expect(yield* waitUntil(() => served.open() === 0)).toBe(true)
      }))
  }

  it.scopedLive("a time-out is per attempt: retried, then success", () =>
    Effect.gen(function*() {
      let calls = 0
      const served = yield* serve((_req, res) => {
        if (++calls === 1) return // the first attempt hangs
        res.writeHead(200, { "content-type": "application/json" })
        res.end(mouse)
      })
      const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
        Effect.provide(sdk(served.url, { timeout: "300 millis", maxRetries: 1 })),
        Effect.either
      )
      expect(result).toEqual(Either.right({ x: 1, y: 2 }))
      expect(served.requests()).toBe(2)
    }))

  it.scopedLive("interrupting the caller mid-body closes the connection", () =>
    Effect.gen(function*() {
      const served = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" })
        res.write("[")
      })
      const fiber = yield* BrowserPools.list().pipe(Effect.provide(sdk(served.url)), Effect.fork)
      expect(yield* waitUntil(() => served.open() === 1)).toBe(true)
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(fiber)
      expect(yield* waitUntil(() => served.open() === 0)).toBe(true)
    }))

  it.scopedLive("a completed call keeps its connection for the next one (nothing aborted after success)", () =>
    Effect.gen(function*() {
      const served = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(mouse)
      })
      const layer = sdk(served.url)
      const results = yield* Effect.forEach(
        Array.from({ length: 20 }),
        () => Computer.getMousePosition({ id: "b1" }),
        { discard: false }
      ).pipe(Effect.provide(layer))
      expect(results).toHaveLength(20)
      // undici's pool may open a second connection while the first is being freed (it does so on
      // NodeHttpClient.layerUndici too), never one per call: an aborted request would close its own
      expect(served.open()).toBeLessThanOrEqual(2)
      expect(served.accepted()).toBeLessThanOrEqual(2)
    }))

  it.scopedLive("no AbortController and no forked fiber per call on the happy path", () =>
    Effect.gen(function*() {
      const served = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(mouse)
      })
      const Original = globalThis.AbortController
      let controllers = 0
      class Counting extends Original {
        constructor() {
          super()
          controllers++
        }
      }
      const counted = Effect.acquireRelease(
        Effect.sync(() => {
          globalThis.AbortController = Counting
        }),
        () =>
          Effect.sync(() => {
            globalThis.AbortController = Original
          })
      )
      let started = 0
      class Counting2 extends Supervisor.AbstractSupervisor<void> {
        get value() {
          return Effect.void
        }
        override onStart() {
          started++
        }
      }
      const calls = Effect.gen(function*() {
        yield* Computer.getMousePosition({ id: "b1" }) // the connection and the layer warmed up
        yield* counted
        const before = { controllers, started }
        yield* Effect.forEach(Array.from({ length: 10 }), () => Computer.getMousePosition({ id: "b1" })).pipe(
          Effect.supervised(new Counting2())
        )
        return { controllers: controllers - before.controllers, fibers: started - before.started }
      })
      const made = yield* calls.pipe(Effect.provide(sdk(served.url)))
      expect(made).toEqual({ controllers: 0, fibers: 0 })
    }))

  it.scopedLive(
    "one call's effect run by concurrent fibers: each attempt owns its own request, none hangs",
    () =>
      Effect.gen(function*() {
        const served = yield* serve(() => {}) // headers never come
        const service = Context.get(
          yield* Layer.build(sdk(served.url, { timeout: "200 millis" })),
          Computer.GetMousePosition
        )
        // the same effect value (the same request) run by two fibers at once; yielding every few
        // steps interleaves the attempts between registering their owner and sending (below 10,
        // Effect's scheduler itself stalls)
        const call = service.getMousePosition({ id: "b1" })
        const outcomes: Array<string> = []
        for (const ops of [10, 14, 20, 30]) {
          const both = yield* Effect.all([Effect.either(call), Effect.either(call)], { concurrency: 2 }).pipe(
            Effect.withMaxOpsBeforeYield(ops),
            Effect.timeout("3 seconds"),
            Effect.either
          )
          outcomes.push(
            Either.match(both, {
              onLeft: () => `${ops}: hung`,
              onRight: (results) => `${ops}: ${results.map((r) => Either.isLeft(r) ? r.left._tag : "Right").join(",")}`
            })
          )
        }
        expect(outcomes.filter((outcome) => !outcome.endsWith("Timeout,Timeout"))).toEqual([])
        expect(served.requests()).toBe(8)
      }),
    60_000
  )

  it.scopedLive("a content coding given in two header lines: both undone, as one joined header says", () =>
    Effect.gen(function*() {
      // the JSON read looks its headers up one by one (not through the record of every header): a
      // repeated Content-Encoding must still read "gzip, gzip", or the body is decoded once
      const body = Zlib.gzipSync(Zlib.gzipSync(Buffer.from(mouse)))
      const served = yield* serve((_req, res) => {
        res.writeHead(
          200,
          [
            ["content-type", "application/json"],
            ["content-encoding", "gzip"],
            ["content-encoding", "gzip"],
            ["content-length", String(body.length)]
          ].flat()
        )
        res.end(body)
      })
      const position = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(sdk(served.url)))
      expect(position).toEqual({ x: 1, y: 2 })
    }))
})
