import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Scope } from "effect"
import { Filesystem, KernelFiles } from "effect-kernel"
import * as fs from "node:fs"
import type * as Http from "node:http"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll, beforeAll } from "vitest"
import { httpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

// A file on disk that changes while it is being sent: the bytes sent must be the file as it was
// measured (its declared length) or the call fails with a TransportError saying so; never a
// different file uploaded as if nothing happened (fetch sends a stream body without a length).
const MiB = 1024 * 1024
let change = () => {}
let received: Array<{ readonly bytes: number; readonly complete: boolean }> = []
const handler: Http.RequestListener = (req, res) => {
  let bytes = 0
  let first = true
  req.on("data", (chunk: Buffer) => {
    bytes += chunk.length
    if (first) {
      // the first bytes are in: the file changes while the rest is on its way
      first = false
      req.pause()
      change()
      setTimeout(() => req.resume(), 20)
    }
  })
  req.on("error", () => received.push({ bytes, complete: false }))
  req.on("end", () => {
    received.push({ bytes, complete: true })
    res.writeHead(201, { "content-length": "0" })
    res.end()
  })
}
const scope = Effect.runSync(Scope.make())
let port = 0
let dir = ""
beforeAll(async () => {
  const served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  port = Number(new URL(served.url).port)
  dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-changed-"))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dir, { recursive: true, force: true })
})

const size = 16 * MiB
const cases: ReadonlyArray<{ readonly name: string; readonly act: (path: string) => void }> = [
  { name: "shrinks", act: (path) => fs.truncateSync(path, 3 * MiB) },
  { name: "grows", act: (path) => fs.appendFileSync(path, Buffer.alloc(MiB, 3)) }
]

describe.each(transports)("a file that changes while it is sent over $name", (transport) => {
  it.each(cases)("it $name: a TransportError naming the change, the server never sees a complete body", async ({
    act,
    name
  }) => {
    const path = nodePath.join(dir, `${transport.name}-${name}.bin`)
    fs.writeFileSync(path, Buffer.alloc(size, 1))
    change = () => act(path)
    received = []
    const exit = await Effect.runPromiseExit(
      Effect.provide(
        Filesystem.writeFile({ id: "b1", path: "/x", contents: KernelFiles.file(path) }),
        loopbackLayer(port, transport.layer, { timeout: "10 seconds" })
      )
    )
    if (Exit.isSuccess(exit)) {
      // only a file that grew after its measured length was sent whole may still succeed (the
      // transport had its declared bytes, the answer came before the read past them): the server
      // then has exactly those bytes
      expect(name).toBe("grows")
      expect(received.filter((r) => r.complete)).toEqual([{ bytes: size, complete: true }])
      return
    }
    const failure = Cause.failureOption(exit.cause)
    expect(Option.isSome(failure)).toBe(true)
    expect(Option.getOrThrow(failure)).toMatchObject({ _tag: "TransportError", method: "PUT" })
    expect(Option.getOrThrow(failure).message).toContain(`${nodePath.basename(path)} changed while it was being sent`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(received.filter((r) => r.complete && r.bytes !== size)).toEqual([])
  })
})
