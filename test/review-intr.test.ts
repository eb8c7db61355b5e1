/**
 * Review (interruption): ways of ending a program early other than `Fiber.interrupt` —
 * `Stream.take`, `Stream.interruptWhen`, a failing consumer, `Effect.timeout`, a scope closed early —
 * on every transport, against a loopback `node:http` server; then the server's sockets are all closed,
 * nothing is left next to a `downloadToFile` target, and a second run in the same layer works. And
 * `Browsers.scoped` / `BrowserPools.acquireScoped` over real transports, interrupted while the server
 * holds the create / acquire: the delete / release is sent exactly once. And uploads (a file, a
 * `Stream`, multipart) ended early: the file closed, the socket closed, no body ever complete.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, ManagedRuntime, Scope, Stream } from "effect"
import { BrowserPools, Browsers, Deployments, Filesystem, KernelFiles, Logs, Processes, Replays } from "effect-kernel"
import * as fs from "node:fs"
import type * as Http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll, beforeAll } from "vitest"
import { openOn } from "./utils/descriptors.js"
import { httpServer, loopbackLayer, waitUntil } from "./utils/loopback.js"
import { openMp4Head } from "./utils/mp4.js"
import { transports } from "./utils/transports.js"

const at = "2026-01-01T00:00:00Z"
const log: Array<string> = []
const carried = new Set<net.Socket>()
let createDelay = 0
/** The create / acquire answers 200 with a body that does not decode (it still names its `session_id`). */
let undecodable = false
let createArrived: (() => void) | undefined

/** How an upload's body is read: whole, then 201; or its first 64 KiB, then no more (the client held). */
let uploadMode: "whole" | "stall" = "whole"
/** Each upload's body as the server saw it: whether it ended (complete), and its bytes. */
const uploads: Array<{ ended: boolean; bytes: number; closed: boolean }> = []
/** Requests whose body the server stopped reading: read again once the client gave up (else it never sees the close). */
const paused: Array<Http.IncomingMessage> = []
/** The uploads each socket carried. */
const uploadsOn = new WeakMap<net.Socket, Array<{ closed: boolean }>>()

const handler: Http.RequestListener = (req, res) => {
  res.on("error", () => {})
  req.on("error", () => {})
  // a kept-alive socket carries several requests: its close is listened to once
  if (!carried.has(req.socket)) {
    carried.add(req.socket)
    req.socket.once("close", () => carried.delete(req.socket))
  }
  const url = new URL(req.url ?? "/", "http://x")
  const path = url.pathname
  log.push(`${req.method} ${path}`)
  if (req.method === "PUT" || path.endsWith("/fs/upload") || path.endsWith("/fs/write_file")) {
    const seen = { ended: false, bytes: 0, closed: false }
    uploads.push(seen)
    // marked when its socket closes (one listener per socket: a kept-alive one carries several uploads)
    const onSocket = uploadsOn.get(req.socket)
    if (onSocket !== undefined) onSocket.push(seen)
    else {
      const all = [seen]
      uploadsOn.set(req.socket, all)
      req.socket.once("close", () => {
        for (const upload of all) upload.closed = true
      })
    }
    req.on("data", (data: Buffer) => {
      seen.bytes += data.length
      if (uploadMode === "stall" && seen.bytes >= 64 * 1024 && !req.isPaused()) {
        paused.push(req)
        req.pause()
      }
    })
    req.on("end", () => {
      seen.ended = true
      res.writeHead(201)
      res.end()
    })
    return
  }
  req.resume()
  if (req.method === "POST" && (path === "/browsers" || path.endsWith("/acquire"))) {
    createArrived?.()
    setTimeout(() => {
      if (res.destroyed) return
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({
        created_at: at,
        cdp_ws_url: "wss://cdp.example/x",
        webdriver_ws_url: "wss://bidi.example",
        headless: undecodable ? "yes" : true,
        stealth: false,
        session_id: "b1",
        timeout_seconds: 60
      }))
    }, createDelay)
    return
  }
  if (req.method === "DELETE" || path.endsWith("/release")) {
    res.writeHead(204)
    return void res.end()
  }
  if (path.includes("stream") || path.endsWith("/events")) {
    res.writeHead(200, { "content-type": "text/event-stream" })
    let i = 0
    const event = path.includes("stdout")
      ? () => ({ stream: "stdout", data_b64: Buffer.from("hi").toString("base64") })
      : () => ({ event: "log", timestamp: at, message: `m${i}` })
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer)
      i++
      res.write(`id: ${i}\ndata: ${JSON.stringify(event())}\n\n`)
    }, 2)
    res.on("close", () => clearInterval(timer))
    return
  }
  // a download: a large body, sent slowly
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(64 * 1024 * 1024) })
  res.write(openMp4Head())
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer)
    res.write(new Uint8Array(16 * 1024))
  }, 2)
  res.on("close", () => clearInterval(timer))
}

const scope = Effect.runSync(Scope.make())
let port = 0
let dir = ""
beforeAll(async () => {
  const s = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  port = Number(new URL(s.url).port)
  dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-review-intr-"))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dir, { recursive: true, force: true })
})

type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>
type Bytes = Stream.Stream<unknown, unknown, Provided>
const streams: ReadonlyArray<{ readonly name: string; readonly stream: () => Bytes }> = [
  { name: "Logs.stream", stream: () => Logs.stream({ id: "b1", source: "path", path: "/var/log/app.log" }) },
  {
    name: "Processes.stdoutStream",
    stream: () => Processes.stdoutStream({ id: "b1", processId: "5c0ffee0-0000-4000-8000-000000000001" })
  },
  { name: "Deployments.follow", stream: () => Deployments.follow({ id: "d1" }) },
  { name: "Replays.download", stream: () => Replays.download({ id: "b1", replayId: "r1" }) },
  {
    name: "Filesystem.readFile",
    stream: () => Stream.unwrap(Filesystem.readFile({ id: "b1", path: "/x" }))
  },
  {
    name: "Filesystem.downloadDirZip",
    stream: () => Stream.unwrap(Filesystem.downloadDirZip({ id: "b1", path: "/x" }))
  },
  { name: "Filesystem.readFileStream", stream: () => Filesystem.readFileStream({ id: "b1", path: "/x" }) },
  { name: "Filesystem.downloadDirZipStream", stream: () => Filesystem.downloadDirZipStream({ id: "b1", path: "/x" }) }
]

const ends: ReadonlyArray<
  { readonly name: string; readonly run: (s: Bytes) => Effect.Effect<unknown, unknown, Provided> }
> = [
  { name: "Stream.take(2)", run: (s) => Stream.runDrain(Stream.take(s, 2)) },
  { name: "Stream.interruptWhen", run: (s) => Stream.runDrain(Stream.interruptWhen(s, Effect.sleep("30 millis"))) },
  {
    name: "a failing consumer",
    run: (s) => Effect.either(Stream.runForEach(s, () => Effect.fail("consumer failed")))
  },
  { name: "Effect.timeout", run: (s) => Effect.either(Effect.timeout(Stream.runDrain(s), "40 millis")) },
  {
    name: "a scope closed early",
    run: (s) =>
      Effect.scoped(Effect.gen(function*() {
        const pull = yield* Stream.toPull(s)
        yield* Effect.either(pull)
      }))
  }
]

describe.each(transports)("ended early over $name", (transport) => {
  const runtime = ManagedRuntime.make(Layer.suspend(() => loopbackLayer(port, transport.layer)))
  afterAll(() => runtime.dispose())

  for (const s of streams) {
    for (const end of ends) {
      it(`${s.name}, ${end.name}: every socket closed, and a second run works`, async () => {
        const roots: Array<number> = []
        for (let round = 0; round < 3; round++) {
          const exit = await runtime.runPromiseExit(Effect.timeout(end.run(s.stream()), "5 seconds"))
          expect(Exit.isSuccess(exit), `${s.name} ${end.name} round ${round}: ${String(exit)}`).toBe(true)
          const closed = await Effect.runPromise(waitUntil(() => carried.size === 0))
          expect(closed, `${s.name} ${end.name} round ${round}: ${carried.size} socket(s) open`).toBe(true)
          // no fiber left running (a root fiber: forked as a daemon, or run by the transport)
          // no fiber left running: the root fibers do not grow from one run to the next
          await new Promise((r) => setTimeout(r, 20))
          roots.push(Effect.runSync(Fiber.roots).length)
        }
        expect(roots[2], `root fibers after each run: ${roots.join(", ")}`).toBeLessThanOrEqual(roots[0] ?? 0)
      })
    }
  }

  for (const end of ends) {
    it(`downloadToFile, ${end.name}: no temp file left`, async () => {
      const target = nodePath.join(dir, `${transport.name}-${end.name.replace(/\W/g, "_")}.mp4`)
      const program = KernelFiles.downloadToFile(Replays.download({ id: "b1", replayId: "r1" }), target)
      const exit = await runtime.runPromiseExit(Effect.either(Effect.timeout(program, "40 millis")))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(await Effect.runPromise(waitUntil(() => carried.size === 0))).toBe(true)
      expect(fs.readdirSync(dir).filter((f) => f.startsWith(`${transport.name}-`))).toEqual([])
    })
  }
})

describe.each(transports)("scoped resources interrupted over $name", (transport) => {
  const runtime = ManagedRuntime.make(Layer.suspend(() => loopbackLayer(port, transport.layer)))
  afterAll(() => runtime.dispose())

  const cases: ReadonlyArray<{
    readonly name: string
    readonly make: () => Effect.Effect<unknown, { readonly _tag: string }, Provided | Scope.Scope>
    readonly remove: string
  }> = [
    { name: "Browsers.scoped", make: () => Browsers.scoped({}), remove: "DELETE /browsers/b1" },
    {
      name: "BrowserPools.acquireScoped",
      make: () => BrowserPools.acquireScoped({ idOrName: "pool-1" }),
      remove: "POST /browser_pools/pool-1/release"
    }
  ]
  for (const c of cases) {
    for (const how of ["Fiber.interrupt", "Effect.timeout"] as const) {
      it(`${c.name}, ${how} while the server holds the create: released exactly once`, async () => {
        log.length = 0
        createDelay = 150
        const arrived = Effect.runSync(Deferred.make<void>())
        createArrived = () => Effect.runSync(Deferred.succeed(arrived, undefined))
        const program = Effect.scoped(Effect.flatMap(c.make(), () => Effect.never))
        if (how === "Fiber.interrupt") {
          const fiber = runtime.runFork(program)
          await Effect.runPromise(Deferred.await(arrived))
          const exit = await runtime.runPromise(Fiber.interrupt(fiber))
          expect(Exit.isInterrupted(exit)).toBe(true)
        } else {
          const exit = await runtime.runPromiseExit(Effect.timeout(program, "50 millis"))
          expect(Exit.isFailure(exit)).toBe(true)
        }
        await Effect.runPromise(waitUntil(() => log.includes(c.remove)))
        await new Promise((r) => setTimeout(r, 200))
        expect(log.filter((l) => l === c.remove)).toHaveLength(1)
        createDelay = 0
        createArrived = undefined
      })
    }
  }

  for (const c of cases) {
    it(`${c.name}, its 200 answer does not decode: what it names is released exactly once`, async () => {
      log.length = 0
      undecodable = true
      try {
        const exit = await runtime.runPromiseExit(Effect.scoped(c.make()))
        expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : String(exit)).toBe(
          "DecodeError"
        )
        await Effect.runPromise(waitUntil(() => log.includes(c.remove)))
        await new Promise((r) => setTimeout(r, 100))
        expect(log.filter((l) => l === c.remove)).toHaveLength(1)
      } finally {
        undecodable = false
      }
    })

    it(`${c.name}, Fiber.interrupt after N ms (a sweep, the create held 60 ms): one release per answered create`, async () => {
      createDelay = 60
      try {
        for (const n of [0, 1, 3, 10, 30, 55, 65, 80, 120]) {
          log.length = 0
          const fiber = runtime.runFork(Effect.scoped(Effect.flatMap(c.make(), () => Effect.never)))
          await new Promise((r) => setTimeout(r, n))
          const exit = await runtime.runPromise(Fiber.interrupt(fiber))
          expect(Exit.isInterrupted(exit), `after ${n} ms`).toBe(true)
          await new Promise((r) => setTimeout(r, 150))
          const creates = log.filter((l) => l.startsWith("POST") && !l.endsWith("/release")).length
          expect(log.filter((l) => l === c.remove), `after ${n} ms: ${JSON.stringify(log)}`).toHaveLength(creates)
        }
      } finally {
        createDelay = 0
      }
    })
  }
})

describe.each(transports)("uploads ended early over $name", (transport) => {
  const runtime = ManagedRuntime.make(Layer.suspend(() => loopbackLayer(port, transport.layer)))
  afterAll(() => runtime.dispose())
  let big = ""
  beforeAll(() => {
    big = nodePath.join(dir, `big-${transport.name}.bin`)
    fs.writeFileSync(big, new Uint8Array(8 * 1024 * 1024))
  })

  /** A body that fails after 4 chunks of 16 KiB. */
  const failing = () =>
    Stream.concat(
      Stream.repeatEffect(Effect.as(Effect.sleep("1 millis"), new Uint8Array(16 * 1024))).pipe(Stream.take(4)),
      Stream.fail("the source failed")
    )
  const bodies: ReadonlyArray<{
    readonly name: string
    readonly send: (u: KernelFiles.Upload) => Effect.Effect<void, unknown, Provided>
  }> = [
    { name: "writeFile", send: (u: KernelFiles.Upload) => Filesystem.writeFile({ id: "b1", path: "/x", contents: u }) },
    {
      name: "upload (multipart)",
      send: (u: KernelFiles.Upload) => Filesystem.upload({ id: "b1", files: [{ file: u, dest_path: "/x" }] })
    }
  ]

  for (const b of bodies) {
    it(`${b.name} from a Stream that fails midway: the call fails, the server never sees a complete body`, async () => {
      uploads.length = 0
      uploadMode = "whole"
      const exit = await runtime.runPromiseExit(Effect.timeout(b.send(failing()), "5 seconds"))
      expect(Exit.isFailure(exit), String(exit)).toBe(true)
      await new Promise((r) => setTimeout(r, 100))
      expect(uploads.filter((u) => u.ended), JSON.stringify(uploads)).toEqual([])
      expect(await Effect.runPromise(waitUntil(() => uploads.every((u) => u.closed)))).toBe(true)
      // a second run works
      const again = await runtime.runPromiseExit(b.send(new Uint8Array(100)))
      expect(Exit.isSuccess(again), String(again)).toBe(true)
    })

    for (const how of ["Effect.timeout", "Fiber.interrupt"] as const) {
      it(`${b.name} from a file, ${how} while the server stalls: file closed, socket closed, a second run works`, async () => {
        uploads.length = 0
        uploadMode = "stall"
        try {
          const program = b.send(KernelFiles.file(big))
          if (how === "Effect.timeout") {
            const exit = await runtime.runPromiseExit(Effect.timeout(program, "150 millis"))
            expect(Exit.isFailure(exit)).toBe(true)
          } else {
            const fiber = runtime.runFork(program)
            await Effect.runPromise(waitUntil(() => uploads.some((u) => u.bytes >= 64 * 1024)))
            const exit = await runtime.runPromise(Fiber.interrupt(fiber))
            expect(Exit.isInterrupted(exit), String(exit)).toBe(true)
          }
          expect(await Effect.runPromise(waitUntil(() => openOn(big) === 0)), `${openOn(big)} fd(s) open`).toBe(true)
          uploadMode = "whole"
          paused.splice(0).forEach((req) => req.resume())
          // the socket that carried the upload (an idle one of an earlier test may stay in the pool)
          const t1 = Date.now()
          expect(await Effect.runPromise(waitUntil(() => uploads.every((u) => u.closed))), JSON.stringify(uploads))
            .toBe(
              true
            )
          expect(uploads.filter((u) => u.ended)).toEqual([])
          expect(Date.now() - t1, "closed promptly").toBeLessThan(3_000)
        } finally {
          uploadMode = "whole"
        }
        const again = await runtime.runPromiseExit(b.send(KernelFiles.file(big)))
        expect(Exit.isSuccess(again), String(again)).toBe(true)
        expect(await Effect.runPromise(waitUntil(() => openOn(big) === 0))).toBe(true)
      })
    }
  }

  for (const b of bodies) {
    it(`${b.name} from a file, answered: its file is closed when the call returns`, async () => {
      uploadMode = "whole"
      const still: Array<number> = []
      for (let i = 0; i < 10; i++) {
        const exit = await runtime.runPromiseExit(b.send(KernelFiles.file(big)))
        expect(Exit.isSuccess(exit), String(exit)).toBe(true)
        still.push(openOn(big))
      }
      expect(still).toEqual(still.map(() => 0))
    })
  }

  it("downloadToFile, Fiber.interrupt after N ms (a sweep, 0-120 ms): no temp file, sockets closed, no fiber left", async () => {
    let baseline: number | undefined
    for (const n of [0, 1, 2, 5, 10, 20, 40, 80, 120]) {
      const target = nodePath.join(dir, `sweep-${transport.name}-${n}.mp4`)
      const seen: Array<number> = []
      const fiber = runtime.runFork(
        Replays.downloadToFile({ id: "b1", replayId: "r1" }, target, {
          onProgress: (p) => Effect.sync(() => seen.push(p.bytes))
        })
      )
      await new Promise((r) => setTimeout(r, n))
      const exit = await runtime.runPromise(Fiber.interrupt(fiber))
      expect(Exit.isInterrupted(exit), `after ${n} ms: ${String(exit)}`).toBe(true)
      expect(await Effect.runPromise(waitUntil(() => carried.size === 0)), `after ${n} ms: sockets`).toBe(true)
      expect(fs.readdirSync(dir).filter((f) => f.startsWith(`sweep-${transport.name}-`)), `after ${n} ms`).toEqual([])
      await new Promise((r) => setTimeout(r, 20))
      baseline ??= Effect.runSync(Fiber.roots).length
      expect(Effect.runSync(Fiber.roots).length, `after ${n} ms: root fibers`).toBeLessThanOrEqual(baseline)
    }
  })
})
