import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { Filesystem, KernelFiles } from "effect-kernel"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll } from "vitest"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// `downloadToFile` onto what is already at its path: a file keeps its permissions (a profile
// written over a 0600 file stayed readable by its owner only; the rename left a new file of mode
// 0666 & ~umask there), and the old file is kept whole when the download fails; a directory is
// refused before anything is sent (the whole body was downloaded before its rename failed).
let requests = 0
let cut = false
const body = new Uint8Array(100 * 1024).fill(3)
const server = fileHttpServer((req, res) => {
  requests++
  req.resume()
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) })
  if (!cut) return void res.end(body)
  res.write(body.subarray(0, 1000))
  setTimeout(() => res.socket?.destroy(), 20)
})
const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-target-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const modeOf = (path: string) => fs.statSync(path).mode & 0o7777
const leftovers = () => fs.readdirSync(dir).filter((name) => name.endsWith(".partial"))

const cases = [
  { name: "a 0600 file, the download complete", existing: 0o600, cut: false },
  { name: "a 0640 file, the download complete", existing: 0o640, cut: false },
  { name: "a 0755 file, the download complete", existing: 0o755, cut: false },
  { name: "a 0600 file, the download cut short", existing: 0o600, cut: true }
]

describe.each(transports)("downloadToFile onto an existing path over $name", (transport) => {
  const download = (target: string) =>
    Effect.runPromiseExit(Effect.provide(
      KernelFiles.downloadToFile(Filesystem.readFile({ id: "b1", path: "/f" }), target),
      loopbackLayer(server.port(), transport.layer)
    ))

  it.each(cases)("$name: the file keeps its mode; replaced only when complete", async (c) => {
    const target = nodePath.join(dir, `${transport.name}-${c.existing.toString(8)}-${c.cut}`)
    fs.writeFileSync(target, "old")
    fs.chmodSync(target, c.existing)
    cut = c.cut
    const exit = await download(target)
    expect(Exit.isSuccess(exit)).toBe(!c.cut)
    expect(fs.readFileSync(target).length).toBe(c.cut ? 3 : body.length)
    expect(modeOf(target).toString(8)).toBe(c.existing.toString(8))
    expect(leftovers()).toEqual([])
  })

  // it was data-first only: `download.pipe(KernelFiles.downloadToFile(path))` did not compile
  it("data-last in a pipe, with its options: the same file", async () => {
    const target = nodePath.join(dir, `${transport.name}-piped`)
    cut = false
    const progress: Array<number> = []
    const exit = await Effect.runPromiseExit(Effect.provide(
      Filesystem.readFile({ id: "b1", path: "/f" }).pipe(
        KernelFiles.downloadToFile(target, { onProgress: ({ bytes }) => Effect.sync(() => progress.push(bytes)) })
      ),
      loopbackLayer(server.port(), transport.layer)
    ))
    expect(exit).toMatchObject({ _tag: "Success", value: { path: target, bytes: body.length } })
    expect(fs.readFileSync(target)).toEqual(Buffer.from(body))
    expect(progress.at(-1)).toBe(body.length)
    // an untyped caller's path that is no string (a URL), data-last: InvalidInput, never a thrown TypeError
    const name: string = "downloadToFile"
    const untyped: (path: unknown) => (download: Stream.Stream<Uint8Array>) => Effect.Effect<unknown, unknown> = Reflect
      .get(KernelFiles, name)
    const refused = await Effect.runPromiseExit(
      Effect.provide(Stream.make(new Uint8Array([1])).pipe(untyped(new URL("file:///tmp/x"))), NodeFileSystem.layer)
    )
    expect(refused).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "InvalidInput", field: "path" } } })
    // and a download that is no stream (bytes): InvalidInput, never a defect
    const bytes: (download: unknown) => Effect.Effect<unknown, unknown> = Reflect.get(KernelFiles, name)("/tmp/x")
    const notStream = await Effect.runPromiseExit(Effect.provide(bytes(new Uint8Array([1])), NodeFileSystem.layer))
    expect(notStream).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "InvalidInput", field: "download" } } })
  })

  it("a directory: InvalidInput, nothing sent, the directory untouched", async () => {
    const target = nodePath.join(dir, `${transport.name}-dir`)
    fs.mkdirSync(target)
    fs.writeFileSync(nodePath.join(target, "inside"), "x")
    cut = false
    requests = 0
    const exit = await download(target)
    expect(exit).toMatchObject({
      _tag: "Failure",
      cause: { _tag: "Fail", error: { _tag: "InvalidInput", field: "path" } }
    })
    expect(requests).toBe(0)
    expect(fs.readdirSync(target)).toEqual(["inside"])
    expect(leftovers()).toEqual([])
  })
})
