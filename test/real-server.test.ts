/**
 * What the browser's own server (`kernel/kernel-images`, read by review 93) sends where the document says
 * otherwise or nothing, each of which failed a call with `DecodeError` before: an empty directory listed
 * as `null` (a Go nil slice), a telemetry event whose `stack_trace` is `null`, a truncated one whose
 * `data` is `null`, and CDP target types the document does not list (`worker`, `iframe`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Stream } from "effect"
import { Filesystem, FilesystemWatch, KernelEvents, KernelTransport, Telemetry } from "effect-kernel"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { json, mockLayer } from "./utils/mock.js"

describe("a list answered null", () => {
  it.effect("Filesystem.listFiles of an empty directory (`null`): the empty list", () =>
    Effect.gen(function*() {
      expect(yield* Filesystem.listFiles({ id: "b1", path: "/tmp/empty" })).toEqual([])
    }).pipe(Effect.provide(mockLayer(() => json(200, null)).layer)))

  it.effect("an object answered null is still a DecodeError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Filesystem.fileInfo({ id: "b1", path: "/x" }))
      expect(error._tag).toBe("DecodeError")
    }).pipe(Effect.provide(mockLayer(() => json(200, null)).layer)))
})

const context = { session_id: "s", target_id: "t", frame_id: "f", loader_id: "l", url: "https://x.test/" }
const envelopes = [
  {
    name: "a console error without a stack trace",
    event: { ts: 1, type: "console_error", source: { kind: "cdp" }, data: { ...context, text: "x", stack_trace: null } }
  },
  {
    name: "a console log without a stack trace",
    event: {
      ts: 1,
      type: "console_log",
      source: { kind: "cdp" },
      data: { ...context, level: "log", text: "x", stack_trace: null }
    }
  },
  {
    name: "a truncated event (its data null)",
    event: { ts: 1, type: "console_log", source: { kind: "cdp" }, data: null, truncated: true }
  },
  ...["worker", "iframe", "worklet", "app", "assistive_technology"].map((target_type) => ({
    name: `a network request of a ${target_type} target`,
    event: {
      ts: 1,
      type: "network_request",
      source: { kind: "cdp" },
      data: { ...context, target_type, request_id: "r", method: "GET", url: "https://x.test/a" }
    }
  }))
]

describe("telemetry events as the browser's server sends them", () => {
  it.effect.each(envelopes)("$name: decoded, not a DecodeError", ({ event }) =>
    Effect.gen(function*() {
      const events = yield* Telemetry.stream({ id: "b1" })
      const values = Chunk.toArray(yield* Stream.runCollect(Stream.take(events, 1)))
      expect(values).toHaveLength(1)
      expect(KernelEvents.isUnknownEvent(values[0])).toBe(false)
      expect(values[0]).toMatchObject({ seq: 1, event: { type: event.type } })
    }).pipe(Effect.provide(
      mockLayer(() =>
        new Response(`id: 1\ndata: ${JSON.stringify({ seq: 1, event })}\n\n`, {
          status: 200,
          headers: { "content-type": "text/event-stream" }
        })
      ).layer
    )))
})

describe("an error as the browser's server writes it (`{ message }` alone)", () => {
  it.effect("its message is the error's, its code unknown", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Filesystem.fileInfo({ id: "b1", path: "/nope" }))
      expect(error).toMatchObject({ _tag: "NotFound", status: 404, code: "unknown", message: "file not found" })
    }).pipe(Effect.provide(mockLayer(() => json(404, { message: "file not found" })).layer)))
})

// the browser's server sends no keep-alive on a file watch (nor on a process's output, nor on a log): a
// quiet one reached `idleTimeout`; `KernelEvents.IdleTimeout` sets it for the streams run under it
const quiet = fileHttpServer((request, response) => {
  request.resume()
  response.writeHead(200, { "content-type": "text/event-stream" })
  const event = (name: string) =>
    `data: ${JSON.stringify({ type: "CREATE", name, path: `/tmp/${name}`, is_dir: false })}\n\n`
  response.write(event("a"))
  // quiet for 600 ms (three idle time-outs of the layer), then the next event
  const timer = setTimeout(() => response.write(event("b")), 600)
  response.on("close", () => clearTimeout(timer))
})

describe("KernelEvents.IdleTimeout", () => {
  const watched = (idleTimeout?: Duration.Duration) =>
    FilesystemWatch.events({ id: "b1", watchId: "w1" }).pipe(
      Effect.flatMap((events) => {
        const two = Stream.take(events, 2)
        return Stream.runCollect(
          idleTimeout === undefined ? two : Stream.provideService(two, KernelEvents.IdleTimeout, idleTimeout)
        )
      }),
      Effect.map((events) => Chunk.toArray(events).map((event) => Reflect.get(Object(event), "name"))),
      Effect.provide(loopbackLayer(quiet.port(), KernelTransport.layerUndici, { idleTimeout: "200 millis" }))
    )
  it.live("without it, the layer's idleTimeout: a quiet watch fails with Timeout", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(watched())
      expect(error).toMatchObject({ _tag: "Timeout", idle: true })
    }))
  it.live.each([Duration.seconds(2), Duration.infinity])(
    "with %s, the quiet watch goes on",
    (idleTimeout) =>
      Effect.gen(function*() {
        expect(yield* watched(idleTimeout)).toEqual(["a", "b"])
      })
  )
})
