import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { examples } from "./generated/examples.js"
import { callOf } from "./utils/accessors.js"
import { paramsOf } from "./utils/exampleParams.js"
import { mockLayer } from "./utils/mock.js"

// Every accessor, given params a JavaScript caller can pass (TypeScript would refuse most): each field
// of its example replaced, one at a time, by a value that throws as it is read, one JSON cannot hold, an
// object without a prototype, a function, a symbol; and params objects that throw as they are read.
// The call fails with a typed error (never a defect), and `InvalidInput` sends nothing.

const cyclic = (): Record<string, unknown> => {
  const value: Record<string, unknown> = { a: 1 }
  value["self"] = value
  return value
}

const revokedProxy = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

const hostileValues: ReadonlyArray<readonly [string, () => unknown]> = [
  ["a bigint", () => 1n],
  ["a cycle", cyclic],
  ["an object whose toJSON throws", () => ({
    toJSON: () => {
      throw new Error("toJSON")
    }
  })],
  ["an object without a prototype", () => Object.create(null)],
  ["a revoked proxy", revokedProxy],
  ["a function", () => () => 1],
  ["a symbol", () => Symbol("s")],
  ["an array holding a bigint", () => [1n]]
]

const throwingParams = (params: unknown): object => {
  const out = {}
  for (const key of typeof params === "object" && params !== null ? Object.keys(params) : ["id"]) {
    Object.defineProperty(out, key, {
      enumerable: true,
      get: () => {
        throw new Error(`reading ${key}`)
      }
    })
  }
  return out
}

describe("hostile params", () => {
  it("every accessor: a typed error (never a defect), and InvalidInput sends nothing", async () => {
    const { layer, requests } = mockLayer(() => new Response(null, { status: 500 }), { maxRetries: 0 })
    let invalid = 0
    let calls = 0
    const failures: Array<string> = []
    for (const example of examples) {
      const params = paramsOf(example.name, example.params)
      const keys = typeof params === "object" && params !== null ? Object.keys(params) : []
      const cases: Array<readonly [string, unknown]> = [
        ["params that throw as they are read", throwingParams(params)],
        ["a revoked proxy as params", revokedProxy()]
      ]
      for (const key of keys) {
        for (const [what, make] of hostileValues) {
          cases.push([`${key}: ${what}`, { ...params as object, [key]: make() }])
        }
      }
      for (const [what, input] of cases) {
        const before = requests.length
        calls++
        const exit = await Effect.runPromiseExit(
          callOf(example.module, example.accessor, input).pipe(Effect.provide(layer), Effect.timeout("5 seconds"))
        )
        const label = `${example.module}.${example.accessor}, ${what}`
        if (Exit.isSuccess(exit)) continue
        if (Cause.isDie(exit.cause) || Cause.isInterrupted(exit.cause)) {
          failures.push(`${label}: ${Cause.pretty(exit.cause).split("\n")[0]}`)
          continue
        }
        const error: unknown = Cause.squash(exit.cause)
        const tag = typeof error === "object" && error !== null ? Reflect.get(error, "_tag") : undefined
        if (typeof tag !== "string") failures.push(`${label}: an untagged failure ${String(error)}`)
        if (tag === "TimeoutException") failures.push(`${label}: did not end within 5 s`)
        if (tag === "InvalidInput") {
          invalid++
          if (requests.length !== before) failures.push(`${label}: InvalidInput, yet a request was sent`)
        }
      }
    }
    // the one accessor with options: options that throw as they are read
    const exit = await Effect.runPromiseExit(
      callOf("Replays", "download", { id: "b", replayId: "r" }, throwingParams({ maxWait: 1, schedule: 1 })).pipe(
        Effect.provide(layer)
      )
    )
    expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "InvalidInput", field: "options" })
    expect(failures).toEqual([])
    expect(calls).toBeGreaterThan(1000)
    expect(invalid).toBeGreaterThan(800)
  }, 120_000)
})
