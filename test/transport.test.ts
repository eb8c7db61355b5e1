import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Exit, Fiber, Layer, Redacted, Schema, Scope, Stream } from "effect"
import { Computer, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as Http from "node:http"
import { inspect } from "node:util"
import { httpServer as serve } from "./utils/loopback.js"
import { makeObserver } from "./utils/observe.js"

const token = "sk_secret_token_123"

const readBody = (req: Http.IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
  })

const client = (options: KernelTransport.Options = {}) => KernelTransport.makeWith(options)

describe("KernelTransport", () => {
  it.scopedLive("reads status, headers, cookies and every body kind", () =>
    Effect.gen(function*() {
      const served = yield* serve((req, res) => {
        const path = req.url ?? ""
        res.setHeader("set-cookie", ["a=1; Path=/", "b=2"])
        res.setHeader("x-multi", ["one", "two"])
        if (path === "/json") return res.writeHead(201, { "content-type": "application/json" }).end("{\"x\":1}")
        if (path === "/empty") return res.writeHead(200).end()
        if (path === "/form") {
          return res.writeHead(200, { "content-type": "application/x-www-form-urlencoded" }).end("a=1&b=two")
        }
        if (path === "/multipart") {
          const body = "--XX\r\ncontent-disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n--XX--\r\n"
          return res.writeHead(200, { "content-type": "multipart/form-data; boundary=XX" }).end(body)
        }
        res.writeHead(200, { "content-type": "text/plain" }).end("héllo")
      })
      const http = yield* client()
      const json = yield* http.get(`${served.url}/json`)
      expect(json.status).toBe(201)
      expect(json.headers["content-type"]).toBe("application/json")
      expect(json.headers["x-multi"]).toBe("one, two")
      expect(json.cookies.cookies["a"]?.value).toBe("1")
      expect(json.cookies.cookies["b"]?.value).toBe("2")
      expect(yield* json.json).toEqual({ x: 1 })
      // a body is read once and shared by the readers
      expect(yield* json.text).toBe("{\"x\":1}")
      expect(yield* HttpClientResponse.schemaBodyJson(Schema.Struct({ x: Schema.Number }))(json)).toEqual({ x: 1 })
      const text = yield* http.get(`${served.url}/text`)
      expect(new TextDecoder().decode(yield* text.arrayBuffer)).toBe("héllo")
      expect(yield* (yield* http.get(`${served.url}/empty`)).json).toBe(null)
      const params = yield* (yield* http.get(`${served.url}/form`)).urlParamsBody
      expect(params).toEqual([["a", "1"], ["b", "two"]])
      const form = yield* (yield* http.get(`${served.url}/multipart`)).formData
      expect(form.get("field")).toBe("value")
      const streamed = yield* (yield* http.get(`${served.url}/text`)).stream.pipe(Stream.runCollect)
      expect(Buffer.concat([...streamed]).toString()).toBe("héllo")
    }))

  it.scopedLive("a body read whole is every byte in order, in one read or in many (kept, then gathered)", () =>
    Effect.gen(function*() {
      const body = Array.from({ length: 40 }, (_, i) => `part ${i} é;`).join("")
      // /N: the body in N writes, a pause between them (a read each on loopback)
      const served = yield* serve(async (req, res) => {
        const parts = Number((req.url ?? "/1").slice(1))
        const bytes = Buffer.from(body)
        const size = Math.ceil(bytes.length / parts)
        res.writeHead(200, { "content-type": "text/plain" })
        for (let i = 0; i < parts; i++) {
          res.write(bytes.subarray(i * size, (i + 1) * size))
          await new Promise((resolve) => setTimeout(resolve, 2))
        }
        res.end()
      })
      const http = yield* client()
      for (const parts of [1, 2, 16, 17, 40]) {
        const response = yield* http.get(`${served.url}/${parts}`)
        expect(yield* response.text, `${parts} writes`).toBe(body)
        expect(new TextDecoder().decode(yield* response.arrayBuffer), `${parts} writes`).toBe(body)
      }
    }))

  it.scopedLive("sends every request body kind, with the headers", () =>
    Effect.gen(function*() {
      const served = yield* serve(async (req, res) => {
        const body = await readBody(req)
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
          method: req.method,
          type: req.headers["content-type"] ?? null,
          custom: req.headers["x-custom"] ?? null,
          body: body.toString()
        }))
      })
      const http = yield* client()
      const send = (request: HttpClientRequest.HttpClientRequest) =>
        Effect.flatMap(http.execute(request), (r) => r.json)
      const url = `${served.url}/echo`
      expect(yield* send(HttpClientRequest.post(url).pipe(HttpClientRequest.setHeader("x-custom", "v"))))
        .toMatchObject({ method: "POST", custom: "v", body: "" })
      expect(yield* send(HttpClientRequest.put(url).pipe(HttpClientRequest.bodyText("plain", "text/plain"))))
        .toMatchObject({ method: "PUT", type: "text/plain", body: "plain" })
      expect(yield* send(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUint8Array(Buffer.from("bytes")))))
        .toMatchObject({ body: "bytes" })
      expect(yield* send(HttpClientRequest.patch(url).pipe(HttpClientRequest.setBody(HttpBody.raw("raw")))))
        .toMatchObject({ method: "PATCH", body: "raw" })
      const form = new FormData()
      form.append("k", "v")
      const echoed = (yield* send(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyFormData(form)))) as Record<
        string,
        unknown
      >
      expect(String(echoed["type"])).toMatch(/^multipart\/form-data; boundary=/)
      expect(String(echoed["body"])).toContain("name=\"k\"")
      const chunks = Stream.make("a", "b", "c").pipe(Stream.encodeText)
      expect(yield* send(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyStream(chunks))))
        .toMatchObject({ body: "abc" })
      const bad = yield* Effect.exit(
        http.execute(HttpClientRequest.post(url).pipe(HttpClientRequest.setBody(HttpBody.raw({ not: "bytes" }))))
      )
      expect(bad).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "RequestError", reason: "Encode" } } })
    }))

  it.scopedLive("typed errors: InvalidUrl, Transport, Decode — and no token in any of them", () =>
    Effect.gen(function*() {
      const served = yield* serve((_req, res) => res.writeHead(200).end("{not json"))
      const http = (yield* client()).pipe(
        HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
      )
      const invalid = yield* Effect.flip(http.get("not a url"))
      expect(invalid).toMatchObject({ _tag: "RequestError", reason: "InvalidUrl" })
      const unsupported = yield* Effect.flip(http.get("ftp://127.0.0.1/x"))
      expect(unsupported).toMatchObject({ _tag: "RequestError", reason: "InvalidUrl" })
      const refused = yield* Effect.flip(http.get("http://127.0.0.1:1/"))
      expect(refused).toMatchObject({ _tag: "RequestError", reason: "Transport" })
      const decode = yield* Effect.flip(Effect.flatMap(http.get(`${served.url}/x`), (r) => r.json))
      expect(decode).toMatchObject({ _tag: "ResponseError", reason: "Decode" })
      const response = yield* http.get(`${served.url}/x`)
      for (const rendered of [invalid, refused, decode, response].flatMap((e) => [JSON.stringify(e), inspect(e)])) {
        expect(rendered).not.toContain(token)
      }
    }))

  it.scopedLive("interrupting a request aborts it and frees its connection", () =>
    Effect.gen(function*() {
      const served = yield* serve((req, res) => {
        if (req.url === "/hang") return // never answers
        res.writeHead(200).end("ok")
      })
      const http = yield* client({ connections: 1 })
      const fiber = yield* Effect.fork(http.get(`${served.url}/hang`))
      yield* Effect.sleep(Duration.millis(50))
      yield* Fiber.interrupt(fiber)
      // the single connection is free again: without the abort this would wait for /hang forever
      const text = yield* Effect.flatMap(http.get(`${served.url}/ok`), (r) => r.text).pipe(
        Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "connection still held" })
      )
      expect(text).toBe("ok")
      expect(served.accepted()).toBe(2)
    }))

  it.scopedLive("interrupting a stream mid-body closes its connection", () =>
    Effect.gen(function*() {
      const served = yield* serve((req, res) => {
        if (req.url === "/ok") return res.writeHead(200).end("ok")
        res.writeHead(200)
        const chunk = Buffer.alloc(64 * 1024)
        const timer = setInterval(() => res.write(chunk), 5)
        res.on("close", () => clearInterval(timer))
      })
      const http = yield* client({ connections: 1 })
      const taken = yield* Effect.flatMap(
        http.get(`${served.url}/endless`),
        (r) => r.stream.pipe(Stream.take(3), Stream.runCount)
      )
      expect(taken).toBe(3)
      const text = yield* Effect.flatMap(http.get(`${served.url}/ok`), (r) => r.text).pipe(
        Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "connection still held" })
      )
      expect(text).toBe("ok")
    }))

  it.scopedLive("HttpClient.withScope: closing the request's scope aborts its body and frees the connection", () =>
    Effect.gen(function*() {
      const served = yield* serve((req, res) => {
        if (req.url === "/ok") return res.writeHead(200).end("ok")
        res.writeHead(200)
        res.write(Buffer.alloc(1024))
        // then stalls forever
      })
      const http = yield* client({ connections: 1 })
      const scoped = HttpClient.withScope(http)
      const scope = yield* Scope.make()
      const response = yield* scoped.get(`${served.url}/stall`).pipe(Scope.extend(scope))
      const reader = yield* Effect.fork(Stream.runCount(response.stream))
      yield* Effect.sleep(Duration.millis(50))
      yield* Scope.close(scope, Exit.void)
      const ended = yield* Fiber.join(reader).pipe(
        Effect.flip,
        Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "body still open" })
      )
      expect(ended).toMatchObject({ _tag: "ResponseError", reason: "Decode" })
      expect(yield* Effect.flatMap(http.get(`${served.url}/ok`), (r) => r.text)).toBe("ok")
    }))

  it.scopedLive("unread bodies do not hold the connection (one connection, many requests)", () =>
    Effect.gen(function*() {
      const big = Buffer.alloc(2 * 1024 * 1024, 1)
      const served = yield* serve((req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" })
        res.end(req.url === "/big" ? big : "small")
      })
      // small bodies are read to their end in the background: the connection is reused at once
      const keep = yield* client({ connections: 1, abandonedBodyTimeout: Duration.infinity })
      for (let i = 0; i < 20; i++) yield* keep.get(`${served.url}/small`)
      expect(yield* Effect.flatMap(keep.get(`${served.url}/small`), (r) => r.text)).toBe("small")
      // bodies larger than the buffer, never read: released after the abandoned-body time-out
      const http = yield* client({ connections: 1, abandonedBodyTimeout: Duration.millis(50) })
      const responses = []
      for (let i = 0; i < 5; i++) {
        responses.push(
          yield* http.get(`${served.url}/big`).pipe(
            Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "connection still held" })
          )
        )
      }
      const late = yield* Effect.flip(responses[0]!.arrayBuffer)
      expect(late).toMatchObject({ _tag: "ResponseError", reason: "Decode" })
      // a body that is read in time is complete
      const read = yield* Effect.flatMap(http.get(`${served.url}/big`), (r) => r.arrayBuffer)
      expect(read.byteLength).toBe(big.length)
    }))

  it.scopedLive("the default buffer is 1 MiB: an unread body up to that size does not hold the connection", () =>
    Effect.gen(function*() {
      const body = Buffer.alloc(768 * 1024, 1)
      const served = yield* serve((req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" })
        res.end(req.url === "/body" ? body : "next")
      })
      const http = yield* client({ connections: 1, abandonedBodyTimeout: Duration.infinity })
      const unread = yield* http.get(`${served.url}/body`)
      // the one connection is free: the unread body was buffered whole, in the background
      const next = yield* Effect.flatMap(http.get(`${served.url}/next`), (r) => r.text).pipe(
        Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "connection still held" })
      )
      expect(next).toBe("next")
      expect((yield* unread.arrayBuffer).byteLength).toBe(body.length)
    }))

  it.live("back-pressure: a body nobody reads stops the connection after the buffer", () =>
    Effect.gen(function*() {
      let written = 0
      const scope = yield* Scope.make()
      const served = yield* serve((_req, res) => {
        res.writeHead(200)
        const chunk = Buffer.alloc(64 * 1024)
        const pump = () => {
          while (written < 256 * 1024 * 1024) {
            written += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
          res.end()
        }
        pump()
      }).pipe(Scope.extend(scope))
      const http = yield* client({ bodyBufferSize: 256 * 1024 }).pipe(Scope.extend(scope))
      const response = yield* http.get(`${served.url}/big`)
      yield* Effect.sleep(Duration.millis(300))
      // buffer + kernel socket buffers on both sides: far below what the server would send
      expect(written).toBeLessThan(32 * 1024 * 1024)
      const first = yield* response.stream.pipe(Stream.take(1), Stream.runCollect)
      expect(Chunk.size(first)).toBe(1)
      yield* Scope.close(scope, Exit.void)
    }))

  it.scopedLive("releasing the layer destroys the agent and closes its connections", () =>
    Effect.gen(function*() {
      const served = yield* serve((_req, res) => res.writeHead(200).end("ok"))
      const scope = yield* Scope.make()
      const http = yield* client().pipe(Scope.extend(scope))
      yield* Effect.flatMap(http.get(`${served.url}/`), (r) => r.text)
      expect(served.open()).toBe(1)
      yield* Scope.close(scope, Exit.void)
      yield* Effect.sleep(Duration.millis(50))
      expect(served.open()).toBe(0)
      const after = yield* Effect.flip(http.get(`${served.url}/`))
      expect(after).toMatchObject({ _tag: "RequestError", reason: "Transport" })
    }))

  it.scopedLive("the http.client span has the semantic attributes, with the token redacted", () =>
    Effect.gen(function*() {
      // a gateway that echoes the token in a header's value
      const served = yield* serve((req, res) =>
        res.writeHead(200, {
          "x-answer": "42",
          "www-authenticate": `Bearer error="x", token="${String(req.headers.authorization).slice(7)}"`
        }).end("ok")
      )
      const observer = makeObserver()
      const http = (yield* client()).pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(token)))
      yield* Effect.flatMap(http.get(`${served.url}/path?q=1`), (r) => r.text).pipe(Effect.provide(observer.layer))
      const span = observer.spans.find((s) => s.name === "http.client GET")!
      expect(span).toBeDefined()
      expect(span.kind).toBe("client")
      const port = Number(new URL(served.url).port)
      expect(Object.fromEntries(span.attributes)).toMatchObject({
        "http.request.method": "GET",
        "server.address": served.url,
        "server.port": port,
        "url.full": `${served.url}/path?q=1`,
        "url.path": "/path",
        "url.scheme": "http",
        "url.query": "q=1",
        "http.request.header.authorization": "<redacted>",
        "http.response.status_code": 200,
        "http.response.header.x-answer": "42",
        "http.response.header.www-authenticate": `Bearer error="x", token="<redacted>"`
      })
      expect(observer.dump()).not.toContain(token)
      // tracing off: no span
      const quiet = makeObserver()
      yield* Effect.flatMap(http.get(`${served.url}/`), (r) => r.text).pipe(
        Effect.withTracerEnabled(false),
        Effect.provide(quiet.layer)
      )
      expect(quiet.spans).toEqual([])
    }))

  it.scopedLive("the SDK's operations run on it (simulator over loopback)", () =>
    Effect.gen(function*() {
      const served = yield* KernelSimulator.serve({})
      const layer = Kernel.layer.pipe(
        Layer.provide(KernelConfig.layer({ apiKey: Redacted.make(KernelSimulator.defaultToken), baseUrl: served.url })),
        Layer.provide(KernelTransport.layerUndici)
      )
      const position = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(layer), Effect.either)
      // whatever the simulator's seed says about b1, the answer is typed (success or a documented tag)
      expect(position._tag === "Right" || typeof position.left._tag === "string").toBe(true)
    }))
})
