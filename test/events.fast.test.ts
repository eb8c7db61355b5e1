import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, DateTime, Effect, Either, Option, Schema, Stream } from "effect"
import * as Events from "../src/internal/events.js"
import * as FastDecode from "../src/internal/fastDecode.js"
import { ErrorEvent, LogEvent } from "../src/internal/generated/schemas/Common.js"
import { parseTimestamp, Timestamp } from "../src/internal/timestamp.js"

// The event streams decode their events with the compiled decoder (src/internal/fastDecode.ts;
// test/fastDecode.test.ts checks it on every answer schema): on the streams' schemas, what it gives
// must be what `Schema.decodeUnknownEither` gives, and it must give nothing where the schema fails.

const timestamps = [
  "2026-01-02T03:04:05Z",
  "2026-01-02T03:04:05.123Z",
  "2026-01-02T03:04:05.123456789Z",
  "2026-01-02T05:04:05+02:00",
  "2026-01-02T01:04:05-02:00",
  "0000-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999Z",
  "2024-02-29T00:00:00Z",
  "2026-02-30T00:00:00Z",
  "2026-13-02T03:04:05Z",
  "2026-01-02T24:00:00Z",
  "2026-01-02T23:60:00Z",
  "2026-01-02T03:04:05+25:00",
  "0",
  "yesterday",
  "2026-01-02",
  "2026-01-02T03:04:05",
  "1700000000",
  "",
  "2026-01-02 03:04:05Z",
  "2026-01-02t03:04:05z",
  "2026-01-02T03:04:05.Z",
  " 2026-01-02T03:04:05Z"
]

const decodeLog = Schema.decodeUnknownEither(LogEvent, { onExcessProperty: "ignore" })
/** The fast path's value, `undefined` when it leaves the input to the schema. */
const fastOf = (schema: Schema.Schema.AnyNoContext) => {
  const fast = FastDecode.fastPath(schema)
  return (input: unknown) => fast(input)?.value
}
const fastLog = fastOf(LogEvent)

const inputs: Array<unknown> = [
  ...timestamps.map((timestamp) => ({ event: "log", timestamp, message: "m" })),
  { timestamp: "2026-01-02T03:04:05Z", message: "keys in another order", event: "log", extra: [1, 2] },
  { event: "log", timestamp: "2026-01-02T03:04:05Z" },
  { event: "log", timestamp: "2026-01-02T03:04:05Z", message: undefined },
  { event: "log", timestamp: "2026-01-02T03:04:05Z", message: 1 },
  { event: "error", timestamp: "2026-01-02T03:04:05Z", message: "m" },
  { event: "log", timestamp: 1700000000, message: "m" },
  { event: "log", timestamp: null, message: "m" },
  Object.assign(Object.create({ message: "inherited" }), { event: "log", timestamp: "2026-01-02T03:04:05Z" }),
  [],
  ["log"],
  null,
  "log",
  42
]

describe("events: the fast path of a flat schema", () => {
  it("parseTimestamp gives what DateTime.make gave (behind the RFC 3339 pattern)", () => {
    for (const text of timestamps) {
      const fast = parseTimestamp(text)
      const decoded = Schema.decodeUnknownEither(Timestamp)(text)
      expect(decoded._tag, text).toBe(fast === undefined ? "Left" : "Right")
      if (fast === undefined) continue
      // RFC 3339 allows a lower-case `t` and `z`, which `DateTime.make` does not read: compared in upper case
      const made = DateTime.make(text.toUpperCase())
      expect(Option.isSome(made), text).toBe(true)
      expect(fast.epochMillis, text).toBe(Option.getOrThrow(made).epochMillis)
      expect(DateTime.isUtc(fast)).toBe(true)
    }
    expect(parseTimestamp("2026-01-02T05:04:05+02:00")?.epochMillis).toBe(Date.UTC(2026, 0, 2, 3, 4, 5))
  })

  it("LogEvent: the same value as the schema where it decodes, nothing where the schema fails", () => {
    let fastCount = 0
    let schemaCount = 0
    for (const input of inputs) {
      const expected = decodeLog(input)
      const fast = fastLog(input)
      if (Either.isLeft(expected)) {
        expect(fast, JSON.stringify(input)).toBeUndefined()
        continue
      }
      schemaCount++
      if (fast === undefined) continue
      fastCount++
      expect(Object.keys(fast!)).toEqual(Object.keys(expected.right))
      expect(fast).toStrictEqual(expected.right)
    }
    // every one, the field inherited from a prototype too (read as the schema reads it)
    expect(fastCount).toBe(schemaCount)
    expect(fastCount).toBeGreaterThan(8)
    expect(fastLog({ event: "log", timestamp: "2026-01-02T03:04:05Z", message: "m", extra: 1 })).toStrictEqual({
      event: "log",
      timestamp: DateTime.unsafeMake("2026-01-02T03:04:05Z"),
      message: "m"
    })
  })

  it("nested, optional, refined, union and index-signature schemas have the fast path too", () => {
    const error = { event: "error", timestamp: "2026-01-02T03:04:05Z", error: { code: "c", message: "m" } }
    const cases: Array<readonly [Schema.Schema.AnyNoContext, unknown]> = [
      [ErrorEvent, error],
      [Schema.Union(LogEvent, ErrorEvent), error],
      [Schema.Struct({ a: Schema.optional(Schema.String) }), {}],
      [Schema.Struct({ a: Schema.String.pipe(Schema.minLength(1)) }), { a: "x" }],
      [Schema.Struct({ a: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.String })), {
        a: "x",
        b: "y"
      }],
      [Schema.Struct({}), { a: 1 }]
    ]
    for (const [schema, input] of cases) {
      const expected = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })(input)
      expect(Either.isRight(expected)).toBe(true)
      if (Either.isRight(expected)) expect(fastOf(schema)(input)).toStrictEqual(expected.right)
    }
    const refined = fastOf(Schema.Struct({ a: Schema.String.pipe(Schema.minLength(1)) }))
    expect(refined({ a: "" })).toBeUndefined()
    const flat = fastOf(Schema.Struct({ n: Schema.Number, b: Schema.Boolean, l: Schema.Literal(1) }))
    expect(flat({ n: 1, b: false, l: 1 })).toStrictEqual({ n: 1, b: false, l: 1 })
    expect(flat({ n: "1", b: false, l: 1 })).toBeUndefined()
    expect(flat({ n: 1, b: 0, l: 1 })).toBeUndefined()
    expect(flat({ n: 1, b: false, l: 2 })).toBeUndefined()
  })

  it("the events of one network read come as one chunk, a bad one after the good ones of its chunk", () => {
    const line = (i: number) => `data: {"event":"log","timestamp":"2026-01-02T03:04:05Z","message":"${i}"}\n\n`
    const bytes = (text: string) => new TextEncoder().encode(text)
    const decode = Events.decoder("streamLogs", LogEvent)
    const request = HttpClientRequest.get("http://localhost/browsers/b1/logs/stream")
    const reads = [bytes(line(1) + line(2) + line(3)), bytes(line(4) + line(5))]
    const chunks = Effect.runSync(
      Stream.runCollect(
        Stream.chunks(
          decode(request, 200, { follow: false }, Stream.fromChunks(...reads.map((read) => Chunk.of(read))))
        )
      )
    )
    expect(Chunk.toReadonlyArray(chunks).map((chunk) => chunk.length)).toStrictEqual([3, 2])
    const broken = [bytes(line(1) + "data: {\"event\":\"log\"}\n\n" + line(3))]
    const result = Effect.runSync(
      Effect.either(Stream.runCollect(decode(request, 200, { follow: false }, Stream.fromIterable(broken))))
    )
    expect(Either.isLeft(result) && result.left._tag).toBe("DecodeError")
    const before: Array<unknown> = []
    Effect.runSync(
      Effect.either(
        Stream.runForEach(
          decode(request, 200, { follow: false }, Stream.fromIterable(broken)),
          (event) => Effect.sync(() => before.push(event))
        )
      )
    )
    expect(before).toHaveLength(1)
  })

  it("a read of many small events comes in bounded chunks: Stream.runFold does not overflow the stack", () => {
    // a transport's read holds up to its buffer (1 MiB on KernelTransport): about 14,000 events this
    // small, which one chunk would carry into effect's sinks (Stream.runFold walks a chunk one stack
    // frame per element: a RangeError defect)
    const line = `data: {"event":"log","timestamp":"2026-01-02T03:04:05Z","message":""}\n\n`
    const count = Math.ceil((1024 * 1024) / line.length) + 7
    const read = new TextEncoder().encode(line.repeat(count))
    const decode = Events.decoder("streamLogs", LogEvent)
    const request = HttpClientRequest.get("http://localhost/browsers/b1/logs/stream")
    const events = () => decode(request, 200, { follow: false }, Stream.make(read))
    const sizes = Effect.runSync(
      Stream.runCollect(Stream.map(Stream.chunks(events()), (chunk) => chunk.length))
    )
    const all = Chunk.toReadonlyArray(sizes)
    expect(all.reduce((a, b) => a + b, 0)).toBe(count)
    expect(Math.max(...all)).toBe(Events.maxEventsPerChunk)
    expect(Effect.runSync(Stream.runFold(events(), 0, (n) => n + 1))).toBe(count)
  })
})
