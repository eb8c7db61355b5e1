/**
 * The event streams against a hostile SSE server, on every transport (one loopback server for the
 * file): what a server may send that the SDK must still answer with a value or a typed error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, type Layer, Option, Schedule, Scope, Stream } from "effect"
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

type Script = (res: Http.ServerResponse, attempt: number, req: Http.IncomingMessage) => void
let script: Script = (res) => res.end()
let attempts = 0
const scope = Effect.runSync(Scope.make())
let served: Served
let port = 0
beforeAll(async () => {
  served = await Effect.runPromise(Scope.extend(
    httpServer((req, res) => {
      res.on("error", () => {})
      script(res, ++attempts, req)
    }),
    scope
  ))
  port = Number(new URL(served.url).port)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const set = (next: Script) => {
  script = next
  attempts = 0
}
const sse = (res: Http.ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" })
const frame = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`
const at = "2026-01-01T00:00:00Z"

type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>
const run = <A, E>(transport: (typeof transports)[number], effect: Effect.Effect<A, E, Provided>) =>
  Effect.runPromiseExit(Effect.provide(effect, loopbackLayer(port, transport.layer)))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure: ${Cause.pretty(exit.cause)}`)
  return failure.value
}

type Events = Stream.Stream<unknown, KernelError.KernelError>

/** A process stream's value as a test compares it: `stdout:hi`, `exit:2`, `unknown`. */
const shown = (event: KernelEvents.ProcessOutput | KernelEvents.UnknownEvent) =>
  KernelEvents.isUnknownEvent(event)
    ? "unknown"
    : event._tag === "Exit"
    ? `exit:${event.exitCode}`
    : `${event.stream}:${new TextDecoder().decode(event.data)}`
const open = (accessor: Effect.Effect<Events, KernelError.KernelError, Provided>) => accessor

/** Each event stream: one event of it (a valid one, not terminal). */
const streams: ReadonlyArray<
  {
    readonly name: string
    readonly event: unknown
    readonly open: () => Effect.Effect<Events, KernelError.KernelError, Provided>
  }
> = [
  {
    name: "Deployments.follow",
    event: { event: "log", timestamp: at, message: "x" },
    open: () => open(Deployments.follow({ id: "d1" }))
  },
  {
    name: "Invocations.follow",
    event: { event: "log", timestamp: at, message: "x" },
    open: () => open(Invocations.follow({ id: "i1" }))
  },
  {
    name: "AuthConnections.follow",
    event: { event: "managed_auth_state", timestamp: at, flow_status: "IN_PROGRESS", flow_step: "DISCOVERING" },
    open: () => open(AuthConnections.follow({ id: "a1" }))
  },
  {
    name: "Logs.stream",
    event: { event: "log", timestamp: at, message: "x" },
    open: () => open(Logs.stream({ id: "b1", source: "path", path: "/x" }))
  },
  {
    name: "FilesystemWatch.events",
    event: { type: "CREATE", path: "/tmp/a" },
    open: () => open(FilesystemWatch.events({ id: "b1", watchId: "w1" }))
  },
  {
    name: "Processes.stdoutStream",
    event: { stream: "stdout", data_b64: "aGk=" },
    open: () => open(Processes.stdoutStream({ id: "b1", processId: "5c0ffee0-0000-4000-8000-000000000001" }))
  },
  {
    name: "Telemetry.stream",
    event: { seq: 1, event: { type: "console_log", ts: 1, source: { kind: "cdp" }, category: "console" } },
    open: () => open(Telemetry.stream({ id: "b1" }))
  }
]

describe.each(transports)("event streams against a hostile server, over $name", (transport) => {
  it.each(streams)("$name: an sse_heartbeat event never reaches the caller, nor fails the stream", async (stream) => {
    set((res) => {
      sse(res)
      res.write(`event: sse_heartbeat\n${frame({ event: "sse_heartbeat", timestamp: at })}`)
      res.write(frame({ event: "sse_heartbeat", timestamp: at }))
      // named by the frame's event field alone, its data empty or not JSON
      res.write("event: sse_heartbeat\ndata:\n\n")
      res.write("event: sse_heartbeat\ndata: ping\n\n")
      res.write(frame(stream.event))
    })
    const exit = await run(transport, Effect.flatMap(stream.open(), (s) => Stream.runCollect(Stream.take(s, 1))))
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    expect(Chunk.toArray(exit.value)).toHaveLength(1)
    expect(KernelEvents.isUnknownEvent(Chunk.unsafeHead(exit.value))).toBe(false)
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  const deep = (n: number) => "[".repeat(n) + "]".repeat(n)
  const auth = (extra: string) =>
    `{"event":"managed_auth_state","timestamp":"${at}","flow_status":"IN_PROGRESS","flow_step":"DISCOVERING",${extra}}`
  it.each([
    ["an array nested 200,000 deep where an array of objects goes", auth(`"discovered_fields":${deep(200_000)}`)],
    [
      "an object nested 100,000 deep where a string goes",
      auth(`"website_error":${"{\"a\":".repeat(100_000)}1${"}".repeat(100_000)}`)
    ],
    [
      "an error event with deep details",
      `{"event":"error","timestamp":"${at}","error":{"code":"c","message":"m","details":${deep(200_000)}}}`
    ]
  ])("a stream whose events may carry secrets, %s: a DecodeError, never a defect", async (_, data) => {
    set((res) => {
      sse(res)
      res.write(frame(auth(`"flow_type":"LOGIN"`)))
      res.write(frame(data))
    })
    let seen = 0
    const exit = await run(
      transport,
      Effect.flatMap(AuthConnections.follow({ id: "a1" }), (s) => Stream.runForEach(s, () => Effect.sync(() => seen++)))
    )
    const error = failureOf(exit)
    expect(error).toMatchObject({ _tag: "DecodeError" })
    expect(seen).toBe(1)
  })

  it.each([
    ["with its last bytes", { event: "exit", exit_code: 2, stream: "stderr", data_b64: "Ynll" }, [
      "stderr:bye",
      "exit:2"
    ]],
    ["without bytes", { event: "exit", exit_code: 0 }, ["exit:0"]],
    ["with empty bytes", { event: "exit", exit_code: 0, stream: "stdout", data_b64: "" }, ["exit:0"]]
  ])("a process's exit event %s: its bytes are told before the exit, never dropped", async (_, exitEvent, told) => {
    set((res) => {
      sse(res)
      res.write(frame({ stream: "stdout", data_b64: "aGk=" }))
      res.write(frame(exitEvent))
    })
    const exit = await run(
      transport,
      Effect.flatMap(
        Processes.stdoutStream({ id: "b1", processId: "5c0ffee0-0000-4000-8000-000000000001" }),
        Stream.runCollect
      )
    )
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    expect(Chunk.toArray(exit.value).map(shown)).toEqual(["stdout:hi", ...told])
  })

  // the service's process stream may end with the process without its `exit` event (its writer stops once
  // the process is done): the process's status then tells the exit; anything else stays a drop, saying
  // what the status said. The status is asked once (the layer retries 3 times), within the call's
  // timeout (400 ms here; 5 s at most): a process's status is kept 10 s after its exit
  it.each(
    [
      ["exited, with its code", 200, { state: "exited", exit_code: 3, cpu_pct: 0 }, "exit:3"],
      ["exited, without a code", 200, { state: "exited" }, "exit:undefined"],
      ["exited, its code null", 200, { state: "exited", exit_code: null }, "exit:undefined"],
      // an exit code the `exit` event's schema refuses (an integer): before, taken as it was
      [
        "exited, its code a fraction",
        200,
        { state: "exited", exit_code: 1.5 },
        "the process's status says exit code 1.5, not an integer"
      ],
      [
        "exited, its code out of range",
        200,
        "{\"state\":\"exited\",\"exit_code\":1e400}",
        "the process's status says exit code Infinity, not an integer"
      ],
      [
        "exited, its code a string",
        200,
        { state: "exited", exit_code: "0" },
        `the process's status says exit code "0", not an integer`
      ],
      ["still running", 200, { state: "running", cpu_pct: 0 }, `the process's status says "running"`],
      [
        "gone (404)",
        404,
        { code: "not_found", message: "process not found" },
        "the process's status answered 404"
      ],
      ["not JSON", 200, "<html>", "the process's status could not be read (DecodeError)"],
      [
        "unavailable (503)",
        503,
        { code: "unavailable", message: "later" },
        "the process's status answered 503"
      ],
      ["never answered", 0, "", "the process's status could not be read (Timeout)"]
    ] as const
  )("a process's stream that ends without its exit, the status %s", async (_, status, answer, told) => {
    const paths: Array<string> = []
    set((res, _attempt, req) => {
      paths.push(req.url ?? "")
      if (req.url?.endsWith("/status") === true) {
        if (status === 0) return
        res.writeHead(status, { "content-type": "application/json" })
        return res.end(typeof answer === "string" ? answer : JSON.stringify(answer))
      }
      sse(res)
      res.end(frame({ stream: "stdout", data_b64: "aGk=" }))
    })
    const started = Date.now()
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(
        Processes.stdoutStream({ id: "b1", processId: "5c0ffee0-0000-4000-8000-000000000001" }),
        Stream.runCollect
      ).pipe(Effect.provide(loopbackLayer(port, transport.layer, { maxRetries: 3, timeout: "400 millis" })))
    )
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(paths).toEqual([
      "/browsers/b1/process/5c0ffee0-0000-4000-8000-000000000001/stdout/stream",
      "/browsers/b1/process/5c0ffee0-0000-4000-8000-000000000001/status"
    ])
    if (!told.startsWith("exit:")) {
      expect(failureOf(exit)).toMatchObject({
        _tag: "TransportError",
        message: expect.stringContaining(
          `ended before its terminal event (the connection was closed by the server; ${told})`
        )
      })
      return
    }
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    expect(Chunk.toArray(exit.value).map(shown)).toEqual(["stdout:hi", told])
  })

  it("telemetry: a connection that brings no new seq is no progress, whatever else it brings (the schedule is not started over)", async () => {
    set((res, attempt) => {
      sse(res)
      if (attempt === 1) res.write(frame(streams[6]!.event))
      // an event without a seq, delivered on every connection, then a drop
      res.write(frame({ seq: 0, event: { type: "future_kind" } }))
      res.write(frame({ event: { type: "future_kind" } }))
      setTimeout(() => res.socket?.destroy(), 5)
    })
    const exit = await run(
      transport,
      Effect.flatMap(Telemetry.stream({ id: "b1" }), (s) =>
        s.pipe(
          Stream.provideService(
            KernelEvents.ResumeSchedule,
            Schedule.spaced("5 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
          ),
          Stream.take(50),
          Stream.runCollect
        ))
    )
    expect(failureOf(exit)).toMatchObject({ _tag: "TransportError" })
    expect(attempts).toBe(4)
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })
})
