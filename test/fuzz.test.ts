import { describe, expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, Layer, Option, Schema } from "effect"
import { BrowserPools, Computer, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { mockLayer } from "./utils/mock.js"

const runs = { fastCheck: { numRuns: 1000 } }

/** The outcome is a success or a DecodeError: never a defect, never another failure. */
const successOrDecodeError = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>) => {
  if (Exit.isSuccess(exit)) return "success"
  expect(Cause.isDie(exit.cause), Cause.pretty(exit.cause)).toBe(false)
  const error = Cause.failureOption(exit.cause)
  expect(Option.map(error, (e) => e._tag)).toEqual(Option.some("DecodeError"))
  return "DecodeError"
}

const encodePools = Schema.encodeSync(BrowserPools.BrowserPoolList)

// one transport for every run: each run sets what it answers
let answer: () => Response = () => new Response(null, { status: 500 })
const mock = mockLayer(() => answer(), { maxRetries: 0 })

describe("fuzzing", { timeout: 120_000 }, () => {
  layer(mock.layer)("bodies", (it) => {
    it.effect.prop("every valid BrowserPool array round-trips through the wire", {
      pools: BrowserPools.BrowserPoolList
    }, ({ pools }) =>
      Effect.gen(function*() {
        const wire = JSON.stringify(encodePools(pools))
        answer = () => new Response(wire, { status: 200, headers: { "content-type": "application/json" } })
        const decoded = yield* BrowserPools.list()
        expect(JSON.stringify(encodePools(decoded))).toBe(wire)
        expect(decoded.map((p) => p.id)).toEqual(pools.map((p) => p.id))
      }), runs)

    it.effect.prop(
      "random bytes as a body give success or DecodeError",
      { body: fc.uint8Array({ maxLength: 512 }) },
      ({ body }) =>
        Effect.gen(function*() {
          answer = () => new Response(new Uint8Array(body), { status: 200 })
          successOrDecodeError(yield* Effect.exit(Computer.getMousePosition({ id: "b" })))
          successOrDecodeError(yield* Effect.exit(BrowserPools.list()))
        }),
      runs
    )

    it.effect.prop(
      "random JSON as a body gives success or DecodeError",
      { value: fc.jsonValue() },
      ({ value }) =>
        Effect.gen(function*() {
          const text = JSON.stringify(value)
          answer = () => new Response(text, { status: 200 })
          const position = successOrDecodeError(yield* Effect.exit(Computer.getMousePosition({ id: "b" })))
          const ok = successOrDecodeError(yield* Effect.exit(Computer.setCursorVisibility({ id: "b", hidden: false })))
          successOrDecodeError(yield* Effect.exit(BrowserPools.list()))
          // only the right shapes succeed
          if (position === "success") expect(value).toMatchObject({ x: expect.any(Number), y: expect.any(Number) })
          if (ok === "success") expect(value).toMatchObject({ ok: expect.any(Boolean) })
        }),
      runs
    )
  })

  const hostileId = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.constantFrom("/", "..", ".", "%", "?", "#", "%2F", "%2e%2e", "a/../b", "?x=1#y", "", " ", "\u0000"),
    fc.array(fc.constantFrom("/", ".", "%", "?", "#", "a", "é", "🦊"), { maxLength: 30 }).map((parts) =>
      parts.join("")
    ),
    fc.string({ minLength: 10_000, maxLength: 10_000 })
  )

  layer(Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer())))("ids", (it) => {
    it.effect.prop(
      "random ids reach the simulator as exactly one path segment, or are InvalidInput",
      { id: hostileId },
      ({ id }) =>
        Effect.gen(function*() {
          const simulator = yield* KernelSimulator.KernelSimulator
          yield* simulator.clearRequests
          const exit = yield* Effect.exit(Computer.getMousePosition({ id }))
          const requests = yield* simulator.requests
          if (Exit.isFailure(exit)) expect(Cause.isDie(exit.cause)).toBe(false)
          const tag = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause))?._tag : "success"
          if (tag === "InvalidInput") {
            expect(requests).toHaveLength(0)
            return
          }
          expect(requests).toHaveLength(1)
          const segments = requests[0]!.path.split("/")
          expect(segments).toHaveLength(5)
          expect([segments[1], segments[3], segments[4]]).toEqual(["browsers", "computer", "get_mouse_position"])
          expect(decodeURIComponent(segments[2]!)).toBe(id)
          expect(tag === "success" || tag === "NotFound").toBe(true)
        }),
      runs
    )
  })
})
