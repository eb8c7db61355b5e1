/**
 * Review 81 (a hostile server against the uploads): a `Stream` body whose byte arrays come in one
 * chunk (`Stream.fromIterable(buffers)`) keeps its deadline moving while the server takes it (it was
 * cut by `timeout` once it had been handed over whole); a file whose path is not a string (an
 * untyped caller's missing setting) is `InvalidInput`, not a throw. Each case failed before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { Extensions, Filesystem, KernelFiles } from "effect-kernel"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { mockLayer } from "./utils/mock.js"
import { transports } from "./utils/transports.js"

const MiB = 1024 * 1024
const piece = MiB
// far more than the sockets' buffers hold (which take a small body at once, and whose tail the server
// then reads with no progress the client can see)
const pieces = 64

// reads a body steadily, a MiB every 40 ms (about 2.6 s for the whole), then answers 201
const served = fileHttpServer((request, response) => {
  request.on("data", (chunk: Buffer) => {
    request.pause()
    setTimeout(() => request.resume(), Math.ceil((chunk.length / piece) * 40))
  })
  request.on("end", () => response.writeHead(201, { "content-length": "0" }).end())
})

describe("a Stream body of one chunk keeps its deadline moving while it is taken", () => {
  for (const transport of transports) {
    it.live(
      `${transport.name}: ${pieces} byte arrays in one chunk, a steady reader, timeout 1 s`,
      () =>
        Effect.gen(function*() {
          const body = Stream.fromIterable(Array.from({ length: pieces }, () => new Uint8Array(piece).fill(7)))
          const started = Date.now()
          yield* Filesystem.writeFile({ id: "b1", path: "/a.bin", contents: body })
          // the upload outlived the time-out: the deadline moved with the reads
          expect(Date.now() - started).toBeGreaterThan(1000)
        }).pipe(
          Effect.provide(loopbackLayer(served.port(), transport.layer, { timeout: "1 second", maxRetries: 0 }))
        ),
      20_000
    )
  }
})

describe("KernelFiles.file with a path that is not a string", () => {
  for (const path of [undefined, 123, null]) {
    it.effect(`${String(path)}: InvalidInput, nothing sent`, () => {
      const { layer, requests } = mockLayer(() => new Response(null, { status: 500 }))
      return Effect.gen(function*() {
        // an untyped caller (a setting read from the environment that was never set)
        const untyped = KernelFiles.file as (path: unknown) => KernelFiles.FileSource
        const source = yield* Effect.sync(() => untyped(path))
        const upload = yield* Effect.flip(Extensions.upload({ name: "ext", file: source }))
        const write = yield* Effect.flip(Filesystem.writeFile({ id: "b1", path: "/a", contents: source }))
        expect([upload._tag, write._tag]).toEqual(["InvalidInput", "InvalidInput"])
        expect(write.message).toContain("must be a string")
        expect(requests).toHaveLength(0)
      }).pipe(Effect.provide(layer))
    })
  }
})
