import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { Filesystem, KernelFiles } from "effect-kernel"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll } from "vitest"
import { openOn } from "./utils/descriptors.js"
import { httpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// A server that answers an upload (201) before it has read the body: the call succeeds, and the
// body's source is released all the same — the file closed, the stream's finalizers run, nothing
// pulled after. On fetch the body kept being sent by a fiber nothing ended: its file stayed open and
// its stream's scope never closed (the answer, read whole, ended the attempt without its body's run).
const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-early-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe.each(transports)("an upload answered before its body was read, over $name", (transport) => {
  it.live("the file is closed and the stream's finalizers run; the calls succeed", () =>
    Effect.scoped(Effect.gen(function*() {
      const path = nodePath.join(dir, `${transport.name}.bin`)
      fs.writeFileSync(path, Buffer.alloc(16 * 1024 * 1024, 7))
      const served = yield* httpServer((_req, res) => {
        setTimeout(() => {
          res.writeHead(201, { "content-length": "0" })
          res.end()
        }, 50)
      })
      let finalized = 0
      let pulledAfter = 0
      let answered = false
      const endless = Stream.repeatEffect(Effect.sync(() => {
        if (answered) pulledAfter++
        return new Uint8Array(64 * 1024)
      })).pipe(Stream.ensuring(Effect.sync(() => finalized++)))
      const exit = yield* Effect.exit(Effect.provide(
        Effect.all([
          Filesystem.writeFile({ id: "b1", path: "/file", contents: KernelFiles.file(path) }),
          Filesystem.writeFile({ id: "b1", path: "/stream", contents: endless }),
          Filesystem.upload({ id: "b1", files: [{ file: KernelFiles.file(path), dest_path: "/multipart" }] })
        ]).pipe(Effect.tap(() => answered = true)),
        loopbackLayer(Number(new URL(served.url).port), transport.layer, { timeout: "5 seconds" })
      ))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(finalized).toBe(1)
      // closed before the call returns (docs/events-and-files.md)
      expect(openOn(path)).toBe(0)
      yield* Effect.sleep("100 millis")
      expect(pulledAfter).toBe(0)
    })))
})
