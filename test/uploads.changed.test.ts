import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { Filesystem, KernelFiles } from "effect-kernel"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import type * as Http from "node:http"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll } from "vitest"
import { openOn } from "./utils/descriptors.js"
import { httpServer, loopbackLayer, waitUntil } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// A file on disk while it is being sent: if it changes, the bytes sent are the file as it was
// measured (its declared length) or the call fails with a TransportError saying so, never a
// different file uploaded as if nothing happened (fetch sends a stream body without a length);
// however the upload ends, the file's descriptor is closed.
const MiB = 1024 * 1024
const size = 16 * MiB
const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-changed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

interface Case {
  readonly name: string
  /** Done to the file once the server has the first bytes. */
  readonly act: (path: string) => void
  /** Whether the server stops reading there (the attempt then times out). */
  readonly stall?: boolean
  /** What the call ends with: a TransportError whose message has this, or a Timeout. */
  readonly expected: { readonly _tag: "TransportError"; readonly says: string } | { readonly _tag: "Timeout" }
}
const changed = { _tag: "TransportError", says: "changed while it was being sent" } as const
const cases: ReadonlyArray<Case> = [
  { name: "shrinks", act: (path) => fs.truncateSync(path, 3 * MiB), expected: changed },
  { name: "grows", act: (path) => fs.appendFileSync(path, Buffer.alloc(MiB, 3)), expected: changed },
  { name: "is not read further (time-out)", act: () => {}, stall: true, expected: { _tag: "Timeout" } }
]

describe.each(transports)("a file on disk sent over $name", (transport) => {
  it.each(cases)(
    "$name: the expected failure, no other body complete, its descriptor closed",
    (c) =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const path = nodePath.join(dir, `${transport.name}-${c.name}.bin`)
        fs.writeFileSync(path, Buffer.alloc(size, 1))
        const complete: Array<number> = []
        const handler: Http.RequestListener = (req, res) => {
          let bytes = 0
          req.once("data", () => {
            // the first bytes are in: the file changes while the rest is on its way
            req.pause()
            c.act(path)
            if (c.stall !== true) setTimeout(() => req.resume(), 20)
          })
          req.on("data", (chunk: Buffer) => bytes += chunk.length)
          req.on("end", () => {
            complete.push(bytes)
            res.writeHead(201, { "content-length": "0" })
            res.end()
          })
        }
        const served = yield* httpServer(handler)
        const exit = yield* Effect.exit(Effect.provide(
          Filesystem.writeFile({ id: "b1", path: "/x", contents: KernelFiles.file(path) }),
          loopbackLayer(Number(new URL(served.url).port), transport.layer, { timeout: "1 second" })
        ))
        if (Exit.isSuccess(exit)) {
          // only a file that grew past its measured length may still succeed (the transport had
          // its declared bytes and the answer came before the read past them): the server then
          // has exactly those bytes
          expect(c.name).toBe("grows")
          expect(complete).toEqual([size])
        } else {
          const failure = Option.getOrThrowWith(Cause.failureOption(exit.cause), () => Cause.pretty(exit.cause))
          expect(failure._tag).toBe(c.expected._tag)
          if (c.expected._tag === "TransportError") {
            expect(failure.message).toContain(`${path} ${c.expected.says}`)
          }
          yield* Effect.sleep("50 millis")
          expect(complete.filter((bytes) => bytes !== size)).toEqual([])
        }
        expect(yield* waitUntil(() => openOn(path) === 0)).toBe(true)
      })))
  )
})

describe("a path that is not a regular file", () => {
  const fifo = nodePath.join(dir, "fifo")
  execFileSync("mkfifo", [fifo])
  const paths: ReadonlyArray<{ readonly name: string; readonly path: string }> = [
    { name: "a directory", path: dir },
    { name: "a FIFO (never opened: it would block)", path: fifo },
    { name: "a character device", path: "/dev/zero" },
    { name: "a missing file", path: nodePath.join(dir, "missing") }
  ]
  it.each(paths)(
    "$name: InvalidInput naming the field, nothing sent",
    ({ path }) =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        let requests = 0
        const served = yield* httpServer((_req, res) => {
          requests++
          res.writeHead(201, { "content-length": "0" }).end()
        })
        const error = yield* Effect.flip(Effect.provide(
          Filesystem.writeFile({ id: "b1", path: "/x", contents: KernelFiles.file(path) }),
          loopbackLayer(Number(new URL(served.url).port), transports[0]!.layer)
        ))
        expect(error).toMatchObject({ _tag: "InvalidInput", field: "contents" })
        expect(requests).toBe(0)
      })))
  )
})
