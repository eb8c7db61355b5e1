/**
 * Interruption at random points, on every transport, for every streaming operation of the
 * generated table: each event stream, each download (as a stream and through `downloadToFile`) and
 * each upload. The fiber is interrupted at seeded random moments of a phase the server reached
 * (before the response head, in the middle of it, after the first bytes or events, in the middle of
 * the body; an upload also at once, 0-5 ms after its start, with its head in and none of its body read,
 * and during its body) and then:
 * - the interruption returns (no hang) and the fiber ends interrupted (nothing failed or ended first);
 * - every socket that carried the request is closed promptly (undici may open a spare idle
 *   connection after an abort mid-body on Node 22, nodejs/undici#5845: it carried no request and is
 *   not counted);
 * - no temporary file (nor the destination) remains after a `downloadToFile`;
 * - a file on disk being uploaded is closed, and a caller's `Stream` body's scope (its finalizer).
 *
 * The client's layer is built once per transport (its connection pool lives through the file), so
 * a socket left open by the SDK is seen as open (a layer torn down would close it for us).
 */
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import * as Sdk from "effect-kernel"
import { KernelFiles, Replays } from "effect-kernel"
import * as fs from "node:fs"
import type * as Http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll, beforeAll } from "vitest"
import { examples } from "./generated/examples.js"
import { httpServer, loopbackLayer } from "./utils/loopback.js"
import { openMp4Head } from "./utils/mp4.js"
import { random } from "./utils/random.js"
import { transports } from "./utils/transports.js"

// ---------------------------------------------------------------------------------------------
// the operations, from the generated table
// ---------------------------------------------------------------------------------------------

const at = "2026-01-01T00:00:00Z"
/** One event of each event stream that does not end it (telemetry's carries its seq). */
const eventOf: Readonly<Record<string, (i: number) => unknown>> = {
  followInvocation: () => ({ event: "log", timestamp: at, message: "x" }),
  followDeployment: () => ({ event: "log", timestamp: at, message: "x" }),
  followAuthConnection: () => ({
    event: "managed_auth_state",
    timestamp: at,
    flow_status: "IN_PROGRESS",
    flow_step: "DISCOVERING"
  }),
  streamFilesystemEvents: () => ({ type: "CREATE", path: "/tmp/a" }),
  streamProcessStdout: () => ({ stream: "stdout", data_b64: Buffer.from("hi").toString("base64") }),
  streamLogs: () => ({ event: "log", timestamp: at, message: "x" }),
  streamTelemetry: (i) => ({
    seq: i + 1,
    event: { type: "console_log", ts: i, source: { kind: "cdp" }, category: "console" }
  })
}

/** Each upload's params with `upload` in its file field. */
const uploadParams: Readonly<Record<string, (upload: KernelFiles.Upload) => unknown>> = {
  loadBrowserExtensions: (upload) => ({ id: "b1", extensions: [{ zip_file: upload, name: "ext" }] }),
  createDeployment: (upload) => ({ file: upload, entrypoint_rel_path: "src/app.py" }),
  writeFile: (upload) => ({ id: "b1", path: "/tmp/x", contents: upload }),
  uploadFiles: (upload) => ({ id: "b1", files: [{ file: upload, dest_path: "/tmp/a" }] }),
  uploadZip: (upload) => ({ id: "b1", zip_file: upload, dest_path: "/tmp/x" }),
  uploadExtension: (upload) => ({ file: upload })
}

const sseOps = examples.filter((e) => e.answers.includes("sse"))
const downloadOps = examples.filter((e) => e.answers.includes("bytes"))
const uploadOps = examples.filter((e) => e.body === "multipart" || e.body === "bytes")

it("the table's streaming operations are all here: 7 event streams, 7 downloads, 6 uploads", () => {
  expect(sseOps.map((e) => e.name).sort()).toEqual(Object.keys(eventOf).sort())
  expect(downloadOps).toHaveLength(7)
  expect(uploadOps.map((e) => e.name).sort()).toEqual(Object.keys(uploadParams).sort())
})

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u && !Effect.isEffect(u)

type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>

/** What an accessor gives, as an effect (its stream not run yet). */
const call = (module: string, accessor: string, params: unknown): Effect.Effect<unknown, unknown, Provided> => {
  const area: unknown = Reflect.get(Sdk, module)
  const fn: unknown = typeof area === "object" && area !== null ? Reflect.get(area, accessor) : undefined
  if (typeof fn !== "function") throw new Error(`no accessor ${module}.${accessor}`)
  const result: unknown = fn(params)
  if (isStream(result)) return Effect.succeed(result)
  if (!Effect.isEffect(result)) throw new Error(`${module}.${accessor}: neither an Effect nor a Stream`)
  // the accessors need the services of Kernel.layer (provided by the test)
  return result as Effect.Effect<unknown, unknown, Provided>
}

/** The stream a download accessor gives (a binary outcome's `value`: `Profiles.download`'s `Ok`). */
const bytesOf = (module: string, accessor: string, params: unknown) =>
  Stream.unwrap(Effect.flatMap(call(module, accessor, params), (value) => {
    if (isStream(value)) return Effect.succeed(value)
    const inner: unknown = typeof value === "object" && value !== null ? Reflect.get(value, "value") : undefined
    return isStream(inner) ? Effect.succeed(inner) : Effect.die(`${module}.${accessor}: no stream in ${String(value)}`)
  })).pipe(Stream.filter((u): u is Uint8Array => u instanceof Uint8Array))

// ---------------------------------------------------------------------------------------------
// one loopback server for the file
// ---------------------------------------------------------------------------------------------

type Phase =
  | "before head"
  | "mid-head"
  | "first bytes"
  | "mid-body"
  | "at once"
  | "upload head"
  | "upload body"
  | "upload sent"
  | "resuming"

interface Plan {
  readonly phase: Phase
  readonly kind: "sse" | "bytes" | "upload"
  readonly event?: ((i: number) => unknown) | undefined
  /** mid-body: chunks sent before the phase is reached; upload body: bytes received before. */
  readonly count: number
  readonly reached: () => void
}

let plan: Plan | undefined
let carried: Array<net.Socket> = []
const timers: Array<NodeJS.Timeout> = []
/** Requests whose body the server stopped reading (read again once the client was interrupted). */
let paused: Array<Http.IncomingMessage> = []

const frame = (data: unknown, id?: number) =>
  `${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`

const answer = (req: Http.IncomingMessage, res: Http.ServerResponse, p: Plan) => {
  if (p.phase === "before head" || p.phase === "upload sent") return p.reached()
  if (p.phase === "mid-head") {
    const type = p.kind === "sse" ? "text/event-stream" : "application/octet-stream"
    req.socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${type}\r\ncache-con`)
    return p.reached()
  }
  if (p.phase === "resuming") {
    // one event, then the connection drops: telemetry waits for its schedule to resume it
    res.writeHead(200, { "content-type": "text/event-stream" })
    res.write(frame(p.event?.(0), 1))
    setTimeout(() => {
      req.socket.destroy()
      p.reached()
    }, 5)
    return
  }
  if (p.kind === "upload") {
    // an upload's answer never comes: the phases above are the ones that matter
    return p.reached()
  }
  res.writeHead(
    200,
    p.kind === "sse"
      ? { "content-type": "text/event-stream" }
      : { "content-type": "application/octet-stream", "content-length": String(64 * 1024 * 1024) }
  )
  let sent = 0
  const chunk = (): string | Uint8Array =>
    p.kind === "sse" ? frame(p.event?.(sent), sent + 1) : sent === 0 ? openMp4Head() : new Uint8Array(16 * 1024)
  res.write(chunk())
  sent++
  if (p.phase === "first bytes") p.reached()
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer)
    res.write(chunk())
    sent++
    if (p.phase === "mid-body" && sent === p.count) p.reached()
  }, 3)
  timers.push(timer)
  res.on("close", () => clearInterval(timer))
}

const handler: Http.RequestListener = (req, res) => {
  carried.push(req.socket)
  res.on("error", () => {})
  req.on("error", () => {})
  const p = plan
  if (p === undefined) return void res.end()
  if (p.kind !== "upload") {
    req.resume()
    return answer(req, res, p)
  }
  if (p.phase === "upload head" || p.phase === "at once") {
    // the request's head, and none of its body read: the client may not have started sending it
    paused.push(req)
    req.pause()
    return p.reached()
  }
  if (p.phase === "upload body") {
    // read a part of the body, then stop reading: the client is held in the middle of sending it
    let received = 0
    let stopped = false
    req.on("data", (data: Buffer) => {
      received += data.length
      if (received >= p.count && !stopped) {
        stopped = true
        paused.push(req)
        req.pause()
        p.reached()
      }
    })
    return
  }
  req.resume()
  req.on("end", () => answer(req, res, p))
}

const scope = Effect.runSync(Scope.make())
let port = 0
let dir = ""
let bigFile = ""
beforeAll(async () => {
  const served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  port = Number(new URL(served.url).port)
  dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-interruption-"))
  bigFile = nodePath.join(dir, "upload.bin")
  fs.writeFileSync(bigFile, new Uint8Array(16 * 1024 * 1024))
})
afterAll(async () => {
  for (const timer of timers) clearInterval(timer)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dir, { recursive: true, force: true })
})

const seedOf = (text: string) => {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619)
  return h
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const within = <A>(ms: number, promise: Promise<A>, what: string): Promise<A> =>
  Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`${what}: still waiting after ${ms} ms`)))])

/** The file descriptors of this process open on `path` (Linux; `[]` where /proc is not there). */
const openOn = (path: string): Array<string> => {
  if (!fs.existsSync("/proc/self/fd")) return []
  const out: Array<string> = []
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === path) out.push(fd)
    } catch {
      // closed meanwhile
    }
  }
  return out
}

const leftovers = () => fs.readdirSync(dir).filter((name) => name !== "upload.bin")

// ---------------------------------------------------------------------------------------------
// the cases
// ---------------------------------------------------------------------------------------------

interface Case {
  readonly name: string
  readonly kind: Plan["kind"]
  readonly phases: ReadonlyArray<Phase>
  readonly event?: ((i: number) => unknown) | undefined
  /** The program, given a fresh destination path. */
  readonly program: (target: string) => Effect.Effect<unknown, unknown, Provided>
  readonly target?: true
  /** A file on disk being read by the program. */
  readonly reads?: true
  /** A body whose scope the program opens ({@link bodyScopes}): closed by the interruption. */
  readonly scoped?: true
}

/** The scopes of the `Stream` bodies: opened when the stream runs, closed when its run ends. */
const bodyScopes = { opened: 0, closed: 0 }

/** A caller's endless `Stream` body with a finalizer (its run counted in {@link bodyScopes}). */
const scopedBody = (): Stream.Stream<Uint8Array> =>
  Stream.unwrapScoped(Effect.as(
    Effect.acquireRelease(
      Effect.sync(() => bodyScopes.opened++),
      () => Effect.sync(() => bodyScopes.closed++)
    ),
    Stream.repeatEffect(Effect.as(Effect.sleep("1 millis"), new Uint8Array(32 * 1024)))
  ))

const answerPhases: ReadonlyArray<Phase> = ["before head", "mid-head", "first bytes", "mid-body"]

const cases: ReadonlyArray<Case> = [
  ...sseOps.map((e): Case => ({
    name: `${e.module}.${e.accessor}`,
    kind: "sse",
    // telemetry is also interrupted while it waits to resume a dropped connection
    phases: e.name === "streamTelemetry" ? [...answerPhases, "resuming"] : answerPhases,
    event: eventOf[e.name],
    program: () =>
      Effect.flatMap(
        call(e.module, e.accessor, e.params),
        (stream) => isStream(stream) ? Stream.runDrain(stream) : Effect.die("not a stream")
      )
  })),
  ...downloadOps.flatMap((e): Array<Case> => [
    {
      name: `${e.module}.${e.accessor}`,
      kind: "bytes",
      phases: answerPhases,
      program: () => Stream.runDrain(bytesOf(e.module, e.accessor, e.params))
    },
    {
      name: `KernelFiles.downloadToFile(${e.module}.${e.accessor})`,
      kind: "bytes",
      phases: answerPhases,
      target: true,
      program: (target) => KernelFiles.downloadToFile(bytesOf(e.module, e.accessor, e.params), target)
    }
  ]),
  {
    name: "Replays.downloadToFile",
    kind: "bytes",
    phases: answerPhases,
    target: true,
    program: (target) => Replays.downloadToFile({ id: "b1", replayId: "r1" }, target)
  },
  ...uploadOps.flatMap((e): Array<Case> => {
    const params = uploadParams[e.name]!
    return [
      {
        name: `${e.module}.${e.accessor} (a file on disk)`,
        kind: "upload",
        // a fetch interrupted at once leaves the file open only now and then: tried three times
        phases: [
          "at once",
          "at once",
          "at once",
          "upload head",
          "upload body",
          "upload body",
          "upload sent",
          "mid-head"
        ],
        reads: true,
        program: () => call(e.module, e.accessor, params(KernelFiles.file(bigFile)))
      },
      {
        name: `${e.module}.${e.accessor} (a Stream)`,
        kind: "upload",
        phases: ["at once", "upload head", "upload body"],
        scoped: true,
        program: () => call(e.module, e.accessor, params(scopedBody()))
      }
    ]
  })
]

describe.each(transports)("interrupted at random points over $name", (transport) => {
  let context: Context.Context<Provided> | undefined
  const layerScope = Effect.runSync(Scope.make())
  beforeAll(async () => {
    context = await Effect.runPromise(
      Layer.buildWithScope(Layer.merge(loopbackLayer(port, transport.layer), NodeFileSystem.layer), layerScope)
    )
  })
  afterAll(() => Effect.runPromise(Scope.close(layerScope, Exit.void)))

  for (const c of cases) {
    it(`${c.name}: ${[...new Set(c.phases)].join(", ")}`, async () => {
      // INTERRUPTION_SEED=x explores other points (the default ones run in CI)
      const next = random(seedOf(`${process.env.INTERRUPTION_SEED ?? ""}${transport.name} ${c.name}`))
      let n = 0
      for (const phase of c.phases) {
        n++
        const where = `${c.name}, ${phase} (#${n})`
        const target = nodePath.join(dir, `${transport.name}-${n}.out`)
        let reached!: () => void
        const reachedPromise = new Promise<void>((resolve) => (reached = resolve))
        carried = []
        plan = {
          phase,
          kind: c.kind,
          event: c.event,
          count: phase === "mid-body" ? 2 + Math.floor(next() * 30) : 64 * 1024 + Math.floor(next() * 1024 * 1024),
          reached
        }
        // what an earlier run left open is its own failure, not this run's
        const scopesBefore = { ...bodyScopes }
        const openBefore = c.reads === true ? openOn(bigFile) : []
        const openNow = () => openOn(bigFile).filter((fd) => !openBefore.includes(fd))
        const fiber = Effect.runFork(Effect.provide(c.program(target), context!))
        // at once: 0-5 ms after the start, before the server may have seen the request
        if (phase === "at once") reached()
        const ended = Effect.runPromise(Fiber.await(fiber))
        const first = await within(5_000, Promise.race([reachedPromise.then(() => "reached" as const), ended]), where)
        if (first !== "reached") {
          throw new Error(
            `${where}: the fiber ended before the phase: ${
              Exit.isFailure(first) ? Cause.pretty(first.cause) : "success"
            }`
          )
        }
        await sleep(Math.floor(next() * (phase === "at once" ? 6 : 20)))
        const interruptAt = Date.now()
        const exit = await within(3_000, Effect.runPromise(Fiber.interrupt(fiber)), `${where}: interrupting`)
        if (process.env.DEBUG_INTERRUPT) console.log(where, "interrupted in", Date.now() - interruptAt, "ms")
        if (!Exit.isInterrupted(exit)) {
          throw new Error(`${where}: not interrupted: ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "success"}`)
        }
        plan = undefined
        const requests = carried.length
        // the server reads again (a paused socket would not see the client close it)
        for (const req of paused) req.resume()
        paused = []
        // the sockets that carried the request are closed promptly (interrupted at once, the request
        // may never have reached the server, or reach it only after the interruption)
        const start = Date.now()
        const freed = () =>
          (carried.length > 0 || phase === "at once") && carried.every((socket) => socket.destroyed || socket.closed)
        if (phase === "at once") await sleep(50)
        while (!freed() && Date.now() - start < 2_000) await sleep(10)
        expect(freed(), `${where}: the sockets that carried it (${carried.length}) closed`).toBe(true)
        // nothing was sent after the interruption (a resumption, a retry)
        await sleep(phase === "resuming" ? 300 : 0)
        if (phase !== "at once") expect(carried, `${where}: no request after the interruption`).toHaveLength(requests)
        if (c.target === true) {
          expect(leftovers(), `${where}: no file left`).toEqual([])
        }
        if (c.reads === true) {
          const readStart = Date.now()
          // a close waits for the read in flight, which waits for a thread of libuv's pool: 5 s, as a
          // full run's 256 MiB uploads beside it once kept it past 2 s
          while (openNow().length > 0 && Date.now() - readStart < 5_000) await sleep(10)
          expect(openNow(), `${where}: the uploaded file closed`).toEqual([])
        }
        if (c.scoped === true) {
          const closeStart = Date.now()
          const opened = () => bodyScopes.opened - scopesBefore.opened
          const closed = () => bodyScopes.closed - scopesBefore.closed
          while (closed() < opened() && Date.now() - closeStart < 2_000) await sleep(10)
          expect(opened(), `${where}: the body's scope opened once at most`).toBeLessThanOrEqual(1)
          expect(closed(), `${where}: the body's scope closed`).toBe(opened())
        }
      }
    }, 30_000)
  }
})
