/**
 * A hostile review of the compiled decoder, the timestamps, the SSE parser and the lazy schemas
 * (round 20): what a hostile server or a demanding Effect user could do that the code did not expect.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, FastCheck as fc, Schema, Stream } from "effect"
import { KernelError, KernelEvents, Telemetry } from "effect-kernel"
import { inspect } from "node:util"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as Events from "../src/internal/events.js"
import { operations } from "../src/internal/generated/table.js"
import { decodeJson } from "../src/internal/responseBody.js"
import { parseAll, Parser } from "../src/internal/sse.js"
import { array, struct, union } from "../src/internal/struct.js"

const encoder = new TextEncoder()

/** A stack trace nested `depth` times through `parent` (the schema is recursive). */
const deepStack = (depth: number, leaf = `{"callFrames":[]}`): string => {
  let text = leaf
  for (let i = 0; i < depth; i++) text = `{"callFrames":[],"parent":${text}}`
  return text
}
const consoleLog = (stack: string, seq = 1) =>
  `{"seq":${seq},"event":{"type":"console_log","ts":1,"source":{"kind":"cdp"},"category":"console",` +
  `"data":{"stack_trace":${stack}}}}`

const telemetry = operations.find((operation) => operation.name === "streamTelemetry")!
const telemetrySchema = (() => {
  const answer = telemetry.answers[200]
  if (answer?.kind !== "sse") throw new Error("streamTelemetry answers an event stream")
  return answer.schema
})()

const streamOf = (frames: ReadonlyArray<string>) =>
  Events.decoder("streamTelemetry", telemetrySchema)(
    HttpClientRequest.get("http://localhost/browsers/b/telemetry"),
    200,
    {},
    Stream.fromIterable(frames.map((frame) => encoder.encode(`data: ${frame}\n\n`)))
  )

/** Nested deeper than the stack (valid or not), and just deep enough for the error's text. */
const deepCases = [
  ["valid and deep (recursive schema)", deepStack(20_000)],
  ["invalid and deep (the schema's own error)", deepStack(20_000, `{"callFrames":1}`)],
  ["invalid, deep enough for the error's text only", deepStack(1_200, `{"callFrames":1}`)]
] as const

const expectDecodeError = (exit: Exit.Exit<unknown, unknown>) => {
  expect(Exit.isFailure(exit) && Cause.isDie(exit.cause), String(exit)).toBe(false)
  const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
  expect(failure?._tag === "Some" && failure.value instanceof KernelError.DecodeError).toBe(true)
}

describe("event streams: a hostile event", () => {
  it.effect.each(deepCases)("%s: a DecodeError, never a defect", ([, stack]) =>
    Effect.map(
      Effect.exit(Stream.runCollect(streamOf([consoleLog(`{"callFrames":[]}`), consoleLog(stack, 2)]))),
      expectDecodeError
    ))

  it.effect("a shallow event before the deep one is still delivered", () =>
    Effect.gen(function*() {
      const values = yield* Stream.runCollect(
        Stream.catchAll(
          streamOf([consoleLog(`{"callFrames":[]}`), consoleLog(deepStack(20_000), 2)]),
          () => Stream.empty
        )
      )
      expect(Chunk.size(values)).toBe(1)
    }))
})

describe("JSON answers: a hostile body", () => {
  const request = HttpClientRequest.get("http://localhost/x")
  it.effect.each(deepCases)("%s: a DecodeError, never a defect", ([, stack]) =>
    Effect.map(
      Effect.exit(
        decodeJson(Schema.Array(Telemetry.BrowserCallStack))(request)(
          HttpClientResponse.fromWeb(request, new Response(`[${stack}]`))
        )
      ),
      expectDecodeError
    ))
})

describe("lazy schemas print as the schemas they stand for", () => {
  const fields = () => ({ id: Schema.String, size: Schema.optional(Schema.Int) })
  const A = struct("A", () => ({ kind: Schema.Literal("a") }))
  it.each(
    [
      ["struct", () => struct("Thing", fields), () => Schema.Struct(fields()).annotations({ identifier: "Thing" })],
      ["union", () => union(() => Schema.Union(A, Schema.Null)), () => Schema.Union(A, Schema.Null)],
      ["array", () => array(() => Schema.Array(A)), () => Schema.Array(A)]
    ] as const
  )("%s: util.inspect and String", (_, lazy, eager) => {
    expect(inspect(lazy())).toBe(inspect(eager()))
    expect(String(lazy())).toBe(String(eager()))
  })
})

describe("telemetry resumption: an unknown event's seq", () => {
  const info = { method: "GET", path: "/browsers/b/telemetry" }
  const unknown = (seq: unknown) => new KernelEvents.UnknownEvent({ event: "future_kind", data: { seq }, id: "" })
  it.effect.each([
    ["far past the others", 1e300],
    ["not an integer", 1.5],
    ["zero", 0],
    ["negative", -7],
    ["past the safe integers", 2 ** 60]
  ])("%s: neither counted nor silencing the events after it", ([, seq]) =>
    Effect.gen(function*() {
      const values = yield* Stream.runCollect(
        Events.resumable(info, () => Stream.fromIterable([{ seq: 1 }, unknown(seq), { seq: 2 }, { seq: 3 }]))
      )
      expect(Chunk.toReadonlyArray(values).filter((value) => !KernelEvents.isUnknownEvent(value))).toStrictEqual([
        { seq: 1 },
        { seq: 2 },
        { seq: 3 }
      ])
    }))
})

/** The WHATWG interpretation of a whole body, written plainly (lines of the decoded text, then fields). */
const referenceEvents = (bytes: Uint8Array) => {
  const text = new TextDecoder("utf-8", { ignoreBOM: false }).decode(bytes)
  const lines: Array<string> = []
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "\r" && text[i] !== "\n") continue
    lines.push(text.slice(start, i))
    if (text[i] === "\r" && text[i + 1] === "\n") i++
    start = i + 1
  }
  const events: Array<{ event: string; data: string; id: string }> = []
  let data: string | undefined
  let type = ""
  let id = ""
  for (const line of lines) {
    if (line === "") {
      if (data !== undefined) events.push({ event: type === "" ? "message" : type, data, id })
      data = undefined
      type = ""
      continue
    }
    const colon = line.indexOf(":")
    if (colon === 0) continue
    const field = colon < 0 ? line : line.slice(0, colon)
    const raw = colon < 0 ? "" : line.slice(colon + 1)
    const value = raw.startsWith(" ") ? raw.slice(1) : raw
    if (field === "data") data = data === undefined ? value : `${data}\n${value}`
    else if (field === "event") type = value
    else if (field === "id" && !value.includes("\u0000")) id = value
  }
  return events
}

describe("SSE: any body, cut anywhere, reads as the WHATWG rules say", () => {
  it("random bodies of fields, line ends (CR, LF, CRLF), BOMs and multi-byte characters, at random and every-byte cuts", () => {
    const piece = fc.constantFrom(
      "data",
      "data:",
      "data: ",
      "event: x",
      "id: 1",
      "id",
      ": c",
      ":",
      "\r",
      "\n",
      "\r\n",
      "\uFEFF",
      "é",
      "😀",
      "x",
      " ",
      "retry: 5",
      "\u0000",
      "da",
      "ta"
    )
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(piece, { maxLength: 40 }),
        fc.array(fc.nat(200), { maxLength: 8 }),
        (bom, pieces, cuts) => {
          const bytes = new TextEncoder().encode((bom ? "\uFEFF" : "") + pieces.join(""))
          const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
          const chunks = [0, ...points].map((from, i) => bytes.slice(from, [...points, bytes.length][i]))
          const expected = referenceEvents(bytes)
          expect(parseAll(chunks).events).toStrictEqual(expected)
          expect(parseAll([...bytes].map((byte) => Uint8Array.of(byte))).events).toStrictEqual(expected)
        }
      ),
      { numRuns: 3_000, seed: 20 }
    )
  })
})

describe("SSE: a line dripped one byte per read", () => {
  it("holds about its bytes, not an object per read, until the bound refuses it", () => {
    setFlagsFromString("--expose_gc")
    const gc: unknown = runInNewContext("gc")
    const collect = () => typeof gc === "function" && gc()
    const parser = new Parser(1024 * 1024, 1024 * 1024)
    const byte = Uint8Array.of(0x61)
    collect()
    const before = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
    for (let i = 0; i < 200_000; i++) expect(parser.push(byte, [])).toBeUndefined()
    collect()
    const held = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - before
    // 200 kB of line: a piece per read held about 40 MB here
    expect(held).toBeLessThan(8_000_000)
    expect(parser.push(new Uint8Array(1024 * 1024), [])).toContain("longer than")
    expect(parseAll([encoder.encode("da"), encoder.encode("ta: x"), encoder.encode("y\n\n")]).events).toStrictEqual([
      { event: "message", data: "xy", id: "" }
    ])
  })
})
