import type { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, Layer, Option, Stream } from "effect"
import { BrowserPools, Computer, Deployments, type Kernel, KernelError, Replays } from "effect-kernel"
import * as fs from "node:fs"
import * as path from "node:path"
import * as util from "node:util"
import { loopbackLayer, rawServer } from "./utils/loopback.js"
import { tempDir } from "./utils/tempDir.js"
import { transports } from "./utils/transports.js"

const sentinel = "SENTINEL_loopback_4242"
const runsPerTransport = 1_000

/** Random and adversarial raw HTTP responses: status lines, headers, framing, bodies. */
const statusLine = fc.oneof(
  fc.constantFrom(200, 201, 202, 204, 206, 301, 400, 401, 403, 404, 409, 429, 500, 502, 999).map((s) =>
    `HTTP/1.1 ${s} X`
  ),
  fc.constantFrom("HTTP/1.1 200", "HTTP/1.0 200 OK", "HTTP/1.1 abc OK", "garbage", "HTTP/1.1 200 OK\u0000")
)
const header = fc.oneof(
  fc.constantFrom(
    "content-type: application/json",
    "content-type: video/mp4",
    "content-type: text/html",
    "content-encoding: gzip",
    "retry-after: 0",
    "retry-after: -1",
    "retry-after: 99999999999",
    "x-should-retry: true",
    "transfer-encoding: chunked",
    "content-length: 5",
    "content-length: 999999",
    "content-length: abc",
    "connection: close"
  ),
  fc.tuple(fc.stringMatching(/^[a-z-]{1,12}$/), fc.string({ maxLength: 30 })).map(([k, v]) =>
    `${k}: ${v.replace(/[\r\n]/g, "")}`
  )
)
const deep = (n: number) => "[".repeat(n) + "]".repeat(n)
const body = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom(
    `{"x":1,"y":2}`,
    `{"ok":true}`,
    `{"code":"c","message":"m"}`,
    deep(6000),
    `{"x":${deep(20000)}}`,
    `{"code":"${"c".repeat(100_000)}","message":"${"m".repeat(100_000)}"}`,
    `{"x":"${"x".repeat(300_000)}","y":1}`,
    "\u0000\u0001binary",
    ""
  ),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString("latin1"))
)
const response = fc.record({
  status: statusLine,
  headers: fc.array(header, { maxLength: 5 }),
  body,
  framing: fc.constantFrom("length", "close", "chunked", "cut", "reset")
})
type RawResponse = typeof response extends fc.Arbitrary<infer A> ? A : never

const write = (socket: import("node:net").Socket, r: RawResponse) => {
  const payload = Buffer.from(r.body, "latin1")
  const lines = [r.status, ...r.headers.filter((h) => !/^(content-length|transfer-encoding|connection):/i.test(h))]
  switch (r.framing) {
    case "length":
      socket.write(`${lines.join("\r\n")}\r\ncontent-length: ${payload.length}\r\n\r\n`)
      socket.write(payload)
      return
    case "close":
      socket.write(`${lines.join("\r\n")}\r\nconnection: close\r\n\r\n`)
      socket.end(payload)
      return
    case "chunked":
      socket.write(`${lines.join("\r\n")}\r\ntransfer-encoding: chunked\r\n\r\n`)
      if (payload.length > 0) {
        socket.write(`${payload.length.toString(16)}\r\n`)
        socket.write(payload)
        socket.write("\r\n")
      }
      socket.write("0\r\n\r\n")
      return
    case "cut":
      socket.write(`${lines.join("\r\n")}\r\ncontent-length: ${payload.length + 100}\r\n\r\n`)
      socket.end(payload)
      return
    case "reset":
      socket.write(`${lines.join("\r\n")}\r\n\r\n`)
      socket.write(payload, () => socket.resetAndDestroy())
      return
  }
}

const documented = new Set<string>(KernelError.tags)

describe("socket-level property: any raw response gives a documented tag or success", () => {
  for (const transport of transports) {
    it.live(
      `${transport.name}: ${runsPerTransport} random responses to every operation`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          let current: RawResponse | undefined
          const { port } = yield* rawServer(({ socket }) => {
            if (current === undefined) socket.destroy()
            else write(socket, current)
          })
          const dir = tempDir("effect-kernel-socket-")
          const layer = Layer.fresh(
            loopbackLayer(port, transport.layer, { timeout: "1 second", idleTimeout: "1 second" })
          )
          const operations: ReadonlyArray<
            Effect.Effect<unknown, { readonly _tag: string }, Kernel.Services | FileSystem.FileSystem>
          > = [
            Computer.getMousePosition({ id: "b" }),
            Computer.setCursorVisibility({ id: "b", hidden: true }),
            BrowserPools.list(),
            Deployments.delete({ id: "d" }),
            Replays.download({ id: "b", replayId: "r" }, { maxWait: "0 millis" }).pipe(Stream.runDrain),
            Replays.downloadToFile({ id: "b", replayId: "r" }, path.join(dir, "replay.mp4"), { maxWait: "0 millis" })
          ]
          yield* Effect.gen(function*() {
            const samples = fc.sample(fc.tuple(response, fc.nat(operations.length - 1)), {
              numRuns: runsPerTransport,
              seed: 11
            })
            for (const [raw, which] of samples) {
              current = raw
              const started = Date.now()
              const exit = yield* Effect.exit(operations[which]!)
              expect(Date.now() - started).toBeLessThan(10_000)
              if (Exit.isFailure(exit)) {
                expect(Cause.isDie(exit.cause), Cause.pretty(exit.cause)).toBe(false)
                const error = Option.getOrThrow(Cause.failureOption(exit.cause))
                expect(documented.has(error._tag), error._tag).toBe(true)
                for (const text of [String(error), JSON.stringify(error), util.inspect(error, { depth: 6 })]) {
                  expect(text).not.toContain(sentinel)
                  expect(text.length).toBeLessThan(20_000)
                }
                // no partial or final file after a failed download
                expect(fs.readdirSync(dir)).toEqual([])
              } else {
                fs.rmSync(path.join(dir, "replay.mp4"), { force: true })
              }
            }
          }).pipe(Effect.provide(Layer.merge(layer, NodeFileSystem.layer)))
        })),
      120_000
    )
  }
})
