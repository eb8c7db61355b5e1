/**
 * A server (or a proxy) that echoes the request's `Authorization`: into an answer the transport
 * cannot parse, at its status line or in a chunk of its body (undici keeps those bytes in its
 * error's `data`, which the `TransportError` keeps as its cause), or into response headers the
 * platform's `http.client` span records by name (a debug header, a `Retry-After`), as sent or
 * percent-encoded. The token must not be in any way a program shows the failure, nor in an exported
 * span attribute, on any transport; and the spans stay the tracer's own (a tracer that keeps its
 * state in `#private` fields reads them as parents).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted, Scope, Stream, Tracer } from "effect"
import { Browsers, Computer, Filesystem, Kernel, KernelConfig, Logs } from "effect-kernel"
import * as util from "node:util"
import { afterAll, beforeAll } from "vitest"
import { httpServer, rawServer } from "./utils/loopback.js"
import { makeObserver } from "./utils/observe.js"
import { transports } from "./utils/transports.js"

// URL-reserved characters: a server that percent-encodes what it echoes changes them
const TOKEN = "sk_SENTINEL+echoed/4711="
const allTransports = [...transports, { name: "node", layer: NodeHttpClient.layer }]
const ports = { statusLine: 0, chunk: 0, headers: 0 }
const scope = Effect.runSync(Scope.make())
const authorizationOf = (head: string) => /^authorization: (.*)$/im.exec(head)?.[1] ?? ""
beforeAll(async () => {
  const [statusLine, chunk, headers] = await Effect.runPromise(Scope.extend(
    Effect.all([
      // a status line no parser takes, quoting what the request carried
      rawServer(({ head, socket }) => socket.end(`HTTP/1.1 2x0 ${authorizationOf(head)}\r\n\r\n`)),
      // a valid head, then a chunk whose size line quotes it
      rawServer(({ head, socket }) =>
        socket.end(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n` +
            `2\r\n{"\r\nzz ${authorizationOf(head)}\r\n\r\n`
        )
      ),
      httpServer((request, response) => {
        const authorization = String(request.headers.authorization)
        request.resume()
        request.on("end", () => {
          // an upload is taken; anything else is a 409 whose headers echo the request's Authorization
          if (request.method === "PUT") return response.writeHead(201).end()
          response.writeHead(409, {
            "content-type": "application/json",
            "x-debug-echo": authorization,
            "x-debug-encoded": encodeURIComponent(authorization),
            "retry-after": authorization
          }).end(JSON.stringify({ code: "conflict", message: "echo" }))
        })
      })
    ]),
    scope
  ))
  ports.statusLine = statusLine.port
  ports.chunk = chunk.port
  ports.headers = Number(new URL(headers.url).port)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const layerOf = (port: number, transport: (typeof allTransports)[number]["layer"]) =>
  Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make(TOKEN),
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 0
    })),
    Layer.provide(transport)
  )

/** Every way a program shows a failure: the exit's, and the error's own `util.inspect` (its `cause` too). */
const shown = (exit: Exit.Exit<unknown, unknown>): string => {
  const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
  return [
    String(exit),
    JSON.stringify(exit),
    util.inspect(exit, { depth: 20, showHidden: true }),
    Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "",
    util.inspect(error),
    util.inspect(error, { depth: 20, showHidden: true })
  ].join("\n")
}

describe("a token echoed into an answer no parser takes", () => {
  type Services = Layer.Layer.Success<typeof Kernel.layer>
  interface Case {
    readonly where: string
    readonly port: () => number
    readonly call: Effect.Effect<void, unknown, Services>
  }
  const cases = allTransports.flatMap((transport) =>
    ([] as Array<Case>).concat([
      { where: "its status line", port: () => ports.statusLine, call: Effect.asVoid(Browsers.retrieve({ id: "b1" })) },
      {
        where: "a chunk of its body",
        port: () => ports.chunk,
        call: Effect.asVoid(Computer.getMousePosition({ id: "b1" }))
      }
    ]).map((each) => ({ ...each, transport }))
  )
  it.effect.each(cases)(
    "$transport.name, $where: a TransportError, the token nowhere in it",
    ({ call, port, transport }) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(call)
        expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toMatchObject({
          value: { _tag: "TransportError" }
        })
        expect(shown(exit)).not.toContain("SENTINEL")
      }).pipe(Effect.provide(layerOf(port(), transport.layer)))
  )
})

describe("a token echoed into response headers", () => {
  it.effect.each(allTransports)(
    "$name: no span attribute holds it, as sent or percent-encoded (the headers still recorded)",
    ({ layer }) => {
      const observer = makeObserver()
      return Effect.gen(function*() {
        const exit = yield* Effect.exit(Browsers.retrieve({ id: "b1" }))
        expect(exit).toMatchObject({ _tag: "Failure" })
        const http = observer.spans.find((span) => span.name.startsWith("http.client"))
        expect(http?.attributes.get("http.response.header.x-debug-echo")).toBe("Bearer <redacted>")
        expect(http?.attributes.get("http.response.header.x-debug-encoded")).toBe("Bearer%20<redacted>")
        expect(observer.dump()).not.toContain("SENTINEL")
        expect(shown(exit)).not.toContain("SENTINEL")
      }).pipe(Effect.provide(layerOf(ports.headers, layer)), Effect.provide(observer.layer))
    }
  )
})

/** A span that keeps its state in `#private` fields, as a tracer may: only the span itself can read them. */
class PrivateSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = Math.random().toString(16).slice(2)
  readonly traceId: string
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink> = []
  status: Tracer.SpanStatus
  #depth: number
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    readonly kind: Tracer.SpanKind,
    startTime: bigint
  ) {
    this.status = { _tag: "Started", startTime }
    const of = Option.getOrUndefined(parent)
    // a parent of this tracer's is read through its private field (a proxy in its place throws)
    this.#depth = of instanceof PrivateSpan ? of.#depth + 1 : 0
    this.traceId = of?.traceId ?? "trace"
  }
  get depth() {
    return this.#depth
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks() {}
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
}

describe("the spans stay the tracer's own", () => {
  it.effect.each(allTransports)("$name: a tracer with #private fields traces an upload whose body makes spans", ({
    layer
  }) => {
    const spans: Array<PrivateSpan> = []
    const tracer = Tracer.make({
      span: (name, parent, context, _links, startTime, kind) => {
        const span = new PrivateSpan(name, parent, context, kind, startTime)
        spans.push(span)
        return span
      },
      context: (f) => f()
    })
    const contents = Stream.make(new Uint8Array([1, 2, 3])).pipe(
      Stream.tap(() => Effect.withSpan(Effect.void, "user.chunk"))
    )
    return Effect.gen(function*() {
      yield* Filesystem.writeFile({ id: "b1", path: "/f", contents })
      const chunk = spans.find((span) => span.name === "user.chunk")
      const http = spans.find((span) => span.name.startsWith("http.client"))
      expect(http).toBeDefined()
      // under the request's spans: the operation's, the transport's (on the platform's transports), its own
      expect(chunk?.depth).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.provide(layerOf(ports.headers, layer)), Effect.withTracer(tracer))
  })
})

// the platform's `http.client` span ends with its request's outcome: a response, or an error, both holding
// the request as sent; a tracer that renders it later, outside a fiber (where the platform's headers are
// not redacted), or serialises it at once (the platform's `toJSON` of a response read its body)
describe("the transport's span outcome, rendered by a tracer anywhere", () => {
  const mouse = JSON.stringify({ x: 1, y: 2 })
  const servers = Effect.all({
    ok: httpServer((request, response) => {
      request.resume()
      response.writeHead(200, { "content-type": "application/json" }).end(mouse)
    }),
    reset: rawServer(({ socket }) => socket.destroy())
  })
  const tracing = (
    rendered: Array<string>,
    which: (name: string) => boolean = (name) => name.startsWith("http.client")
  ) =>
    Tracer.make({
      span: (name, parent, context, _links, startTime, kind) => {
        const span = new PrivateSpan(name, parent, context, kind, startTime)
        const end = span.end.bind(span)
        span.end = (endTime, exit) => {
          // as an exporter may: at once, in the fiber that ends it
          if (which(name)) rendered.push(JSON.stringify(exit), util.inspect(exit, { depth: 20 }))
          end(endTime, exit)
          // and later, outside any fiber
          if (which(name)) {
            setImmediate(() => rendered.push(String(exit), JSON.stringify(exit), util.inspect(exit, { depth: 20 })))
          }
        }
        return span
      },
      context: (f) => f()
    })
  it.effect.each(allTransports)(
    "$name: the token in none of them, and the call unharmed",
    ({ layer }) =>
      Effect.scoped(Effect.gen(function*() {
        const { ok, reset } = yield* servers
        const rendered: Array<string> = []
        const position = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(layerOf(Number(new URL(ok.url).port), layer)),
          Effect.withTracer(tracing(rendered))
        )
        expect(position).toEqual({ x: 1, y: 2 })
        const failed = yield* Effect.exit(
          Computer.getMousePosition({ id: "b1" }).pipe(
            Effect.provide(layerOf(reset.port, layer)),
            Effect.withTracer(tracing(rendered))
          )
        )
        expect(failed).toMatchObject({ _tag: "Failure" })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        expect(rendered.length).toBeGreaterThanOrEqual(10)
        expect(rendered.join("\n")).not.toContain("SENTINEL")
      }))
  )

  // review 92: the SDK's own `Kernel.<op>` span of a download or an event stream ended with the response
  // (its request as sent, token included, on the platform's transports), and rendering it read the body:
  // the call then failed (fetch: "ReadableStream is locked"; a body "cut short")
  const streams = httpServer((request, response) => {
    request.resume()
    if (request.url?.includes("/logs/stream") === true) {
      response.writeHead(200, { "content-type": "text/event-stream" })
      return response.end(
        `data: ${JSON.stringify({ event: "log", timestamp: "2026-01-01T00:00:00Z", message: "m" })}\n\n`
      )
    }
    response.writeHead(200, { "content-type": "text/html", "content-length": "5" }).end("hello")
  })
  it.effect.each(allTransports)(
    "$name: a download's and an event stream's spans, the token in none, the calls unharmed",
    ({ layer }) =>
      Effect.scoped(Effect.gen(function*() {
        const served = yield* streams
        const rendered: Array<string> = []
        const provided = <A, E>(effect: Effect.Effect<A, E, Kernel.Services>) =>
          effect.pipe(
            Effect.provide(layerOf(Number(new URL(served.url).port), layer)),
            Effect.withTracer(tracing(rendered, () => true))
          )
        const bytes = yield* provided(
          Effect.flatMap(Filesystem.readFile({ id: "b1", path: "/f" }), (body) => Stream.runCollect(body))
        )
        expect(new TextDecoder().decode(Buffer.concat([...bytes]))).toBe("hello")
        const events = yield* provided(
          Effect.flatMap(Logs.stream({ id: "b1", source: "path", path: "/x", follow: false }), Stream.runCollect)
        )
        expect([...events]).toMatchObject([{ event: "log", message: "m" }])
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        // the two calls' spans and their transports', rendered at once and later
        expect(rendered.length).toBeGreaterThanOrEqual(16)
        expect(rendered.join("\n")).not.toContain("SENTINEL")
      }))
  )
})
