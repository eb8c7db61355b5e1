/**
 * An attempt on the platform's transports owns its request (src/internal/execute.ts): the request
 * is aborted when the attempt ends, unless its 2xx body was read to the end (the request is then
 * over, and an abort would only cost its event and `DOMException`).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted } from "effect"
import { BrowserPools, Computer, Kernel, KernelConfig } from "effect-kernel"

/** A transport answering every request with `answer()`, keeping the abort signal of each request. */
const transport = (answer: () => Response) => {
  const signals: Array<AbortSignal> = []
  const headers: Array<Readonly<Record<string, string>>> = []
  const http = Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request, _url, signal) =>
      Effect.sync(() => {
        signals.push(signal)
        headers.push(request.headers)
        return HttpClientResponse.fromWeb(request, answer())
      })
    )
  )
  const layer = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_attempt"), baseUrl: "https://kernel.test" })),
    Layer.provide(http)
  )
  return { headers, layer, signals }
}

describe("an attempt's request", () => {
  it.effect("a JSON body read to the end: the request is not aborted", () =>
    Effect.gen(function*() {
      const { layer, signals } = transport(() => Response.json({ x: 1, y: 2 }))
      const position = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(layer))
      expect(position).toEqual({ x: 1, y: 2 })
      expect(signals).toHaveLength(1)
      expect(signals[0]!.aborted).toBe(false)
    }))

  it.effect("a JSON body read without a Content-Length (as a stream), to the end: not aborted", () =>
    Effect.gen(function*() {
      const body = () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("[]"))
            controller.close()
          }
        })
      const { layer, signals } = transport(() =>
        new Response(body(), { headers: { "content-type": "application/json" } })
      )
      const pools = yield* BrowserPools.list().pipe(Effect.provide(layer))
      expect(pools).toEqual([])
      expect(signals.map((signal) => signal.aborted)).toEqual([false])
    }))

  it.effect("a body not read to the end (an error status, a declared length past the bound): the request is aborted", () =>
    Effect.gen(function*() {
      const notFound = transport(() => Response.json({ code: "not_found", message: "no" }, { status: 404 }))
      const failed = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(notFound.layer), Effect.either)
      expect(Either.isLeft(failed) && failed.left._tag).toBe("NotFound")
      expect(notFound.signals.map((signal) => signal.aborted)).toEqual([true])
      // a declared length larger than a JSON answer may have: refused before its body is read
      const huge = transport(() =>
        new Response("{}", { headers: { "content-type": "application/json", "content-length": "999999999999" } })
      )
      const refused = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(huge.layer), Effect.either)
      expect(Either.isLeft(refused) && refused.left._tag).toBe("DecodeError")
      expect(huge.signals.map((signal) => signal.aborted)).toEqual([true])
    }))

  it.effect("without a tracer, the platform makes no span for it: no trace headers are sent", () =>
    Effect.gen(function*() {
      const { headers, layer } = transport(() => Response.json({ x: 1, y: 2 }))
      yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(layer))
      expect(Object.keys(headers[0]!).filter((name) => name === "traceparent" || name === "b3")).toEqual([])
      expect(headers[0]!["authorization"]).toBe("Bearer sk_attempt")
    }))
})
