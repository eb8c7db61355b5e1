/**
 * Hostile review, round 18: the document's value limits as the simulator enforces them over HTTP
 * (a body field, a query parameter, an array and the items of a nested array), with the Error body
 * naming the field, and a request within the limits still served.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Schedule, Stream } from "effect"
import { KernelEvents, Logs, Telemetry } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { mockLayer } from "./utils/mock.js"
import { handleJson, raw, withServed } from "./utils/served.js"

const auth = { authorization: `Bearer ${KernelSimulator.defaultToken}` }
const json = { ...auth, "content-type": "application/json" }

const post = (url: string, path: string, body: unknown) =>
  raw(url, { method: "POST", path, headers: json, body: JSON.stringify(body) })

const refused = (answer: { readonly status: number; readonly body: string }, message: string) => {
  expect(answer.status).toBe(400)
  expect(JSON.parse(answer.body)).toMatchObject({ code: "bad_request", message: expect.stringContaining(message) })
}

describe("review round 18: the simulator enforces the document's limits over HTTP", () => {
  it("a body field below its minimum or above its maximum is 400 naming the field; nothing is created", () =>
    withServed({}, async ({ url }) => {
      const count = async () => JSON.parse((await raw(url, { path: "/browser_pools", headers: auth })).body).length
      const before = await count()
      refused(await post(url, "/browser_pools", { size: -5 }), "size: must be >= 1, got -5")
      refused(
        await post(url, "/browser_pools", { size: 5, fill_rate_per_minute: 1000 }),
        "fill_rate_per_minute: must be <= 25, got 1000"
      )
      expect(await count()).toBe(before)
      const ok = await post(url, "/browser_pools", { size: 1, fill_rate_per_minute: 25 })
      expect(ok.status).toBe(201)
    }))

  it("a query parameter out of its range is 400 naming it", () =>
    withServed({}, async ({ url }) => {
      refused(
        await raw(url, { path: "/invocations?limit=1000", headers: auth }),
        "limit: \"1000\" is not valid (must be <= 100, got 1000)"
      )
      refused(
        await raw(url, { path: "/invocations?offset=-1", headers: auth }),
        "offset: \"-1\" is not valid (must be >= 0, got -1)"
      )
      expect((await raw(url, { path: "/invocations?limit=100&offset=0", headers: auth })).status).toBe(200)
    }))

  it("an array with too few items, and a nested array item with too many, are 400 naming the path", () =>
    withServed({}, async ({ url }) => {
      const drag = "/browsers/browser_1/computer/drag_mouse"
      refused(await post(url, drag, { path: [[1, 2]] }), "path: must have at least 2 items")
      refused(await post(url, drag, { path: [[1, 2], [3, 4, 5]] }), "path.1: must have at most 2 items")
      expect((await post(url, drag, { path: [[1, 2], [3, 4]] })).status).toBeLessThan(300)
    }))
})

describe("review round 18: a pool's release takes back only its own browsers", () => {
  it("releasing a browser the pool did not hand out is 400, and neither the browser nor the counts change", () =>
    withServed({}, async ({ url }) => {
      const pool = JSON.parse((await post(url, "/browser_pools", { size: 1 })).body)
      const standalone = JSON.parse((await post(url, "/browsers", {})).body)
      const answer = await post(url, `/browser_pools/${pool.id}/release`, { session_id: standalone.session_id })
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body)).toMatchObject({ code: "bad_request" })
      // the user's own browser is still there, and the pool does not count a slot it never had
      expect((await raw(url, { path: `/browsers/${standalone.session_id}`, headers: auth })).status).toBe(200)
      const after = JSON.parse((await raw(url, { path: `/browser_pools/${pool.id}`, headers: auth })).body)
      expect(after).toMatchObject({ available_count: 1, acquired_count: 0 })
      // a browser it did hand out goes back as before
      const acquired = JSON.parse((await post(url, `/browser_pools/${pool.id}/acquire`, {})).body)
      expect((await post(url, `/browser_pools/${pool.id}/release`, { session_id: acquired.session_id })).status)
        .toBe(204)
    }))
})

describe("review round 18: a server that ignores Last-Event-ID cannot make telemetry reconnect forever", () => {
  it.live("replayed events only (all duplicates) do not start the schedule over: the stream fails, typed", () =>
    Effect.gen(function*() {
      // every connection sends seq 1..3 from the start, then ends: no progress after the first
      const { layer, requests } = mockLayer(() =>
        new Response(
          [1, 2, 3].map((seq) =>
            `id: ${seq}\ndata: ${
              JSON.stringify({
                seq,
                event: { type: "console_log", ts: seq, source: { kind: "cdp" }, category: "console" }
              })
            }\n\n`
          ).join(""),
          { status: 200, headers: { "content-type": "text/event-stream" } }
        )
      )
      // the schedule provided around the program (the documented alternative to Stream.provideService)
      const exit = yield* Effect.flatMap(Telemetry.stream({ id: "b1" }), Stream.runCollect).pipe(
        Effect.provideService(KernelEvents.ResumeSchedule, Schedule.recurs(3)),
        Effect.timeout("5 seconds"),
        Effect.provide(layer),
        Effect.exit
      )
      expect(Exit.isFailure(exit) ? Cause.squash(exit.cause) : exit).toMatchObject({ _tag: "TransportError" })
      // the first connection, then the schedule's 3 attempts: none of them started it over
      expect(requests).toHaveLength(4)
    }))
})

describe("review round 18: a pool's waiting acquires end with the world they wait in", () => {
  const sendTo = handleJson

  /** A fresh simulator with a pool of 1 whose browser is taken, and `count` acquires waiting an hour on it. */
  const waitingOn = (count: number) =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.make()
      const send = sendTo(simulator)
      const pool = (yield* send("POST", "/browser_pools", { size: 1 })).json
      expect((yield* send("POST", `/browser_pools/${pool.id}/acquire`, {})).status).toBe(200)
      const acquire = send("POST", `/browser_pools/${pool.id}/acquire`, { acquire_timeout_seconds: 3600 })
      const waiters = yield* Effect.forkAll(Array.from({ length: count }, () => acquire))
      yield* Effect.yieldNow()
      const statuses = Effect.map(Fiber.join(waiters), (answers) => answers.map((answer) => answer.status))
      return { simulator, send, id: String(pool.id), statuses }
    })

  // the TestClock never moves here: a waiter still waiting would never end (the test times out)
  it.effect("a reset answers every waiting acquire 204 at once", () =>
    Effect.gen(function*() {
      const { simulator, statuses } = yield* waitingOn(3)
      yield* simulator.reset()
      expect(yield* statuses).toEqual([204, 204, 204])
    }))

  it.effect("a pool evicted from its bounded store answers its waiting acquires 204 at once", () =>
    Effect.gen(function*() {
      const { id, send, simulator, statuses } = yield* waitingOn(1)
      for (let i = 0; i < KernelSimulator.collectionLimit; i++) yield* send("POST", "/browser_pools", { size: 1 })
      expect(yield* simulator.evictions).toContainEqual(expect.objectContaining({ id }))
      expect(yield* statuses).toEqual([204])
    }))

  it.effect("deleting the pool answers its waiting acquires 204 at once", () =>
    Effect.gen(function*() {
      const { id, send, statuses } = yield* waitingOn(2)
      // its browser is leased: deleting it takes `force` (the document)
      expect((yield* send("DELETE", `/browser_pools/${id}`, { force: true })).status).toBeLessThan(300)
      expect(yield* statuses).toEqual([204, 204])
    }))
})

describe("review round 18: the simulator holds multipart text fields to the document's limits", () => {
  const multipart = (fields: ReadonlyArray<readonly [string, string, string?]>) => {
    const boundary = "review18boundary"
    const body =
      fields.map(([name, value, filename]) =>
        `--${boundary}\r\ncontent-disposition: form-data; name="${name}"${
          filename === undefined ? "" : `; filename="${filename}"\r\ncontent-type: application/zip`
        }\r\n\r\n${value}\r\n`
      ).join("") + `--${boundary}--\r\n`
    return { headers: { ...auth, "content-type": `multipart/form-data; boundary=${boundary}` }, body }
  }

  it("an extension name breaking its pattern is 400 naming it; a good one is created", () =>
    withServed({}, async ({ url }) => {
      const bad = multipart([["file", "PK", "x.zip"], ["name", "bad name!"]])
      refused(await raw(url, { method: "POST", path: "/extensions", ...bad }), "name: must match the pattern")
      // a ZIP archive with no entry (its end record alone): an extension is a ZIP archive (else 400)
      const good = multipart([["file", `PK\u0005\u0006${"\u0000".repeat(18)}`, "x.zip"], ["name", "good-name_1.0"]])
      expect((await raw(url, { method: "POST", path: "/extensions", ...good })).status).toBe(201)
    }))

  it("a nested field of an array of parts (files[0][dest_path]) breaking its pattern is 400 naming its path", () =>
    withServed({}, async ({ url }) => {
      const bad = multipart([["files[0][file]", "hello", "a.txt"], ["files[0][dest_path]", "relative/a.txt"]])
      refused(
        await raw(url, { method: "POST", path: "/browsers/browser_1/fs/upload", ...bad }),
        "files.0.dest_path: must match the pattern"
      )
      const good = multipart([["files[0][file]", "hello", "a.txt"], ["files[0][dest_path]", "/tmp/a.txt"]])
      expect((await raw(url, { method: "POST", path: "/browsers/browser_1/fs/upload", ...good })).status)
        .toBeLessThan(300)
    }))
})

describe("review round 19: a query parameter the document requires in prose", () => {
  const logs = "/browsers/browser_1/logs/stream"

  it("source=path without path is 400 naming path; source=supervisor without supervisor_process names it", () =>
    withServed({}, async ({ url }) => {
      refused(await raw(url, { path: `${logs}?source=path`, headers: auth }), "path: is required when source is path")
      refused(
        await raw(url, { path: `${logs}?source=path&path=`, headers: auth }),
        "path: is required when source is path"
      )
      refused(
        await raw(url, { path: `${logs}?source=supervisor`, headers: auth }),
        "supervisor_process: is required when source is supervisor"
      )
      // with it, the stream is served
      const served = await raw(url, { path: `${logs}?source=path&path=/var/log/x.log&follow=false`, headers: auth })
      expect(served.status).toBe(200)
      expect(served.headers["content-type"]).toMatch(/^text\/event-stream/)
      const supervised = await raw(url, {
        path: `${logs}?source=supervisor&supervisor_process=chromium&follow=false`,
        headers: auth
      })
      expect(supervised.status).toBe(200)
    }))

  it.effect("the SDK refuses the same calls with InvalidInput naming the field, before sending anything", () =>
    Effect.gen(function*() {
      const { layer, requests } = mockLayer(() =>
        new Response("data: {}\n\n", { status: 200, headers: { "content-type": "text/event-stream" } })
      )
      const refusedWith = (params: Logs.StreamLogsParams) =>
        Logs.stream(params).pipe(Effect.flip, Effect.provide(layer))
      for (
        const [params, field, message] of [
          [{ id: "b", source: "path" }, "path", `path is required when source is "path"`],
          [{ id: "b", source: "path", path: "" }, "path", `path is required when source is "path"`],
          [{ id: "b", source: "supervisor", path: "/x" }, "supervisor_process", "supervisor_process is required"]
        ] as const
      ) {
        const error = yield* refusedWith(params)
        expect(error._tag).toBe("InvalidInput")
        expect(error).toMatchObject({ field, message: expect.stringContaining(message) })
      }
      expect(requests).toHaveLength(0)
      // given, the call is sent with it
      yield* Logs.stream({ id: "b", source: "supervisor", supervisor_process: "chromium" }).pipe(
        Effect.flatMap(Stream.runDrain),
        Effect.ignore,
        Effect.provide(layer)
      )
      expect(requests.map((request) => request.url.search)).toEqual(["?source=supervisor&supervisor_process=chromium"])
    }))
})
