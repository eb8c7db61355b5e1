/**
 * A caller's one-shot `Stream` body is never sent twice, but a call whose stream was never read (its
 * connection refused: not a byte of it was sent) is retried like any call of its kind, on every
 * transport: `Deployments.create` (not idempotent) after `ECONNREFUSED`, then a server that answers.
 * It was never retried at all. A 429 once the body was read, or `KernelRetry.noRetries`, still
 * gives one attempt; on fetch, which reads the stream before it connects, so does a refusal.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { Deployments, KernelRetry } from "effect-kernel"
import * as net from "node:net"
import { head, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const deployment = JSON.stringify({
  id: "d1",
  status: "queued",
  created_at: "2026-01-01T00:00:00Z",
  entrypoint_rel_path: "index.ts",
  region: "aws.us-east-1a",
  env_vars: {}
})

/** A port nothing listens on (yet). */
const freePort = Effect.async<number>((resume) => {
  const probe = net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** A server on `port` from `after` ms on, answering each request's head with `status` (and counting them). */
const serveLater = (port: number, after: number, status: string, body: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const seen = { count: 0 }
      const server = net.createServer((socket) => {
        socket.on("error", () => {})
        let data = ""
        socket.on("data", (chunk: Buffer) => {
          data += chunk.toString("latin1")
          // the multipart body (chunked: its length is not known) ends with its closing boundary
          if (!data.includes("\r\n\r\n") || !/(--\r\n|\r\n0\r\n\r\n)$/.test(data)) return
          data = ""
          seen.count++
          socket.write(
            head(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }) + body
          )
        })
      })
      const timer = setTimeout(() => server.listen(port, "127.0.0.1"), after)
      return { seen, server, timer }
    }),
    ({ server, timer }) =>
      Effect.async<void>((resume) => {
        clearTimeout(timer)
        server.close(() => resume(Effect.void))
      })
  )

const upload = () =>
  Deployments.create({ entrypoint_rel_path: "index.ts", file: Stream.make(new Uint8Array([1, 2, 3])) })

describe.each(transports)("a one-shot Stream upload on $name", (transport) => {
  // fetch reads the stream into its `ReadableStream` before it connects: read from, never retried
  const retried = transport.name !== "fetch"
  it.live(
    `refused: ${retried ? "retried, and sent once" : "read before the connection, not retried"}`,
    () =>
      Effect.gen(function*() {
        const port = yield* freePort
        const { seen } = yield* serveLater(port, 150, "201 Created", deployment)
        const exit = yield* Effect.exit(
          upload().pipe(
            Effect.provide(loopbackLayer(port, transport.layer, { maxRetries: 2 }))
          )
        )
        if (retried) {
          expect(Exit.isSuccess(exit) ? "success" : String(exit.cause)).toBe("success")
          expect(seen.count).toBe(1)
        } else {
          expect(Exit.isFailure(exit)).toBe(true)
          yield* Effect.sleep("700 millis")
          expect(seen.count).toBe(0)
        }
      }).pipe(Effect.scoped),
    20_000
  )

  it.live("refused, with KernelRetry.noRetries: one attempt", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const { seen } = yield* serveLater(port, 150, "201 Created", deployment)
      const exit = yield* Effect.exit(
        upload().pipe(
          KernelRetry.noRetries,
          Effect.provide(loopbackLayer(port, transport.layer, { maxRetries: 2 }))
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      yield* Effect.sleep("700 millis")
      expect(seen.count).toBe(0)
    }).pipe(Effect.scoped), 20_000)

  it.live("a 429 once its body was read: not retried", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const { seen } = yield* serveLater(
        port,
        0,
        "429 Too Many Requests",
        JSON.stringify({ code: "rate_limited", message: "slow" })
      )
      yield* Effect.sleep("50 millis")
      const exit = yield* Effect.exit(
        upload().pipe(
          Effect.provide(loopbackLayer(port, transport.layer, { maxRetries: 2, maxRetryAfter: "10 millis" }))
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(seen.count).toBe(1)
    }).pipe(Effect.scoped), 20_000)
})
