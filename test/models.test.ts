/**
 * The pool models of 0.1.0 are interfaces written out (src/BrowserPools.ts: a program's type-check
 * then reads them as they are, instead of resolving `Schema.Schema.Type` of each struct wherever
 * two of them are compared); each is exactly its schema's decoded type, checked by the type-checker
 * (`npm run typecheck`), and a decoded pool is one.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Schema } from "effect"
import { BrowserPools } from "effect-kernel"

/** `true` when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

/** Compiles only for `true`. */
type Expect<T extends true> = T

export type Checks = [
  Expect<Same<BrowserPools.BrowserProfile, Schema.Schema.Type<typeof BrowserPools.BrowserProfile>>>,
  Expect<Same<BrowserPools.BrowserExtension, Schema.Schema.Type<typeof BrowserPools.BrowserExtension>>>,
  Expect<Same<BrowserPools.BrowserViewport, Schema.Schema.Type<typeof BrowserPools.BrowserViewport>>>,
  Expect<Same<BrowserPools.BrowserPoolConfig, Schema.Schema.Type<typeof BrowserPools.BrowserPoolConfig>>>,
  Expect<Same<BrowserPools.BrowserPool, Schema.Schema.Type<typeof BrowserPools.BrowserPool>>>
]

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
