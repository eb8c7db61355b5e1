/**
 * Writing a download to a file atomically, shared by `Replays.downloadToFile` and
 * `KernelFiles.downloadToFile`: the bytes go to a temporary file next to the destination (created
 * exclusively), synced, then renamed over it; whatever ends the download before the rename (a
 * failure, an interruption) removes the temporary file, so the destination never holds a partial
 * file. Progress is reported after each written chunk with the total when the server declared it.
 *
 * The declared size (`Content-Length`) reaches the writer through {@link currentTotalListener}:
 * the body of a binary answer (`call.ts`) tells the listener of the fiber that runs it.
 *
 * @internal
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import { InvalidInput } from "../KernelError.js"

/** How far a download to a file is. @internal */
export interface Progress {
  readonly bytes: number
  readonly total: number | undefined
}

/** What a download to a file wrote. @internal */
export interface DownloadedFile {
  readonly path: string
  readonly bytes: number
}

/**
 * Told the declared size of a binary body when its head arrives (`undefined`: not declared).
 *
 * @internal
 */
export const currentTotalListener: FiberRef.FiberRef<((total: number | undefined) => void) | undefined> = FiberRef
  .unsafeMake<((total: number | undefined) => void) | undefined>(undefined)

/**
 * A temporary file name next to `path`, within the 255-byte limit most file systems put on a
 * name: a long file name is shortened (the suffix keeps it unique).
 *
 * @internal
 */
export const temporaryName = (path: string, suffix: string): string => {
  const slash = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"))
  const directory = path.slice(0, slash + 1)
  const name = path.slice(slash + 1)
  const tail = `.${suffix}.partial`
  const encoder = new TextEncoder()
  if (encoder.encode(name).length + tail.length <= 255) return `${directory}${name}${tail}`
  // keep a prefix of whole characters that fits, with a dot to start (hidden, like the suffix says)
  let prefix = ""
  let size = 1
  for (const char of name) {
    const width = encoder.encode(char).length
    if (size + width + tail.length > 200) break
    prefix += char
    size += width
  }
  return `${directory}.${prefix}${tail}`
}

/**
 * Writes `stream` to `path` atomically (see the module). `onTotal` registers the setter of the
 * declared total (by default: {@link currentTotalListener} while the stream runs).
 *
 * @internal
 */
export const toFile = <E, R>(
  stream: Stream.Stream<Uint8Array, E, R>,
  path: string,
  onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined,
  onTotal?: (set: (total: number | undefined) => void) => void
): Effect.Effect<DownloadedFile, E | InvalidInput | PlatformError.PlatformError, R | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (typeof path !== "string" || path.length === 0 || path.includes("\0")) {
      return yield* new InvalidInput({ field: "path", message: "path must be a non-empty string without NUL" })
    }
    const fs = yield* FileSystem.FileSystem
    const suffix = (yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)
    const temporary = temporaryName(path, suffix)
    const write = Effect.scoped(Effect.gen(function*() {
      const file = yield* fs.open(temporary, { flag: "wx" })
      let bytes = 0
      let total: number | undefined
      const setTotal = (declared: number | undefined) => {
        total = declared
      }
      const run = Stream.runForEach(stream, (chunk) => {
        bytes += chunk.length
        const written = file.writeAll(chunk)
        return onProgress === undefined
          ? written
          : Effect.zipRight(written, Effect.suspend(() => onProgress({ bytes, total })))
      })
      if (onTotal === undefined) yield* Effect.locally(run, currentTotalListener, setTotal)
      else {
        onTotal(setTotal)
        yield* run
      }
      yield* file.sync
      return bytes
    }))
    // whatever ends the download before the rename (a failure, an interruption, even between
    // the last write and the rename) removes the temporary file
    return yield* Effect.uninterruptibleMask((restore) =>
      restore(write).pipe(
        Effect.flatMap((bytes) => Effect.as(fs.rename(temporary, path), { path, bytes })),
        Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Effect.ignore(fs.remove(temporary)))
      )
    )
  })
