/**
 * The shared pattern of the generated operations (src/internal/surface.ts): what a module would
 * prepare when imported, or a layer when built, is made on first use, once.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Either, Layer, Redacted, Stream } from "effect"
import { Computer, Filesystem, KernelClient, KernelConfig, KernelError, Replays } from "effect-kernel"
import * as ComputerOperations from "../src/internal/generated/operations/Computer.js"
import * as Surface from "../src/internal/surface.js"

describe("surface", () => {
  it("lazy makes its value on first use, once", () => {
    let made = 0
    const value = Surface.lazy(() => ({ n: ++made }))
    expect(made).toBe(0)
    expect(value().n).toBe(1)
    expect(value()).toBe(value())
    expect(made).toBe(1)
  })

  class Thing
    extends Context.Tag("test/Thing")<Thing, Surface.Service<"getThing", { readonly id: string }, string, never>>()
  {}
  class Things
    extends Context.Tag("test/Things")<Things, Surface.Service<"listThings", { readonly q?: string }, string, never>>()
  {}
  class Now extends Context.Tag("test/Now")<Now, Surface.ServiceNoInput<"now", number, never>>() {}

  it.effect("the accessors call the service behind the tag, with the params as given or the empty ones", () =>
    Effect.gen(function*() {
      const get = Surface.accessor(Thing, "getThing")
      const list = Surface.accessorOptional(Things, "listThings", {})
      const now = Surface.accessorNoInput(Now, "now")
      const seen: Array<unknown> = []
      const layer = Layer.mergeAll(
        Layer.succeed(Thing, { getThing: (params) => Effect.succeed(`thing ${params.id}`) }),
        Layer.succeed(Things, {
          listThings: (params) => Effect.sync(() => (seen.push(params), "things"))
        }),
        Layer.succeed(Now, { now: () => Effect.succeed(7) })
      )
      const results = yield* Effect.all([get({ id: "a" }), list(), list({ q: "b" }), now()]).pipe(Effect.provide(layer))
      expect(results).toEqual(["thing a", "things", "things", 7])
      expect(seen).toEqual([{}, { q: "b" }])
    }))

  it.effect("a download's Stream form: the body's bytes, and a failure before the body fails the stream", () =>
    Effect.gen(function*() {
      const bytes = new TextEncoder().encode("hello")
      const ok = Layer.succeed(Filesystem.ReadFile, { readFile: () => Effect.succeed(Stream.make(bytes)) })
      const read = yield* Stream.runCollect(Filesystem.readFileStream({ id: "b1", path: "/a" })).pipe(
        Effect.provide(ok)
      )
      expect(Chunk.toReadonlyArray(read)).toEqual([bytes])
      const notFound = new KernelError.NotFound({
        status: 404,
        code: "not_found",
        message: "no such file",
        method: "GET",
        path: "/browsers/b1/fs/read_file"
      })
      const failing = Layer.succeed(Filesystem.ReadFile, { readFile: () => Effect.succeed(Stream.fail(notFound)) })
      const failed = yield* Stream.runDrain(Filesystem.readFileStream({ id: "b1", path: "/a" })).pipe(
        Effect.either,
        Effect.provide(failing)
      )
      expect(Either.isLeft(failed) && failed.left._tag).toBe("NotFound")
      // one shape for every download: the Stream form of the generated ones and Replays.download's
      expect(Replays.downloadStream).toBe(Replays.download)
      expect(typeof Computer.captureScreenshotStream).toBe("function")
    }))

  it.effect("make: one service per operation but the hand-written ones, under its Tag, calling the operation", () =>
    Effect.gen(function*() {
      const sent: Array<string> = []
      const http = Layer.succeed(
        HttpClient.HttpClient,
        HttpClient.make((request) =>
          Effect.sync(
            () => (sent.push(`${request.method} ${request.url}`),
              HttpClientResponse.fromWeb(request, new Response(null, { status: 200 })))
          )
        )
      )
      const client = KernelClient.layer.pipe(
        Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_surface"), baseUrl: "https://kernel.test" })),
        Layer.provide(http)
      )
      const make: Effect.Effect<
        Context.Context<Computer.ClickMouse | Computer.PressKey>,
        never,
        KernelClient.KernelClient
      > = Surface.make(ComputerOperations.operations, ["getMousePosition"])
      const context = yield* make.pipe(Effect.provide(client))
      const keys = [...context.unsafeMap.keys()]
      expect(keys).toContain("effect-kernel/ClickMouse")
      expect(keys).toContain("effect-kernel/SetCursorVisibility")
      expect(keys).not.toContain("effect-kernel/GetMousePosition")
      expect(keys).toHaveLength(ComputerOperations.operations.length - 1)
      yield* Context.get(context, Computer.ClickMouse).clickMouse({ id: "b 1", x: 1, y: 2 })
      expect(sent).toEqual(["POST https://kernel.test/browsers/b%201/computer/click_mouse"])
    }))

  it("make is checked against the services it is declared to build", () => {
    class Elsewhere extends Context.Tag("effect-kernel/Elsewhere")<
      Elsewhere,
      Surface.Service<"elsewhere", { readonly id: string }, void, never>
    >() {}
    class OtherParams extends Context.Tag("effect-kernel/ClickMouse")<
      OtherParams,
      Surface.Service<"clickMouse", { readonly id: number }, void, never>
    >() {}
    type Make<I> = Effect.Effect<Context.Context<I>, never, KernelClient.KernelClient>
    const declared: Make<Computer.ClickMouse | Computer.GetMousePosition> = Surface.make(ComputerOperations.operations)
    // @ts-expect-error no operation of the list is Elsewhere
    const absent: Make<Computer.ClickMouse | Elsewhere> = Surface.make(ComputerOperations.operations)
    // @ts-expect-error the operation named clickMouse does not take these params
    const mismatched: Make<OtherParams> = Surface.make(ComputerOperations.operations)
    // @ts-expect-error getMousePosition is left to its hand-written service
    const handWritten: Make<Computer.GetMousePosition> = Surface.make(ComputerOperations.operations, [
      "getMousePosition"
    ])
    expect([declared, absent, mismatched, handWritten].every(Effect.isEffect)).toBe(true)
  })
})
