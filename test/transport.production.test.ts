import { FetchHttpClient, HttpClient } from "@effect/platform"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import { ConfigError, Context, Duration, Effect, Either, Exit, Layer, Scope, Stream } from "effect"
import { Computer, KernelClient, KernelError, KernelTransport, Replays } from "effect-kernel"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import * as tls from "node:tls"
import { inspect } from "node:util"
import * as zlib from "node:zlib"
import * as Client from "../src/internal/client.js"
import * as Failures from "../src/internal/failures.js"
import { head, httpServer, loopbackLayer, rawServer, waitUntil } from "./utils/loopback.js"
import { asMp4 } from "./utils/mp4.js"
import { tempDir } from "./utils/tempDir.js"
import { transports } from "./utils/transports.js"

// Issue 17: the transport under production conditions (real servers, real failures), on every
// transport the SDK documents.

const token = "sk_SENTINEL_loopback_4242"

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url))

/** A TLS server with a self-signed certificate (test/fixtures), counting the TCP connections it accepted. */
const tlsServer = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly server: tls.Server; readonly opened: () => number }>((resume) => {
    let opened = 0
    const server = tls.createServer({ key: fixture("selfsigned.key"), cert: fixture("selfsigned.crt") }, (socket) => {
      socket.on("error", () => {})
      socket.end("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 13\r\n\r\n{\"x\":1,\"y\":2}")
    })
    server.on("connection", (socket: net.Socket) => {
      opened++
      socket.on("error", () => {})
    })
    server.on("tlsClientError", () => {})
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({ port, server, opened: () => opened }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

/** A port nothing listens on (taken from the OS, then released). */
const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Failures no second attempt can cure: one attempt, a `TransportError` that is not transient. */
const permanent: ReadonlyArray<{
  readonly name: string
  readonly answer: (socket: net.Socket) => void
  readonly message: RegExp
}> = [
  {
    name: "a header block larger than the client accepts (100 KiB)",
    answer: (socket) =>
      socket.write(head("200 OK", { "content-type": "application/json", "x-big": "a".repeat(100 * 1024) })),
    message: /header/i
  },
  {
    name: "a response that is not HTTP (garbage)",
    answer: (socket) => socket.write("HELLO THERE, THIS IS NOT HTTP\r\n\r\n"),
    message: /HTTP|parse|malformed|response/i
  },
  {
    name: "an invalid status line",
    answer: (socket) => socket.write("HTTP/1.1 abc Nope\r\ncontent-length: 0\r\n\r\n"),
    message: /HTTP|parse|malformed|status|response/i
  },
  {
    name: "an unasked-for 100 Continue before the final response",
    answer: (socket) =>
      socket.write(
        "HTTP/1.1 100 Continue\r\n\r\n" +
          head("200 OK", { "content-type": "application/json", "content-length": 13 }) + "{\"x\":1,\"y\":2}"
      ),
    message: /100 Continue|interim|response/i
  }
]

describe("failures that cannot go away are not retried", () => {
  for (const transport of transports) {
    for (const row of permanent) {
      it.scopedLive(`${transport.name}: ${row.name}`, () =>
        Effect.gen(function*() {
          const server = yield* rawServer(({ socket }) => row.answer(socket))
          const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
            Effect.provide(loopbackLayer(server.port, transport.layer, { maxRetries: 2 })),
            Effect.either
          )
          if (transport.name === "kernel" && /100 Continue/.test(row.name)) {
            // KernelTransport accepts the interim response (RFC 9110); undici 7 itself cannot
            expect(Either.isRight(result) && result.right).toEqual({ x: 1, y: 2 })
            expect(server.opened()).toBe(1)
            return
          }
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isRight(result)) return
          const error = result.left
          expect(error._tag).toBe("TransportError")
          expect(KernelError.isTransient(error)).toBe(false)
          expect(error.message).toMatch(row.message)
          expect(server.opened()).toBe(1)
          expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 5 })}`).not.toContain(token)
        }))
    }

    it.scopedLive(`${transport.name}: interim responses other than 100 (102, 103 Early Hints) are skipped`, () =>
      Effect.gen(function*() {
        const server = yield* rawServer(({ socket }) =>
          socket.write(
            "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n" +
              head("200 OK", { "content-type": "application/json", "content-length": 13 }) + "{\"x\":1,\"y\":2}"
          )
        )
        const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(loopbackLayer(server.port, transport.layer, { maxRetries: 2 }))
        )
        expect(result).toEqual({ x: 1, y: 2 })
        expect(server.opened()).toBe(1)
      }))

    it.scopedLive(`${transport.name}: a self-signed certificate is refused once, not retried`, () =>
      Effect.gen(function*() {
        const server = yield* tlsServer
        const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(
            loopbackLayer(server.port, transport.layer, { maxRetries: 2, baseUrl: `https://127.0.0.1:${server.port}` })
          ),
          Effect.flip
        )
        expect(result._tag).toBe("TransportError")
        expect(KernelError.isTransient(result)).toBe(false)
        expect(result.message).toMatch(/certificate/i)
        expect(server.opened()).toBe(1)
      }))

    it.scopedLive(`${transport.name}: a refused connection names the address and what to check`, () =>
      Effect.gen(function*() {
        const port = yield* freePort
        const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(loopbackLayer(port, transport.layer, { maxRetries: 1 })),
          Effect.flip
        )
        expect(error._tag).toBe("TransportError")
        // still transient: a server that is starting may be there on the next attempt
        expect(KernelError.isTransient(error)).toBe(true)
        expect(error.message).toContain(`http://127.0.0.1:${port}`)
        expect(error.message).toContain("ECONNREFUSED")
        expect(error.message).toContain("KERNEL_BASE_URL")
        expect(error.message).toContain("npx effect-kernel-simulator")
        expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 5 })}`).not.toContain(token)
      }))
  }
})

describe("running out of file descriptors", () => {
  const request = HttpClientRequest.get("http://127.0.0.1:4010/browsers/b1/computer/get_mouse_position").pipe(
    HttpClientRequest.bearerToken(token)
  )
  const failure = (cause: unknown) =>
    Client.transportError(request, new HttpClientError.RequestError({ request, reason: "Transport", cause }))
  const cases: ReadonlyArray<{ readonly name: string; readonly cause: unknown; readonly code: string }> = [
    {
      name: "undici: connect EMFILE",
      cause: Object.assign(new Error("connect EMFILE 127.0.0.1:4010 - Local (undefined:undefined)"), {
        code: "EMFILE"
      }),
      code: "EMFILE"
    },
    {
      name: "fetch: fetch failed, caused by ENFILE",
      cause: new TypeError("fetch failed", { cause: Object.assign(new Error("connect ENFILE"), { code: "ENFILE" }) }),
      code: "ENFILE"
    },
    {
      name: "an AggregateError (both address families) of EMFILE",
      cause: new AggregateError([Object.assign(new Error("connect EMFILE"), { code: "EMFILE" })], "connect failed"),
      code: "EMFILE"
    }
  ]
  for (const row of cases) {
    it(`${row.name}: a TransportError that names the cause and what to change`, () => {
      const error = failure(row.cause)
      expect(error._tag).toBe("TransportError")
      expect(error.code).toBe(row.code)
      expect(error.message).toContain("ran out of file descriptors")
      expect(error.message).toContain("connections")
      expect(error.message).toContain("ulimit -n")
      expect(error.message).toContain("http://127.0.0.1:4010")
      // descriptors come back as calls end: retried
      expect(KernelError.isTransient(error)).toBe(true)
      expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 5 })}`).not.toContain(token)
    })
  }
})

describe("KernelTransport: connections per origin", () => {
  it.scopedLive("the default caps the sockets to one origin: 400 calls at once use at most 128", () =>
    Effect.gen(function*() {
      let inFlight = 0
      let peak = 0
      const served = yield* httpServer((_req, res) => {
        inFlight++
        peak = Math.max(peak, inFlight)
        setTimeout(() => {
          inFlight--
          res.writeHead(200, { "content-type": "application/json" }).end("{\"x\":1,\"y\":2}")
        }, 100)
      })
      let peakSockets = 0
      const timer = setInterval(() => {
        peakSockets = Math.max(peakSockets, served.open())
      }, 5)
      yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)))
      const results = yield* Effect.forEach(
        Array.from({ length: 400 }, (_, i) => i),
        () => Computer.getMousePosition({ id: "b1" }),
        { concurrency: "unbounded" }
      ).pipe(
        Effect.provide(
          loopbackLayer(Number(new URL(served.url).port), KernelTransport.layerUndici, { timeout: "20 seconds" })
        )
      )
      expect(results).toHaveLength(400)
      expect(served.requests()).toBe(400)
      expect(served.accepted()).toBeLessThanOrEqual(128)
      expect(peakSockets).toBeLessThanOrEqual(128)
      expect(peak).toBeLessThanOrEqual(128)
    }))
})

describe("a large fan-out under a descriptor limit (child process, ulimit -n 512)", () => {
  const tsx = createRequire(import.meta.url).resolve("tsx")
  const script = new URL("./utils/fanout.ts", import.meta.url).pathname
  const fanout = (connections: string, calls: number) => {
    const child = spawnSync(
      "/bin/sh",
      ["-c", `ulimit -n 512 && exec "${process.execPath}" --import "${tsx}" "${script}" ${connections} ${calls}`],
      { encoding: "utf8", timeout: 60_000 }
    )
    expect(child.status, child.stderr).toBe(0)
    const summary: { ok: number; failures: Record<string, number> } = JSON.parse(
      child.stdout.trim().split("\n").at(-1) ?? "{}"
    )
    return summary
  }

  it("3,000 calls at once on the default KernelTransport all succeed", () => {
    expect(fanout("default", 3000)).toEqual({ ok: 3000, failures: {} })
  }, 60_000)

  it("without a cap (connections: Infinity) they run out of descriptors, and the error says so", () => {
    const { failures, ok } = fanout("Infinity", 3000)
    expect(ok).toBeLessThan(3000)
    expect(Object.keys(failures).some((message) => message.startsWith("the process ran out of file descriptors")))
      .toBe(true)
  }, 60_000)
})

describe("KernelTransport: options that cannot work fail when the layer is built", () => {
  const invalid: ReadonlyArray<{ readonly option: string; readonly options: KernelTransport.Options }> = [
    { option: "connections", options: { connections: -1 } },
    { option: "connections", options: { connections: 0 } },
    { option: "connections", options: { connections: Number.NaN } },
    { option: "connections", options: { connections: 2.5 } },
    { option: "keepAliveTimeout", options: { keepAliveTimeout: -1 } },
    { option: "keepAliveTimeout", options: { keepAliveTimeout: Number.NaN } },
    { option: "keepAliveTimeout", options: { keepAliveTimeout: 0 } },
    { option: "keepAliveMaxTimeout", options: { keepAliveMaxTimeout: "-5 seconds" } },
    { option: "connectTimeout", options: { connectTimeout: -10 } },
    { option: "bodyBufferSize", options: { bodyBufferSize: Number.NaN } },
    { option: "bodyBufferSize", options: { bodyBufferSize: 0 } },
    { option: "abandonedBodyTimeout", options: { abandonedBodyTimeout: -1 } }
  ]
  for (const row of invalid) {
    it.effect(`${JSON.stringify(row.options, (_k, v) => Number.isNaN(v) ? "NaN" : v)}: ConfigError naming ${row.option}`, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Layer.build(KernelTransport.layerUndiciWith(row.options)).pipe(Effect.scoped))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isSuccess(exit)) return
        const error = yield* Effect.flip(Effect.failCause(exit.cause))
        expect(ConfigError.isConfigError(error)).toBe(true)
        expect(error._op).toBe("InvalidData")
        if (error._op === "InvalidData") expect(error.path).toEqual([row.option])
      }))
  }

  it.scopedLive("Duration.infinity keep-alives and connections: Infinity build and serve calls", () =>
    Effect.gen(function*() {
      const served = yield* httpServer((_req, res) =>
        res.writeHead(200, { "content-type": "application/json" }).end("{\"x\":1,\"y\":2}")
      )
      const transport = KernelTransport.layerUndiciWith({
        keepAliveTimeout: Duration.infinity,
        keepAliveMaxTimeout: Duration.infinity,
        connectTimeout: Duration.infinity,
        abandonedBodyTimeout: Duration.infinity,
        connections: Infinity
      })
      const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
        Effect.provide(loopbackLayer(Number(new URL(served.url).port), Layer.orDie(transport)))
      )
      expect(result).toEqual({ x: 1, y: 2 })
    }))
})

describe("the idle time-out measures network silence, not the consumer", () => {
  const idle = 200
  const replay = asMp4(new Uint8Array(384 * 1024).map((_, i) => i % 251))
  const params = { id: "b1", replayId: "r1" }
  for (const transport of transports) {
    it.scopedLive(
      `${transport.name}: a consumer slower than idleTimeout per chunk, the body all sent: completes`,
      () =>
        Effect.gen(function*() {
          const served = yield* httpServer((_req, res) => {
            res.writeHead(200, { "content-type": "video/mp4", "content-length": replay.length }).end(replay)
          })
          const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer, {
            idleTimeout: `${idle} millis`
          })
          let slow = 0
          const bytes = yield* Replays.download(params).pipe(
            Stream.mapEffect((chunk) =>
              // the first chunks each held 3× idleTimeout (a slow disk, a slow upload downstream)
              slow++ < 3
                ? Effect.as(Effect.sleep(Duration.millis(3 * idle)), chunk.length)
                : Effect.succeed(chunk.length)
            ),
            Stream.runSum,
            Effect.provide(layer)
          )
          expect(bytes).toBe(replay.length)
          // downloadToFile onto a slow "disk"
          const dir = tempDir("t17-idle-")
          const target = path.join(dir, "replay.mp4")
          let writes = 0
          const file = yield* Replays.downloadToFile(params, target, {
            onProgress: () => writes++ < 3 ? Effect.sleep(Duration.millis(3 * idle)) : Effect.void
          }).pipe(Effect.provide(layer))
          expect(file.bytes).toBe(replay.length)
          expect(readFileSync(target).length).toBe(replay.length)
        }),
      30_000
    )

    it.scopedLive(
      `${transport.name}: a server that goes silent mid-body still times out, slow consumer or not`,
      () =>
        Effect.gen(function*() {
          const served = yield* httpServer((_req, res) => {
            res.writeHead(200, { "content-type": "video/mp4", "content-length": replay.length })
            res.write(replay.subarray(0, 1024))
          })
          const layer = loopbackLayer(Number(new URL(served.url).port), transport.layer, {
            idleTimeout: `${idle} millis`
          })
          for (const hold of [0, 3 * idle]) {
            const start = Date.now()
            const error = yield* Replays.download(params).pipe(
              Stream.mapEffect((chunk) => Effect.as(Effect.sleep(Duration.millis(hold)), chunk)),
              Stream.runDrain,
              Effect.provide(layer),
              Effect.flip
            )
            expect(error._tag).toBe("Timeout")
            expect(Date.now() - start).toBeLessThan(hold + 10 * idle)
          }
          const dir = tempDir("t17-idle-")
          const target = path.join(dir, "replay.mp4")
          const error = yield* Replays.downloadToFile(params, target).pipe(Effect.provide(layer), Effect.flip)
          expect(error._tag).toBe("Timeout")
          expect(existsSync(target)).toBe(false)
        }),
      30_000
    )
  }
})

describe("the escape-hatch client behaves like the platform's", () => {
  for (const transport of transports) {
    it.scopedLive(`${transport.name}: url params set on the request are sent`, () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        const served = yield* httpServer((req, res) => {
          seen.push(req.url ?? "")
          res.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
        // the layer lives as long as the test's scope (Effect.provide would release the transport at once)
        const context = yield* Layer.build(loopbackLayer(Number(new URL(served.url).port), transport.layer))
        const { httpClient } = Context.get(context, KernelClient.KernelClient)
        const send = (request: HttpClientRequest.HttpClientRequest) =>
          Effect.flatMap(httpClient.execute(request), (response) => response.text)
        yield* send(HttpClientRequest.get("/extensions").pipe(HttpClientRequest.setUrlParam("limit", "10")))
        yield* send(
          HttpClientRequest.get("/extensions?kind=a b").pipe(
            HttpClientRequest.setUrlParams({ limit: "10", cursor: "x/y" })
          )
        )
        expect(seen).toEqual(["/extensions?limit=10", "/extensions?kind=a+b&limit=10&cursor=x%2Fy"])
      }))

    it.scopedLive(`${transport.name}: a response stream stopped early frees its socket promptly`, () =>
      Effect.gen(function*() {
        // the sockets that carried the request (undici may open a spare connection when a request is
        // aborted mid-body: Node 22's bundled Agent keeps it idle until the keep-alive timeout)
        const carried: Array<net.Socket> = []
        const served = yield* httpServer((req, res) => {
          carried.push(req.socket)
          res.writeHead(200, { "content-type": "application/octet-stream" })
          const chunk = Buffer.alloc(16 * 1024, 1)
          // a long body, sent slowly: it would last 30 s
          const timer = setInterval(() => res.write(chunk), 50)
          res.on("close", () => clearInterval(timer))
          setTimeout(() => {
            clearInterval(timer)
            res.end()
          }, 30_000).unref()
        })
        // the layer lives as long as the test's scope (Effect.provide would release the transport at once)
        const context = yield* Layer.build(loopbackLayer(Number(new URL(served.url).port), transport.layer))
        const { httpClient } = Context.get(context, KernelClient.KernelClient)
        // the response stays referenced (its garbage collection must not be what frees the socket)
        const response = yield* Effect.scoped(httpClient.execute(HttpClientRequest.get("/stream")))
        const first = yield* Effect.scoped(Stream.runCollect(Stream.take(response.stream, 1)))
        expect(first.length).toBe(1)
        expect(served.accepted()).toBe(1)
        const start = Date.now()
        const freed = () => carried.every((socket) => socket.closed)
        expect(yield* waitUntil(() => freed() || Date.now() - start > 3_000)).toBe(true)
        expect(freed()).toBe(true)
        expect(Date.now() - start).toBeLessThan(2_000)
        expect(served.requests()).toBe(1)
        expect(response.status).toBe(200)
      }))
  }
})

describe("content coding of JSON answers", () => {
  const json = JSON.stringify({ x: 3, y: 4 })
  const encoders: ReadonlyArray<{ readonly coding: string; readonly encode: (bytes: Buffer) => Buffer }> = [
    { coding: "gzip", encode: (bytes) => zlib.gzipSync(bytes) },
    { coding: "deflate", encode: (bytes) => zlib.deflateSync(bytes) },
    { coding: "br", encode: (bytes) => zlib.brotliCompressSync(bytes) }
  ]
  // 80 MiB of JSON once inflated, about 80 KiB on the wire
  const bomb = zlib.gzipSync(Buffer.concat([
    Buffer.from("{\"x\":1,\"y\":2,\"pad\":\""),
    Buffer.alloc(80 * 1024 * 1024, 0x30),
    Buffer.from("\"}")
  ]))
  for (const transport of transports) {
    for (const { coding, encode } of encoders) {
      it.scopedLive(`${transport.name}: a ${coding} answer decodes (asked for with accept-encoding)`, () =>
        Effect.gen(function*() {
          const asked: Array<string | undefined> = []
          const served = yield* httpServer((req, res) => {
            asked.push(req.headers["accept-encoding"])
            const body = encode(Buffer.from(json))
            res.writeHead(200, { "content-type": "application/json", "content-encoding": coding }).end(body)
          })
          const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(
            Effect.provide(loopbackLayer(Number(new URL(served.url).port), transport.layer))
          )
          expect(result).toEqual({ x: 3, y: 4 })
          expect(asked[0]).toMatch(/gzip/)
          expect(asked[0]).toMatch(/br/)
        }))
    }

    it.scopedLive(`${transport.name}: a gzip error body is decoded into the typed error`, () =>
      Effect.gen(function*() {
        const served = yield* httpServer((_req, res) => {
          const body = zlib.gzipSync(JSON.stringify({ code: "not_found", message: "no such browser" }))
          res.writeHead(404, { "content-type": "application/json", "content-encoding": "gzip" }).end(body)
        })
        const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(loopbackLayer(Number(new URL(served.url).port), transport.layer)),
          Effect.flip
        )
        expect(error._tag).toBe("NotFound")
        if (error._tag === "NotFound") {
          expect(error.code).toBe("not_found")
          expect(error.message).toBe("no such browser")
        }
      }))

    // an error page that inflates past the 64 KiB an error body is read to, or whose encoded bytes pass it
    // (poorly compressible text): its head is the excerpt, as the same page sent plain gives (on the undici
    // transports the inflate failed at the bound and the excerpt was empty, "HTTP 502")
    for (const { coding, encode } of encoders) {
      for (
        const [what, page] of [["inflates past", "proxy error page " + "x".repeat(100_000)], [
          "is sent past",
          "proxy error page " + Array.from({ length: 40_000 }, (_, i) => ((i * 2654435761) >>> 0).toString(36)).join("")
        ]] as const
      ) {
        it.scopedLive(`${transport.name}: a ${coding} error page that ${what} 64 KiB keeps its head`, () =>
          Effect.gen(function*() {
            const body = encode(Buffer.from(page))
            if (what === "is sent past") expect(body.length).toBeGreaterThan(64 * 1024)
            const served = yield* httpServer((_req, res) => {
              res.writeHead(502, { "content-type": "text/plain", "content-encoding": coding }).end(body)
            })
            const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
              Effect.provide(loopbackLayer(Number(new URL(served.url).port), transport.layer)),
              Effect.flip
            )
            expect(error.message).toContain(
              "HTTP 502 on POST /browsers/b1/computer/get_mouse_position: proxy error page "
            )
          }))
      }
    }

    it.scopedLive(`${transport.name}: a gzip bomb is refused at the 64 MiB bound, not retried`, () =>
      Effect.gen(function*() {
        const served = yield* httpServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(bomb)
        })
        const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(loopbackLayer(Number(new URL(served.url).port), transport.layer, { maxRetries: 2 })),
          Effect.flip
        )
        expect(error._tag).toBe("DecodeError")
        expect(error.message).toContain("64 MiB")
        expect(served.requests()).toBe(1)
      }))

    it.scopedLive(`${transport.name}: an unknown content-encoding is a DecodeError naming it, not retried`, () =>
      Effect.gen(function*() {
        const served = yield* httpServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json", "content-encoding": "x-squash" }).end(json)
        })
        const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
          Effect.provide(loopbackLayer(Number(new URL(served.url).port), transport.layer, { maxRetries: 2 })),
          Effect.flip
        )
        expect(error._tag).toBe("DecodeError")
        expect(error.message).toContain("x-squash")
        expect(served.requests()).toBe(1)
      }))
  }

  it.scopedLive("the replay download still asks for identity", () =>
    Effect.gen(function*() {
      const asked: Array<string | undefined> = []
      const replay = asMp4(new Uint8Array(64))
      const served = yield* httpServer((req, res) => {
        asked.push(req.headers["accept-encoding"])
        res.writeHead(200, { "content-type": "video/mp4", "content-length": replay.length }).end(replay)
      })
      yield* Replays.download({ id: "b1", replayId: "r1" }).pipe(
        Stream.runDrain,
        Effect.provide(loopbackLayer(Number(new URL(served.url).port), KernelTransport.layerUndici))
      )
      expect(asked).toEqual(["identity"])
    }))
})

describe("KernelTransport: an unasked-for 100 Continue is skipped (RFC 9110)", () => {
  const final = head("200 OK", { "content-type": "application/json", "content-length": 13 }) + "{\"x\":1,\"y\":2}"
  const writeSlowly = (socket: net.Socket, text: string, size: number) => {
    let at = 0
    const next = () => {
      if (at >= text.length || socket.destroyed) return
      socket.write(text.slice(at, at + size))
      at += size
      setTimeout(next, 2)
    }
    next()
  }
  const cases: ReadonlyArray<{ readonly name: string; readonly answer: (socket: net.Socket) => void }> = [
    { name: "in one write", answer: (socket) => socket.write("HTTP/1.1 100 Continue\r\n\r\n" + final) },
    { name: "without a reason phrase", answer: (socket) => socket.write("HTTP/1.1 100\r\n\r\n" + final) },
    {
      name: "twice, with headers, then a 103",
      answer: (socket) =>
        socket.write(
          "HTTP/1.1 100 Continue\r\nx-a: 1\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n" +
            final
        )
    },
    {
      name: "split in 3-byte writes",
      answer: (socket) => writeSlowly(socket, "HTTP/1.1 100 Continue\r\n\r\n" + final, 3)
    },
    {
      name: "its head in one write, the final response later",
      answer: (socket) => {
        socket.write("HTTP/1.1 100 Continue\r\n\r\n")
        setTimeout(() => socket.write(final), 20)
      }
    }
  ]
  for (const row of cases) {
    it.scopedLive(`${row.name}: the final response is the answer, on a reused connection too`, () =>
      Effect.gen(function*() {
        const server = yield* rawServer(({ socket }) => row.answer(socket))
        const context = yield* Layer.build(loopbackLayer(server.port, KernelTransport.layerUndici, { maxRetries: 0 }))
        for (let i = 0; i < 3; i++) {
          const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(context))
          expect(result).toEqual({ x: 1, y: 2 })
        }
        // at least one call went on a connection used before (a fresh response start per request)
        expect(server.opened()).toBeLessThan(3)
      }))
  }

  it.scopedLive("a body that starts like a 100 status line is left alone", () =>
    Effect.gen(function*() {
      const text = "HTTP/1.1 100 Continue\r\n\r\n"
      const server = yield* rawServer(({ socket }) =>
        socket.write(head("200 OK", { "content-type": "text/plain", "content-length": text.length }) + text)
      )
      const http = yield* KernelTransport.make
      for (let i = 0; i < 2; i++) {
        const response = yield* http.get(`http://127.0.0.1:${server.port}/x`)
        expect(yield* response.text).toBe(text)
      }
    }))
})

describe("the failure table (src/internal/failures.ts), unit level", () => {
  const withCode = (code: string, message = code) => Object.assign(new Error(message), { code })
  const rows: ReadonlyArray<
    { readonly cause: unknown; readonly code: string | undefined; readonly transient: boolean }
  > = [
    { cause: withCode("UNABLE_TO_VERIFY_LEAF_SIGNATURE"), code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", transient: false },
    { cause: withCode("DEPTH_ZERO_SELF_SIGNED_CERT"), code: "DEPTH_ZERO_SELF_SIGNED_CERT", transient: false },
    { cause: withCode("CERT_HAS_EXPIRED"), code: "CERT_HAS_EXPIRED", transient: false },
    { cause: withCode("ERR_TLS_CERT_ALTNAME_INVALID"), code: "ERR_TLS_CERT_ALTNAME_INVALID", transient: false },
    {
      cause: new TypeError("fetch failed", { cause: withCode("CERT_HAS_EXPIRED") }),
      code: "CERT_HAS_EXPIRED",
      transient: false
    },
    { cause: withCode("UND_ERR_HEADERS_OVERFLOW"), code: "UND_ERR_HEADERS_OVERFLOW", transient: false },
    { cause: withCode("HPE_INVALID_CHUNK_SIZE"), code: "HPE_INVALID_CHUNK_SIZE", transient: false },
    // the socket ended in the middle of an answer (undici's parser, on a `Connection: close` answer cut short)
    {
      cause: withCode("HPE_INVALID_EOF_STATE", "Response does not match the HTTP/1.1 protocol (Invalid EOF state)"),
      code: "HPE_INVALID_EOF_STATE",
      transient: true
    },
    { cause: withCode("UND_ERR_INFO"), code: "UND_ERR_INFO", transient: false },
    { cause: withCode("UND_ERR_SOCKET", "bad response"), code: "UND_ERR_SOCKET", transient: false },
    { cause: new TypeError("fetch failed", { cause: new Error("bad port") }), code: "BAD_PORT", transient: false },
    { cause: withCode("UND_ERR_DESTROYED", "The client is destroyed"), code: "UND_ERR_DESTROYED", transient: false },
    { cause: withCode("UND_ERR_CLOSED", "The client is closed"), code: "UND_ERR_CLOSED", transient: false },
    { cause: withCode("EMFILE"), code: "EMFILE", transient: true },
    { cause: withCode("ECONNREFUSED"), code: "ECONNREFUSED", transient: true },
    // what a second attempt can cure: no row, transient
    { cause: withCode("ECONNRESET"), code: undefined, transient: true },
    { cause: withCode("UND_ERR_SOCKET", "other side closed"), code: undefined, transient: true },
    { cause: withCode("EAI_AGAIN"), code: undefined, transient: true },
    { cause: withCode("UND_ERR_CONNECT_TIMEOUT"), code: undefined, transient: true },
    { cause: new TypeError("fetch failed", { cause: withCode("ETIMEDOUT") }), code: undefined, transient: true }
  ]
  for (const row of rows) {
    it(`${inspect(row.cause, { breakLength: Infinity }).split("\n")[0]}: ${row.code ?? "no row"}, ${row.transient ? "transient" : "not retried"}`, () => {
      const found = Failures.classify(row.cause)
      expect(found?.code).toBe(row.code)
      expect(found === undefined || found.rule.transient).toBe(row.transient)
    })
  }
})

// a connection closed in the middle of a chunked answer (a proxy or an upstream that died mid-response): the
// request reached a server and its answer was cut, which is a dropped connection (retried where the call
// may be), not a malformed answer. undici's parser reports it as `HPE_INVALID_EOF_STATE` when the answer
// said `Connection: close`: it was classified as "not valid HTTP/1.1", never retried
describe("an answer cut mid-chunk by the server's close", () => {
  const body = "{\"x\":1,\"y\":2}"
  for (const keepAlive of [false, true]) {
    for (const transport of transports) {
      it.scopedLive(
        `${transport.name}, ${keepAlive ? "keep-alive" : "Connection: close"}: transient, retried, then answered`,
        () =>
          Effect.gen(function*() {
            let requests = 0
            const server = yield* rawServer(({ socket }) => {
              requests++
              const headers = {
                "content-type": "application/json",
                "transfer-encoding": "chunked",
                ...(keepAlive ? {} : { connection: "close" })
              }
              if (requests === 1) {
                // a chunk of 0x20 bytes announced, 7 of them sent, then the connection closed
                socket.write(head("200 OK", headers) + "20\r\n{\"x\":1,")
                setTimeout(() => socket.end(), 20)
                return
              }
              socket.end(head("200 OK", headers) + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`)
            })
            const layer = loopbackLayer(server.port, transport.layer, { maxRetries: 2 })
            // the first attempt alone: its failure is a TransportError that a retry can cure
            const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
              Effect.provide(loopbackLayer(server.port, transport.layer)),
              Effect.flip
            )
            expect(error._tag).toBe("TransportError")
            expect(KernelError.isTransient(error)).toBe(true)
            expect(error.message).not.toContain("not valid HTTP/1.1")
            requests = 0
            // with retries: cut once, then answered
            const position = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(layer))
            expect(position).toEqual({ x: 1, y: 2 })
            expect(requests).toBe(2)
          })
      )
    }
  }
})

/** A transport that counts the requests sent through it. */
const countingAttempts = <E>(transport: Layer.Layer<HttpClient.HttpClient, E>) => {
  let attempts = 0
  const counting = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) => HttpClient.tapRequest(client, () => Effect.sync(() => attempts++)))
  ).pipe(Layer.provide(transport))
  return { attempts: () => attempts, counting }
}

// fetch refuses the Fetch standard's blocked ports (6000 here) before it connects: the same request fails
// the same way, so it is not retried (it was: 3 attempts and their backoff, for a local refusal)
describe("fetch: a port the Fetch standard blocks", () => {
  it.live("a TransportError that says so, not transient, tried once", () =>
    Effect.gen(function*() {
      const { attempts, counting } = countingAttempts(FetchHttpClient.layer)
      const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
        Effect.provide(loopbackLayer(6000, counting, { maxRetries: 2 })),
        Effect.flip
      )
      expect(error._tag).toBe("TransportError")
      expect(error._tag === "TransportError" && error.code).toBe("BAD_PORT")
      expect(error.message).toContain("a port the Fetch standard blocks")
      expect(KernelError.isTransient(error)).toBe(false)
      expect(attempts()).toBe(1)
    }))
})

// a call made on a KernelTransport whose layer has ended (a fiber that outlived its runtime): the agent is
// destroyed for good, so the call fails at once, not after its retries' back-off
describe("KernelTransport: a call after the layer's scope closed", () => {
  it.live("a TransportError that says so, not transient, tried once", () =>
    Effect.gen(function*() {
      const { attempts, counting } = countingAttempts(KernelTransport.layerUndici)
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(loopbackLayer(1, counting, { maxRetries: 2 }), scope)
      yield* Scope.close(scope, Exit.void)
      const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(context), Effect.flip)
      expect(error._tag).toBe("TransportError")
      expect(error._tag === "TransportError" && error.code).toBe("UND_ERR_DESTROYED")
      expect(error.message).toContain("closed for good")
      expect(KernelError.isTransient(error)).toBe(false)
      expect(attempts()).toBe(1)
    }))
})

describe("KernelTransport: a trusted CA but another host name", () => {
  it.scopedLive("ERR_TLS_CERT_ALTNAME_INVALID is refused once, not retried", () =>
    Effect.gen(function*() {
      const server = yield* tlsServer
      const transport = Layer.orDie(KernelTransport.layerUndiciWith({ tls: { ca: fixture("selfsigned.crt") } }))
      const error = yield* Computer.getMousePosition({ id: "b1" }).pipe(
        Effect.provide(
          loopbackLayer(server.port, transport, { maxRetries: 2, baseUrl: `https://127.0.0.1:${server.port}` })
        ),
        Effect.flip
      )
      expect(error._tag).toBe("TransportError")
      expect(error._tag === "TransportError" && error.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID")
      expect(KernelError.isTransient(error)).toBe(false)
      expect(server.opened()).toBe(1)
    }))
})
