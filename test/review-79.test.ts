/**
 * Review 79 (an Effect engineer's read): what the docs promise of every operation holds for the
 * stream accessors and the generated operations too.
 * - `KernelRetry`'s settings around a stream accessor (`KernelRetry.noRetries(Computer.captureScreenshot(...))`)
 *   hold for the request its stream sends when run (it was retried as if they were not there);
 * - every operation's span carries the ids of its path (`kernel.browser.id`, `kernel.process.id`...),
 *   not only the five of 0.1.0.
 * Each case failed before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule, Stream } from "effect"
import { Computer, KernelRetry, Logs } from "effect-kernel"
import { examples } from "./generated/examples.js"
import { callOf } from "./utils/accessors.js"
import { paramsOf } from "./utils/exampleParams.js"
import { mockLayer } from "./utils/mock.js"
import { makeObserver, withObserver } from "./utils/observe.js"

/** 503 on the first request, then what `ok` answers. */
const failingFirst = (ok: () => Response) => (_: unknown, __: unknown, count: number) =>
  count === 1 ? new Response(null, { status: 503 }) : ok()
const png = () =>
  new Response(new Uint8Array([137, 80, 78, 71]), { status: 200, headers: { "content-type": "image/png" } })
const sse = () =>
  new Response("event: log\ndata: {\"event\":\"log\",\"message\":\"m\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\n\n", {
    status: 200,
    headers: { "content-type": "text/event-stream" }
  })

describe("KernelRetry around a stream accessor holds for the request its stream sends", () => {
  it.effect("noRetries: the 503 is the failure, one request", () => {
    const { layer, requests } = mockLayer(failingFirst(png))
    return Effect.gen(function*() {
      const stream = yield* KernelRetry.noRetries(Computer.captureScreenshot({ id: "b1" }))
      const error = yield* Effect.flip(Stream.runDrain(stream))
      expect(error._tag).toBe("UnexpectedStatus")
      expect(requests).toHaveLength(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("withPolicy on an event stream: its schedule, not the configured one", () => {
    const { layer, requests } = mockLayer(failingFirst(sse), { maxRetries: 0 })
    return Effect.gen(function*() {
      const stream = yield* KernelRetry.withPolicy(
        Logs.stream({ id: "b1", source: "path", path: "/var/log/app.log", follow: false }),
        Schedule.recurs(1)
      )
      const events = yield* Stream.runCollect(stream)
      expect(events.length).toBe(1)
      expect(requests).toHaveLength(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("noRetries around the stream's run holds as before", () => {
    const { layer, requests } = mockLayer(failingFirst(png))
    return Effect.gen(function*() {
      const stream = yield* Computer.captureScreenshot({ id: "b1" })
      const error = yield* Effect.flip(KernelRetry.noRetries(Stream.runDrain(stream)))
      expect(error._tag).toBe("UnexpectedStatus")
      expect(requests).toHaveLength(1)
    }).pipe(Effect.provide(layer))
  })

  it.live("without settings, the configured retries", () => {
    const { layer, requests } = mockLayer(failingFirst(png))
    return Effect.gen(function*() {
      const stream = yield* Computer.captureScreenshot({ id: "b1" })
      yield* Stream.runDrain(stream)
      expect(requests).toHaveLength(2)
    }).pipe(Effect.provide(layer))
  })
})

describe("every operation's span carries the ids of its path", () => {
  const withIds = examples.filter((example) => example.path.includes("{"))

  it.effect(`the ${withIds.length} operations with path parameters`, () => {
    const { layer } = mockLayer(() =>
      new Response(JSON.stringify({ code: "not_found", message: "no" }), { status: 404 })
    )
    const observer = makeObserver()
    return Effect.gen(function*() {
      const missing: Array<string> = []
      for (const example of withIds) {
        const params = paramsOf(example.name, example.params)
        yield* Effect.exit(callOf(example.module, example.accessor, params))
        const span = observer.spans.find((s) => s.name === `Kernel.${example.name}`)
        const fields = [...example.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!)
        for (const field of fields) {
          const value = Reflect.get(Object(params), field)
          const attribute = [...(span?.attributes ?? [])].find(([key, v]) => key.startsWith("kernel.") && v === value)
          if (attribute === undefined) missing.push(`${example.name}.${field}`)
        }
      }
      expect(missing).toEqual([])
      const byName = (name: string) =>
        Object.fromEntries(observer.spans.find((s) => s.name === `Kernel.${name}`)!.attributes)
      expect(byName("getProcessStatus")).toMatchObject({
        "kernel.browser.id": "id",
        "kernel.process.id": expect.any(String)
      })
      expect(byName("getBrowserPool")).toMatchObject({ "kernel.browser_pool.id_or_name": "idOrName" })
      expect(byName("stopFilesystemWatch")).toMatchObject({ "kernel.filesystem_watch.id": "watchId" })
    }).pipe(Effect.provide(layer), (effect) => withObserver(effect, observer))
  })
})
