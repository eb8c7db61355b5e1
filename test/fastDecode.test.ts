import { describe, expect, it } from "@effect/vitest"
import {
  Arbitrary,
  DateTime,
  Effect,
  Either,
  Equal,
  FastCheck as fc,
  ParseResult,
  Redacted,
  Schema,
  SchemaAST
} from "effect"
import * as BrowserPools from "../src/BrowserPools.js"
import * as Computer from "../src/Computer.js"
import * as FastDecode from "../src/internal/fastDecode.js"
import { operations } from "../src/internal/generated/table.js"
import { makeUtc, parseTimestamp, Timestamp } from "../src/internal/timestamp.js"

// The compiled decoder of the answers (src/internal/fastDecode.ts) must give exactly what
// `Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })` gives: for every answer schema
// of the table (json, page, sse), on valid bodies (the schema's own values, encoded), on the same
// bodies broken one place at a time (a value replaced, a key removed, a key added) and on random
// JSON. The fast path must succeed exactly where the schema does (a failure is then the schema's own).

/** A value with everything equality could hide made visible: key order, prototypes, Redacted's value, DateTime. */
const canonical = (value: unknown): unknown => {
  if (DateTime.isDateTime(value)) {
    return { dateTime: value.epochMillis, utc: DateTime.isUtc(value), keys: Object.keys(value) }
  }
  if (Redacted.isRedacted(value)) {
    // (an object whose prototype is a Redacted, as a record's `__proto__` key makes it, is not one)
    const secret = Either.try(() => Redacted.value(value))
    if (Either.isRight(secret)) return { redacted: canonical(secret.right), text: String(value) }
  }
  if (Array.isArray(value)) return { array: value.map(canonical) }
  // a file's bytes, passed as they are
  if (value instanceof Uint8Array) return { bytes: value }
  if (typeof value === "object" && value !== null) {
    const prototype = Object.getPrototypeOf(value)
    const entries = Reflect.ownKeys(value).filter((key) => key !== "__proto__").map((
      key
    ) => [String(key), canonical(Reflect.get(value, key))])
    // a record's `__proto__` key: the compiled decoder keeps it as the record's own data, where the
    // schema's decoder assigns it (the record's prototype then, or nothing for a primitive): the same key
    // and value either way, last
    const own = Object.getOwnPropertyDescriptor(value, "__proto__")
    if (own !== undefined) return { prototype: "Object", entries: [...entries, ["__proto__", canonical(own.value)]] }
    if (prototype !== Object.prototype && prototype !== null && Object.getPrototypeOf(prototype) !== null) {
      return { prototype: "Object", entries: [...entries, ["__proto__", canonical(prototype)]] }
    }
    return {
      prototype: prototype === Object.prototype ? "Object" : prototype === null ? "null" : canonical(prototype),
      entries
    }
  }
  return { primitive: value, type: typeof value }
}

const schemasOfTable = (): Array<readonly [string, Schema.Schema.AnyNoContext]> => {
  const out: Array<readonly [string, Schema.Schema.AnyNoContext]> = []
  for (const operation of operations) {
    for (const [status, answer] of Object.entries(operation.answers)) {
      if (answer.kind === "json" || answer.kind === "sse") out.push([`${operation.name} ${status}`, answer.schema])
      if (answer.kind === "page") {
        out.push([`${operation.name} ${status} page`, Schema.make(Schema.Array(answer.schema).ast)])
      }
    }
  }
  return out
}

const handWritten: Array<readonly [string, Schema.Schema.AnyNoContext]> = [
  ["BrowserPools.BrowserPoolList", BrowserPools.BrowserPoolList],
  ["Computer.MousePosition", Computer.MousePosition]
]

/** Every path into a JSON value (`[]` the value itself). */
const pathsOf = (value: unknown, path: Array<string | number> = []): Array<Array<string | number>> => {
  const out = [path]
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...pathsOf(item, [...path, i])))
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) out.push(...pathsOf(item, [...path, key]))
  }
  return out
}

/** `value` with the thing at `path` replaced by `f(thing)` (`undefined`: removed). */
const edit = (value: unknown, path: ReadonlyArray<string | number>, f: (at: unknown) => unknown): unknown => {
  if (path.length === 0) return f(value)
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((item, i) => i === head ? edit(item, rest, f) : item)
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (key !== head) out[key] = item
    else {
      const edited = edit(item, rest, f)
      if (edited !== undefined || rest.length > 0) out[key] = edited
    }
  }
  return out
}

const odd: ReadonlyArray<unknown> = [
  null,
  undefined,
  0,
  -1.5,
  "",
  "x",
  "2026-01-02T03:04:05Z",
  "2026-13-02T03:04:05Z",
  true,
  [],
  [1],
  {},
  { extra: 1 }
]

/**
 * `value` broken in six places picked from `k` (a value replaced, removed, an object given more keys by
 * `more`), pushed onto `inputs`; the next `k`.
 */
const breakInto = (inputs: Array<unknown>, value: unknown, k: number, more: (at: object) => unknown): number => {
  const paths = pathsOf(value)
  for (let i = 0; i < 6; i++) {
    const path = paths[(k = (k * 1103515245 + 12345) % 2147483648) % paths.length]!
    const replacement = odd[k % odd.length]
    inputs.push(edit(value, path, () => replacement))
    inputs.push(edit(value, path, () => undefined))
    inputs.push(
      edit(value, path, (at) => (typeof at === "object" && at !== null && !Array.isArray(at)) ? more(at) : at)
    )
  }
  return k
}

/** Inputs for a schema: valid bodies, each broken in a few places, and random JSON. */
const inputsOf = (schema: Schema.Schema.AnyNoContext, seed: number): Array<unknown> => {
  const values = fc.sample(Arbitrary.make(schema), { seed, numRuns: 12 })
  const encode = ParseResult.encodeUnknownEither(schema)
  const inputs: Array<unknown> = fc.sample(fc.jsonValue(), { seed, numRuns: 8 })
  let k = seed
  for (const value of values) {
    const encoded = encode(value)
    if (Either.isLeft(encoded)) continue
    // through JSON, as a body arrives (`undefined` fields dropped)
    const body: unknown = JSON.parse(JSON.stringify(encoded.right) ?? "null")
    inputs.push(body)
    // an unknown key, an inherited one, and `__proto__` as JSON.parse makes it (an own key)
    k = breakInto(
      inputs,
      body,
      k,
      (at) => Object.assign(Object.create({ injected: true }), at, JSON.parse(`{"unknown_key":1,"__proto__":{"p":1}}`))
    )
  }
  return inputs
}

/** Whether a value holds an own `__proto__` key anywhere (as `JSON.parse` makes it). */
const holdsProtoKey = (value: unknown): boolean =>
  typeof value === "object" && value !== null &&
  (Object.prototype.hasOwnProperty.call(value, "__proto__") ||
    Object.values(value).some(holdsProtoKey))

/**
 * The fast path (`fast`: its value or `undefined`; `both`: through it, else the schema) against the
 * schema (`slow`) on each input: the fast path fits exactly where the schema succeeds, with its value,
 * and `both` fails with the schema's own message where it fails.
 */
const compare = (
  name: string,
  inputs: ReadonlyArray<unknown>,
  slow: (u: unknown) => Either.Either<unknown, ParseResult.ParseError>,
  fast: (u: unknown) => { readonly value: unknown } | undefined,
  both: (u: unknown) => Either.Either<unknown, ParseResult.ParseError>,
  identical: boolean
) => {
  let valid = 0
  let invalid = 0
  for (const input of inputs) {
    const expected = slow(input)
    const got = fast(input)
    const label = `${name}: ${String(JSON.stringify(input))?.slice(0, 300)}`
    expect(got !== undefined, label).toBe(Either.isRight(expected))
    const through = both(input)
    if (Either.isLeft(expected)) {
      invalid++
      expect(Either.isLeft(through), label).toBe(true)
      if (Either.isLeft(through)) expect(through.left.message, label).toBe(expected.left.message)
      continue
    }
    valid++
    expect(canonical(got!.value), label).toStrictEqual(canonical(expected.right))
    // (a record's own `__proto__` key: kept as data by the compiled decoder, the schema's prototype: canonical only)
    if (identical && !holdsProtoKey(input)) expect(got!.value, label).toStrictEqual(expected.right)
    expect(Either.isRight(through), label).toBe(true)
    if (Either.isRight(through)) expect(canonical(through.right), label).toStrictEqual(canonical(expected.right))
  }
  return { valid, invalid }
}

/** Both sides exercised widely: over a thousand inputs that fit, over a thousand that do not. */
const expectWide = (counts: ReadonlyArray<{ readonly valid: number; readonly invalid: number }>) => {
  expect(counts.reduce((n, c) => n + c.valid, 0)).toBeGreaterThan(1000)
  expect(counts.reduce((n, c) => n + c.invalid, 0)).toBeGreaterThan(1000)
}

const check = (name: string, schema: Schema.Schema.AnyNoContext, inputs: ReadonlyArray<unknown>) =>
  compare(
    name,
    inputs,
    Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" }),
    FastDecode.fastPath(schema),
    FastDecode.decoder(schema),
    true
  )

/** Whether an RFC 3339 text is a leap second: second 60 at 23:59 in UTC (its offset taken away). */
const isLeapSecond = (text: string): boolean => {
  const m = /T(\d{2}):(\d{2}):60(?:\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/.exec(text)
  if (m === null) return false
  const offset = m[3] === "Z" ? 0 : (m[4] === "-" ? -1 : 1) * (Number(m[5]) * 60 + Number(m[6]))
  return Number(m[5] ?? 0) <= 23 && Number(m[6] ?? 0) <= 59 &&
    (Number(m[1]) * 60 + Number(m[2]) - offset + 1440 * 2) % 1440 === 1439
}

describe("fastDecode: the compiled decoder gives what the schema gives", () => {
  it("every answer schema of the table: valid bodies, broken ones, random JSON", () => {
    const schemas = [...schemasOfTable(), ...handWritten]
    expect(schemas.length).toBeGreaterThan(70)
    expectWide(schemas.map(([name, schema], i) => check(name, schema, inputsOf(schema, 1000 + i))))
  }, 120_000)

  it("unknown keys dropped, fields in the schema's order, nullable, optional, absent required ones", () => {
    const schema = Schema.Struct({
      a: Schema.String,
      b: Schema.optional(Schema.NullOr(Schema.Number)),
      c: Schema.Unknown,
      d: Schema.optionalWith(Schema.Int, { exact: true })
    })
    const inputs = [
      { z: 1, d: 2, c: 3, b: null, a: "x" },
      { a: "x" },
      { a: "x", b: undefined },
      { a: "x", b: 1.5, d: 1.5 },
      { a: "x", b: "1" },
      { a: 1 },
      Object.assign(Object.create({ a: "inherited" }), { c: 1 }),
      [],
      null
    ]
    expect(check("struct", schema, inputs)).toStrictEqual({ valid: 4, invalid: 4 + 1 })
    const decoded = FastDecode.fastPath(schema)({ z: 1, d: 2, c: 3, b: null, a: "x" })!.value
    expect(Object.keys(decoded as object)).toStrictEqual(["a", "b", "c", "d"])
    // an index signature: every own key's value decoded, a property's key written once (by the property)
    const both = Schema.Struct(
      { a: Schema.NumberFromString },
      Schema.Record({ key: Schema.String, value: Schema.Unknown })
    )
    expect(check("index", both, [{ a: "1", b: "2" }, { b: 1 }, { a: 1 }])).toStrictEqual({ valid: 1, invalid: 2 })
    expect(FastDecode.fastPath(both)({ a: "1", b: "2" })!.value).toStrictEqual({ a: 1, b: "2" })
  })

  it("unions take the first member that fits, chosen by their literal fields as the schema does", () => {
    const A = Schema.Struct({ type: Schema.Literal("a"), n: Schema.Number })
    const A2 = Schema.Struct({ type: Schema.Literal("a"), n: Schema.String })
    const B = Schema.Struct({ type: Schema.Literal("b"), n: Schema.Number })
    const Loose = Schema.Struct({ n: Schema.Unknown })
    const schema = Schema.Union(A, A2, B, Loose)
    const inputs = [
      { type: "a", n: 1 },
      { type: "a", n: "1" },
      { type: "a", n: true },
      { type: "b", n: 1 },
      { type: "b", n: "1" },
      { type: "c", n: 1 },
      { n: 1 },
      "a",
      null
    ]
    expect(check("union", schema, inputs)).toStrictEqual({ valid: 7, invalid: 2 })
    expect(FastDecode.fastPath(schema)({ type: "b", n: "1", x: 1 })!.value).toStrictEqual({ n: "1" })
    // a literal field that is optional does not choose; a class's fields do (through its surrogate)
    const C = Schema.Struct({
      type: Schema.optionalWith(Schema.Literal("c"), { exact: true }),
      n: Schema.NumberFromString
    })
    const Loose2 = Schema.Struct({ n: Schema.Unknown })
    expect(check("optional literal", Schema.Union(Loose2, C), [{ n: "1" }, { type: "c", n: "1" }])).toStrictEqual({
      valid: 2,
      invalid: 0
    })
    expect(FastDecode.fastPath(Schema.Union(C, Loose2))({ n: "1" })!.value).toStrictEqual({ n: 1 })
    class K extends Schema.Class<K>("K")({ type: Schema.Literal("k"), n: Schema.NumberFromString }) {}
    const classes = Schema.Union(Loose2, K)
    expect(check("class", classes, [{ type: "k", n: "1" }, { type: "k", n: 1 }, { n: 1 }])).toStrictEqual({
      valid: 3,
      invalid: 0
    })
    expect(FastDecode.fastPath(classes)({ type: "k", n: "1" })!.value).toBeInstanceOf(K)
    const instances = Schema.Union(Loose2, Schema.typeSchema(K))
    const instance = new K({ type: "k", n: 1 })
    expect(check("class type", instances, [instance, { type: "k", n: 1 }])).toStrictEqual({ valid: 2, invalid: 0 })
    expect(FastDecode.fastPath(instances)(instance)!.value).toBe(instance)
    const plain = Schema.Union(Schema.Number, Schema.NumberFromString, Schema.String)
    expect(check("plain union", plain, [1, "2", "x", null])).toStrictEqual({ valid: 3, invalid: 1 })
  })

  it("Redacted fields decode as Redacted; timestamps as DateTime.Utc", () => {
    const schema = Schema.Struct({
      url: Schema.Redacted(Schema.String),
      at: Timestamp,
      map: Schema.Record({ key: Schema.String, value: Schema.Redacted(Schema.String) })
    })
    const input = {
      url: "wss://x?token=sentinel",
      at: "2026-01-02T03:04:05.5+01:00",
      map: JSON.parse(`{"k":"v","__proto__":"p"}`)
    }
    expect(check("redacted", schema, [input, { ...input, url: 1 }, { ...input, at: "0" }])).toStrictEqual({
      valid: 1,
      invalid: 2
    })
    const decoded = FastDecode.decoder(schema)(input)
    expect(Either.isRight(decoded)).toBe(true)
    if (Either.isRight(decoded)) {
      expect(Redacted.isRedacted(decoded.right.url)).toBe(true)
      expect(String(decoded.right.url)).not.toContain("sentinel")
      expect(Redacted.value(decoded.right.url)).toBe("wss://x?token=sentinel")
      expect(DateTime.isUtc(decoded.right.at)).toBe(true)
      expect(decoded.right.at.epochMillis).toBe(Date.UTC(2026, 0, 2, 2, 4, 5, 500))
      expect(Redacted.value(decoded.right.map.k!)).toBe("v")
    }
  })

  it("a Redacted decodes to one Redacted: the value decoded, re-wrapped only when decoding changed it", () => {
    // `Schema.Redacted` makes the Redacted; its type side (RedactedFromSelf) is then the input itself,
    // where effect's decode wraps the value a second time (an entry of its WeakMap per field)
    const same = Redacted.make("wss://x?token=sentinel")
    const self = FastDecode.fastPath(Schema.RedactedFromSelf(Schema.String))(same)
    expect(self?.value).toBe(same)
    const parsed = Schema.RedactedFromSelf(Schema.NumberFromString)
    expect(check("redacted, decoded", parsed, [Redacted.make("1"), Redacted.make("x"), "1", Redacted.make(1)]))
      .toStrictEqual({ valid: 1, invalid: 3 })
    const decoded = FastDecode.fastPath(parsed)(Redacted.make("1"))
    expect(Redacted.isRedacted(decoded?.value) && Redacted.value(decoded.value)).toBe(1)
    expect(check("redacted, in a struct", Schema.Struct({ a: Schema.Redacted(Schema.String) }), [{ a: "s" }, { a: 1 }]))
      .toStrictEqual({ valid: 1, invalid: 1 })
  })

  it("a recursive schema, a transformation and a declaration it does not know are the schema's", () => {
    interface Tree {
      readonly value: number
      readonly children: ReadonlyArray<Tree>
    }
    const Tree: Schema.Schema<Tree> = Schema.Struct({
      value: Schema.Number,
      children: Schema.Array(Schema.suspend(() => Tree))
    })
    const tree = {
      value: 1,
      children: [{ value: 2, children: [] }, { value: 3, children: [{ value: 4, children: [] }] }]
    }
    expect(check("tree", Tree, [tree, { ...tree, children: [{ value: "2", children: [] }] }])).toStrictEqual({
      valid: 1,
      invalid: 1
    })
    const renamed = Schema.Struct({ a: Schema.propertySignature(Schema.Number).pipe(Schema.fromKey("A")) })
    expect(check("renamed", renamed, [{ A: 1 }, { a: 1 }])).toStrictEqual({ valid: 1, invalid: 1 })
    const tuple = Schema.Tuple(Schema.String, Schema.optionalElement(Schema.Number))
    expect(check("tuple", tuple, [["a"], ["a", 1], ["a", "b"], []])).toStrictEqual({ valid: 2, invalid: 2 })
    const effectful = Schema.transformOrFail(Schema.String, Schema.Number, {
      strict: true,
      // not an Either: an effect the schema runs
      decode: (text) => Effect.suspend(() => ParseResult.succeed(text.length)),
      encode: (n) => ParseResult.succeed("x".repeat(n))
    })
    expect(check("transformOrFail", effectful, ["abc", 1])).toStrictEqual({ valid: 1, invalid: 1 })
  })

  it("makeUtc makes a DateTime.Utc like DateTime.unsafeMake's", () => {
    for (const millis of [0, 1, -1, Date.UTC(2026, 10, 24, 14, 0, 0, 123), 8.64e15, -8.64e15]) {
      const made = makeUtc(millis)
      const expected = DateTime.unsafeMake(millis)
      expect(DateTime.isDateTime(made)).toBe(true)
      expect(DateTime.isUtc(made)).toBe(true)
      expect(Equal.equals(made, expected)).toBe(true)
      expect(Equal.equals(expected, made)).toBe(true)
      expect(made).toStrictEqual(expected)
      expect(String(made)).toBe(String(expected))
      expect(JSON.stringify(made)).toBe(JSON.stringify(expected))
      expect(DateTime.toParts(made)).toStrictEqual(DateTime.toParts(expected))
      // the parts cached by formatting stay hidden, as on effect's own
      expect(Object.keys(made)).toStrictEqual(["epochMillis"])
      expect(DateTime.formatIso(DateTime.setZone(made, DateTime.zoneMakeOffset(60 * 60 * 1000)))).toBe(
        DateTime.formatIso(DateTime.setZone(expected, DateTime.zoneMakeOffset(60 * 60 * 1000)))
      )
      expect(made).toStrictEqual(expected)
    }
    expect(Equal.equals(makeUtc(1), DateTime.unsafeMake(2))).toBe(false)
  })

  it("parseTimestamp reads the digits as Date.parse does; a field out of its calendar range is refused", () => {
    const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()
    // every field within its range (a leap second aside), as RFC 3339 (section 5.7) restricts them
    const inRange = (input: string) => {
      const [year, month, day, hours, minutes, seconds] = [0, 5, 8, 11, 14, 17].map((at, i) =>
        Number(input.slice(at, at + (i === 0 ? 4 : 2)))
      ) as [number, number, number, number, number, number]
      const zone = /([+-])(\d{2}):(\d{2})$/.exec(input)
      return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year < 100 ? year + 400 : year, month) &&
        hours < 24 && minutes < 60 && (seconds < 60 || isLeapSecond(input)) &&
        (zone === null || (Number(zone[2]) < 24 && Number(zone[3]) < 60))
    }
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"))
    const text = fc.tuple(
      fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")),
      two(13),
      two(32),
      two(25),
      two(61),
      two(61),
      fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
      fc.option(fc.tuple(fc.constantFrom("+", "-"), two(25), two(61)), { nil: undefined })
    ).map(([year, month, day, hours, minutes, seconds, fraction, zone]) =>
      `${year}-${month}-${day}T${hours}:${minutes}:${seconds}${fraction === undefined ? "" : `.${fraction}`}${
        zone === undefined ? "Z" : `${zone[0]}${zone[1]}:${zone[2]}`
      }`
    )
    fc.assert(
      fc.property(text, (input) => {
        const leap = Date.parse(input.replace(/:60(?=[.Z+-])/, ":59")) + 1000
        // a leap second is the next second, unless that is past year 9999
        const expected = !inRange(input)
          ? Number.NaN
          : isLeapSecond(input)
          ? (leap > Date.UTC(9999, 11, 31, 23, 59, 59, 999) ? Number.NaN : leap)
          : Date.parse(input)
        const parsed = parseTimestamp(input)
        expect(parsed?.epochMillis ?? NaN, input).toBe(expected)
      }),
      { numRuns: 20_000, seed: 18 }
    )
    for (
      const input of [
        "2026-02-30T00:00:00Z",
        "2026-01-02T24:00:00Z",
        "2025-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-01-02T03:04:05+24:00"
      ]
    ) {
      // `Date.parse` moves them to another day; no RFC 3339 date-time
      expect(parseTimestamp(input), input).toBeUndefined()
    }
    expect(parseTimestamp("2024-02-29T12:00:00.9999Z")?.epochMillis).toBe(Date.parse("2024-02-29T12:00:00.9999Z"))
  })

  it("RFC 3339's lower-case `t` and `z`, and a leap second (23:59:60 in UTC) as the next second", () => {
    expect(parseTimestamp("2025-01-02t03:04:05z")?.epochMillis).toBe(Date.parse("2025-01-02T03:04:05Z"))
    expect(parseTimestamp("2025-01-02t03:04:05.5+01:00")?.epochMillis).toBe(Date.parse("2025-01-02T02:04:05.5Z"))
    expect(parseTimestamp("2016-12-31T23:59:60Z")?.epochMillis).toBe(Date.parse("2017-01-01T00:00:00Z"))
    expect(parseTimestamp("2016-12-31T23:59:60.25Z")?.epochMillis).toBe(Date.parse("2017-01-01T00:00:00.25Z"))
    expect(parseTimestamp("2017-01-01T01:59:60+02:00")?.epochMillis).toBe(Date.parse("2017-01-01T00:00:00Z"))
    // a second 60 anywhere else is no time; nor is one that would be year 10000 (it could not be written back)
    expect(parseTimestamp("2016-12-31T12:00:60Z")).toBeUndefined()
    expect(parseTimestamp("9999-12-31T23:59:60Z")).toBeUndefined()
  })
})

// The compiled encoder of the request bodies must give exactly what
// `Schema.encodeUnknownEither(schema, { onExcessProperty: "error" })` gives: for every JSON and
// multipart body schema of the table, on the schema's own values, on the same values broken one place
// at a time (a value replaced, a key removed, a key added) and on random JSON.

const bodySchemasOfTable = (): Array<readonly [string, Schema.Schema.AnyNoContext]> =>
  operations.flatMap((operation) =>
    operation.body !== undefined && (operation.body.kind === "json" || operation.body.kind === "multipart")
      ? [[`${operation.name} body`, operation.body.schema] as const]
      : []
  )

/** Inputs for a body schema: the schema's values, each broken in a few places, and random JSON. */
const typeInputsOf = (schema: Schema.Schema.AnyNoContext, seed: number): Array<unknown> => {
  const values = fc.sample(Arbitrary.make(schema), { seed, numRuns: 12 })
  const inputs: Array<unknown> = [...fc.sample(fc.jsonValue(), { seed, numRuns: 8 }), ...values]
  let k = seed
  for (const value of values) {
    k = breakInto(
      inputs,
      value,
      k,
      (at) => Object.getPrototypeOf(at) === Object.prototype ? { ...at, unknown_key: 1 } : at
    )
  }
  return inputs
}

const checkEncode = (name: string, schema: Schema.Schema.AnyNoContext, inputs: ReadonlyArray<unknown>) =>
  compare(
    name,
    inputs,
    Schema.encodeUnknownEither(schema, { onExcessProperty: "error" }),
    FastDecode.fastPath(schema, "encode"),
    FastDecode.encoder(schema),
    false
  )

const tagged = Symbol.for("effect-kernel/test/tagged")

describe("fastDecode: the compiled encoder gives what the schema gives", () => {
  it("every JSON and multipart body schema of the table: its values, broken ones, random JSON", () => {
    const schemas = bodySchemasOfTable()
    expect(schemas.length).toBeGreaterThan(40)
    expectWide(schemas.map(([name, schema], i) => checkEncode(name, schema, typeInputsOf(schema, 2000 + i))))
  }, 120_000)

  it("every query and header parameter of the table: its values, values of the wrong type, out of range", () => {
    const parameters = operations.flatMap((operation) =>
      operation.parameters.filter((parameter) => parameter.in !== "path").map((
        parameter
      ): readonly [string, Schema.Schema.AnyNoContext] => [
        `${operation.name} ${parameter.in} ${parameter.field}`,
        parameter.schema
      ])
    )
    expect(parameters.length).toBeGreaterThan(50)
    const edges: ReadonlyArray<unknown> = [-1, 0, 1, 1.5, 100, 101, 2 ** 53, NaN, "", "x", "1", true, null, {}, []]
    const counts = parameters.map(([name, schema], i) => {
      // a scalar's: the strict encoder's excess-key rule (what it adds to the schema's default) never applies
      expect(SchemaAST.isTypeLiteral(SchemaAST.typeAST(schema.ast)), name).toBe(false)
      return checkEncode(name, schema, [
        ...fc.sample(Arbitrary.make(schema), { seed: 3000 + i, numRuns: 20 }),
        ...edges
      ])
    })
    expect(counts.reduce((n, c) => n + c.valid, 0)).toBeGreaterThan(500)
    expect(counts.reduce((n, c) => n + c.invalid, 0)).toBeGreaterThan(500)
  })

  it("a refinement of anything but a primitive is the schema's (its type side decoded before the filter); a symbol-named field", () => {
    class User extends Schema.Class<User>("User")({ name: Schema.String }) {}
    class Point {
      constructor(readonly x: number) {}
    }
    const Strict = Schema.declare([], {
      decode: () => (u, _, ast) =>
        typeof u === "string" && u.startsWith("ok:")
          ? ParseResult.succeed(u)
          : ParseResult.fail(new ParseResult.Type(ast, u)),
      encode: () => (u, _, ast) =>
        typeof u === "string" ? ParseResult.succeed(u) : ParseResult.fail(new ParseResult.Type(ast, u))
    })
    const plainOnly = Schema.Struct({ x: Schema.Number }).pipe(
      Schema.filter((p) => Object.getPrototypeOf(p) !== Object.prototype || "must not be a plain object")
    )
    const cases: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext, ReadonlyArray<unknown>]> = [
      ["a class, filtered", User.pipe(Schema.filter(() => true)), [{ name: "x" }, new User({ name: "x" })]],
      ["a struct holding a class, filtered", Schema.Struct({ user: User }).pipe(Schema.filter(() => true)), [
        { user: { name: "x" } },
        { user: new User({ name: "x" }) }
      ]],
      [
        "a declaration decoded more strictly than encoded",
        Schema.Struct({ s: Strict }).pipe(Schema.filter(() => true)),
        [
          { s: "nope" },
          { s: "ok:yes" }
        ]
      ],
      ["a filter that looks at the prototype", plainOnly, [new Point(1), { x: 1 }]],
      ["a number's range", Schema.Number.pipe(Schema.between(0, 10)), [5, 11, "5"]],
      // a symbol key the struct has is not an excess one: the union's first member fits
      [
        "a struct with a symbol-named field, first of a union",
        Schema.Union(Schema.Struct({ [tagged]: Schema.NumberFromString }), Schema.Struct({})),
        [{ [tagged]: 1 }, { [tagged]: "x" }, { [Symbol("other")]: 1 }]
      ]
    ]
    for (const [name, schema, inputs] of cases) {
      const counts = checkEncode(name, schema, inputs)
      expect(counts.valid + counts.invalid).toBe(inputs.length)
    }
  })
})
