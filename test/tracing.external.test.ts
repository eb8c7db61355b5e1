/**
 * Trace context from upstream (an incoming request's `traceparent`, which the platform's server
 * middleware makes an external parent span) is passed on to Kernel on every transport, even when
 * this process installs no tracer of its own; with no such context and no tracer, no trace headers
 * are sent (nothing would see their spans).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import { Computer } from "effect-kernel"
import type * as Http from "node:http"
import { httpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const upstream = Tracer.externalSpan({ traceId, spanId: "00f067aa0ba902b7", sampled: true })

const cases: ReadonlyArray<{
  readonly name: string
  readonly around: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The trace id of the `traceparent` sent, or `undefined` for none sent. */
  readonly expected: string | undefined
}> = [
  { name: "an upstream trace context", around: Effect.withParentSpan(upstream), expected: traceId },
  {
    name: "an upstream trace context under the caller's own span",
    around: (self) => self.pipe(Effect.withSpan("handler"), Effect.withParentSpan(upstream)),
    expected: traceId
  },
  { name: "no trace context", around: (self) => self, expected: undefined },
  { name: "only the caller's own span (no tracer sees it)", around: Effect.withSpan("caller"), expected: undefined }
]

describe.each(transports)("trace context over $name, no tracer installed", (transport) => {
  it.each(cases)("$name", ({ around, expected }) =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sent: Array<string | undefined> = []
      const handler: Http.RequestListener = (req, res) => {
        const traceparent = req.headers["traceparent"]
        sent.push(typeof traceparent === "string" ? traceparent.split("-")[1] : undefined)
        const body = JSON.stringify({ x: 1, y: 2 })
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
        res.end(body)
      }
      const served = yield* httpServer(handler)
      const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer)
      expect(yield* around(Effect.provide(Computer.getMousePosition({ id: "b1" }), layer))).toEqual({ x: 1, y: 2 })
      expect(sent).toEqual([expected])
    }))))
})
