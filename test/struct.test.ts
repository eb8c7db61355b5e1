/**
 * The generated schemas are built on first use (src/internal/struct.ts): importing a schema module
 * builds nothing, and a named struct / union / array is, for every `Schema` function and for its
 * user, the schema it stands for (the same AST, members, decoding, encoding, JSON Schema, errors).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, JSONSchema, Schema } from "effect"
import { Browsers, Telemetry } from "effect-kernel"
import * as Common from "../src/internal/generated/schemas/Common.js"
import { array, once, struct, union } from "../src/internal/struct.js"

const counted = <A>(make: () => A) => {
  const calls = { count: 0 }
  return [calls, () => {
    calls.count++
    return make()
  }] as const
}

describe("once", () => {
  it("makes its value on the first call only, and returns it after", () => {
    const [calls, make] = counted(() => ({ built: true }))
    const value = once(make)
    expect(calls.count).toBe(0)
    const first = value()
    expect(value()).toBe(first)
    expect(calls.count).toBe(1)
  })

  it("keeps an undefined value too (made once)", () => {
    const [calls, make] = counted(() => undefined)
    const value = once(make)
    value()
    value()
    expect(calls.count).toBe(1)
  })
})

describe("struct", () => {
  const fields = () => ({ id: Schema.String, size: Schema.optional(Schema.Int) })
  const eager = Schema.Struct(fields()).annotations({ identifier: "Thing" })

  it("builds nothing until a member is read, then builds once", () => {
    const [calls, make] = counted(fields)
    const Thing = struct("Thing", make)
    expect(calls.count).toBe(0)
    expect(Schema.isSchema(Thing)).toBe(true)
    expect(calls.count).toBe(0)
    const ast = Thing.ast
    expect(Thing.ast).toBe(ast)
    expect(Thing.fields.id).toBe(Schema.String)
    expect(calls.count).toBe(1)
    // read after the first time as a plain property of the class (no getter run per read)
    expect(Object.getOwnPropertyDescriptor(Thing, "ast")).toMatchObject({ value: ast })
  })

  it("is the struct it stands for: AST, identifier, members, decoding, encoding, JSON Schema", () => {
    const Thing = struct("Thing", fields)
    expect(Thing.ast).toEqual(eager.ast)
    expect(String(Thing)).toBe("Thing")
    expect(Object.keys(Thing.fields)).toEqual(["id", "size"])
    expect(Thing.records).toEqual([])
    expect(Thing.make({ id: "a" })).toEqual({ id: "a" })
    expect(Object.keys(Thing.pick("id").fields)).toEqual(["id"])
    expect(Object.keys(Thing.omit("id").fields)).toEqual(["size"])
    expect(Schema.decodeUnknownSync(Thing)({ id: "a", size: 2, other: 1 })).toEqual({ id: "a", size: 2 })
    expect(Schema.encodeSync(Thing)({ id: "a" })).toEqual({ id: "a" })
    expect(JSONSchema.make(Thing)).toEqual(JSONSchema.make(eager))
    const failure = Schema.decodeUnknownEither(Thing)({ id: 1 })
    expect(Either.isLeft(failure) && String(failure.left)).toContain("Thing")
    expect(Thing.annotations({ description: "a thing" }).ast.annotations).toMatchObject({
      [Symbol.for("effect/annotation/Description")]: "a thing"
    })
    const extended = Thing.pipe(Schema.extend(Schema.Struct({ more: Schema.Boolean })))
    expect(Schema.decodeUnknownSync(extended)({ id: "a", more: true })).toEqual({ id: "a", more: true })
    expect(Thing.pipe()).toBe(Thing)
  })

  it("is a field, a member and an item of other schemas", () => {
    const Thing = struct("Thing", fields)
    const Outer = Schema.Struct({ thing: Thing, things: Schema.Array(Thing), maybe: Schema.NullOr(Thing) })
    expect(Schema.decodeUnknownSync(Outer)({ thing: { id: "a" }, things: [{ id: "b" }], maybe: null })).toEqual({
      thing: { id: "a" },
      things: [{ id: "b" }],
      maybe: null
    })
  })
})

describe("union and array", () => {
  const A = struct("A", () => ({ kind: Schema.Literal("a") }))
  const B = struct("B", () => ({ kind: Schema.Literal("b"), n: Schema.Int }))

  it("build nothing until a member is read", () => {
    const [unionCalls, makeUnion] = counted(() => Schema.annotations(Schema.Union(A, B), { identifier: "AB" }))
    const [arrayCalls, makeArray] = counted(() => Schema.annotations(Schema.Array(A), { identifier: "As" }))
    const AB = union(makeUnion)
    const As = array(makeArray)
    expect([unionCalls.count, arrayCalls.count]).toEqual([0, 0])
    expect(AB.members).toEqual([A, B])
    expect(As.value).toBe(A)
    expect([unionCalls.count, arrayCalls.count]).toEqual([1, 1])
  })

  it("are the union and the array they stand for", () => {
    const AB = union(() => Schema.annotations(Schema.Union(A, B), { identifier: "AB" }))
    const As = array(() => Schema.annotations(Schema.Array(A), { identifier: "As" }))
    expect(AB.ast).toEqual(Schema.Union(A, B).annotations({ identifier: "AB" }).ast)
    expect(Schema.decodeUnknownSync(AB)({ kind: "b", n: 1 })).toEqual({ kind: "b", n: 1 })
    expect(String(AB)).toBe("AB")
    expect(As.elements).toEqual([])
    expect(As.rest).toEqual([A])
    expect(Schema.decodeUnknownSync(As)([{ kind: "a" }])).toEqual([{ kind: "a" }])
    expect(String(As.annotations({ identifier: "Others" }))).toBe("Others")
  })
})

describe("the generated schemas, as the package exports them", () => {
  it("decode and name themselves as before (a struct with a base, a union of structs, a cycle)", () => {
    const request = Schema.decodeUnknownSync(Browsers.BrowserUpdateRequest)({ viewport: { width: 1, height: 2 } })
    expect(request).toEqual({ viewport: { width: 1, height: 2 } })
    expect(Object.keys(Browsers.BrowserViewportUpdate.fields)).toEqual([
      ...Object.keys(Common.BrowserViewport.fields),
      "force"
    ])
    expect(String(Common.BrowserViewport)).toBe("BrowserViewport")
    const stack = { callFrames: [], parent: { callFrames: [] } }
    expect(Schema.decodeUnknownSync(Telemetry.BrowserCallStack)(stack)).toEqual(stack)
    expect(Telemetry.BrowserTelemetryEvent.members.length).toBeGreaterThan(1)
  })
})
