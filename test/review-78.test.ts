/**
 * Review 78 (a hostile server against the event streams and downloads): a telemetry envelope whose `seq`
 * breaks the document's bound (`minimum: 1`: 0, a negative one) is a `DecodeError`, where it was counted
 * as no seq and delivered again on every resumed connection; a download or an event stream compressed
 * anyway is a `DecodeError` on `FetchHttpClient` too, where fetch decoded it (a corrupt gzip stream past
 * 64 KiB then left its read pending for good, past the idle time-out). Each failed before its fix.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule, Stream } from "effect"
import { Filesystem, KernelEvents, Logs, Telemetry } from "effect-kernel"
import * as zlib from "node:zlib"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { mockLayer } from "./utils/mock.js"

const envelope = (seq: number) =>
  `data: ${
    JSON.stringify({ seq, event: { type: "console_log", ts: 1, source: { kind: "cdp" }, category: "console" } })
  }\n\n`

describe("a telemetry seq out of the document's bound", () => {
  for (const seq of [0, -3]) {
    it.effect(`seq ${seq}: a DecodeError naming it, not a duplicate on each reconnection`, () => {
      // each connection: the bad envelope, then seq 1, then the body ends (a drop)
      const { layer, requests } = mockLayer(() =>
        new Response(envelope(seq) + envelope(1), { status: 200, headers: { "content-type": "text/event-stream" } })
      )
      return Effect.gen(function*() {
        const events = yield* Telemetry.stream({ id: "b1" })
        const error = yield* Effect.flip(Stream.runDrain(events))
        expect(error._tag).toBe("DecodeError")
        expect(error.message).toContain(`telemetry seq ${seq} is not a sequence number`)
        expect(requests).toHaveLength(1)
      }).pipe(
        Effect.provideService(KernelEvents.ResumeSchedule, Schedule.recurs(3)),
        Effect.provide(layer)
      )
    })
  }
})

// a gzip stream of 300 KB whose CRC trailer is wrong, framed exactly, the connection kept open
const event = JSON.stringify({ event: "log", timestamp: "2026-01-01T00:00:00Z", message: "x".repeat(500) })
const corrupt = (text: string) => {
  const gz = zlib.gzipSync(Buffer.from(text))
  gz[gz.length - 8] = gz[gz.length - 8]! ^ 0xff
  return gz
}
const served = fileHttpServer((request, response) => {
  request.resume()
  const sse = request.url?.includes("/logs/stream") === true
  const body = corrupt(sse ? `data: ${event}\n\n`.repeat(600) : "y".repeat(300_000))
  response.writeHead(200, {
    "content-type": sse ? "text/event-stream" : "application/octet-stream",
    "content-encoding": "gzip",
    "content-length": body.length
  })
  response.write(body)
})

describe("a body compressed anyway, on FetchHttpClient", () => {
  const layer = () => loopbackLayer(served.port(), FetchHttpClient.layer, { idleTimeout: "1 second", maxRetries: 0 })
  it.live("a download: a DecodeError naming the coding, at once", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(Filesystem.readFileStream({ id: "b1", path: "/f" })))
      expect(error).toMatchObject({ _tag: "DecodeError", message: expect.stringContaining("content-encoding gzip") })
    }).pipe(Effect.provide(layer()), Effect.timeout("5 seconds")), 10_000)

  it.live("an event stream: a DecodeError naming the coding, at once", () =>
    Effect.gen(function*() {
      const events = yield* Logs.stream({ id: "b1", source: "path", path: "/x" })
      const error = yield* Effect.flip(Stream.runDrain(events))
      expect(error).toMatchObject({ _tag: "DecodeError", message: expect.stringContaining("content-encoding gzip") })
    }).pipe(Effect.provide(layer()), Effect.timeout("5 seconds")), 10_000)
})
