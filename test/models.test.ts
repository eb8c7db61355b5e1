/**
 * The 0.1.0 models are written out (src/BrowserPools.ts, src/Computer.ts: a program's type-check then
 * reads them as they are, instead of resolving `Schema.Schema.Type` of each struct, or a
 * `Schema.Class`'s, wherever two of them are compared): the pool models are each exactly their
 * schema's decoded type, and `Computer.MousePosition` / `Computer.Ok` exactly what `Schema.Class`
 * declares (their instance, encoded side, constructor argument and fields), checked by the
 * type-checker (`npm run typecheck`); and each decodes and encodes as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, ParseResult, Schema } from "effect"
import { BrowserPools, Computer } from "effect-kernel"
import type { Simplify } from "effect/Types"

/** `true` when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

/**
 * `true` when `A` and `B` are assignable to each other. `Same` alone counts `?: T` and
 * `?: T | undefined` as the same; under `exactOptionalPropertyTypes` (this repository's tsconfig)
 * they are not assignable to each other, so a dropped `| undefined` fails here.
 */
type Mutual<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false

/** Compiles only for `true`. */
type Expect<T extends true> = T

/** The model is its schema's decoded type, both ways. */
type Exact<A, S extends Schema.Schema.Any> = Same<A, Schema.Schema.Type<S>> extends true ?
  Mutual<A, Schema.Schema.Type<S>>
  : false

export type Checks = [
  Expect<Exact<BrowserPools.BrowserProfile, typeof BrowserPools.BrowserProfile>>,
  Expect<Exact<BrowserPools.BrowserExtension, typeof BrowserPools.BrowserExtension>>,
  Expect<Exact<BrowserPools.BrowserViewport, typeof BrowserPools.BrowserViewport>>,
  Expect<Exact<BrowserPools.BrowserPoolConfig, typeof BrowserPools.BrowserPoolConfig>>,
  Expect<Exact<BrowserPools.BrowserPool, typeof BrowserPools.BrowserPool>>,
  // as in 0.1.0 (then empty interfaces extending the schemas' types): each is a record
  Expect<[BrowserPools.BrowserPool] extends [Record<string, unknown>] ? true : false>,
  Expect<[BrowserPools.BrowserPoolConfig] extends [Record<string, unknown>] ? true : false>,
  Expect<[BrowserPools.BrowserProfile] extends [Record<string, unknown>] ? true : false>,
  Expect<[BrowserPools.BrowserExtension] extends [Record<string, unknown>] ? true : false>,
  Expect<[BrowserPools.BrowserViewport] extends [Record<string, unknown>] ? true : false>
]

/** What `Schema.Class<Self>(identifier)(fields)` declares. */
type Reference<Self, Fields extends Schema.Struct.Fields> = Schema.Class<
  Self,
  Fields,
  Schema.Struct.Encoded<Fields>,
  Schema.Struct.Context<Fields>,
  Schema.Struct.Constructor<Fields>,
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  {},
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  {}
>

type ModelClass = Schema.Schema.Any & (new(...args: never) => unknown) & { readonly fields: Schema.Struct.Fields }

/** Both ways: `Same` and `Mutual`. */
type Both<A, B> = Same<A, B> extends true ? Mutual<A, B> : false

type Matches<C extends ModelClass, R extends ModelClass> = {
  class: [C] extends [R] ? true : false
  fields: Same<C["fields"], R["fields"]>
  instance: Same<Simplify<InstanceType<C>>, Simplify<InstanceType<R>>> extends true
    ? Mutual<InstanceType<C>, InstanceType<R>>
    : false
  encoded: Both<Schema.Schema.Encoded<C>, Schema.Schema.Encoded<R>>
  context: Same<Schema.Schema.Context<C>, never>
  argument: Both<ConstructorParameters<C>[0], ConstructorParameters<R>[0]>
}

type Declared<C extends ModelClass, Fields extends Schema.Struct.Fields> = Same<
  Matches<C, Reference<InstanceType<C>, Fields>>,
  { class: true; fields: true; instance: true; encoded: true; context: true; argument: true }
>

export type ClassChecks = [
  Expect<Declared<typeof Computer.MousePosition, { x: typeof Schema.Int; y: typeof Schema.Int }>>,
  Expect<Declared<typeof Computer.Ok, { ok: typeof Schema.Boolean }>>
]

describe("Computer.MousePosition and Computer.Ok", () => {
  it.effect("decode to instances of their classes, encode back, and make like new", () =>
    Effect.gen(function*() {
      const position = yield* Schema.decodeUnknown(Computer.MousePosition)({ x: 3, y: 4 })
      expect(position).toBeInstanceOf(Computer.MousePosition)
      expect(position).toEqual(new Computer.MousePosition({ x: 3, y: 4 }))
      expect(Computer.MousePosition.make({ x: 3, y: 4 })).toEqual(position)
      expect(yield* Schema.encode(Computer.MousePosition)(position)).toEqual({ x: 3, y: 4 })
      expect(yield* Effect.flip(Schema.decodeUnknown(Computer.MousePosition)({ x: 1.5, y: 4 }))).toBeInstanceOf(
        ParseResult.ParseError
      )
      const ok = yield* Schema.decodeUnknown(Computer.Ok)({ ok: true })
      expect(ok).toBeInstanceOf(Computer.Ok)
      expect(ok.ok).toBe(true)
      expect(Computer.Ok.identifier).toBe("effect-kernel/Ok")
      expect(Object.keys(Computer.MousePosition.fields)).toEqual(["x", "y"])
    }))
})

describe("the pool models", () => {
  it("a decoded pool is a BrowserPool, nested models included", () => {
    const pool: BrowserPools.BrowserPool = Schema.decodeUnknownSync(BrowserPools.BrowserPool)({
      id: "pool_1",
      available_count: 2,
      acquired_count: 1,
      created_at: "2025-01-02T03:04:05Z",
      browser_pool_config: { size: 3, viewport: { width: 1280, height: 800 }, extensions: [{ name: "ext" }] }
    })
    const viewport: BrowserPools.BrowserViewport | undefined = pool.browser_pool_config.viewport
    expect(viewport).toEqual({ width: 1280, height: 800 })
    expect(DateTime.formatIso(pool.created_at)).toBe("2025-01-02T03:04:05.000Z")
    expect(pool.browser_pool_config.extensions?.map((extension) => extension.name)).toEqual(["ext"])
  })
})
