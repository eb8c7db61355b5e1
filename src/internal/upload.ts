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
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodeFsPromises from "node:fs/promises"

const FileSourceTypeId: unique symbol = Symbol.for("effect-kernel/FileSource")

/**
 * A file on disk to upload, read as it is sent.
 *
 * @internal
 */
export interface FileSource {
  readonly [FileSourceTypeId]: typeof FileSourceTypeId
  readonly _tag: "FileSource"
  readonly path: string
  /** The file name sent (default: the path's last segment). */
  readonly name: string
}

/** @internal */
export const isFileSource = (u: unknown): u is FileSource => Predicate.hasProperty(u, FileSourceTypeId)

/** @internal */
export const file = (path: string, options?: { readonly name?: string | undefined }): FileSource => ({
  [FileSourceTypeId]: FileSourceTypeId,
  _tag: "FileSource",
  path,
  name: options?.name ?? (path.split(/[\\/]/).pop() || "file")
})

/**
 * A file field's value.
 *
 * @internal
 */
export type Upload = Uint8Array | FileSource | Stream.Stream<Uint8Array, unknown>

/** @internal */
export const isStream = (u: unknown): u is Stream.Stream<Uint8Array, unknown> =>
  Predicate.hasProperty(u, Stream.StreamTypeId) && !Effect.isEffect(u)

/** @internal */
export const isUpload = (u: unknown): u is Upload => u instanceof Uint8Array || isFileSource(u) || isStream(u)

/**
 * The schema of a file field (checked as one of the three, passed as is).
 *
 * @internal
 */
export const Upload: Schema.Schema<Upload> = Schema.declare(isUpload, {
  identifier: "Upload",
  description: "a Uint8Array, a KernelFiles.file(path) or a Stream of Uint8Array"
})

/**
 * The size of a file on disk, or why it cannot be read (checked before anything is sent).
 *
 * @internal
 */
export const sizeOf = (source: FileSource): number | string => {
  try {
    const stat = NodeFs.statSync(source.path)
    return stat.isFile() ? stat.size : `${source.path} is not a file`
  } catch (cause) {
    return `cannot read ${source.path}: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}

/**
 * How much of a file one read takes: the chunk the transport sends. 256 KiB, read straight from a
 * `FileHandle` (before: `fs.createReadStream`'s 64 KiB through an async iterator and
 * `Stream.fromAsyncIterable`): a quarter of the reads, effects and socket writes per byte, and no
 * `Readable` in between. Measured alone (issue 19, alternated in one process) it is about as fast
 * as the old reader (1.00–1.08×); the gain is with {@link readAhead}.
 *
 * @internal
 */
export const readChunkSize = 256 * 1024

/**
 * A file on disk as it is read, {@link readChunkSize} bytes at a time into a fresh buffer each (the
 * transport may still hold the previous one), {@link readAhead} chunks ahead of the consumer (at most
 * 1 MiB, plus the chunk being read): opened again by each run, so a retry re-reads it;
 * closed when the run ends, however it ends (a `FileHandle` closes after a read in flight, so an
 * interruption never closes a descriptor a read still uses).
 *
 * `size` is the file's size as measured (its declared length): a file that ends before it, or goes
 * on after it, changed while it was being sent, and the stream fails saying so (the request is then
 * aborted on every transport) rather than sending another file than the one measured (fetch sends
 * a stream body without its length: no transport check would catch it).
 *
 * @internal
 */
export const read = (source: FileSource, size: number): Stream.Stream<Uint8Array, Error> =>
  Stream.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.tryPromise({ try: () => NodeFsPromises.open(source.path, "r"), catch: asError }),
      (handle) => Effect.promise(() => handle.close().catch(() => undefined))
    ),
    (handle) => {
      // per run (a retry opens the file again)
      let sent = 0
      return Stream.repeatEffectOption(Effect.flatMap(
        Effect.mapError(
          Effect.tryPromise({
            try: () => handle.read(Buffer.allocUnsafeSlow(readChunkSize), 0, readChunkSize, null),
            catch: asError
          }),
          Option.some
        ),
        ({ buffer, bytesRead }) => {
          if (bytesRead === 0) {
            return sent === size ? Effect.fail(Option.none()) : Effect.fail(Option.some(changed(source, size, sent)))
          }
          sent += bytesRead
          return sent > size
            ? Effect.fail(Option.some(changed(source, size, sent)))
            : Effect.succeed(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead))
        }
      ))
    }
  )).pipe(Stream.buffer({ capacity: readAhead }))

const changed = (source: FileSource, size: number, read: number): Error =>
  new Error(
    `${source.path} changed while it was being sent: ${size} bytes when measured, ${
      read < size ? `only ${read}` : `more than ${size}`
    } read`
  )

/**
 * How many chunks a file upload reads ahead of the socket (a fiber reads while the last chunk is
 * being sent): without it each read waits for the send before it and the send for the read, and the
 * socket sits idle during every read. Alternated in one process (256 MiB, 6 times, `KernelTransport`,
 * the reader as a `Stream` body): 1.87× the same reader without read-ahead (median of the pairs).
 *
 * @internal
 */
export const readAhead = 4

const asError = (cause: unknown): Error => cause instanceof Error ? cause : new Error(String(cause))

/**
 * A caller's stream, sent once: a second run (a retry of a request whose body was already sent)
 * fails instead of sending a body that cannot be replayed.
 *
 * @internal
 */
export const once = <E>(stream: Stream.Stream<Uint8Array, E>): Stream.Stream<Uint8Array, E | Error> => {
  let ran = false
  return Stream.suspend((): Stream.Stream<Uint8Array, E | Error> => {
    if (ran) return Stream.fail(new Error("a one-shot Stream body cannot be sent again"))
    ran = true
    return stream
  })
}
