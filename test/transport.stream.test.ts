/**
 * KernelTransport's streaming path: batches per pull, large bodies to their end with fast and slow
 * consumers (bounded in time: a hang fails the test), the SDK's replay download on it, and the
 * bench's replay server (a structurally complete mp4, gone with its parent).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Layer, Redacted, Stream } from "effect"
import { Kernel, KernelConfig, KernelTransport, Replays } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import { Exchange } from "../src/internal/transport.js"

const MiB = 1024 * 1024

/** A loopback server answering `/<bytes>` with that many bytes, written with back-pressure. */
const serveBytes = Effect.acquireRelease(
  Effect.async<Http.Server>((resume) => {
    const piece = Buffer.alloc(64 * 1024, 7)
    const server = Http.createServer((req, res) => {
      const size = Number((req.url ?? "/0").slice(1))
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size })
      let sent = 0
      res.on("close", () => {
        sent = size
      })
      const pump = (): void => {
        while (sent < size) {
          const n = Math.min(piece.length, size - sent)
          sent += n
          if (!res.write(n === piece.length ? piece : piece.subarray(0, n))) {
            res.once("drain", pump)
            return
          }
        }
        res.end()
      }
      pump()
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map((server) => {
  const address = server.address()
  return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
}))

describe("KernelTransport streaming", () => {
  it.live("a waiting reader gets every chunk of one I/O phase in one pull, not one pull per chunk", () =>
    Effect.gen(function*() {
      const exchange = new Exchange(MiB, 0)
      exchange.onHeaders(200, [], () => {})
      const pull = yield* Effect.fork(exchange.pull())
      // the reader is waiting before any chunk arrives
      yield* Effect.sleep(Duration.millis(5))
      for (let i = 0; i < 4; i++) exchange.onData(Buffer.alloc(1000, i))
      const chunk = yield* Fiber.join(pull)
      expect(Chunk.size(chunk)).toBe(4)
      expect(Chunk.toReadonlyArray(chunk).map((c) => c[0])).toEqual([0, 1, 2, 3])
      // a full buffer wakes the reader at once, and the end ends the stream
      const next = yield* Effect.fork(exchange.pull())
      yield* Effect.sleep(Duration.millis(5))
      exchange.onData(Buffer.alloc(MiB, 9))
      expect(Chunk.size(yield* Fiber.join(next))).toBe(1)
      exchange.onComplete()
      const end = yield* Effect.flip(exchange.pull())
      expect(end._tag).toBe("None")
    }))

  it.live("128 KiB (two socket reads) wake a waiting reader at once; less waits for the end of the I/O phase", () =>
    Effect.gen(function*() {
      // the reader's fiber, polled after microtasks only: a wake left to `setImmediate` is not seen
      const settledWithinMicrotasks = (fiber: Fiber.RuntimeFiber<Chunk.Chunk<Uint8Array>, unknown>) =>
        Effect.gen(function*() {
          for (let i = 0; i < 20; i++) {
            if ((yield* Fiber.poll(fiber))._tag === "Some") return true
            yield* Effect.yieldNow()
          }
          return false
        })
      const exchange = new Exchange(MiB, 0)
      exchange.onHeaders(200, [], () => {})
      const small = yield* Effect.fork(exchange.next().pipe(Effect.map((chunk) => chunk ?? Chunk.empty())))
      yield* Effect.sleep(Duration.millis(5))
      exchange.onData(Buffer.alloc(64 * 1024, 1))
      expect(yield* settledWithinMicrotasks(small)).toBe(false)
      expect(Chunk.size(yield* Fiber.join(small))).toBe(1)
      // 128 KiB: handed over at once (batches of a whole I/O phase were promoted by the young
      // collections of a fast download, and cost it mark-compacts)
      const read = yield* Effect.fork(exchange.next().pipe(Effect.map((chunk) => chunk ?? Chunk.empty())))
      yield* Effect.sleep(Duration.millis(5))
      exchange.onData(Buffer.alloc(64 * 1024, 2))
      expect(yield* settledWithinMicrotasks(read)).toBe(false)
      exchange.onData(Buffer.alloc(64 * 1024, 3))
      expect(yield* settledWithinMicrotasks(read)).toBe(true)
      expect(Chunk.size(yield* Fiber.join(read))).toBe(2)
      exchange.onComplete()
    }))

  it.live("a pull interrupted while it waits takes nothing: the next pull gets every chunk", () =>
    Effect.gen(function*() {
      const exchange = new Exchange(MiB, 0)
      exchange.onHeaders(200, [], () => {})
      // a reader that gives up waiting (a time-out around one pull)
      const gaveUp = yield* exchange.pull().pipe(Effect.timeout(Duration.millis(5)), Effect.option)
      expect(gaveUp._tag).toBe("None")
      // chunks arrive after it gave up: the abandoned wait is woken and must not take them
      for (let i = 0; i < 3; i++) exchange.onData(Buffer.alloc(1000, i))
      yield* Effect.sleep(Duration.millis(5))
      const chunk = yield* exchange.pull()
      expect(Chunk.toReadonlyArray(chunk).map((c) => c[0])).toEqual([0, 1, 2])
      exchange.onComplete()
      expect((yield* Effect.flip(exchange.pull()))._tag).toBe("None")
    }))

  it.scopedLive(
    "large bodies stream to their end, fast and slow consumers (bounded in time)",
    () =>
      Effect.gen(function*() {
        const base = yield* serveBytes
        const http = yield* KernelTransport.makeWith({ bodyBufferSize: 256 * 1024 })
        for (const size of [1 * MiB, 32 * MiB, 96 * MiB]) {
          for (const slow of [false, true]) {
            const response = yield* http.get(`${base}/${size}`)
            let pulls = 0
            let elements = 0
            const stream = response.stream.pipe(
              Stream.mapChunks((chunk) => {
                pulls++
                elements += Chunk.size(chunk)
                return chunk
              }),
              slow ? Stream.tap(() => pulls % 16 === 0 ? Effect.sleep(Duration.millis(1)) : Effect.void) : (s) => s
            )
            const received = yield* Stream.runFold(stream, 0, (n, chunk) => n + chunk.length).pipe(
              Effect.timeoutFail({
                duration: Duration.seconds(60),
                onTimeout: () => new Error(`${size} bytes (${slow ? "slow" : "fast"} consumer) hung`)
              })
            )
            expect(received).toBe(size)
            expect(elements).toBeGreaterThanOrEqual(pulls)
          }
        }
      }),
    240_000
  )

  it.scopedLive(
    "Replays.download streams a 64 MiB replay from the served simulator to its end",
    () =>
      Effect.gen(function*() {
        const size = 64 * MiB
        const served = yield* KernelSimulator.serve({
          seed: {
            organizations: [{
              id: "org",
              token: "sk_stream_token",
              browsers: [{ id: "b1", replays: [{ id: "r1", size }] }]
            }]
          }
        })
        const layer = Kernel.layer.pipe(
          Layer.provide(KernelConfig.layer({
            apiKey: Redacted.make("sk_stream_token"),
            baseUrl: served.url,
            maxRetries: 0
          })),
          Layer.provide(KernelTransport.layerUndici),
          Layer.orDie
        )
        for (const slow of [false, true]) {
          let chunks = 0
          const stream = Replays.download({ id: "b1", replayId: "r1" }).pipe(
            slow ? Stream.tap(() => ++chunks % 64 === 0 ? Effect.sleep(Duration.millis(1)) : Effect.void) : (s) => s
          )
          const received = yield* Stream.runFold(stream, 0, (n, chunk) => n + chunk.length).pipe(
            Effect.provide(layer),
            Effect.timeoutFail({ duration: Duration.seconds(60), onTimeout: () => new Error("the download hung") })
          )
          expect(received).toBe(size)
        }
      }),
    180_000
  )
})

describe("bench/server.mjs", () => {
  it.scopedLive(
    "serves a replay the SDK accepts as a complete mp4, and exits with its parent",
    () =>
      Effect.gen(function*() {
        const script = new URL("../bench/server.mjs", import.meta.url).pathname
        const child = spawn(process.execPath, [script, "--exit-with-parent"], { stdio: ["pipe", "pipe", "inherit"] })
        yield* Effect.addFinalizer(() => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL")))
        const port = yield* Effect.async<number>((resume) => {
          child.stdout.once(
            "data",
            (data: Buffer) => resume(Effect.succeed(Number(/port (\d+)/.exec(String(data))?.[1])))
          )
        })
        const base = `http://127.0.0.1:${port}`
        const layer = Kernel.layer.pipe(
          Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base, maxRetries: 0 })),
          Layer.provide(KernelTransport.layerUndici),
          Layer.orDie
        )
        for (const size of [40, 3 * MiB + 5]) {
          const received = yield* Replays.download({ id: "b1", replayId: String(size) }).pipe(
            Stream.runFold(0, (n, chunk) => n + chunk.length),
            Effect.provide(layer)
          )
          expect(received).toBe(size)
        }
        // the parent goes away (its end of stdin closes): the server exits, with a connection open
        const http = yield* KernelTransport.make
        const open = yield* http.get(`${base}/browsers/b1/replays/${64 * MiB}`)
        expect(open.status).toBe(200)
        const exited = Effect.async<number | null>((resume) => {
          if (child.exitCode !== null) resume(Effect.succeed(child.exitCode))
          else child.once("exit", (code) => resume(Effect.succeed(code)))
        })
        child.stdin.end()
        const code = yield* exited.pipe(Effect.timeout(Duration.seconds(10)))
        expect(code).toBe(0)
      }),
    60_000
  )
})
