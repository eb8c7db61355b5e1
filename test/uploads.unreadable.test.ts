import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { Filesystem, type KernelError, KernelFiles } from "effect-kernel"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll } from "vitest"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// A file on disk that exists but cannot be read is refused as InvalidInput before anything is sent,
// like a missing file: before, its size was measured (stat succeeds) and each attempt's open failed,
// a TransportError retried with back-off (and, in a multipart form, after its first parts were sent).
let requests = 0
const server = fileHttpServer((req, res) => {
  requests++
  req.resume()
  req.on("end", () => res.writeHead(201, { "content-length": "0" }).end())
})
const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-unreadable-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const noMode = nodePath.join(dir, "mode-000.bin")
fs.writeFileSync(noMode, "secret")
fs.chmodSync(noMode, 0o000)
const root = process.getuid?.() === 0

const cases = [
  // root reads a file whatever its mode
  { name: "a file of mode 000", path: noMode, runs: !root },
  // a write-only attribute cannot be opened for reading, even by root (where sysfs has one)
  { name: "a write-only sysfs attribute", path: "/sys/bus/pci/rescan", runs: fs.existsSync("/sys/bus/pci/rescan") }
]
type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>
const uploads: ReadonlyArray<{
  readonly name: string
  readonly call: (path: string) => Effect.Effect<unknown, KernelError.KernelError, Provided>
}> = [
  {
    name: "Filesystem.writeFile (raw body)",
    call: (path: string) => Filesystem.writeFile({ id: "b1", path: "/x", contents: KernelFiles.file(path) })
  },
  {
    name: "Filesystem.upload (multipart)",
    call: (path: string) =>
      Filesystem.upload({
        id: "b1",
        files: [{ file: new Uint8Array(10), dest_path: "/a" }, { file: KernelFiles.file(path), dest_path: "/b" }]
      })
  }
]

describe.each(transports)("an unreadable file over $name", (transport) => {
  for (const c of cases) {
    it.runIf(c.runs).each(uploads)(
      `${c.name}, $name: InvalidInput, nothing sent, no retry`,
      (upload) =>
        Effect.runPromise(Effect.gen(function*() {
          requests = 0
          const started = Date.now()
          const error = yield* Effect.flip(Effect.provide(
            upload.call(c.path),
            loopbackLayer(server.port(), transport.layer, { maxRetries: 3 })
          ))
          expect(error).toMatchObject({ _tag: "InvalidInput" })
          expect(error.message).toContain(c.path)
          expect(requests).toBe(0)
          // at once: no retry's back-off (seconds to spare for a loaded CI machine's pauses)
          expect(Date.now() - started).toBeLessThan(2_500)
        }))
    )
  }
})
