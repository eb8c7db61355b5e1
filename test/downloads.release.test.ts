// A download's end is not held back by its stall watchdog: `Profiles.download`'s `Ok` stream
// (built in an uninterruptible region) used to end only once `idleTimeout` had passed, because the
// watchdog fiber it forked inherited the region's uninterruptibility and its sleep could not be
// interrupted when the body ended. Found by the events-and-files benchmark (bench/streams.ts).
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Scope, Stream } from "effect"
import { KernelTransport, Profiles } from "effect-kernel"
import type * as Http from "node:http"
import { afterAll, beforeAll } from "vitest"
import { httpServer, loopbackLayer, type Served } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const body = new Uint8Array(64 * 1024).fill(7)
const handler: Http.RequestListener = (req, res) => {
  req.resume()
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) })
  res.end(body)
}
const scope = Effect.runSync(Scope.make())
let port = 0
beforeAll(async () => {
  const served: Served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  port = Number(new URL(served.url).port)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe.each(transports)("Profiles.download over $name", (transport) => {
  it("the Ok stream ends with its body, not after idleTimeout", async () => {
    const read = Effect.flatMap(
      Profiles.download({ idOrName: "p1" }),
      (outcome) =>
        outcome._tag === "Ok" ? Stream.runFold(outcome.value, 0, (n, chunk) => n + chunk.length) : Effect.succeed(-1)
    )
    // idleTimeout is 60 s: a stream held until then does not end within the 10 s allowed here
    const exit = await Effect.runPromiseExit(
      read.pipe(
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "held until idleTimeout" }),
        Effect.provide(loopbackLayer(port, transport.layer, { idleTimeout: "60 seconds" }))
      )
    )
    expect(exit).toStrictEqual(Exit.succeed(body.length))
  }, 20_000)
})

// KernelTransport aborts a body nobody started reading after `abandonedBodyTimeout` (10 s by default) once
// `bodyBufferSize` of it is buffered: a profile's `Ok` stream, whose head came with the call, was thrown away
// then (a later read: "the response body was released before it was read"), where the SDK promises its own
// watch, `idleTimeout` (helper 96, a 5 MiB profile read 11 s after its call)
describe("Profiles.download over KernelTransport: the Ok stream is kept for idleTimeout, not abandonedBodyTimeout", () => {
  const small = KernelTransport.layerUndiciWith({ bodyBufferSize: 16 * 1024, abandonedBodyTimeout: "1 second" }).pipe(
    Layer.orDie
  )
  const readAfter = (wait: Duration.DurationInput) =>
    Effect.flatMap(Profiles.download({ idOrName: "p1" }), (outcome) =>
      outcome._tag === "Ok"
        ? Effect.zipRight(Effect.sleep(wait), Stream.runFold(outcome.value, 0, (n, chunk) => n + chunk.length))
        : Effect.succeed(-1))

  it("read 2 s after the call, past abandonedBodyTimeout: the whole body", async () => {
    const exit = await Effect.runPromiseExit(
      readAfter("2 seconds").pipe(Effect.provide(loopbackLayer(port, small, { idleTimeout: "5 seconds" })))
    )
    expect(exit).toStrictEqual(Exit.succeed(body.length))
  })

  // the complement (the SDK's own watch still releases it), not a test of the change: the transport's
  // timer alone released it too
  it("nothing read for idleTimeout: released, and a later read fails", async () => {
    const exit = await Effect.runPromiseExit(
      readAfter("1500 millis").pipe(Effect.provide(loopbackLayer(port, small, { idleTimeout: "300 millis" })))
    )
    expect(Exit.isFailure(exit)).toBe(true)
  })
})
