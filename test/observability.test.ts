import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, Redacted, Stream } from "effect"
import { Computer, Credentials, Kernel, Replays } from "effect-kernel"
import * as util from "node:util"
import { errorBody, json, mockLayer, mockTransport, token } from "./utils/mock.js"
import { asMp4 } from "./utils/mp4.js"
import { makeObserver } from "./utils/observe.js"

describe("observability", () => {
  it.live("each operation runs in its span, with the ids, the attempts and the HTTP span as a child", () => {
    const observer = makeObserver()
    const { layer } = mockLayer((_r, _q, n) =>
      n === 1 ? json(503, errorBody("busy", "later"), { "retry-after-ms": "1" }) : json(200, { x: 1, y: 2 })
    )
    return Effect.gen(function*() {
      yield* Computer.getMousePosition({ id: "b1" })
      const span = observer.spans.find((s) => s.name === "Kernel.getMousePosition")!
      expect(span).toBeDefined()
      expect(span.kind).toBe("client")
      expect(span.attributes.get("kernel.browser.id")).toBe("b1")
      expect(span.attributes.get("kernel.attempts")).toBe(2)
      expect(span.attributes.get("url.path")).toBe("/browsers/b1/computer/get_mouse_position")
      const children = observer.spans.filter((s) => s.parent._tag === "Some" && s.parent.value.spanId === span.spanId)
      expect(children.map((s) => s.name)).toEqual(["http.client POST", "http.client POST"])
      expect(children[0]!.attributes.get("http.request.header.authorization")).toBe("<redacted>")
      expect(span.status._tag).toBe("Ended")
    }).pipe(Effect.provide(layer), Effect.provide(observer.layer))
  })

  it.live("with no tracer installed, the SDK makes no span and leaves the caller's span alone", () => {
    const { layer } = mockLayer((_r, _q, n) =>
      n === 1 ? json(503, errorBody("busy", "later"), { "retry-after-ms": "1" }) : json(200, { x: 1, y: 2 })
    )
    return Effect.gen(function*() {
      const seen = yield* Computer.getMousePosition({ id: "b1" }).pipe(
        Effect.zipRight(Effect.currentSpan),
        Effect.withSpan("caller")
      )
      // Effect's built-in tracer only: the operation ran (retried once) in the caller's span, which
      // carries nothing of the SDK's (with a tracer, the same call has its own span: above)
      expect(seen.name).toBe("caller")
      expect(seen.attributes.has("kernel.attempts")).toBe(false)
      expect(seen.attributes.has("kernel.browser.id")).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live("a download's span lasts as long as its stream, parents its request and records how it ended", () => {
    const observer = makeObserver()
    const mp4 = (declared: number) =>
      new Response(asMp4(new Uint8Array(32)), {
        headers: { "content-type": "video/mp4", "content-length": String(declared) }
      })
    const { layer } = mockLayer((_r, _q, n) => n === 1 ? mp4(32) : mp4(100))
    const streamSpans = () => observer.spans.filter((s) => s.name === "Kernel.downloadReplay.stream")
    return Effect.gen(function*() {
      const statusWhileStreaming = yield* Replays.download({ id: "b1", replayId: "r1" }).pipe(
        Stream.mapEffect(() => Effect.sync(() => streamSpans()[0]!.status._tag)),
        Stream.runCollect
      )
      expect([...statusWhileStreaming]).toEqual(["Started"])
      const [done] = streamSpans()
      expect(done!.status._tag === "Ended" && done!.status.exit._tag).toBe("Success")
      expect(done!.attributes.get("kernel.replay.id")).toBe("r1")
      const request = observer.spans.find((s) => s.name === "Kernel.downloadReplay")!
      expect(request.parent._tag === "Some" && request.parent.value.spanId).toBe(done!.spanId)

      const error = yield* Effect.flip(Stream.runDrain(Replays.download({ id: "b1", replayId: "r2" })))
      expect(error._tag).toBe("TransportError")
      const failed = streamSpans()[1]!
      expect(failed.status._tag === "Ended" && failed.status.exit._tag).toBe("Failure")
    }).pipe(Effect.provide(layer), Effect.provide(observer.layer))
  })

  const transport = (answer: () => Response) => Layer.succeed(HttpClient.HttpClient, mockTransport(answer).client)
  const captured = () => {
    const lines: Array<string> = []
    const logger = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${String(message)}`)
      })
    )
    return { lines, logger }
  }
  const env = (vars: Record<string, string>) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ KERNEL_API_KEY: token, ...vars }))))
  let calls = 0
  const flaky = () => (++calls % 2 === 1
    ? json(503, errorBody("busy", "later"), { "retry-after-ms": "1" })
    : json(200, { x: 0, y: 0 }))

  it.live("logs nothing by default", () => {
    const { lines, logger } = captured()
    return Computer.getMousePosition({ id: "b" }).pipe(
      Effect.provide(Kernel.layerConfig().pipe(Layer.provide(transport(flaky)), Layer.provide(env({})))),
      Effect.provide(logger),
      Effect.tap(() => expect(lines).toEqual([]))
    )
  })

  it.live("KERNEL_LOG=debug shows each retry", () => {
    const { lines, logger } = captured()
    return Computer.getMousePosition({ id: "b" }).pipe(
      Effect.provide(
        Kernel.layerConfig().pipe(Layer.provide(transport(flaky)), Layer.provide(env({ KERNEL_LOG: "debug" })))
      ),
      Effect.provide(logger),
      Effect.tap(() => {
        expect(lines).toEqual(["DEBUG Kernel.getMousePosition: attempt 1 failed with UnexpectedStatus (HTTP 503)"])
      })
    )
  })
})

describe("observability: secrets a request sends are not in the platform's span", () => {
  it.live("the http.client span's outcome (its response and request) shows a secret-holding JSON body by its size only", () => {
    const observer = makeObserver()
    const { layer } = mockLayer(() =>
      json(201, {
        id: "cred_1",
        name: "c",
        domain: "example.com",
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
        has_values: true,
        has_totp_secret: false
      })
    )
    return Effect.gen(function*() {
      yield* Credentials.create({ name: "c", domain: "example.com", values: { password: Redacted.make("hunter-77") } })
      const http = observer.spans.find((s) => s.name.startsWith("http.client"))!
      expect(http.status._tag).toBe("Ended")
      const exit = http.status._tag === "Ended" ? http.status.exit : undefined
      const shown = [String(exit), JSON.stringify(exit), util.inspect(exit, { depth: 16 })].join("\n")
      expect(shown).toContain("bytes that may hold secrets")
      expect(shown).not.toContain("hunter-77")
    }).pipe(Effect.provide(layer), Effect.provide(observer.layer))
  })
})
