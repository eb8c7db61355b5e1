// Opening a download (issue 19): the request a stream call sends, the idle time-out of its body, and
// what it runs. A download is sent directly on the transport under the authenticated client (as a
// JSON call is), its attempt owning the request without a scope on KernelTransport, and its body
// watched by the live clock's timer rather than a forked fiber: before, opening a download cost
// about 10× a JSON call's CPU (scopes, context copies, a watchdog fiber). Its idle time-out counts
// network silence only, as the replay's does: a consumer slower than `idleTimeout` per chunk is not
// a stalled server (before, the generic downloads counted from the last chunk handed over).
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, type Layer, Stream, Supervisor } from "effect"
import { Extensions, Profiles } from "effect-kernel"
import type * as Http from "node:http"
import { httpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const body = new Uint8Array(384 * 1024).map((_, i) => i % 251)
const idle = 200

type Failure = { readonly _tag: string }
type Open = Effect.Effect<
  Stream.Stream<Uint8Array, Failure>,
  Failure,
  Layer.Layer.Success<ReturnType<typeof loopbackLayer>>
>

/** The body of `Extensions.download`, or of `Profiles.download` (its `Ok` case). */
const downloads: ReadonlyArray<{ readonly name: string; readonly open: Open }> = [
  {
    name: "Extensions.download",
    open: Extensions.download({ idOrName: "e1" })
  },
  {
    name: "Profiles.download",
    open: Effect.flatMap(
      Profiles.download({ idOrName: "p1" }),
      (outcome) => outcome._tag === "Ok" ? Effect.succeed(outcome.value) : Effect.dieMessage("no body")
    )
  }
]

const whole: Http.RequestListener = (req, res) => {
  req.resume()
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) })
  res.end(body)
}

describe.each(transports)("a download over $name", (transport) => {
  for (const download of downloads) {
    it.scopedLive(`${download.name}: the request carries the credentials, the project and the binary accept`, () =>
      Effect.gen(function*() {
        const seen: Array<Http.IncomingHttpHeaders> = []
        const served = yield* httpServer((req, res) => {
          seen.push(req.headers)
          whole(req, res)
        })
        const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer, { projectId: "proj_1" })
        const bytes = yield* Effect.flatMap(download.open, Stream.runFold(0, (n, chunk) => n + chunk.length)).pipe(
          Effect.provide(layer)
        )
        expect(bytes).toBe(body.length)
        expect(seen).toHaveLength(1)
        expect(seen[0]).toMatchObject({
          authorization: "Bearer sk_SENTINEL_loopback_4242",
          "x-kernel-project-id": "proj_1",
          accept: "application/octet-stream, application/json",
          "accept-encoding": "identity"
        })
      }))

    it.scopedLive(
      `${download.name}: a consumer slower than idleTimeout per chunk completes`,
      () =>
        Effect.gen(function*() {
          const served = yield* httpServer(whole)
          const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer, {
            idleTimeout: `${idle} millis`
          })
          let slow = 0
          const bytes = yield* Effect.flatMap(download.open, (stream) =>
            stream.pipe(
              // the first chunks each held 3× idleTimeout (a slow disk, a slow upload downstream)
              Stream.mapEffect((chunk) =>
                slow++ < 3
                  ? Effect.as(Effect.sleep(Duration.millis(3 * idle)), chunk.length)
                  : Effect.succeed(chunk.length)
              ),
              Stream.runSum
            )).pipe(Effect.provide(layer))
          expect(bytes).toBe(body.length)
        }),
      30_000
    )

    it.scopedLive(
      `${download.name}: a server silent mid-body times out, slow consumer or not`,
      () =>
        Effect.gen(function*() {
          const served = yield* httpServer((req, res) => {
            req.resume()
            res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) })
            res.write(body.subarray(0, 1024))
          })
          const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer, {
            idleTimeout: `${idle} millis`
          })
          for (const hold of [0, 3 * idle]) {
            const start = Date.now()
            const error = yield* Effect.flatMap(download.open, (stream) =>
              stream.pipe(
                Stream.mapEffect((chunk) => Effect.as(Effect.sleep(Duration.millis(hold)), chunk)),
                Stream.runDrain
              )).pipe(Effect.provide(layer), Effect.flip)
            expect(error._tag).toBe("Timeout")
            expect(Date.now() - start).toBeLessThan(hold + 10 * idle)
          }
        }),
      30_000
    )
  }
})

describe("a download on KernelTransport", () => {
  const transport = transports.find((t) => t.name === "kernel")!
  it.scopedLive("runs no fiber of its own: the same fibers as a stream of bytes in memory", () =>
    Effect.gen(function*() {
      const served = yield* httpServer(whole)
      const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer)
      /** The most fibers alive while a chunk of the stream is taken. */
      const fibersWhile = <E, R>(open: Effect.Effect<Stream.Stream<Uint8Array, E>, E, R>) =>
        Effect.gen(function*() {
          const supervisor = yield* Supervisor.track
          let fibers = 0
          let bytes = 0
          yield* Effect.flatMap(open, (stream) =>
            Stream.runForEach(stream, (chunk) =>
              Effect.map(supervisor.value, (alive) => {
                bytes += chunk.length
                fibers = Math.max(fibers, alive.length)
              }))).pipe(Effect.supervised(supervisor))
          return { fibers, bytes }
        })
      const floor = yield* fibersWhile(Effect.succeed(Stream.make(body.subarray(0, 1024), body.subarray(1024))))
      for (const download of downloads) {
        const read = yield* fibersWhile(download.open).pipe(Effect.provide(layer))
        expect(read.bytes).toBe(body.length)
        // before: the body's watchdog fiber and the attempt's time-out fiber
        expect(read.fibers).toBe(floor.fibers)
      }
    }))
})
