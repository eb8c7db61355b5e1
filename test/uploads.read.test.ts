import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, Option, Stream, Supervisor } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll } from "vitest"
import * as Upload from "../src/internal/upload.js"
import { openOn } from "./utils/descriptors.js"

// The reader of a file on disk (`KernelFiles.file(path)`, issue 19): the exact bytes of the file as
// measured, read ahead of the consumer by at most `readAhead` chunks, one read at a time, with no
// fiber of its own (a producer fiber and a queue, `Stream.buffer`, took 2-3× the CPU of the reads
// themselves), and the file closed however the run ends.
const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-read-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const chunk = Upload.readChunkSize
/** The reads of a file of `size` bytes: its first MiB 64 KiB at a time, the rest a chunk at a time. */
const readsOf = (size: number) => {
  const first = Math.min(size, Upload.firstReadsBytes)
  return Math.ceil(first / Upload.firstReadSize) + Math.ceil((size - first) / chunk)
}

/** A file of `size` bytes that are not all one value. */
const makeFile = (name: string, size: number): { readonly path: string; readonly bytes: Buffer } => {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff
  const path = nodePath.join(dir, name)
  fs.writeFileSync(path, bytes)
  return { path, bytes }
}

const collect = (stream: Stream.Stream<Uint8Array, Error>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(Chunk.toArray(chunks)))

describe("Upload.read: a file on disk as a stream", () => {
  it.effect.each([
    0,
    1,
    chunk - 1,
    chunk,
    chunk + 1,
    3 * chunk,
    5 * chunk + 17,
    Upload.firstReadsBytes - 1,
    Upload.firstReadsBytes + 1
  ])(
    "%d bytes: exactly the file's bytes, the file closed",
    (size) =>
      Effect.gen(function*() {
        const { bytes, path } = makeFile(`exact-${size}.bin`, size)
        const read = yield* collect(Upload.read(Upload.file(path), size))
        expect(read.length).toBe(size)
        expect(read.equals(bytes)).toBe(true)
        expect(openOn(path)).toBe(0)
      })
  )

  // the first MiB in 64 KiB reads (a server answering at once is read before the client writes on: see
  // `firstReadSize`), the rest in chunks
  it.effect("hands over its first MiB 64 KiB at a time, then a chunk at a time", () =>
    Effect.gen(function*() {
      const size = Upload.firstReadsBytes + 2 * chunk + 5
      const { path } = makeFile("pieces.bin", size)
      const pieces = Chunk.toArray(yield* Stream.runCollect(Upload.read(Upload.file(path), size))).map((b) => b.length)
      const small = Upload.firstReadsBytes / Upload.firstReadSize
      expect(pieces).toEqual([...Array<number>(small).fill(Upload.firstReadSize), chunk, chunk, 5])
      expect(pieces).toHaveLength(readsOf(size))
    }))

  it.effect("runs no fiber of its own (the read-ahead is the reads' own chaining)", () =>
    Effect.gen(function*() {
      const size = 8 * chunk + 3
      const { bytes, path } = makeFile("fibers.bin", size)
      /** The most fibers alive while a chunk of `stream` is taken, and what it gave. */
      const fibersWhile = (stream: Stream.Stream<Uint8Array, Error>) =>
        Effect.gen(function*() {
          const supervisor = yield* Supervisor.track
          const read: Array<Uint8Array> = []
          let fibers = 0
          yield* Stream.runForEach(stream, (bytes) =>
            Effect.map(supervisor.value, (alive) => {
              read.push(bytes)
              fibers = Math.max(fibers, alive.length)
            })).pipe(Effect.supervised(supervisor))
          return { fibers, read: Buffer.concat(read) }
        })
      // the same count for bytes already in memory: the run's own fibers
      const floor = yield* fibersWhile(Stream.make(bytes.subarray(0, chunk), bytes.subarray(chunk)))
      const file = yield* fibersWhile(Upload.read(Upload.file(path), size))
      expect(file.read.equals(bytes)).toBe(true)
      // Stream.buffer (the reader before) ran a producer fiber and its own: 2 more
      expect(file.fibers).toBe(floor.fibers)
    }))

  it.live("reads ahead of a consumer that waits, by at most readAhead chunks, one read at a time", () =>
    Effect.gen(function*() {
      const size = 32 * chunk
      const { path } = makeFile("ahead.bin", size)
      const handle = yield* Effect.promise(() => fs.promises.open(path, "r"))
      const prototype: { read: (...args: Array<unknown>) => Promise<unknown> } = Object.getPrototypeOf(handle)
      yield* Effect.promise(() => handle.close())
      const original = prototype.read
      let started = 0
      let inFlight = 0
      let maxInFlight = 0
      prototype.read = function(this: unknown, ...args: Array<unknown>) {
        started++
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        return original.apply(this, args).finally(() => {
          inFlight--
        })
      }
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          prototype.read = original
        })
      )
      const taken: Array<number> = []
      const fiber = yield* Effect.fork(Stream.runForEach(
        Upload.read(Upload.file(path), size),
        () =>
          Effect.suspend(() => {
            taken.push(started)
            // a slow consumer: the reads go on meanwhile, up to the bound
            return Effect.sleep("5 millis")
          })
      ))
      yield* Fiber.join(fiber)
      expect(taken.length).toBe(readsOf(size))
      // the reads ran ahead of a waiting consumer ...
      expect(Math.max(...taken.map((reads, n) => reads - (n + 1)))).toBeGreaterThan(0)
      // ... by no more than readAhead chunks waiting plus the one in flight
      for (const [n, reads] of taken.entries()) expect(reads).toBeLessThanOrEqual(n + 1 + Upload.readAhead + 1)
      expect(maxInFlight).toBe(1)
      expect(openOn(path)).toBe(0)
    }).pipe(Effect.scoped))

  it.effect.each([
    { name: "shrinks", act: (path: string) => fs.truncateSync(path, chunk + 5), says: "only" },
    { name: "grows", act: (path: string) => fs.appendFileSync(path, Buffer.alloc(chunk, 3)), says: "more than" }
  ])(
    "a file that $name while it is read: the stream fails saying so, the file closed",
    ({ act, says }) =>
      Effect.gen(function*() {
        const size = 40 * chunk
        const { path } = makeFile(`changed-${says}.bin`, size)
        let pulled = 0
        const exit = yield* Effect.exit(Stream.runForEach(Upload.read(Upload.file(path), size), () =>
          Effect.sync(() => {
            // past what the read-ahead can have read already
            if (++pulled === 1) act(path)
          })))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = Option.getOrThrow(Cause.failureOption(exit.cause))
          expect(error.message).toContain(
            `${path} changed while it was being sent: ${size} bytes when measured, ${says}`
          )
        }
        expect(openOn(path)).toBe(0)
      })
  )

  it.live("interrupted while reads are in flight: the file is closed", () =>
    Effect.gen(function*() {
      const size = 64 * chunk
      const { path } = makeFile("interrupted.bin", size)
      let pulled = 0
      const fiber = yield* Effect.fork(
        Stream.runForEach(Upload.read(Upload.file(path), size), () => Effect.sync(() => pulled++))
      )
      while (pulled < 3) yield* Effect.sleep("1 millis")
      yield* Fiber.interrupt(fiber)
      expect(openOn(path)).toBe(0)
    }))

  it.effect("a second run reads the file again from its start (a retry)", () =>
    Effect.gen(function*() {
      const size = 2 * chunk + 9
      const { bytes, path } = makeFile("twice.bin", size)
      const stream = Upload.read(Upload.file(path), size)
      const first = yield* collect(stream)
      const second = yield* collect(stream)
      expect(first.equals(bytes)).toBe(true)
      expect(second.equals(bytes)).toBe(true)
    }))
})
