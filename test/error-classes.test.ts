/**
 * The error classes' declared types (src/KernelError.ts writes them out, so that a program's
 * type-check reads them once instead of resolving a `Schema.TaggedErrorClass` per class) are
 * exactly what `Schema.TaggedError` gives: the instance, the encoded side and the constructor's
 * argument of every class, checked by the type-checker (`npm run typecheck`); and every class still
 * works as a `Schema` at run time (made, recognised, encoded and decoded back).
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Duration, Effect, Equal, FastCheck, Pretty, Schema } from "effect"
import { BrowserPools, KernelError } from "effect-kernel"
import type * as Cause from "effect/Cause"
import type { Simplify } from "effect/Types"

/** `true` when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

/**
 * `true` when `A` and `B` are assignable to each other: an error's members that mention `this` (its
 * `Effect` variance and iterator) name the instance type each class is made from, which the
 * written-out declaration spells differently from `Schema.TaggedErrorClass`.
 */
type Mutual<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false

/** Compiles only for `true`. */
type Expect<T extends true> = T

/** What `Schema.TaggedError<Self>()(tag, fields)` declares. */
type Reference<Self, Tag extends string, Fields extends Schema.Struct.Fields> = Schema.TaggedErrorClass<
  Self,
  Tag,
  { readonly _tag: Schema.tag<Tag> } & Fields
>

type Class = Schema.Schema.Any & (new(...args: never) => unknown) & { readonly fields: Schema.Struct.Fields }

/**
 * Whether `C` is a `R` (every static member: `make`, `fields`, `ast`, `annotations`, `extend`, ...),
 * and its instance, encoded side, context and constructor argument are `R`'s.
 */
type Matches<C extends Class, R extends Class> = {
  class: [C] extends [R] ? true : false
  schemas: Same<Simplify<C["fields"]>, Simplify<R["fields"]>>
  fields: Same<
    Simplify<Omit<InstanceType<C>, keyof Cause.YieldableError>>,
    Simplify<Omit<InstanceType<R>, keyof Cause.YieldableError>>
  >
  instance: Mutual<InstanceType<C>, InstanceType<R>>
  encoded: Same<Simplify<Schema.Schema.Encoded<C>>, Simplify<Schema.Schema.Encoded<R>>>
  context: Same<Schema.Schema.Context<C>, never>
  argument: Same<Simplify<ConstructorParameters<C>[0]>, Simplify<ConstructorParameters<R>[0]>>
  argumentBothWays: Mutual<ConstructorParameters<C>[0], ConstructorParameters<R>[0]>
}

type Exact<C extends Class, R extends Class> = Same<
  Matches<C, R>,
  {
    class: true
    schemas: true
    fields: true
    instance: true
    encoded: true
    context: true
    argument: true
    argumentBothWays: true
  }
>

type ApiFields = {
  status: typeof Schema.Number
  code: typeof Schema.String
  message: typeof Schema.String
  // `ErrorDetail`s given as such or as their fields; `details` a `Data.array` (see the tests below)
  details: typeof KernelError.apiErrorFields.details
  innerError: typeof KernelError.apiErrorFields.innerError
  retryAfter: Schema.optional<typeof Schema.Duration>
  shouldRetry: Schema.optional<typeof Schema.Boolean>
  method: typeof Schema.String
  path: typeof Schema.String
}

type Api<C extends Class, Tag extends string> = Own<C, Tag, ApiFields>

type TransportErrorFields = {
  method: typeof Schema.String
  path: typeof Schema.String
  message: typeof Schema.String
  code: Schema.optional<typeof Schema.String>
  transient: Schema.optional<typeof Schema.Boolean>
}

type TimeoutFields = {
  method: typeof Schema.String
  path: typeof Schema.String
  timeout: typeof Schema.Duration
  idle: Schema.optional<typeof Schema.Boolean>
}

type DecodeErrorFields = {
  method: typeof Schema.String
  path: typeof Schema.String
  status: typeof Schema.Number
  message: typeof Schema.String
}

type ReplayNotReadyFields = {
  id: typeof Schema.String
  replayId: typeof Schema.String
  retryAfter: typeof Schema.Duration
  waited: typeof Schema.Duration
  polls: typeof Schema.Number
}

type Own<C extends Class, Tag extends string, Fields extends Schema.Struct.Fields> = Exact<
  C,
  Reference<InstanceType<C>, Tag, Fields>
>

export type Checks = [
  Expect<Api<typeof KernelError.BadRequest, "BadRequest">>,
  Expect<Api<typeof KernelError.Unauthorized, "Unauthorized">>,
  Expect<Api<typeof KernelError.Forbidden, "Forbidden">>,
  Expect<Api<typeof KernelError.NotFound, "NotFound">>,
  Expect<Api<typeof KernelError.Conflict, "Conflict">>,
  Expect<Api<typeof KernelError.Gone, "Gone">>,
  Expect<Api<typeof KernelError.UnprocessableEntity, "UnprocessableEntity">>,
  Expect<Api<typeof KernelError.RateLimited, "RateLimited">>,
  Expect<Api<typeof KernelError.InternalServerError, "InternalServerError">>,
  Expect<Api<typeof KernelError.BadGateway, "BadGateway">>,
  Expect<Api<typeof KernelError.Overloaded, "Overloaded">>,
  Expect<Own<typeof KernelError.UnexpectedStatus, "UnexpectedStatus", ApiFields & { body: typeof Schema.String }>>,
  Expect<Own<typeof KernelError.TransportError, "TransportError", TransportErrorFields>>,
  Expect<Own<typeof KernelError.Timeout, "Timeout", TimeoutFields>>,
  Expect<Own<typeof KernelError.DecodeError, "DecodeError", DecodeErrorFields>>,
  Expect<
    Own<typeof KernelError.InvalidInput, "InvalidInput", { field: typeof Schema.String; message: typeof Schema.String }>
  >,
  Expect<Own<typeof KernelError.ReplayNotReady, "ReplayNotReady", ReplayNotReadyFields>>,
  Expect<Own<typeof BrowserPools.NoBrowserAvailable, "NoBrowserAvailable", { idOrName: typeof Schema.String }>>,
  // the encoded side is one object type, as `Schema.TaggedError` writes it (not an intersection)
  Expect<
    Same<
      Schema.Schema.Encoded<typeof BrowserPools.NoBrowserAvailable>,
      { readonly _tag: "NoBrowserAvailable"; readonly idOrName: string }
    >
  >,
  Expect<
    Same<Simplify<KernelError.ApiErrorFields>, Simplify<Schema.Struct.Constructor<typeof KernelError.apiErrorFields>>>
  >,
  // `Same` counts `?: T` and `?: T | undefined` as one; under exactOptionalPropertyTypes they are
  // not assignable to each other, so a dropped `| undefined` fails here
  Expect<Mutual<KernelError.ApiErrorFields, Schema.Struct.Constructor<typeof KernelError.apiErrorFields>>>
]

const api = { status: 404, code: "not_found", message: "no such browser", method: "GET", path: "/browsers/b" }

const made: ReadonlyArray<KernelError.KernelError> = [
  new KernelError.BadRequest({ ...api, status: 400 }),
  new KernelError.Unauthorized({ ...api, status: 401 }),
  new KernelError.Forbidden({ ...api, status: 403 }),
  new KernelError.NotFound({ ...api, details: [new KernelError.ErrorDetail({ code: "x" })] }),
  new KernelError.Conflict({ ...api, status: 409 }),
  new KernelError.Gone({ ...api, status: 410 }),
  new KernelError.UnprocessableEntity({ ...api, status: 422 }),
  new KernelError.RateLimited({ ...api, status: 429, retryAfter: Duration.seconds(2) }),
  new KernelError.InternalServerError({ ...api, status: 500, shouldRetry: false }),
  new KernelError.BadGateway({ ...api, status: 502 }),
  new KernelError.Overloaded({ ...api, status: 529 }),
  new KernelError.UnexpectedStatus({ ...api, status: 418, body: "teapot" }),
  new KernelError.TransportError({ method: "GET", path: "/browsers", message: "reset", code: "ECONNRESET" }),
  new KernelError.Timeout({ method: "GET", path: "/browsers", timeout: Duration.seconds(1) }),
  new KernelError.DecodeError({ method: "GET", path: "/browsers", status: 200, message: "bad" }),
  new KernelError.InvalidInput({ field: "id", message: "empty" }),
  new KernelError.ReplayNotReady({
    id: "b",
    replayId: "r",
    retryAfter: Duration.seconds(1),
    waited: Duration.seconds(5),
    polls: 5
  })
]

interface ErrorSchema extends Schema.Schema.AnyNoContext {
  new(...args: never): unknown
  readonly _tag: string
  readonly identifier: string
  readonly fields: Schema.Struct.Fields
}

const classes = {
  BadRequest: KernelError.BadRequest,
  Unauthorized: KernelError.Unauthorized,
  Forbidden: KernelError.Forbidden,
  NotFound: KernelError.NotFound,
  Conflict: KernelError.Conflict,
  Gone: KernelError.Gone,
  UnprocessableEntity: KernelError.UnprocessableEntity,
  RateLimited: KernelError.RateLimited,
  InternalServerError: KernelError.InternalServerError,
  BadGateway: KernelError.BadGateway,
  Overloaded: KernelError.Overloaded,
  UnexpectedStatus: KernelError.UnexpectedStatus,
  TransportError: KernelError.TransportError,
  Timeout: KernelError.Timeout,
  DecodeError: KernelError.DecodeError,
  InvalidInput: KernelError.InvalidInput,
  ReplayNotReady: KernelError.ReplayNotReady
} satisfies Record<KernelError.KernelError["_tag"], ErrorSchema>

describe("KernelError classes", () => {
  it("covers every tag", () => {
    expect(made.map((error) => error._tag).sort()).toEqual([...KernelError.tags].sort())
  })

  for (const error of made) {
    const Class: ErrorSchema = classes[error._tag]
    it.effect(`${error._tag}: a Schema of its instances, an Error, and a failure when yielded`, () =>
      Effect.gen(function*() {
        expect(Class._tag).toBe(error._tag)
        expect(Class.identifier).toBe(`effect-kernel/${error._tag}`)
        expect(Object.keys(Class.fields)).toContain("_tag")
        expect(error).toBeInstanceOf(Class)
        expect(error).toBeInstanceOf(Error)
        expect(KernelError.isKernelError(error)).toBe(true)
        expect(Schema.is(Class)(error)).toBe(true)
        const encoded = yield* Schema.encode(Class)(error)
        expect(encoded._tag).toBe(error._tag)
        const decoded = yield* Schema.decodeUnknown(Class)(encoded)
        expect(decoded).toBeInstanceOf(Class)
        expect(decoded).toEqual(error)
        // its encoded side is JSON: it survives a trip through text (a worker, an RPC, a log)
        const fromText = yield* Schema.decodeUnknown(Class)(JSON.parse(JSON.stringify(encoded)))
        expect(fromText).toEqual(error)
        // and comes back `Equal` (one with `details` did not: a plain array is equal to itself only)
        expect(Equal.equals(decoded, error)).toBe(true)
        expect(Equal.equals(fromText, error)).toBe(true)
        const failure = yield* Effect.flip(Effect.gen(function*() {
          return yield* error
        }))
        expect(failure).toBe(error)
      }))

    // `details` and `innerError` are declared schemas: without their own annotations, `Pretty.make` and
    // `Arbitrary.make` of every status error threw "Missing annotation"
    it(`${error._tag}: Pretty and Arbitrary of its class`, () => {
      expect(Pretty.make(Class)(error)).toContain(error._tag)
      expect(FastCheck.sample(Arbitrary.make(Class), 3).every(Schema.is(Class))).toBe(true)
    })

    it(`${error._tag}: its JSON, as a logger prints it, holds its fields and its message`, () => {
      const json: Record<string, unknown> = JSON.parse(JSON.stringify(error))
      expect(json._tag).toBe(error._tag)
      expect(json.message).toBe(error.message)
      expect(json.message).not.toBe("")
    })
  }

  // the constructor's type takes a detail's fields: a fake built so (`{ code, message }`, not an
  // `ErrorDetail`) was a defect, the class's check refusing them
  it("details and innerError given as plain objects: ErrorDetails, the error Equal to one made of them", () => {
    const plain = new KernelError.BadRequest({
      ...api,
      status: 400,
      details: [{ code: "invalid_input", message: "viewport.width: too large" }, {}],
      innerError: { code: "inner" }
    })
    expect(plain.details?.[0]).toBeInstanceOf(KernelError.ErrorDetail)
    expect(plain.innerError).toBeInstanceOf(KernelError.ErrorDetail)
    expect(plain.details?.[0]?.message).toBe("viewport.width: too large")
    const made = new KernelError.BadRequest({
      ...api,
      status: 400,
      details: [
        new KernelError.ErrorDetail({ code: "invalid_input", message: "viewport.width: too large" }),
        new KernelError.ErrorDetail({})
      ],
      innerError: new KernelError.ErrorDetail({ code: "inner" })
    })
    expect(Equal.equals(plain, made)).toBe(true)
    expect(Equal.equals(plain, new KernelError.BadRequest({ ...api, status: 400, details: [{ code: "other" }] })))
      .toBe(false)
    // a detail of the wrong shape is still refused, as the class's check did: a code not a string, an
    // array, a date, a map, a hole
    const refused: ReadonlyArray<unknown> = [
      { details: [{ code: 5 }] },
      { details: [["a", "b"]] },
      { details: [new Date()] },
      { details: [new Map()] },

      { details: [, { code: "a" }] },
      { innerError: [] }
    ]
    for (const fields of refused) {
      expect(() => new KernelError.BadRequest(Object.assign({}, api, fields) as never), JSON.stringify(fields))
        .toThrow()
    }
  })

  it("make builds the same instance as new", () => {
    const notFound: KernelError.NotFound = KernelError.NotFound.make(api)
    expect(notFound).toEqual(new KernelError.NotFound(api))
    expect(notFound).toBeInstanceOf(KernelError.NotFound)
    const timeout: KernelError.Timeout = KernelError.Timeout.make({
      method: "GET",
      path: "/browsers",
      timeout: Duration.seconds(1)
    })
    expect(timeout.message).toBe("GET /browsers timed out after 1s")
    // a body that went silent names the other setting
    expect(new KernelError.Timeout({ method: "GET", path: "/x", timeout: Duration.seconds(5), idle: true }).message)
      .toBe("GET /x received no byte for 5s (idleTimeout)")
  })
})

describe("BrowserPools.NoBrowserAvailable (declared like the KernelError classes)", () => {
  it.effect("a Schema of its instances, an Error with its own message, and a failure when yielded", () =>
    Effect.gen(function*() {
      const error = new BrowserPools.NoBrowserAvailable({ idOrName: "pool-1" })
      expect(error._tag).toBe("NoBrowserAvailable")
      expect(error).toBeInstanceOf(Error)
      expect(error.message).toBe("no browser of the pool pool-1 became available within the wait")
      expect(BrowserPools.NoBrowserAvailable.make({ idOrName: "pool-1" })).toEqual(error)
      // its message is computed: its JSON (a logger's) still holds it
      expect(JSON.parse(JSON.stringify(error))).toEqual({
        _tag: "NoBrowserAvailable",
        idOrName: "pool-1",
        message: "no browser of the pool pool-1 became available within the wait"
      })
      const encoded = yield* Schema.encode(BrowserPools.NoBrowserAvailable)(error)
      expect(encoded).toEqual({ _tag: "NoBrowserAvailable", idOrName: "pool-1" })
      const decoded = yield* Schema.decodeUnknown(BrowserPools.NoBrowserAvailable)(encoded)
      expect(decoded).toBeInstanceOf(BrowserPools.NoBrowserAvailable)
      expect(decoded).toEqual(error)
      expect(
        yield* Effect.flip(Effect.gen(function*() {
          return yield* error
        }))
      ).toBe(error)
    }))
})

describe("KernelError classes across two copies of the package", () => {
  // a second, separately evaluated copy of the module (as when Node's build and a bundler's, or the
  // CommonJS and the ES build, meet in one process): vite loads an id with a query as its own module
  const second = "../src/KernelError.ts?second-copy"
  const load = (): Promise<typeof KernelError> => import(/* @vite-ignore */ second)

  it("an error made by one copy is an instance of the other's class of the same tag, and of no other", async () => {
    const Other = await load()
    expect(Other.NotFound).not.toBe(KernelError.NotFound)
    for (const error of made) {
      const other = Object.values(Other).find((value) =>
        typeof value === "function" && "_tag" in value && value._tag === error._tag
      )
      expect(other).toBeDefined()
      if (typeof other !== "function") return
      expect({ tag: error._tag, instance: error instanceof other }).toEqual({ tag: error._tag, instance: true })
    }
    const foreign = new Other.NotFound(api)
    expect(foreign).toBeInstanceOf(KernelError.NotFound)
    expect(foreign).not.toBeInstanceOf(KernelError.Conflict)
    expect(KernelError.isKernelError(foreign)).toBe(true)
    expect(Schema.is(KernelError.NotFound)(foreign)).toBe(true)
  })

  it("an error of another library with the same _tag is not an instance, and a user's subclass keeps the plain rule", () => {
    class Elsewhere extends Error {
      readonly _tag = "NotFound"
    }
    expect(new Elsewhere()).not.toBeInstanceOf(KernelError.NotFound)
    expect({ _tag: "NotFound", [KernelError.TypeId]: KernelError.TypeId }).not.toBeInstanceOf(KernelError.NotFound)
    class Mine extends KernelError.NotFound {}
    expect(new KernelError.NotFound(api)).not.toBeInstanceOf(Mine)
    expect(new Mine(api)).toBeInstanceOf(Mine)
    expect(new Mine(api)).toBeInstanceOf(KernelError.NotFound)
  })
})
