/**
 * The simulator's control plane, faults and bounds, as a hostile client drives them (one simulator
 * per case, in memory: `KernelSimulator.make` and its handler).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Schema, TestClock } from "effect"
import { KernelSimulator } from "effect-kernel/testing"

const token = "sk_review"
const seed: KernelSimulator.Seed = { organizations: [{ id: "org_review", token, browsers: [{ id: "b1" }] }] }
const mib = 1024 * 1024

type Simulator = Effect.Effect.Success<ReturnType<typeof KernelSimulator.make>>

/** One request to the simulator's handler: its status and its body as text. */
const send = (
  simulator: Simulator,
  method: string,
  path: string,
  body?: unknown,
  options: { readonly token?: string; readonly contentType?: string } = {}
) => {
  const bytes = body === undefined
    ? new Uint8Array(0)
    : body instanceof Uint8Array
    ? body
    : new TextEncoder().encode(JSON.stringify(body))
  const [pathOnly, query] = path.split("?") as [string, string | undefined]
  return Effect.map(
    simulator.handle({
      method,
      path: pathOnly,
      query: query ?? "",
      headers: {
        authorization: `Bearer ${options.token ?? token}`,
        ...(body === undefined ? {} : { "content-type": options.contentType ?? "application/json" })
      },
      readBody: (limit) =>
        Effect.succeed(bytes.length > limit ? { _tag: "TooLarge" as const } : { _tag: "Read" as const, bytes })
    }),
    (response) => ({
      status: response.status,
      text: response.body._tag === "Text" ? response.body.text : ""
    })
  )
}

const write = (simulator: Simulator, path: string, bytes: Uint8Array) =>
  send(simulator, "PUT", `/browsers/b1/fs/write_file?path=${path}`, bytes, {
    contentType: "application/octet-stream"
  })

describe("process output is bounded and counted in the byte budget", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly run: (simulator: Simulator) => Effect.Effect<void>
  }> = [
    {
      name: "exec: a file named many times makes at most 16 MiB of stdout (it made 20 copies, 320 MiB)",
      run: (simulator) =>
        Effect.gen(function*() {
          expect((yield* write(simulator, "/f", new Uint8Array(4 * mib).fill(97))).status).toBe(201)
          const exec = yield* send(simulator, "POST", "/browsers/b1/process/exec", {
            command: "cat",
            args: Array.from({ length: 20 }, () => "/f")
          })
          expect(exec.status).toBe(200)
          expect(Buffer.from(JSON.parse(exec.text).stdout_b64, "base64").length).toBe(16 * mib)
        })
    },
    {
      name: "exec: cat gives a file's bytes as they are (a binary file was decoded as UTF-8)",
      run: (simulator) =>
        Effect.gen(function*() {
          expect((yield* write(simulator, "/b", new Uint8Array([0xff, 0xfe, 0x00, 0x80]))).status).toBe(201)
          const exec = yield* send(simulator, "POST", "/browsers/b1/process/exec", { command: "cat", args: ["/b"] })
          expect([...Buffer.from(JSON.parse(exec.text).stdout_b64, "base64")]).toEqual([0xff, 0xfe, 0x00, 0x80])
        })
    },
    {
      name: "spawn: the output a process keeps counts in maxStoredBytes (processes kept copies beyond it)",
      run: (simulator) =>
        Effect.gen(function*() {
          // 3 MiB of file, then processes keeping a copy each: the fourth MiB of the 4 MiB budget is the last
          expect((yield* write(simulator, "/f", new Uint8Array(3 * mib).fill(97))).status).toBe(201)
          const spawn = () => send(simulator, "POST", "/browsers/b1/process/spawn", { command: "cat", args: ["/f"] })
          const refused = yield* spawn()
          expect(refused.status).toBe(400)
          expect(refused.text).toContain("the simulator holds at most")
          // a smaller output fits, then the budget is full
          expect((yield* write(simulator, "/g", new Uint8Array(mib / 2).fill(98))).status).toBe(201)
          const small = () => send(simulator, "POST", "/browsers/b1/process/spawn", { command: "cat", args: ["/g"] })
          expect((yield* small()).status).toBe(200)
          expect((yield* small()).status).toBe(400)
          // deleting the browser frees what its processes kept
          expect((yield* send(simulator, "DELETE", "/browsers/b1")).status).toBe(204)
        })
    },
    {
      name: "stdin echoed by a running cat counts too, and its backlog's dropped events free their bytes",
      run: (simulator) =>
        Effect.gen(function*() {
          const spawned = yield* send(simulator, "POST", "/browsers/b1/process/spawn", { command: "cat" })
          const id = JSON.parse(spawned.text).process_id as string
          const chunk = Buffer.alloc(30 * 1024, 1).toString("base64")
          const stdin = () => send(simulator, "POST", `/browsers/b1/process/${id}/stdin`, { data_b64: chunk })
          // 256 events of 30 KiB (7.5 MiB) do not fit 4 MiB: refused once full...
          const statuses: Array<number> = []
          for (let i = 0; i < 300; i++) statuses.push((yield* stdin()).status)
          expect(statuses.slice(0, 100).every((s) => s === 200)).toBe(true)
          expect(statuses).toContain(400)
          // ...and killing it keeps its backlog (a late stream reads it), still counted
          expect((yield* send(simulator, "POST", `/browsers/b1/process/${id}/kill`, { signal: "TERM" })).status)
            .toBe(200)
          expect((yield* write(simulator, "/h", new Uint8Array(mib))).status).toBe(400)
        })
    }
  ]
  for (const { name, run } of cases) {
    it.effect(name, () => Effect.flatMap(KernelSimulator.make(seed, { maxStoredBytes: 4 * mib }), run))
  }
})

describe("a fault is served only to a caller the world knows when it is answered", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly run: (simulator: Simulator) => Effect.Effect<void>
  }> = [
    {
      name: "an expired API key gets 401, not the injected fault (it got the fault's 503)",
      run: (simulator) =>
        Effect.gen(function*() {
          const created = yield* send(simulator, "POST", "/org/api_keys", { name: "brief", days_to_expire: 1 })
          const key = JSON.parse(created.text).key as string
          expect((yield* send(simulator, "GET", "/browsers", undefined, { token: key })).status).toBe(200)
          yield* TestClock.adjust("2 days")
          yield* simulator.injectFault({ route: "listBrowsers", status: 503 })
          expect((yield* send(simulator, "GET", "/browsers", undefined, { token: key })).status).toBe(401)
          // the fault is still there for a caller who is known
          expect((yield* send(simulator, "GET", "/browsers")).status).toBe(503)
        })
    },
    {
      name: "a key expiring during a fault's delay gets 401 (it was served as its organization)",
      run: (simulator) =>
        Effect.gen(function*() {
          const created = yield* send(simulator, "POST", "/org/api_keys", { name: "brief", days_to_expire: 1 })
          const key = JSON.parse(created.text).key as string
          yield* simulator.injectFault({ route: "listBrowsers", delay: "2 days", times: 1 })
          const fiber = yield* Effect.fork(send(simulator, "GET", "/browsers", undefined, { token: key }))
          yield* TestClock.adjust("2 days")
          expect((yield* Fiber.join(fiber)).status).toBe(401)
        })
    },
    {
      name:
        "a request delayed across a reset to a world without its token is 401 (it created a browser in the old one)",
      run: (simulator) =>
        Effect.gen(function*() {
          yield* simulator.injectFault({ route: "createBrowser", delay: "1 second", times: 1 })
          const fiber = yield* Effect.fork(send(simulator, "POST", "/browsers", {}))
          yield* TestClock.adjust("10 millis")
          yield* Effect.orDie(simulator.reset({ organizations: [{ id: "other", token: "sk_other" }] }))
          yield* TestClock.adjust("1 second")
          expect((yield* Fiber.join(fiber)).status).toBe(401)
        })
    },
    {
      name: "a request delayed across a reset to a world with its token is served by the new world",
      run: (simulator) =>
        Effect.gen(function*() {
          yield* simulator.injectFault({ route: "createBrowser", delay: "1 second", times: 1 })
          const fiber = yield* Effect.fork(send(simulator, "POST", "/browsers", {}))
          yield* TestClock.adjust("10 millis")
          yield* Effect.orDie(simulator.reset(seed))
          yield* TestClock.adjust("1 second")
          const created = yield* Fiber.join(fiber)
          expect(created.status).toBe(200)
          const id = JSON.parse(created.text).session_id as string
          expect((yield* send(simulator, "GET", `/browsers/${id}`)).status).toBe(200)
        })
    }
  ]
  for (const { name, run } of cases) it.effect(name, () => Effect.flatMap(KernelSimulator.make(seed), run))
})

describe("durations of faults and seeds", () => {
  const decodeFault = Schema.decodeUnknownEither(KernelSimulator.FaultSchema)
  const decodeSeed = Schema.decodeUnknownEither(KernelSimulator.SeedSchema)
  const replayAfter = (readyAfter: unknown) => ({
    organizations: [{ id: "o", token: "sk_o", browsers: [{ id: "b1", replays: [{ id: "r1", readyAfter }] }] }]
  })
  it.each([-1, "-5 seconds", " -1 millis", [-5, 0], [0, -1]])("a negative duration (%j) is refused", (delay) => {
    expect(Either.isLeft(decodeFault({ route: "createBrowser", delay }))).toBe(true)
    expect(Either.isLeft(decodeSeed(replayAfter(delay)))).toBe(true)
  })
  it.each([0, 1500, "5 seconds", [1, 500]])("a duration of %j is taken", (delay) => {
    expect(Either.isRight(decodeFault({ route: "createBrowser", delay }))).toBe(true)
    expect(Either.isRight(decodeSeed(replayAfter(delay)))).toBe(true)
  })
})

describe("injected faults are bounded", () => {
  it.effect("at most 1000 at once: one more drops the oldest", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.make(seed)
      const position = () => send(simulator, "POST", "/browsers/b1/computer/get_mouse_position")
      yield* simulator.injectFault({ route: "getMousePosition", status: 503 })
      expect((yield* position()).status).toBe(503)
      // 999 faults that are never served (probability 0): the first one is still there
      for (let i = 0; i < 999; i++) yield* simulator.injectFault({ route: "clickMouse", status: 500, probability: 0 })
      expect((yield* position()).status).toBe(503)
      // the 1001st drops it
      yield* simulator.injectFault({ route: "clickMouse", status: 500, probability: 0 })
      expect((yield* position()).status).toBe(200)
    }))
})
