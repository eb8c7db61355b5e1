import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, type Layer, Option, Scope, Stream } from "effect"
import {
  AuthConnections,
  Deployments,
  FilesystemWatch,
  Invocations,
  type KernelError,
  KernelEvents,
  Logs,
  Processes,
  Telemetry
} from "effect-kernel"
import type * as Http from "node:http"
import { afterAll, beforeAll } from "vitest"
import { httpServer, loopbackLayer, type Served, waitUntil } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// ---------------------------------------------------------------------------------------------
// one loopback server for the file: `script` answers each request (set per test)
// ---------------------------------------------------------------------------------------------

type Script = (req: Http.IncomingMessage, res: Http.ServerResponse, attempt: number) => void
let script: Script = (_req, res) => res.end()
let attempts = 0
let lastEventIds: Array<string | undefined> = []
const handler: Http.RequestListener = (req, res) => {
  attempts++
  const id = req.headers["last-event-id"]
  lastEventIds.push(typeof id === "string" ? id : undefined)
  res.on("error", () => {})
  script(req, res, attempts)
}
const scope = Effect.runSync(Scope.make())
let served: Served
let port = 0
beforeAll(async () => {
  served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  port = Number(new URL(served.url).port)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const sse = (res: Http.ServerResponse) =>
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
const frame = (data: unknown, extra = "") => `${extra}data: ${JSON.stringify(data)}\n\n`
const at = "2026-01-01T00:00:00Z"
const invocation = (status: string) => ({
  event: "invocation_state",
  timestamp: at,
  invocation: { id: "i1", app_name: "a", version: "1", action_name: "x", started_at: at, status }
})
const log = (message: string) => ({ event: "log", timestamp: at, message })
const heartbeat = { event: "sse_heartbeat", timestamp: at }
const telemetry = (seq: number) => ({
  seq,
  event: { type: "console_log", ts: seq, source: { kind: "cdp" }, category: "console" }
})

const set = (next: Script) => {
  script = next
  attempts = 0
  lastEventIds = []
}

type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>

const run = <A, E>(
  transport: (typeof transports)[number],
  effect: Effect.Effect<A, E, Provided>,
  options: Parameters<typeof loopbackLayer>[2] = {}
) => Effect.runPromiseExit(Effect.provide(effect, loopbackLayer(port, transport.layer, options)))

const collect = <A, E, R>(stream: Effect.Effect<Stream.Stream<A, E>, E, R>) =>
  Effect.flatMap(stream, (s) => Effect.map(Stream.runCollect(s), Chunk.toArray))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure: ${Cause.pretty(exit.cause)}`)
  return failure.value
}

const valueOf = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
  return exit.value
}

const deployment = (status: string) => ({
  event: "deployment_state",
  timestamp: at,
  deployment: { id: "d1", status, entrypoint_rel_path: "index.ts", created_at: at, region: "aws.us-east-1a" }
})
const auth = (flow_status: string) => ({
  event: "managed_auth_state",
  timestamp: at,
  flow_status,
  flow_step: flow_status === "IN_PROGRESS" ? "DISCOVERING" : "COMPLETED"
})

/** The streams that end on their own: the events sent (the last one terminal, then one more never seen). */
const terminals: ReadonlyArray<{
  readonly name: string
  readonly events: ReadonlyArray<unknown>
  readonly end?: true
  readonly open: () => Effect.Effect<Stream.Stream<unknown, KernelError.KernelError>, KernelError.KernelError, Provided>
}> = [
  {
    name: "Deployments.follow",
    events: [deployment("queued"), log("building"), deployment("in_progress"), deployment("running"), log("late")],
    open: () => Deployments.follow({ id: "d1" })
  },
  {
    name: "Deployments.follow (error event)",
    events: [deployment("queued"), { event: "error", timestamp: at, error: { code: "c", message: "m" } }, log("x")],
    open: () => Deployments.follow({ id: "d1" })
  },
  {
    name: "AuthConnections.follow",
    events: [auth("IN_PROGRESS"), heartbeat, auth("SUCCESS"), auth("IN_PROGRESS")],
    open: () => AuthConnections.follow({ id: "a1" })
  },
  {
    name: "Logs.stream (follow: false)",
    events: [log("one"), log("two")],
    end: true,
    open: () => Logs.stream({ id: "b1", source: "path", path: "/var/log/x", follow: false })
  }
]

describe.each(transports)("event streams over $name", (transport) => {
  for (const terminal of terminals) {
    it(`${terminal.name}: ends at its terminal event, the connection closed`, async () => {
      set((_req, res) => {
        sse(res)
        for (const event of terminal.events) res.write(frame(event))
        if (terminal.end === true) res.end()
      })
      const events: ReadonlyArray<unknown> = valueOf(await run(transport, collect(terminal.open())))
      const expected = terminal.events.filter((e) => e !== heartbeat).length - (terminal.end === true ? 0 : 1)
      expect(events).toHaveLength(expected)
      expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
    })
  }

  it("happy path: heartbeats and comments dropped, the stream ends at the terminal state, socket freed", async () => {
    set((_req, res) => {
      sse(res)
      res.write(": keep-alive\n\n")
      res.write(frame(log("one")))
      res.write(frame(heartbeat))
      res.write(frame(invocation("running")).slice(0, 20))
      setTimeout(() => {
        res.write(frame(invocation("running")).slice(20))
        res.write(frame(invocation("succeeded")))
        // never ended by the server: the client must close it
        res.write(frame(log("after the end")))
      }, 20)
    })
    const events = valueOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))
    expect(events.map((e) => KernelEvents.isUnknownEvent(e) ? "unknown" : e.event)).toEqual([
      "log",
      "invocation_state",
      "invocation_state"
    ])
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("a documented error status before the first event is its typed error", async () => {
    set((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ code: "not_found", message: "no such invocation" }))
    })
    expect(failureOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))).toMatchObject({
      _tag: "NotFound"
    })
  })

  it("an unknown event type is an UnknownEvent value", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame({ event: "future_thing", x: 1 }, "id: 9\n"))
      res.end(frame(invocation("failed")))
    })
    const events = valueOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))
    expect(events[0]).toBeInstanceOf(KernelEvents.UnknownEvent)
    expect(events[0]).toMatchObject({ _tag: "UnknownEvent", event: "future_thing", data: { x: 1 }, id: "9" })
    expect(events).toHaveLength(2)
  })

  it("a garbage frame is a DecodeError with an excerpt", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame(log("one")))
      res.end("data: {not json\n\n")
    })
    const error = failureOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))
    expect(error).toMatchObject({ _tag: "DecodeError" })
    expect((error as { message: string }).message).toMatch(/not JSON.*\{not json/)
  })

  it("a known event type that does not fit its schema is a DecodeError", async () => {
    set((_req, res) => {
      sse(res)
      res.end(frame({ event: "log", timestamp: at }))
    })
    expect(failureOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))).toMatchObject({
      _tag: "DecodeError"
    })
  })

  it("a body cut before the terminal event is a TransportError, never a silent end", async () => {
    set((_req, res) => {
      sse(res)
      res.end(frame(log("one")))
    })
    expect(failureOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))).toMatchObject({
      _tag: "TransportError"
    })
    set((_req, res) => {
      sse(res)
      res.write(frame(log("one")))
      setTimeout(() => res.socket?.destroy(), 20)
    })
    expect(failureOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))).toMatchObject({
      _tag: "TransportError"
    })
  })

  it("an endless line is refused past 1 MiB (DecodeError), the connection closed", async () => {
    set((_req, res) => {
      sse(res)
      const chunk = "x".repeat(64 * 1024)
      let sent = 0
      const pump = () => {
        while (sent < 4 * 1024 * 1024 && res.write(chunk)) sent += chunk.length
        if (sent < 4 * 1024 * 1024) res.once("drain", pump)
      }
      res.write("data: ")
      pump()
    })
    const error = failureOf(await run(transport, collect(Invocations.follow({ id: "i1" }))))
    expect(error).toMatchObject({ _tag: "DecodeError" })
    expect((error as { message: string }).message).toMatch(/longer than 1048576 bytes/)
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("a stalled stream fails with Timeout after idleTimeout of silence; heartbeats keep it alive", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame(log("one")))
    })
    expect(
      failureOf(await run(transport, collect(Invocations.follow({ id: "i1" })), { idleTimeout: "300 millis" }))
    ).toMatchObject({ _tag: "Timeout" })
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
    set((_req, res) => {
      sse(res)
      let beats = 0
      const timer = setInterval(() => {
        res.write(++beats % 2 === 0 ? ": ping\n\n" : frame(heartbeat))
        if (beats === 8) {
          clearInterval(timer)
          res.write(frame(invocation("succeeded")))
        }
      }, 100)
      res.on("close", () => clearInterval(timer))
    })
    const events = valueOf(
      await run(transport, collect(Invocations.follow({ id: "i1" })), { idleTimeout: "300 millis" })
    )
    expect(events).toHaveLength(1)
  })

  it("interrupting the stream closes the connection at once", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame({ type: "CREATE", path: "/tmp/a" }))
    })
    const program = Effect.gen(function*() {
      const stream = yield* FilesystemWatch.events({ id: "b1", watchId: "w1" })
      const fiber = yield* Effect.fork(Stream.runDrain(stream))
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(fiber)
    })
    valueOf(await run(transport, program))
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
    // and taking the first event only
    const first = valueOf(
      await run(
        transport,
        Effect.flatMap(
          FilesystemWatch.events({ id: "b1", watchId: "w1" }),
          (s) => Stream.runCollect(Stream.take(s, 1))
        )
      )
    )
    expect(Chunk.toArray(first)).toEqual([{ type: "CREATE", path: "/tmp/a" }])
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("process output: bytes with their stream, the exit code last", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame({ stream: "stdout", data_b64: Buffer.from("hello\n").toString("base64") }))
      res.write(frame({ stream: "stderr", data_b64: Buffer.from([0, 255, 1]).toString("base64") }))
      res.write(frame({ event: "exit", exit_code: 3 }))
    })
    const events = valueOf(
      await run(
        transport,
        collect(Processes.stdoutStream({ id: "b1", processId: "5c0ffee0-0000-4000-8000-000000000001" }))
      )
    )
    expect(events).toEqual([
      { _tag: "Output", stream: "stdout", data: new Uint8Array(Buffer.from("hello\n")) },
      { _tag: "Output", stream: "stderr", data: new Uint8Array([0, 255, 1]) },
      { _tag: "Exit", exitCode: 3 }
    ])
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("process output: an exit without its code has none (undefined), never a made-up one", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame({ event: "exit" }))
    })
    const events = valueOf(
      await run(
        transport,
        collect(Processes.stdoutStream({ id: "b1", processId: "5c0ffee0-0000-4000-8000-000000000001" }))
      )
    )
    expect(events).toEqual([{ _tag: "Exit", exitCode: undefined }])
  })

  it("telemetry: an unknown event type inside the envelope is an UnknownEvent, its seq counted", async () => {
    set((_req, res) => {
      sse(res)
      res.write(frame({ seq: 1, event: { type: "future_type", ts: 1 } }, "id: 1\n"))
      res.write(frame(telemetry(2), "id: 2\n"))
    })
    const events = valueOf(
      await run(transport, Effect.flatMap(Telemetry.stream({ id: "b1" }), (s) => Stream.runCollect(Stream.take(s, 2))))
    )
    const [first, second] = Chunk.toArray(events)
    expect(first).toMatchObject({ _tag: "UnknownEvent", event: "future_type", data: { seq: 1 }, id: "1" })
    expect(second).toMatchObject({ seq: 2, event: { type: "console_log" } })
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("telemetry resumes a dropped connection with Last-Event-ID: no duplicate, no gap", async () => {
    set((_req, res, attempt) => {
      sse(res)
      if (attempt === 1) {
        res.write(frame(telemetry(1), "id: 1\n"))
        res.write(frame(telemetry(2), "id: 2\n"))
        setTimeout(() => res.socket?.destroy(), 20)
      } else if (attempt === 2) {
        // the server repeats the last one: dropped
        res.write(frame(telemetry(2), "id: 2\n"))
        res.write(frame(telemetry(3), "id: 3\n"))
        res.end()
      } else {
        res.write(frame(telemetry(4), "id: 4\n"))
        res.write(frame(telemetry(6), "id: 6\n"))
      }
    })
    const seqs: Array<number> = []
    const error = failureOf(
      await run(
        transport,
        Effect.flatMap(
          Telemetry.stream({ id: "b1" }),
          (s) => Stream.runForEach(s, (e) => Effect.sync(() => seqs.push(KernelEvents.isUnknownEvent(e) ? -1 : e.seq)))
        )
      )
    )
    expect(seqs).toEqual([1, 2, 3, 4])
    expect(lastEventIds).toEqual([undefined, "2", "3"])
    expect(error).toMatchObject({ _tag: "DecodeError" })
    expect((error as { message: string }).message).toMatch(/gap: expected seq 5, got 6/)
  })
})
