import { NodeFileSystem } from "@effect/platform-node"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import { Data, Duration, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import {
  BrowserPools,
  Computer,
  Deployments,
  Kernel,
  KernelClient,
  KernelConfig,
  KernelError,
  Replays
} from "effect-kernel"
import * as fs from "node:fs"
import type * as net from "node:net"
import * as path from "node:path"
import * as util from "node:util"
import * as zlib from "node:zlib"
import { head, loopbackLayer, rawServer, waitUntil } from "./utils/loopback.js"
import { json, mockLayer, mockTransport, pool } from "./utils/mock.js"
import { asMp4, box } from "./utils/mp4.js"
import { makeObserver } from "./utils/observe.js"
import { tempDir } from "./utils/tempDir.js"
import { transports } from "./utils/transports.js"

const deep = (levels: number) => "[".repeat(levels) + "]".repeat(levels)
const rendered = (error: unknown) => [String(error), JSON.stringify(error), util.inspect(error, { depth: 10 })]
const tmp = () => tempDir("effect-kernel-hardening-")

describe("item 1: server data never makes a defect or an unbounded error", () => {
  it.effect.each([6_000, 100_000])("a JSON body nested %i levels deep is a DecodeError", (levels) => {
    const body = deep(levels)
    const { layer } = mockLayer(() =>
      new Response(body, { status: 200, headers: { "content-type": "application/json" } })
    )
    return Effect.gen(function*() {
      const errors = [
        yield* Effect.flip(Computer.getMousePosition({ id: "b" })),
        yield* Effect.flip(Computer.setCursorVisibility({ id: "b", hidden: true })),
        yield* Effect.flip(BrowserPools.list())
      ]
      expect(errors.map((e) => e._tag)).toEqual(["DecodeError", "DecodeError", "DecodeError"])
      for (const error of errors) expect(String(error).length).toBeLessThan(8192)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a 20 MB invalid field gives a small DecodeError", () => {
    const body = JSON.stringify({ x: "x".repeat(20_000_000), y: 1 })
    const { layer } = mockLayer(() =>
      new Response(body, { status: 200, headers: { "content-type": "application/json" } })
    )
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "b" }))
      expect(error._tag).toBe("DecodeError")
      expect(error.message).toContain(`["x"]`)
      for (const text of rendered(error)) expect(text.length).toBeLessThan(8192)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a deep or huge invalid pool field stays a small DecodeError", () => {
    const body = `[${JSON.stringify(pool("p")).slice(0, -1)}, "available_count": ${deep(50_000)}}]`
    const { layer } = mockLayer(() => new Response(body, { status: 200 }))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(BrowserPools.list())
      expect(error._tag).toBe("DecodeError")
      for (const text of rendered(error)) expect(text.length).toBeLessThan(8192)
    }).pipe(Effect.provide(layer))
  })

  it.effect("error bodies with huge messages, codes and details give bounded errors", () => {
    const huge = "m".repeat(60_000)
    const { layer } = mockLayer(() =>
      json(400, {
        code: huge,
        message: huge,
        details: Array.from({ length: 500 }, () => ({ code: "c", message: "d".repeat(100) }))
      })
    )
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "b" }))
      expect(error._tag).toBe("BadRequest")
      for (const text of rendered(error)) expect(text.length).toBeLessThan(16_384)
    }).pipe(Effect.provide(layer))
  })
})

/** Concatenates byte arrays. */
const concat = (...parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

const ftyp = concat(box("ftyp", 16), new Uint8Array([0x69, 0x73, 0x6f, 0x6d, 0, 0, 0, 0]))

/** A 200 JSON answer whose chunked body never ends, written as fast as the client reads it. */
const endlessChunked = ({ socket }: { readonly socket: net.Socket }) => {
  socket.write(head("200 OK", { "content-type": "application/json", "transfer-encoding": "chunked" }))
  const data = " ".repeat(256 * 1024)
  const chunk = `${data.length.toString(16)}\r\n${data}\r\n`
  const pump = () => {
    while (socket.writable && socket.write(chunk)) { /* fill the socket's buffer */ }
  }
  socket.on("drain", pump)
  pump()
}

describe("item 1, neighbour: a 2xx JSON body is bounded", () => {
  for (const transport of transports) {
    it.live(
      `${transport.name}: a Content-Length over 64 MiB is refused before it is read`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          let written = 0
          const server = yield* rawServer(({ socket }) => {
            socket.write(head("200 OK", { "content-type": "application/json", "content-length": 2 ** 31 }))
            const chunk = "[".repeat(64 * 1024)
            const timer = setInterval(() => {
              if (socket.writable) written += chunk.length
              socket.write(chunk)
            }, 2)
            socket.on("close", () => clearInterval(timer))
          })
          const exit = yield* Computer.getMousePosition({ id: "b" }).pipe(
            Effect.provide(loopbackLayer(server.port, transport.layer)),
            Effect.exit
          )
          expect(exit).toMatchObject({ _tag: "Failure", cause: { _tag: "Fail", error: { _tag: "DecodeError" } } })
          expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("64 MiB")
          expect(written).toBeLessThan(64 * 1024 * 1024)
        })),
      30_000
    )

    it.live(
      `${transport.name}: a chunked body stops at 64 MiB, the connection closed`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          // never ends: without a bound the SDK would buffer until the time-out
          const server = yield* rawServer(endlessChunked)
          const exit = yield* BrowserPools.list().pipe(
            Effect.provide(loopbackLayer(server.port, transport.layer, { timeout: "60 seconds" })),
            Effect.exit
          )
          expect(exit).toMatchObject({ _tag: "Failure", cause: { _tag: "Fail", error: { _tag: "DecodeError" } } })
          expect(yield* waitUntil(() => server.open() === 0)).toBe(true)
        })),
      30_000
    )

    it.live(
      `${transport.name}: a chunked body whose UTF-8 characters are split across chunks decodes whole`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const name = "é€😀-ü"
          const bytes = Buffer.from(JSON.stringify([pool("p", { name })]))
          const server = yield* rawServer(({ socket }) => {
            socket.write(head("200 OK", { "content-type": "application/json", "transfer-encoding": "chunked" }))
            // 3-byte HTTP chunks: every multi-byte character is cut by a chunk boundary
            for (let i = 0; i < bytes.length; i += 3) {
              const part = bytes.subarray(i, i + 3)
              socket.write(`${part.length.toString(16)}\r\n`)
              socket.write(part)
              socket.write("\r\n")
            }
            socket.write("0\r\n\r\n")
          })
          const pools = yield* BrowserPools.list().pipe(Effect.provide(loopbackLayer(server.port, transport.layer)))
          expect(pools.map((p) => p.name)).toEqual([name])
        })),
      30_000
    )

    it.live(
      `${transport.name}: a delete answered 2xx with a body that never ends succeeds at once, the body not kept`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const server = yield* rawServer(endlessChunked)
          const start = Date.now()
          const exit = yield* Deployments.delete({ id: "d1" }).pipe(
            Effect.provide(loopbackLayer(server.port, transport.layer, { timeout: "20 seconds" })),
            Effect.exit
          )
          expect(exit._tag).toBe("Success")
          expect(Date.now() - start).toBeLessThan(5_000)
          expect(yield* waitUntil(() => server.open() === 0)).toBe(true)
        })),
      30_000
    )

    it.live(
      `${transport.name}: a small gzip body that inflates past 64 MiB is a DecodeError`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const bomb = zlib.gzipSync(Buffer.alloc(100 * 1024 * 1024, " "))
          const server = yield* rawServer(({ socket }) => {
            socket.write(
              head("200 OK", {
                "content-type": "application/json",
                "content-encoding": "gzip",
                "content-length": bomb.length
              })
            )
            socket.write(bomb)
          })
          const exit = yield* BrowserPools.list().pipe(
            Effect.provide(loopbackLayer(server.port, transport.layer)),
            Effect.exit
          )
          expect(exit).toMatchObject({ _tag: "Failure", cause: { _tag: "Fail", error: { _tag: "DecodeError" } } })
        })),
      30_000
    )
  }
})

describe("items 2 and 3: a replay is complete only when the bytes prove it", () => {
  const valid: ReadonlyArray<[string, Uint8Array]> = [
    ["ftyp + mdat", asMp4(new Uint8Array(4096))],
    [
      "ftyp + moov + mdat",
      concat(ftyp, box("moov", 108), new Uint8Array(100), box("mdat", 1008), new Uint8Array(1000))
    ],
    ["ftyp + 64-bit mdat", concat(ftyp, box("mdat", 16 + 300, true), new Uint8Array(300))],
    ["ftyp + mdat to the end (size 0)", concat(ftyp, box("mdat", 0), new Uint8Array(777))]
  ]
  const invalid: ReadonlyArray<[string, Uint8Array]> = [
    ["cut inside the mdat", asMp4(new Uint8Array(4096)).subarray(0, 3000)],
    // cut at a box boundary: the boxes add up, but there is no media (mdat) yet
    ["cut after the ftyp", ftyp],
    ["cut after the moov", concat(ftyp, box("moov", 108), new Uint8Array(100))],
    ["cut after a 64-bit free box", concat(ftyp, box("free", 24, true), new Uint8Array(8))],
    ["cut inside a box header", asMp4(new Uint8Array(4096)).subarray(0, 28)],
    ["cut inside a 64-bit size", concat(ftyp, box("mdat", 316, true)).subarray(0, 16 + 12)],
    ["not starting with ftyp", concat(box("mdat", 108), new Uint8Array(100))],
    ["html", new TextEncoder().encode("<html><body>not a video</body></html>")],
    ["a box smaller than its header", concat(ftyp, box("mdat", 4))],
    ["a 64-bit size smaller than its header", concat(ftyp, box("mdat", 8, true))],
    ["empty", new Uint8Array(0)]
  ]

  /** Serves `bytes` close-delimited (no Content-Length, not chunked), cut after `split` writes. */
  const serveCloseDelimited = (bytes: Uint8Array) =>
    rawServer(({ socket }) => {
      socket.write(head("200 OK", { "content-type": "video/mp4", connection: "close" }))
      // written in small pieces: box headers straddle chunk boundaries
      for (let i = 0; i < bytes.length; i += 7) socket.write(bytes.subarray(i, i + 7))
      socket.end()
    })

  for (const transport of transports) {
    describe(transport.name, () => {
      it.live.each(valid)(
        "a close-delimited %s is a complete replay",
        ([, bytes]) =>
          Effect.scoped(Effect.gen(function*() {
            const { port } = yield* serveCloseDelimited(bytes)
            const dir = tmp()
            const target = path.join(dir, "replay.mp4")
            const result = yield* Replays.downloadToFile({ id: "b", replayId: "r" }, target).pipe(
              Effect.provide(loopbackLayer(port, transport.layer))
            )
            expect(result.bytes).toBe(bytes.length)
            expect(new Uint8Array(fs.readFileSync(target))).toEqual(bytes)
          }))
      )

      it.live.each(invalid)(
        "a close-delimited body %s fails, nothing at the target",
        ([name, bytes]) =>
          Effect.scoped(Effect.gen(function*() {
            const { port } = yield* serveCloseDelimited(bytes)
            const dir = tmp()
            const target = path.join(dir, "replay.mp4")
            const error = yield* Effect.flip(
              Replays.downloadToFile({ id: "b", replayId: "r" }, target).pipe(
                Effect.provide(loopbackLayer(port, transport.layer))
              )
            )
            expect(error._tag).toBe(name.startsWith("cut") ? "TransportError" : "DecodeError")
            expect(fs.readdirSync(dir)).toEqual([])
          }))
      )

      it.live("verifyMp4: false passes any bytes through; framing checks stay", () =>
        Effect.scoped(Effect.gen(function*() {
          const html = new TextEncoder().encode("<html>raw bytes</html>")
          const { port } = yield* rawServer(({ socket, path }) => {
            if (path.endsWith("/short")) {
              socket.write(head("200 OK", { "content-length": 100, connection: "close" }))
              socket.end(html)
            } else {
              socket.write(head("200 OK", { "content-length": html.length }))
              socket.write(html)
            }
          })
          const layer = loopbackLayer(port, transport.layer)
          const bytes = yield* Replays.download({ id: "b", replayId: "r" }, { verifyMp4: false }).pipe(
            Stream.runFold(0, (n, c) => n + c.length),
            Effect.provide(layer)
          )
          expect(bytes).toBe(html.length)
          const short = yield* Effect.flip(
            Replays.download({ id: "b", replayId: "short" }, { verifyMp4: false }).pipe(
              Stream.runDrain,
              Effect.provide(layer)
            )
          )
          expect(short._tag).toBe("TransportError")
        })))

      const refused: ReadonlyArray<[string, string, Record<string, string | number>, Uint8Array, string]> = [
        [
          "206 Partial Content",
          "206 Partial Content",
          { "content-range": "bytes 0-4095/8192" },
          asMp4(new Uint8Array(4096)),
          "UnexpectedStatus"
        ],
        ["204 No Content", "204 No Content", {}, new Uint8Array(0), "UnexpectedStatus"],
        ["201 Created", "201 Created", {}, asMp4(new Uint8Array(64)), "UnexpectedStatus"],
        ["203", "203 Non-Authoritative Information", {}, asMp4(new Uint8Array(64)), "UnexpectedStatus"],
        ["gzip", "200 OK", { "content-encoding": "gzip" }, zlib.gzipSync(asMp4(new Uint8Array(4096))), "DecodeError"],
        [
          "br",
          "200 OK",
          { "content-encoding": "br" },
          zlib.brotliCompressSync(asMp4(new Uint8Array(4096))),
          "DecodeError"
        ],
        ["text/html", "200 OK", { "content-type": "text/html" }, asMp4(new Uint8Array(64)), "DecodeError"],
        [
          "application/json",
          "200 OK",
          { "content-type": "application/json" },
          new TextEncoder().encode("{}"),
          "DecodeError"
        ]
      ]
      it.live.each(refused)(
        "%s is not the replay: a typed error, nothing at the target",
        ([, status, headers, body, tag]) =>
          Effect.scoped(Effect.gen(function*() {
            const { port } = yield* rawServer(({ socket }) => {
              socket.write(head(status, { "content-type": "video/mp4", ...headers, "content-length": body.length }))
              socket.write(body)
            })
            const dir = tmp()
            const target = path.join(dir, "replay.mp4")
            const error = yield* Effect.flip(
              Replays.downloadToFile({ id: "b", replayId: "r" }, target).pipe(
                Effect.provide(loopbackLayer(port, transport.layer))
              )
            )
            expect(error._tag).toBe(tag)
            expect(fs.readdirSync(dir)).toEqual([])
          }))
      )

      // a blank Content-Type: the message ended in "got content-type " with nothing after it
      it.live("a blank content-type is a DecodeError that says so", () =>
        Effect.scoped(Effect.gen(function*() {
          const body = asMp4(new Uint8Array(64))
          const { port } = yield* rawServer(({ socket }) => {
            socket.write(head("200 OK", { "content-type": "", "content-length": body.length }))
            socket.write(body)
          })
          const error = yield* Effect.flip(
            Replays.download({ id: "b", replayId: "r" }).pipe(
              Stream.runDrain,
              Effect.provide(loopbackLayer(port, transport.layer))
            )
          )
          expect(error._tag).toBe("DecodeError")
          expect(error.message).toContain("expected an mp4 body, got an empty content-type")
        })))
    })
  }
})

/**
 * `Kernel.layer` over a configuration that skipped `KernelConfig`'s validation (as a hand-made
 * `Layer.succeed(KernelConfig, ...)` does): the request-time guard must still hold.
 */
const uncheckedLayer = (
  port: number,
  transport: Layer.Layer<HttpClient.HttpClient>,
  overrides: Partial<KernelConfig.Service>
) =>
  Kernel.layer.pipe(
    Layer.provide(Layer.effect(
      KernelConfig.KernelConfig,
      Effect.map(
        KernelConfig.make({ apiKey: Redacted.make("sk_valid"), baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }),
        (service) => ({ ...service, ...overrides })
      )
    )),
    Layer.provide(transport),
    Layer.orDie
  )

describe("item 4: the token appears in no error", () => {
  for (const transport of transports) {
    it.live.each(["sk_SENTINEL\nInjected: 1", "sk_SENTINEL\r\n", "sk SENTINEL", "sk_SENTINEL\u0000", "sk_SENTÍNEL"])(
      `${transport.name}: an API key %j that cannot be sent is InvalidInput, not echoed`,
      (apiKey) =>
        Effect.scoped(Effect.gen(function*() {
          const { port, opened } = yield* rawServer(({ socket }) =>
            socket.end(head("200 OK", { "content-length": 2 }) + "{}")
          )
          // KernelConfig.layer refuses such a key up front (a ConfigError that does not echo it)...
          const refused = yield* Effect.flip(KernelConfig.make({ apiKey: Redacted.make(apiKey) }))
          for (const text of rendered(refused)) expect(text).not.toContain("SENTINEL")
          // ...and a configuration built around that check is still refused at request time
          const layer = uncheckedLayer(port, transport.layer, { apiKey: Redacted.make(apiKey) })
          const errors = [
            yield* Effect.flip(Computer.getMousePosition({ id: "b" }).pipe(Effect.provide(layer))),
            yield* Effect.flip(BrowserPools.list().pipe(Effect.provide(layer))),
            yield* Effect.flip(
              Replays.download({ id: "b", replayId: "r" }).pipe(Stream.runDrain, Effect.provide(layer))
            )
          ]
          for (const error of errors) {
            expect(error).toMatchObject({ _tag: "InvalidInput", field: "apiKey" })
            for (const text of rendered(error)) expect(text).not.toContain("SENTINEL")
          }
          const raw = yield* Effect.flip(
            Effect.flatMap(KernelClient.KernelClient, ({ httpClient }) => httpClient.get("/x")).pipe(
              Effect.provide(layer)
            )
          )
          for (const text of rendered(raw)) expect(text).not.toContain("SENTINEL")
          expect(opened()).toBe(0)
        }))
    )

    it.live(`${transport.name}: a project id with a line break is InvalidInput`, () =>
      Effect.scoped(Effect.gen(function*() {
        const { port, opened } = yield* rawServer(({ socket }) =>
          socket.end(head("200 OK", { "content-length": 2 }) + "{}")
        )
        expect(Exit.isFailure(yield* Effect.exit(KernelConfig.make({ apiKey: Redacted.make("k"), projectId: "p\nq" }))))
          .toBe(true)
        const layer = uncheckedLayer(port, transport.layer, { projectId: Option.some("proj\r\nX-Evil: 1") })
        const error = yield* Effect.flip(Computer.getMousePosition({ id: "b" }).pipe(Effect.provide(layer)))
        expect(error).toMatchObject({ _tag: "InvalidInput", field: "projectId" })
        expect(opened()).toBe(0)
      })))
  }
})

describe("item 5: the escape-hatch client keeps the token on the configured origin", () => {
  /** `KernelClient.layer` over a mock transport answering by `handler`, and the requests it got. */
  const escapeLayer = (baseUrl: string, handler: Parameters<typeof mockTransport>[0]) => {
    const { client, requests } = mockTransport(handler)
    const layer = KernelClient.layer.pipe(
      Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_SENTINEL_escape"), baseUrl })),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, client)),
      Layer.orDie
    )
    return { layer, requests }
  }

  /** A server whose `/download` redirects (`status`) to `location`; 200 elsewhere. */
  const redirecting = (status: number, location: string) => (request: { readonly url: URL }) =>
    request.url.pathname === "/download"
      ? new Response(null, { status, headers: { location } })
      : json(200, {})

  const seen = (baseUrl: string, url: string) => {
    const { layer, requests } = escapeLayer(baseUrl, () => json(200, {}))
    return Effect.flatMap(KernelClient.KernelClient, ({ httpClient }) => Effect.either(httpClient.get(url))).pipe(
      Effect.map((result) => ({ result, requests })),
      Effect.provide(layer)
    )
  }

  it.effect.each([
    ["http://127.0.0.1:4010", "1/extensions", "http://127.0.0.1:4010/1/extensions"],
    ["http://127.0.0.1:4010", "@evil.test:4010/x", "http://127.0.0.1:4010/@evil.test:4010/x"],
    ["http://127.0.0.1:4010", "//evil.test/x", "http://127.0.0.1:4010/evil.test/x"],
    ["http://127.0.0.1:4010", "/browsers", "http://127.0.0.1:4010/browsers"],
    ["https://api.test/v1", "/browsers", "https://api.test/v1/browsers"],
    ["https://api.test/v1/", "browsers?x=1", "https://api.test/v1/browsers?x=1"],
    ["https://api.test/v1", "https://api.test/v1/extensions", "https://api.test/v1/extensions"]
  ])("base %s, path %j goes to %s", ([base, url, expected]) =>
    Effect.gen(function*() {
      const { requests, result } = yield* seen(base, url)
      expect(result._tag).toBe("Right")
      expect(requests.map((r) => r.url.href)).toEqual([expected])
      expect(requests[0]!.headers.authorization).toBe("Bearer sk_SENTINEL_escape")
    }))

  it.effect.each([
    "https://evil.test/x",
    "http://127.0.0.1:40101/x",
    "http://user:pw@127.0.0.1:4010/x",
    "javascript:alert(1)",
    "http:evil.test"
  ])(
    "an absolute URL %j to another origin is refused before sending",
    (url) =>
      Effect.gen(function*() {
        const { requests, result } = yield* seen("http://127.0.0.1:4010", url)
        expect(requests).toHaveLength(0)
        expect(result._tag).toBe("Left")
        if (result._tag === "Left") {
          expect(result.left._tag).toBe("RequestError")
          for (const text of rendered(result.left)) expect(text).not.toContain("SENTINEL")
        }
      })
  )

  it.effect.each([
    ["http://evil.test/steal", "a redirect to another origin"],
    ["//evil.test/steal", "a scheme-relative redirect"],
    ["/\\evil.test/steal", "a redirect the URL parser reads as another host"],
    ["http://user:pw@127.0.0.1:4010/steal", "a redirect with credentials in its URL"],
    ["https://127.0.0.1:4010/steal", "a redirect to another scheme"]
  ])(
    "the escape hatch with HttpClient.followRedirects: %s (%s) is refused, nothing sent there",
    ([location]) =>
      Effect.gen(function*() {
        const { layer, requests } = escapeLayer("http://127.0.0.1:4010", redirecting(302, location!))
        const result = yield* Effect.flatMap(
          KernelClient.KernelClient,
          ({ httpClient }) => Effect.either(HttpClient.followRedirects(httpClient, 3).get("/download"))
        ).pipe(Effect.provide(layer))
        expect(requests.map((r) => r.url.href)).toEqual(["http://127.0.0.1:4010/download"])
        expect(result).toMatchObject({ _tag: "Left", left: { _tag: "RequestError", reason: "InvalidUrl" } })
        if (result._tag === "Left") { for (const text of rendered(result.left)) expect(text).not.toContain("SENTINEL") }
      })
  )

  it.effect("the escape hatch: a redirect within the origin is followed; a URL changed after it (mapRequest) is refused", () =>
    Effect.gen(function*() {
      const { layer, requests } = escapeLayer("http://127.0.0.1:4010", redirecting(307, "/elsewhere"))
      const { followed, mapped } = yield* Effect.flatMap(KernelClient.KernelClient, ({ httpClient }) =>
        Effect.all({
          followed: Effect.either(HttpClient.followRedirects(httpClient, 3).get("/download")),
          mapped: Effect.either(
            httpClient.pipe(HttpClient.mapRequest(HttpClientRequest.setUrl("http://evil.test/mapped"))).get("/x")
          )
        })).pipe(Effect.provide(layer))
      expect(followed._tag).toBe("Right")
      expect(requests.map((r) => [r.url.href, r.headers.authorization])).toEqual([
        ["http://127.0.0.1:4010/download", "Bearer sk_SENTINEL_escape"],
        ["http://127.0.0.1:4010/elsewhere", "Bearer sk_SENTINEL_escape"]
      ])
      expect(mapped).toMatchObject({ _tag: "Left", left: { _tag: "RequestError", reason: "InvalidUrl" } })
    }))

  for (const transport of transports) {
    it.live(`${transport.name}: raw errors and responses render no Authorization header`, () =>
      Effect.scoped(Effect.gen(function*() {
        // a gateway that echoes the token in a header's value, then a body cut short
        const { port } = yield* rawServer(({ socket }) => {
          socket.write(head("200 OK", {
            "content-type": "application/json",
            "content-length": 100,
            "www-authenticate": `Bearer error="invalid_token", token="sk_SENTINEL_loopback_4242"`
          }))
          socket.end("{")
        })
        const layer = loopbackLayer(port, transport.layer)
        const { error, response, failed } = yield* Effect.gen(function*() {
          const { httpClient } = yield* KernelClient.KernelClient
          const response = yield* httpClient.execute(HttpClientRequest.get("/x"))
          const error = yield* Effect.flip(response.json)
          // an operation's TransportError keeps the transport's error (and its response) as its cause
          const failed = yield* Effect.flip(Computer.getMousePosition({ id: "b1" }))
          return { error, response, failed }
        }).pipe(Effect.provide(layer))
        // outside any fiber, as a user would print them
        const outside = yield* Effect.promise(() =>
          new Promise<Array<string>>((resolve) =>
            setTimeout(
              () =>
                resolve([
                  ...rendered(error),
                  ...rendered(response),
                  ...rendered(error.request),
                  ...rendered(failed)
                ]),
              0
            )
          )
        )
        for (const text of outside) expect(text).not.toContain("SENTINEL")
        for (const text of [...rendered(error), ...rendered(response)]) expect(text).not.toContain("SENTINEL")
      })))
  }
})

describe("item 6: waiting frees what it holds", () => {
  for (const transport of transports) {
    it.live(
      `${transport.name}: a 202 whose body never ends does not keep its connection while waiting`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          let polls = 0
          let openAtLastPoll = -1
          const server = yield* rawServer(({ socket }) => {
            polls++
            if (polls <= 3) {
              openAtLastPoll = server.open()
              // a chunked body that never ends
              socket.write(head("202 Accepted", { "retry-after": "1", "transfer-encoding": "chunked" }))
              const timer = setInterval(() => socket.write("4000\r\n" + "a".repeat(0x4000) + "\r\n"), 5)
              socket.on("close", () => clearInterval(timer))
            } else {
              openAtLastPoll = server.open()
              const mp4 = asMp4(new Uint8Array(64))
              socket.write(head("200 OK", { "content-type": "video/mp4", "content-length": mp4.length }))
              socket.write(mp4)
            }
          })
          const bytes = yield* Replays.download({ id: "b", replayId: "r" }).pipe(
            Stream.runFold(0, (n, c) => n + c.length),
            Effect.provide(loopbackLayer(server.port, transport.layer))
          )
          expect(bytes).toBe(64)
          expect(polls).toBe(4)
          // each earlier 202's connection was closed before the next poll: only the current one is open
          expect(openAtLastPoll).toBe(1)
        })),
      30_000
    )
  }
})

describe("item 7: smaller", () => {
  it.effect("a __proto__ key in chrome_policy is kept as data, the prototype untouched", () => {
    const body = `[${
      JSON.stringify(pool("p")).replace(`"chrome_policy":{`, `"chrome_policy":{"__proto__":{"polluted":true},`)
    }]`
    const { layer } = mockLayer(() => new Response(body, { status: 200 }))
    return Effect.gen(function*() {
      const [decoded] = yield* BrowserPools.list()
      const policy = decoded!.browser_pool_config.chrome_policy!
      expect(Object.getPrototypeOf(policy)).toBe(Object.prototype)
      expect(Object.keys(policy)).toContain("__proto__")
      expect(Object.getOwnPropertyDescriptor(policy, "__proto__")?.value).toEqual({ polluted: true })
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    }).pipe(Effect.provide(layer))
  })

  it.effect.each([
    "0",
    "yesterday",
    "2026-01-02",
    "2026-01-02T03:04:05",
    "1700000000",
    "2026-13-02T03:04:05Z",
    "",
    "2026-01-02 03:04:05Z"
  ])(
    "created_at %j is a DecodeError",
    (createdAt) => {
      const { layer } = mockLayer(() => json(200, [pool("p", { created_at: createdAt })]))
      return Effect.gen(function*() {
        const error = yield* Effect.flip(BrowserPools.list())
        expect(error._tag).toBe("DecodeError")
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect.each(["2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123456Z", "2026-01-02T05:04:05+02:00"])(
    "created_at %j decodes (RFC 3339)",
    (createdAt) => {
      const { layer } = mockLayer(() => json(200, [pool("p", { created_at: createdAt })]))
      return Effect.gen(function*() {
        const [decoded] = yield* BrowserPools.list()
        expect(decoded!.created_at.epochMillis).toBe(Date.parse(createdAt.toUpperCase()))
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect.each([250, 255])("a valid %i-byte target file name is written", (length) => {
    const mp4 = asMp4(new Uint8Array(64))
    const { layer } = mockLayer(() => new Response(mp4, { status: 200, headers: { "content-type": "video/mp4" } }))
    const dir = tmp()
    const target = path.join(dir, `${"r".repeat(length - 4)}.mp4`)
    return Effect.gen(function*() {
      const result = yield* Replays.downloadToFile({ id: "b", replayId: "r" }, target)
      expect(result.bytes).toBe(64)
      expect(fs.readdirSync(dir)).toEqual([path.basename(target)])
    }).pipe(Effect.provide(Layer.merge(layer, NodeFileSystem.layer)))
  })

  it.effect("a null or non-object params object is InvalidInput on every operation", () => {
    const { layer, requests } = mockLayer(() => json(200, {}))
    const untyped = (value: unknown) => value as never
    return Effect.gen(function*() {
      for (const value of [null, undefined, "b", 42]) {
        const errors = [
          yield* Effect.flip(Computer.getMousePosition(untyped(value))),
          yield* Effect.flip(Computer.setCursorVisibility(untyped(value))),
          yield* Effect.flip(Deployments.delete(untyped(value))),
          yield* Effect.flip(Stream.runDrain(Replays.download(untyped(value))))
        ]
        expect(errors.map((e) => e._tag)).toEqual(Array(4).fill("InvalidInput"))
      }
      expect(requests).toHaveLength(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("kernel.attempts counts the attempts of one run, not of the effect value", () => {
    const observer = makeObserver()
    const { layer } = mockLayer(() => json(200, [pool("p")]))
    return Effect.gen(function*() {
      // the service's own effect value, run three times (the accessor would build a new one per run)
      const operation = (yield* BrowserPools.ListBrowserPools).list()
      yield* operation
      yield* operation
      yield* operation
      const attempts = observer.spans.filter((s) => s.name === "Kernel.listBrowserPools").map((s) =>
        s.attributes.get("kernel.attempts")
      )
      expect(attempts).toEqual([1, 1, 1])
    }).pipe(Effect.provide(layer), Effect.provide(observer.layer))
  })

  it("isKernelError accepts only the SDK's own errors", () => {
    class Impostor extends Data.TaggedError("Timeout")<{ readonly reason: string }> {}
    expect(KernelError.isKernelError(new Impostor({ reason: "x" }))).toBe(false)
    expect(KernelError.isKernelError(Object.assign(new Error("x"), { _tag: "TransportError" }))).toBe(false)
    for (
      const error of [
        new KernelError.Timeout({ method: "GET", path: "/", timeout: Duration.seconds(1) }),
        new KernelError.TransportError({ method: "GET", path: "/", message: "x" }),
        new KernelError.InvalidInput({ field: "f", message: "m" })
      ]
    ) {
      expect(KernelError.isKernelError(error)).toBe(true)
    }
  })
})
