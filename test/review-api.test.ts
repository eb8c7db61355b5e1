/**
 * Review of the API as a hostile server sees it (issue 18): what an error quotes of an answer that
 * did not decode never holds a secret of the API, wherever the server put it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Logger, Option, Redacted, Stream } from "effect"
import {
  AuthConnections,
  Browsers,
  Deployments,
  Kernel,
  KernelConfig,
  KernelEvents,
  KernelTransport
} from "effect-kernel"
import * as Http from "node:http"
import * as util from "node:util"
import { fileHttpServer } from "./utils/loopback.js"

type Handler = (request: Http.IncomingMessage, response: Http.ServerResponse) => void
let handler: Handler = (_request, response) => response.end()
const served = fileHttpServer((request, response) => {
  request.resume()
  request.on("end", () => handler(request, response))
})

const layer = () =>
  Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make("sk_review_api_key"),
      baseUrl: `http://127.0.0.1:${served.port()}`,
      maxRetries: 0
    })),
    Layer.provide(KernelTransport.layerUndici)
  )

/** Every way a program shows a failure: `String`, `JSON.stringify`, `inspect` and `Cause.pretty`. */
const shown = (exit: Exit.Exit<unknown, unknown>): string =>
  [
    String(exit),
    JSON.stringify(exit),
    util.inspect(exit, { depth: 20 }),
    Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
  ].join("\n")

const SECRET = "SENTINEL-review-api"
const state = {
  event: "managed_auth_state",
  timestamp: "2024-01-01T00:00:00Z",
  flow_status: "IN_PROGRESS",
  flow_step: "DISCOVERING",
  hosted_url: `https://${SECRET}/hosted`,
  live_view_url: `https://${SECRET}/live`
}

describe("review api: an event that does not decode is quoted without the API's secrets", () => {
  const cases: ReadonlyArray<readonly [string, unknown]> = [
    ["a known type that does not fit", { ...state, flow_status: "WHAT" }],
    ["the events in an array", [state]],
    ["an event nested in an object", { event: { ...state } }],
    ["an event nested in an array of an object", { items: [state] }],
    ["another resource's secret in an array", [{ cdp_ws_url: `ws://${SECRET}` }]]
  ]
  it.each(cases)("%s", async (_label, data) => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.end(`event: managed_auth_state\ndata: ${JSON.stringify(data)}\n\n`)
    }
    const exit = await Effect.runPromiseExit(
      AuthConnections.follow({ id: "conn_1" }).pipe(
        Effect.flatMap((events) => Stream.runCollect(Stream.take(events, 1))),
        Effect.provide(layer())
      )
    )
    const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
    expect(Option.map(failure, (error) => error._tag)).toEqual(Option.some("DecodeError"))
    expect(shown(exit)).toContain("<redacted>")
    expect(shown(exit)).not.toContain(SECRET)
  })
})

describe("review api: an event of a stream whose events hold no secret is quoted without the API's secrets", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    [
      "a browser in a deployment's event",
      JSON.stringify({ event: "deployment_state", browser: { cdp_ws_url: `ws://${SECRET}` } })
    ],
    ["a list of them", JSON.stringify([{ key: SECRET }])],
    ["data that is not JSON", `{"event":"log","cdp_ws_url":"ws://${SECRET}"`]
  ]
  it.each(cases)("%s", async (_label, data) => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.end(`data: ${data}\n\n`)
    }
    const exit = await Effect.runPromiseExit(
      Deployments.follow({ id: "dep_1" }).pipe(
        Effect.flatMap((events) => Stream.runCollect(Stream.take(events, 1))),
        Effect.provide(layer())
      )
    )
    const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
    expect(Option.map(failure, (error) => error._tag)).toEqual(Option.some("DecodeError"))
    expect(shown(exit)).not.toContain(SECRET)
  })
})

describe("review api: an event of a type the document does not know prints without the API's secrets", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["a newer auth state event", { ...state, event: "managed_auth_state_v2" }],
    ["a secret nested in a list", { event: "managed_auth_batch", states: [state] }]
  ]
  it.each(cases)("%s", async (_label, data) => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.end(`data: ${JSON.stringify(data)}\n\n`)
    }
    const lines: Array<string> = []
    const logger = Logger.replace(Logger.defaultLogger, Logger.map(Logger.logfmtLogger, (line) => lines.push(line)))
    const events = await Effect.runPromise(
      AuthConnections.follow({ id: "conn_1" }).pipe(
        Effect.flatMap((stream) => Stream.runCollect(Stream.take(stream, 1))),
        Effect.tap((chunk) => Effect.log(...chunk)),
        Effect.provide(Layer.merge(layer(), logger))
      )
    )
    const [event] = events
    if (!KernelEvents.isUnknownEvent(event)) throw new Error("expected an UnknownEvent")
    // the data stays as sent: a program that knows the newer type reads it
    expect(event.data).toEqual(data)
    const printed = [
      String(event),
      JSON.stringify(event),
      util.inspect(event, { depth: 20 }),
      util.inspect([...events], { depth: 20 }),
      ...lines
    ]
    for (const text of printed) {
      expect(text).not.toContain(SECRET)
    }
    expect(JSON.stringify(event)).toContain("<redacted>")
    expect(JSON.stringify(event)).toContain(String(data.event))
  })
})

describe("review api: a __proto__ key the server sends stays data, never a decoded value's prototype", () => {
  const browser = {
    session_id: "s1",
    cdp_ws_url: "wss://cdp.example/s1",
    webdriver_ws_url: "wss://bidi.example/s1",
    created_at: "2024-01-01T00:00:00Z",
    headless: false,
    stealth: false,
    timeout_seconds: 60
  }
  const policy = (key: string) => `{"${key}":{"injected":"yes","toString":"x"},"Homepage":"a"}`
  const bodyOf = (key: string) => JSON.stringify(browser).replace(/}$/, `,"chrome_policy":${policy(key)}}`)
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["a record's __proto__ key (one answer)", bodyOf("__proto__"), false],
    ["written with escapes", bodyOf("\\u005f_proto\\u005f_"), false],
    ["in a page's items", `[${bodyOf("__proto__")}]`, true]
  ]
  it.each(cases)("%s", async (_label, body, paged) => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "x-has-more": "false" })
      response.end(body)
    }
    const decoded = await Effect.runPromise(
      paged
        ? Effect.map(Browsers.list(), (page) => page.items[0]!).pipe(Effect.provide(layer()))
        : Browsers.retrieve({ id: "s1" }).pipe(Effect.provide(layer()))
    )
    const chromePolicy: object = decoded.chrome_policy ?? {}
    expect(Object.getPrototypeOf(chromePolicy)).toBe(Object.prototype)
    expect(Reflect.get(chromePolicy, "injected")).toBeUndefined()
    expect(() => String(chromePolicy)).not.toThrow()
    // nothing lost: the key is the record's own data, as the server sent it
    expect(Object.keys(chromePolicy)).toEqual(["__proto__", "Homepage"])
    expect(Object.getOwnPropertyDescriptor(chromePolicy, "__proto__")?.value).toEqual({
      injected: "yes",
      toString: "x"
    })
  })

  it("in an event's data", async () => {
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.end(
        `data: ${
          JSON.stringify({ ...state, event: "managed_auth_next" }).replace(/}$/, `,"extra":${policy("__proto__")}}`)
        }\n\n`
      )
    }
    const [event] = await Effect.runPromise(
      AuthConnections.follow({ id: "conn_1" }).pipe(
        Effect.flatMap((stream) => Stream.runCollect(Stream.take(stream, 1))),
        Effect.provide(layer())
      )
    )
    if (!KernelEvents.isUnknownEvent(event)) throw new Error("expected an UnknownEvent")
    const extra: object = Object(Reflect.get(Object(event.data), "extra"))
    expect(Object.getPrototypeOf(extra)).toBe(Object.prototype)
    expect(Reflect.get(extra, "injected")).toBeUndefined()
    expect(Object.keys(extra)).toEqual(["__proto__", "Homepage"])
  })
})

describe("review api: Browsers.curl's 502 body (the document's BrowserCurlTransportError)", () => {
  it("is the BadGateway's message, its net error name the code and its number a detail", async () => {
    handler = (_request, response) => {
      response.writeHead(502, { "content-type": "application/json" })
      response.end(JSON.stringify({ message: "dns failed", net_error: -105, net_error_name: "ERR_NAME_NOT_RESOLVED" }))
    }
    const exit = await Effect.runPromiseExit(
      Browsers.curl({ id: "b1", url: "https://example.invalid/" }).pipe(Effect.provide(layer()))
    )
    const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
    expect(failure?._tag).toBe("BadGateway")
    expect(failure).toMatchObject({
      status: 502,
      code: "ERR_NAME_NOT_RESOLVED",
      message: "dns failed",
      details: [{ code: "net_error", message: "-105" }]
    })
  })

  it("is that answer's only: another operation's body of that shape is quoted whole, as any non-Error body", async () => {
    handler = (_request, response) => {
      response.writeHead(404, { "content-type": "application/json" })
      response.end(JSON.stringify({ message: "Not Found", request_id: "req_123", net_error_name: "ERR_FAKE" }))
    }
    const exit = await Effect.runPromiseExit(Browsers.retrieve({ id: "b1" }).pipe(Effect.provide(layer())))
    const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
    expect(failure?._tag).toBe("NotFound")
    expect(failure).toMatchObject({ code: "unknown" })
    expect(failure && "message" in failure ? failure.message : "").toContain("req_123")
  })
})
