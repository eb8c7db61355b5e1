/**
 * The simulator's limits on what it is sent and what it keeps: uploads (multipart or raw bytes)
 * have their own, larger body limit than JSON bodies; a body over it is a 413 the SDK reads (not a
 * reset while it is still sending); the bytes the world stores are bounded by a budget.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted, Scope, Stream } from "effect"
import { Browsers, Extensions, Filesystem, Kernel, KernelConfig, KernelFiles } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { transports } from "./utils/transports.js"

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  if (Exit.isSuccess(exit)) return "Success"
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) ? failure.value : `defect: ${Cause.pretty(exit.cause)}`
}

const token = "sk_sim_limits"
const seed: KernelSimulator.Seed = {
  organizations: [{ id: "org_limits", token, browsers: [{ id: "b1" }] }]
}

const mib = 1024 * 1024

// one loopback server for the file, with the default limits; files on disk, uploaded as streams
// (sent as fast as the socket takes them: a server that resets the connection is met mid-write)
const scope = Effect.runSync(Scope.make())
let url = ""
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "simulator-limits-"))
const fileOf = (name: string, bytes: number) => {
  const path = Path.join(dir, name)
  Fs.writeFileSync(path, new Uint8Array(bytes))
  return path
}
let overLimit = ""
let overSmallLimit = ""
beforeAll(async () => {
  const served = await Effect.runPromise(Scope.extend(KernelSimulator.serve({ seed }), scope))
  url = served.url
  // the default upload limit is 16 MiB
  overLimit = fileOf("17mib.bin", 17 * mib)
  overSmallLimit = fileOf("3mib.bin", 3 * mib + 512 * 1024)
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  Fs.rmSync(dir, { recursive: true, force: true })
})

const over = (layer: (typeof transports)[number]["layer"]) =>
  Kernel.layer.pipe(
    Layer.provide(
      Layer.unwrapEffect(Effect.sync(() => KernelConfig.layer({ apiKey: Redacted.make(token), baseUrl: url })))
    ),
    Layer.provide(layer)
  )

const size = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>) => Stream.runFold(bytes, 0, (n, chunk) => n + chunk.length)

describe("simulator over HTTP: uploads", () => {
  for (const transport of transports) {
    it.live(`${transport.name}: an 8 MiB writeFile is stored whole`, () =>
      Effect.gen(function*() {
        const contents = new Uint8Array(8 * mib).fill(7)
        yield* Filesystem.writeFile({ id: "b1", path: `/big-${transport.name}.bin`, contents })
        expect(yield* size(Filesystem.readFileStream({ id: "b1", path: `/big-${transport.name}.bin` }))).toBe(8 * mib)
        yield* Filesystem.deleteFile({ id: "b1", path: `/big-${transport.name}.bin` })
      }).pipe(Effect.provide(over(transport.layer))), 30_000)

    it.live(
      `${transport.name}: an upload over the limit is the 413 (payload_too_large), not a reset`,
      () =>
        Effect.gen(function*() {
          expect(KernelSimulator.defaultMaxUploadBytes).toBe(16 * mib)
          for (const contents of [KernelFiles.file(overLimit), new Uint8Array(17 * mib)]) {
            const exit = yield* Effect.exit(Filesystem.writeFile({ id: "b1", path: "/too-big.bin", contents }))
            expect(failureOf(exit)).toMatchObject({ _tag: "UnexpectedStatus", status: 413, code: "payload_too_large" })
          }
          // nothing was written, and the server goes on answering
          const info = yield* Effect.exit(Filesystem.fileInfo({ id: "b1", path: "/too-big.bin" }))
          expect(failureOf(info)).toMatchObject({ _tag: "NotFound" })
        }).pipe(Effect.provide(over(transport.layer))),
      30_000
    )
  }

  it("a JSON body keeps its 64 KiB limit", async () => {
    const response = await fetch(`${url}/browsers`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ chrome_policy: { HomepageLocation: "x".repeat(70 * 1024) } })
    })
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({
      code: "payload_too_large",
      message: "request bodies are limited to 65536 bytes"
    })
  })

  it.live(
    "a client still sending a body up to 4× the limit reads the 413 (the rest is discarded)",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const small = yield* KernelSimulator.serve({ seed, maxUploadBytes: mib })
        const exit = yield* Effect.exit(
          Filesystem.writeFile({ id: "b1", path: "/x.bin", contents: KernelFiles.file(overSmallLimit) }).pipe(
            Effect.provide(
              Kernel.layer.pipe(
                Layer.provide(KernelConfig.layer({ apiKey: Redacted.make(token), baseUrl: small.url })),
                Layer.provide(transports.find((t) => t.name === "kernel")!.layer)
              )
            )
          )
        )
        expect(failureOf(exit)).toMatchObject({ _tag: "UnexpectedStatus", status: 413, code: "payload_too_large" })
        // the message names the limit in force
        expect(failureOf(exit)).toMatchObject({ message: expect.stringContaining(`${mib} bytes`) })
      })),
    30_000
  )
})

describe("simulator in memory: uploads", () => {
  it.effect("the upload limit holds in memory too; Browsers.create is a JSON body", () =>
    Effect.gen(function*() {
      const { session_id: id } = yield* Browsers.create({})
      yield* Filesystem.writeFile({ id, path: "/ok.bin", contents: new Uint8Array(2 * 1024) })
      const exit = yield* Effect.exit(
        Filesystem.writeFile({ id, path: "/no.bin", contents: new Uint8Array(4 * 1024 + 1) })
      )
      expect(failureOf(exit)).toMatchObject({ _tag: "UnexpectedStatus", status: 413 })
    }).pipe(
      Effect.provide(Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(seed, { maxUploadBytes: 4 * 1024 }))))
    ))
})

describe("simulator: the budget of stored bytes", () => {
  const budget = 10_000
  const refused = { _tag: "BadRequest", message: `the simulator holds at most ${budget} bytes of files and uploads` }
  const bytes = (n: number) => new Uint8Array(n).fill(1)
  /** A ZIP archive of `n` bytes (no entry: its end record, then a comment filling it): an extension is one. */
  const zipOf = (n: number) => {
    const archive = new Uint8Array(n).fill(0x20)
    archive.set([
      0x50,
      0x4b,
      0x05,
      0x06,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      (n - 22) & 0xff,
      (n - 22) >> 8
    ])
    return archive
  }

  it.effect("files, zips and uploads count; a write beyond is a 400 (nothing evicted); freeing makes room", () =>
    Effect.gen(function*() {
      expect(KernelSimulator.defaultMaxStoredBytes).toBe(256 * mib)
      const { session_id: a } = yield* Browsers.create({})
      const { session_id: b } = yield* Browsers.create({})
      yield* Filesystem.writeFile({ id: a, path: "/one.bin", contents: bytes(6000) })
      // another browser's write counts against the same budget
      const second = yield* Effect.exit(Filesystem.writeFile({ id: b, path: "/two.bin", contents: bytes(6000) }))
      expect(failureOf(second)).toMatchObject(refused)
      expect(failureOf(yield* Effect.exit(Filesystem.fileInfo({ id: b, path: "/two.bin" })))).toMatchObject({
        _tag: "NotFound"
      })
      // the first file is still there (refusing evicts nothing); overwriting it counts its new size only
      yield* Filesystem.writeFile({ id: a, path: "/one.bin", contents: bytes(9000) })
      expect((yield* Filesystem.fileInfo({ id: a, path: "/one.bin" })).size_bytes).toBe(9000)
      // an upload kept by a resource counts
      const extension = yield* Effect.exit(Extensions.upload({ file: zipOf(2000), name: "ext" }))
      expect(failureOf(extension)).toMatchObject(refused)
      // deleting the file frees its bytes
      yield* Filesystem.deleteFile({ id: a, path: "/one.bin" })
      yield* Extensions.upload({ file: zipOf(2000), name: "ext" })
      yield* Filesystem.writeFile({ id: b, path: "/two.bin", contents: bytes(6000) })
      // 8000 held: a file of 3000 does not fit
      expect(failureOf(yield* Effect.exit(Filesystem.writeFile({ id: a, path: "/x", contents: bytes(3000) }))))
        .toMatchObject(refused)
      // a browser deleted takes its files along
      yield* Browsers.delete({ id: b })
      yield* Filesystem.writeFile({ id: a, path: "/x", contents: bytes(7000) })
    }).pipe(
      Effect.provide(Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(seed, { maxStoredBytes: budget }))))
    ))

  it.effect("a zip whose entries would not fit is refused whole", () =>
    Effect.gen(function*() {
      const { session_id: id } = yield* Browsers.create({})
      // the zip of a directory holding one 600-byte file: extracted, a second copy would hold 1200 bytes
      const zipped = yield* Stream.runFold(
        Effect.gen(function*() {
          yield* Filesystem.writeFile({ id, path: "/d/a.bin", contents: bytes(600) })
          return Filesystem.downloadDirZipStream({ id, path: "/d" })
        }).pipe(Stream.unwrap),
        new Uint8Array(0),
        (all, chunk) => new Uint8Array([...all, ...chunk])
      )
      const exit = yield* Effect.exit(Filesystem.uploadZip({ id, zip_file: zipped, dest_path: "/copy" }))
      expect(failureOf(exit)).toMatchObject({
        _tag: "BadRequest",
        message: "the simulator holds at most 1000 bytes of files and uploads"
      })
      expect(failureOf(yield* Effect.exit(Filesystem.fileInfo({ id, path: "/copy" })))).toMatchObject({
        _tag: "NotFound"
      })
    }).pipe(
      Effect.provide(Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(seed, { maxStoredBytes: 1000 }))))
    ))

  it.live("over HTTP too: the bin's world is bounded by the same budget", () =>
    Effect.scoped(Effect.gen(function*() {
      const small = yield* KernelSimulator.serve({ seed, maxStoredBytes: budget })
      const response = yield* Effect.promise(() =>
        fetch(`${small.url}/browsers/b1/fs/write_file?path=/big.bin`, {
          method: "PUT",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
          body: bytes(budget + 1)
        })
      )
      expect(response.status).toBe(400)
      expect(yield* Effect.promise(() => response.json())).toMatchObject({
        code: "bad_request",
        message: refused.message
      })
    })))
})
