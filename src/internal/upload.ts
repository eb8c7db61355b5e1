/**
 * What a file field of a request takes (`Extensions.upload`'s `file`, `Filesystem.upload`'s
 * `files[].file`, `Filesystem.writeFile`'s `contents`, …): its bytes in memory (`Uint8Array`), a
 * file on disk (`KernelFiles.file(path)`, read as it is sent, re-read by a retry) or a one-shot
 * `Stream` of bytes (sent as it comes, never retried).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodeFsPromises from "node:fs/promises"
import type * as KernelFiles from "../KernelFiles.js"
import * as Download from "./download.js"

/**
 * The brand of a `KernelFiles.FileSource`.
 *
 * @internal
 */
export const FileSourceTypeId: unique symbol = Symbol.for("effect-kernel/FileSource")

/**
 * A file on disk to upload, read as it is sent: declared in `KernelFiles`, where a user's
 * declarations (a library exporting a schema with a file field) can name it (TS2742 otherwise).
 *
 * @internal
 */
export type FileSource = KernelFiles.FileSource

/** @internal */
export const isFileSource = (u: unknown): u is FileSource =>
  typeof u === "object" && u !== null && FileSourceTypeId in u

/** @internal */
export const file = (path: string, options?: { readonly name?: string | undefined }): FileSource => ({
  [FileSourceTypeId]: FileSourceTypeId,
  _tag: "FileSource",
  path,
  // an untyped caller's path that is not a string (a setting that was never set) is refused when the
  // call reads the file (`sizeOf`: `InvalidInput`), not by a throw here
  name: options?.name ?? ((typeof path === "string" ? path.split(/[\\/]/).pop() : undefined) || "file")
})

/**
 * A file field's value (declared in `KernelFiles`).
 *
 * @internal
 */
export type Upload = KernelFiles.Upload

/** @internal */
export const isStream = (u: unknown): u is Stream.Stream<Uint8Array, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u && !Effect.isEffect(u)

/**
 * Whether a value is a file field's: a `Uint8Array`, a `KernelFiles.file(path)` or a `Stream` (a
 * multipart form asks it of every field it sends: each check answers a string, number or boolean at its
 * first test).
 *
 * @internal
 */
export const isUpload = (u: unknown): u is Upload => u instanceof Uint8Array || isFileSource(u) || isStream(u)

/**
 * The schema of a file field (checked as one of the three, passed as is).
 *
 * @internal
 */
export const Upload: Schema.Schema<Upload> = Schema.declare(isUpload, {
  identifier: "Upload",
  description: "a Uint8Array, a KernelFiles.file(path) or a Stream of Uint8Array",
  // `Arbitrary.make` of a body with a file field: its bytes in memory
  arbitrary: () => (fc) => fc.uint8Array({ maxLength: 64 })
})

/**
 * The size of a file on disk, or why it cannot be read (checked before anything is sent). A file
 * that cannot be opened for reading (its mode, a write-only attribute) is refused here too: measured
 * alone, it failed each attempt's open instead, a `TransportError` retried with back-off (in a
 * multipart form, once the parts before it were sent). Opened without blocking, only once it is
 * known to be a regular file (a FIFO's open would wait for a writer).
 *
 * @internal
 */
export const sizeOf = (source: FileSource): number | string => {
  if (typeof source.path !== "string") return `a file's path must be a string, got ${typeof source.path}`
  try {
    const stat = NodeFs.statSync(source.path)
    if (!stat.isFile()) return `${source.path} is not a file`
    NodeFs.closeSync(NodeFs.openSync(source.path, NodeFs.constants.O_RDONLY | (NodeFs.constants.O_NONBLOCK ?? 0)))
    return stat.size
  } catch (cause) {
    return `cannot read ${source.path}: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}

/**
 * How much of a file one read takes past its first MiB ({@link firstReadSize}): the chunk the transport
 * sends. 256 KiB, read straight from a
 * `FileHandle` (before: `fs.createReadStream`'s 64 KiB through an async iterator and
 * `Stream.fromAsyncIterable`): a quarter of the reads, effects and socket writes per byte, and no
 * `Readable` in between. Measured alone (issue 19, alternated in one process) it is about as fast
 * as the old reader (1.00–1.08×); the gain is with {@link readAhead}.
 *
 * @internal
 */
export const readChunkSize = 256 * 1024

/**
 * The first {@link firstReadsBytes} of a file are read {@link firstReadSize} bytes at a time (the
 * rest {@link readChunkSize}): a server that refuses the upload as soon as it has the headers (a 413)
 * and closes the connection without reading answers while these are sent. Each of them is a turn of the
 * event loop in which the answer is read; a write after the server's close makes it reset the
 * connection, and the answer still unread is lost with it. With 256 KiB from the start, a file
 * upload to such a server failed with `write EPIPE` in 11 of 16 calls on `KernelTransport` (raw undici
 * with `fs.createReadStream` at 256 KiB: 9 of 16, at its default 64 KiB: 0); 64 KiB for the first
 * 256 KiB, 512 KiB, 1 MiB or 4 MiB: 16 of 16 saw the status (1 MiB: 48 of 48, an 8 MiB and a 64 MiB
 * file). 1 MiB costs a large file nothing measurable.
 *
 * @internal
 */
export const firstReadSize = 64 * 1024

/**
 * See {@link firstReadSize}.
 *
 * @internal
 */
export const firstReadsBytes = 1024 * 1024

/**
 * A file on disk as it is read, {@link readChunkSize} bytes at a time (the first MiB less: see
 * {@link firstReadSize}) into a fresh buffer each (the
 * transport may still hold the previous one), read ahead of the consumer (up to {@link readAhead}
 * chunks waiting, plus the read in flight): opened again by each run, so a retry re-reads it; closed
 * when the run ends, however it ends (a `FileHandle` closes after a read in flight, so an interruption
 * never closes a descriptor a read still uses).
 *
 * The reads are one after the other from the file's position, each started by the one before it as
 * it finishes ({@link Reads}): no fiber, queue or `Take` between the file and the consumer. Before
 * (issue 19) `Stream.buffer` did the read-ahead with a producer fiber and a queue: reading a 256 MiB
 * file from the page cache took 2–3× the CPU of `fs.createReadStream` (alternated in one process,
 * 6 times: 237–452 ms against 91–278 ms); these reads take 65–240 ms.
 *
 * `size` is the file's size as measured (its declared length): a file that ends before it, or goes
 * on after it, changed while it was being sent, and the stream fails saying so (the request is then
 * aborted on every transport) rather than sending another file than the one measured (fetch sends
 * a stream body without its length: no transport check would catch it).
 *
 * @internal
 */
export const read = (source: FileSource, size: number): Stream.Stream<Uint8Array, Error> =>
  Download.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.map(
        Effect.tryPromise({ try: () => NodeFsPromises.open(source.path, "r"), catch: asError }),
        (handle) => new Reads(handle)
      ),
      (reads) => reads.close()
    ),
    (reads) => {
      // per run (a retry opens the file again)
      let sent = 0
      let ended = false
      return Stream.repeatEffectOption(Effect.suspend(() => {
        if (ended) return Effect.fail(Option.none())
        return Effect.flatMap(reads.take, (result) => {
          if (result instanceof Error) return Effect.fail(Option.some(result))
          const { buffer, bytesRead } = result
          if (bytesRead === 0) {
            return sent === size ? Effect.fail(Option.none()) : Effect.fail(Option.some(changed(source, size, sent)))
          }
          sent += bytesRead
          if (sent > size) return Effect.fail(Option.some(changed(source, size, sent)))
          const bytes = bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead)
          if (sent < size) return Effect.succeed(bytes)
          // the last chunk: the file's end is checked, and the file closed, before it is handed over, so
          // it is closed before the server can have the whole body (and answer): the call never returns
          // with the file still open (the transport pulls the stream's end after the answer came)
          return Effect.flatMap(reads.take, (after) => {
            if (after instanceof Error) return Effect.fail(Option.some(after))
            if (after.bytesRead > 0) return Effect.fail(Option.some(changed(source, size, sent + after.bytesRead)))
            ended = true
            return Effect.as(reads.close(), bytes)
          })
        })
      }))
    }
  ))

/** A read's outcome. */
type ReadResult = { readonly buffer: Buffer; readonly bytesRead: number } | Error

/**
 * The reads of one run of {@link read}, one after the other from the file's position, each started
 * as soon as the one before it is done while fewer than {@link readAhead} wait to be taken.
 */
class Reads {
  private readonly ready: Array<ReadResult> = []
  private reading = false
  /** How much of the file the reads took so far. */
  private offset = 0
  /** A read found the end (or failed), or the run is over: no more reads start. */
  private over = false
  private waiter: ((result: Effect.Effect<ReadResult>) => void) | undefined = undefined

  constructor(readonly handle: NodeFsPromises.FileHandle) {}

  /** The next read's outcome, in order (waiting for it if it is not done). */
  readonly take: Effect.Effect<ReadResult> = Effect.async<ReadResult>((resume) => {
    const result = this.ready.shift()
    this.start()
    if (result !== undefined) return resume(Effect.succeed(result))
    this.waiter = resume
    return Effect.sync(() => {
      this.waiter = undefined
    })
  })

  private start(): void {
    if (this.reading || this.over || this.ready.length >= readAhead) return
    this.reading = true
    const size = this.offset < firstReadsBytes ? firstReadSize : readChunkSize
    this.handle.read(Buffer.allocUnsafeSlow(size), 0, size, null).then(
      (result): ReadResult => {
        this.offset += result.bytesRead
        if (result.bytesRead === 0) this.over = true
        return result
      },
      (cause): ReadResult => {
        this.over = true
        return asError(cause)
      }
    ).then((result) => {
      this.reading = false
      const waiter = this.waiter
      this.waiter = undefined
      if (waiter !== undefined) waiter(Effect.succeed(result))
      else this.ready.push(result)
      this.start()
    })
  }

  private closing: Promise<void> | undefined = undefined

  /**
   * No read starts any more; the file closes once the read in flight (if any) is done. Closed once:
   * at the file's end, then again (a no-op) when the run ends.
   */
  close(): Effect.Effect<void> {
    this.over = true
    return Effect.promise(() => this.closing ??= this.handle.close().catch(() => undefined))
  }
}

const changed = (source: FileSource, size: number, read: number): Error =>
  new Error(
    `${source.path} changed while it was being sent: ${size} bytes when measured, ${
      read < size ? `only ${read}` : `more than ${size}`
    } read`
  )

/**
 * How many chunks a file upload reads ahead of the socket (a read runs while the last chunk is being
 * sent): without it each read waits for the send before it and the send for the read, and the
 * socket sits idle during every read. Alternated in one process (256 MiB, 6 times, `KernelTransport`,
 * the reader as a `Stream` body): 1.87× the same reader without read-ahead (median of the pairs).
 *
 * @internal
 */
export const readAhead = 4

const asError = (cause: unknown): Error => cause instanceof Error ? cause : new Error(String(cause))

/**
 * A caller's stream, sent once: a second run (a retry of a request whose body was already sent)
 * fails instead of sending a body that cannot be replayed. `started` says whether it was ever run
 * (read from): until then not a byte of it was sent, and a retry sends it whole.
 *
 * @internal
 */
export const once = <E>(
  stream: Stream.Stream<Uint8Array, E>
): { readonly stream: Stream.Stream<Uint8Array, E | Error>; readonly started: () => boolean } => {
  let ran = false
  return {
    stream: Stream.suspend((): Stream.Stream<Uint8Array, E | Error> => {
      if (ran) return Stream.fail(new Error("a one-shot Stream body cannot be sent again"))
      ran = true
      return stream
    }),
    started: () => ran
  }
}
