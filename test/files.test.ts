import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, type Layer, Option, Scope, Stream } from "effect"
import { Computer, Extensions, Filesystem, type KernelError, KernelFiles, Profiles } from "effect-kernel"
import * as fs from "node:fs"
import type * as Http from "node:http"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll, beforeAll } from "vitest"
import { httpServer, loopbackLayer, type Served, waitUntil } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// one loopback server for the file: `script` answers each request (set per test)
type Script = (req: Http.IncomingMessage, res: Http.ServerResponse) => void
let script: Script = (_req, res) => res.end()
let paths: Array<string> = []
const handler: Http.RequestListener = (req, res) => {
  paths.push(req.url ?? "")
  res.on("error", () => {})
  req.resume()
  script(req, res)
}
const scope = Effect.runSync(Scope.make())
let served: Served
let port = 0
let dir = ""
beforeAll(async () => {
  served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  port = Number(new URL(served.url).port)
  dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-files-"))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dir, { recursive: true, force: true })
})

const set = (next: Script) => {
  script = next
  paths = []
}

type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>
const run = <A, E>(
  transport: (typeof transports)[number],
  effect: Effect.Effect<A, E, Provided>,
  options: Parameters<typeof loopbackLayer>[2] = {}
) =>
  Effect.runPromiseExit(
    Effect.provide(effect, loopbackLayer(port, transport.layer, options)).pipe(Effect.provide(NodeFileSystem.layer))
  )

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

const payload = (size: number) => {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff
  return bytes
}

/** Serves `bytes` in 16 KiB chunks (`cut`: only that many, then the connection is destroyed). */
const serve =
  (bytes: Uint8Array, contentType: string, options: { cut?: number; stall?: number } = {}): Script => (_req, res) => {
    res.writeHead(200, { "content-type": contentType, "content-length": String(bytes.length) })
    const end = options.cut ?? options.stall ?? bytes.length
    let sent = 0
    const pump = () => {
      while (sent < end) {
        const next = Math.min(end, sent + 16 * 1024)
        const ok = res.write(bytes.subarray(sent, next))
        sent = next
        if (!ok) return void res.once("drain", pump)
      }
      if (options.cut !== undefined) setTimeout(() => res.socket?.destroy(), 20)
      else if (options.stall === undefined) res.end()
    }
    pump()
  }

const leftovers = () => fs.readdirSync(dir).filter((name) => name.endsWith(".partial"))

/** The binary accessors, each as an effect of its stream. */
const downloads: ReadonlyArray<{
  readonly name: string
  readonly type: string
  readonly get: () => Effect.Effect<
    Stream.Stream<Uint8Array, KernelError.KernelError>,
    KernelError.KernelError,
    Provided
  >
}> = [
  {
    name: "Filesystem.readFile",
    type: "application/octet-stream",
    get: () => Filesystem.readFile({ id: "b1", path: "/tmp/f" })
  },
  {
    name: "Filesystem.downloadDirZip",
    type: "application/zip",
    get: () => Filesystem.downloadDirZip({ id: "b1", path: "/tmp" })
  },
  { name: "Computer.captureScreenshot", type: "image/png", get: () => Computer.captureScreenshot({ id: "b1" }) },
  {
    name: "Extensions.download",
    type: "application/octet-stream",
    get: () => Extensions.download({ idOrName: "ext" })
  },
  {
    name: "Extensions.downloadFromChromeStore",
    type: "application/octet-stream",
    get: () => Extensions.downloadFromChromeStore({ url: "https://chromewebstore.google.com/detail/x" })
  },
  {
    name: "Profiles.download (Ok)",
    type: "application/octet-stream",
    get: () =>
      Effect.flatMap(
        Profiles.download({ idOrName: "p1" }),
        (outcome) => outcome._tag === "Ok" ? Effect.succeed(outcome.value) : Effect.die("no saved state")
      )
  }
]

describe.each(transports)("downloads over $name", (transport) => {
  for (const download of downloads) {
    it(`${download.name}: downloadToFile, atomic, with progress and its total`, async () => {
      const bytes = payload(300 * 1024 + 17)
      set(serve(bytes, download.type))
      const target = nodePath.join(dir, `${transport.name}-${download.name}.bin`)
      const progress: Array<{ bytes: number; total: number | undefined }> = []
      const written = valueOf(
        await run(
          transport,
          KernelFiles.downloadToFile(download.get(), target, {
            onProgress: (p) => Effect.sync(() => progress.push(p))
          })
        )
      )
      expect(written).toEqual({ path: target, bytes: bytes.length })
      expect(Buffer.compare(fs.readFileSync(target), Buffer.from(bytes))).toBe(0)
      expect(progress.at(-1)).toEqual({ bytes: bytes.length, total: bytes.length })
      expect(progress.every((p) => p.total === bytes.length)).toBe(true)
      expect(leftovers()).toEqual([])
    })
  }

  it("a body cut short is a TransportError and never a file", async () => {
    set(serve(payload(200 * 1024), "application/octet-stream", { cut: 100 * 1024 }))
    const target = nodePath.join(dir, `${transport.name}-cut.bin`)
    const error = failureOf(
      await run(transport, KernelFiles.downloadToFile(Filesystem.readFile({ id: "b1", path: "/x" }), target))
    )
    expect(error).toMatchObject({ _tag: "TransportError" })
    expect(fs.existsSync(target)).toBe(false)
    expect(leftovers()).toEqual([])
  })

  it("a stalled body fails with Timeout after idleTimeout, no file left", async () => {
    set(serve(payload(200 * 1024), "image/png", { stall: 50 * 1024 }))
    const target = nodePath.join(dir, `${transport.name}-stall.png`)
    const error = failureOf(
      await run(transport, KernelFiles.downloadToFile(Computer.captureScreenshot({ id: "b1" }), target), {
        idleTimeout: "300 millis"
      })
    )
    expect(error).toMatchObject({ _tag: "Timeout" })
    expect(fs.existsSync(target)).toBe(false)
    expect(leftovers()).toEqual([])
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("an interrupted downloadToFile leaves no file and no socket", async () => {
    set(serve(payload(200 * 1024), "application/zip", { stall: 50 * 1024 }))
    const target = nodePath.join(dir, `${transport.name}-interrupted.zip`)
    const program = Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        KernelFiles.downloadToFile(Filesystem.downloadDirZip({ id: "b1", path: "/" }), target)
      )
      yield* Effect.sleep("150 millis")
      yield* Fiber.interrupt(fiber)
    })
    valueOf(await run(transport, program))
    expect(fs.existsSync(target)).toBe(false)
    expect(leftovers()).toEqual([])
    expect(await Effect.runPromise(waitUntil(() => served.open() === 0))).toBe(true)
  })

  it("a profile's 202 (no saved state) is the Accepted outcome", async () => {
    set((_req, res) => {
      res.writeHead(202)
      res.end()
    })
    expect(valueOf(await run(transport, Profiles.download({ idOrName: "p1" })))).toEqual({ _tag: "Accepted" })
    set((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ code: "not_found", message: "no such profile" }))
    })
    expect(failureOf(await run(transport, Profiles.download({ idOrName: "p1" })))).toMatchObject({
      _tag: "NotFound"
    })
  })

  it("a profile's body is a stream read as it arrives", async () => {
    const bytes = payload(64 * 1024)
    set(serve(bytes, "application/octet-stream"))
    const got = valueOf(
      await run(
        transport,
        Effect.flatMap(
          Profiles.download({ idOrName: "p1" }),
          (outcome) => outcome._tag === "Ok" ? Stream.runCollect(outcome.value) : Effect.succeed(Chunk.empty())
        )
      )
    )
    expect(Buffer.concat(Chunk.toArray(got)).equals(Buffer.from(bytes))).toBe(true)
  })
})
