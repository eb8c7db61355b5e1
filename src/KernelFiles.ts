/**
 * Downloads to files: any binary answer of the API (`Filesystem.readFile`,
 * `Filesystem.downloadDirZip`, `Computer.captureScreenshot`, `Extensions.download`,
 * `Extensions.downloadFromChromeStore`, `Profiles.download`'s `Ok` value, …) written to a file in
 * constant memory, atomically: a temporary file next to the destination, renamed over it only once
 * the body is complete (its length checked against `Content-Length`); a failed or interrupted
 * download leaves neither the file nor the temporary file behind. Progress is reported after each
 * written chunk, with the total when the server declared it.
 *
 * Uploads: every file field of a request (`Extensions.upload`'s `file`, `Filesystem.upload`'s
 * `files[].file`, `Filesystem.uploadZip`'s `zip_file`, `Browsers.loadExtensions`'
 * `extensions[].zip_file`, `Deployments.create`'s `file`, `Filesystem.writeFile`'s `contents`)
 * takes an {@link Upload}: bytes in memory, a file on disk ({@link file}) or a `Stream` of bytes.
 * A file is read as it is sent (memory stays flat whatever its size) with its length declared;
 * a call with bytes or files is retried as any call of its kind (a retry reads the file again); a
 * call with a `Stream` is sent once: never retried once the stream was read from (its bytes cannot be
 * sent again).
 *
 * @since 0.2.0
 */
import type * as PlatformError from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as Download from "./internal/download.js"
import * as internalUpload from "./internal/upload.js"
import { InvalidInput } from "./KernelError.js"

/**
 * How far a download is: `bytes` written so far, of `total` when the server declared the size
 * (`Content-Length`), `undefined` otherwise.
 *
 * @since 0.2.0
 * @category Models
 */
export interface Progress {
  readonly bytes: number
  readonly total: number | undefined
}

/**
 * What {@link downloadToFile} wrote.
 *
 * @since 0.2.0
 * @category Models
 */
export interface DownloadedFile {
  readonly path: string
  readonly bytes: number
}

/**
 * Options of {@link downloadToFile}.
 *
 * @since 0.2.0
 * @category Models
 */
export interface DownloadToFileOptions {
  /** Called after each chunk is written. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

/** A download: an effect (of a stream), or a stream as Effect's own streams tell theirs. */
const isDownload = (u: unknown): boolean => Effect.isEffect(u) || Predicate.hasProperty(u, Stream.StreamTypeId)

const isStreamEffect = <E, E2, R>(
  u: Stream.Stream<Uint8Array, E, R> | Effect.Effect<Stream.Stream<Uint8Array, E>, E2, R>
): u is Effect.Effect<Stream.Stream<Uint8Array, E>, E2, R> => Effect.isEffect(u)

/**
 * Writes a download to `path` atomically (see the module). `download` is what a binary accessor
 * gives: the stream, or the effect that succeeds with it (`Filesystem.readFile(params)`). Needs a
 * `FileSystem` (e.g. `NodeFileSystem.layer`). Data-first or data-last (in a `pipe`).
 *
 * @since 0.2.0
 * @category Downloads
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Computer, KernelFiles } from "effect-kernel"
 *
 * const program = KernelFiles.downloadToFile(
 *   Computer.captureScreenshot({ id: "browser-id" }),
 *   "/tmp/screen.png",
 *   { onProgress: ({ bytes, total }) => Effect.log(`${bytes} of ${total ?? "?"} bytes`) }
 * )
 *
 * // the same, data-last
 * const piped = Computer.captureScreenshot({ id: "browser-id" }).pipe(KernelFiles.downloadToFile("/tmp/screen.png"))
 * ```
 */
export const downloadToFile: {
  (
    path: string,
    options?: DownloadToFileOptions
  ): <E, E2 = never, R = never>(
    download: Stream.Stream<Uint8Array, E, R> | Effect.Effect<Stream.Stream<Uint8Array, E>, E2, R>
  ) => Effect.Effect<DownloadedFile, E | E2 | InvalidInput | PlatformError.PlatformError, R | FileSystem.FileSystem>
  <E, E2 = never, R = never>(
    download: Stream.Stream<Uint8Array, E, R> | Effect.Effect<Stream.Stream<Uint8Array, E>, E2, R>,
    path: string,
    options?: DownloadToFileOptions
  ): Effect.Effect<DownloadedFile, E | E2 | InvalidInput | PlatformError.PlatformError, R | FileSystem.FileSystem>
} = dual(
  // data-first when the first argument is the download (an effect, or a stream as Effect's own
  // streams tell theirs); anything else is a path (a wrong one refused as `InvalidInput`)
  (args) => isDownload(args[0]),
  <E, E2, R>(
    download: Stream.Stream<Uint8Array, E, R> | Effect.Effect<Stream.Stream<Uint8Array, E>, E2, R>,
    path: string,
    options?: DownloadToFileOptions
  ): Effect.Effect<DownloadedFile, E | E2 | InvalidInput | PlatformError.PlatformError, R | FileSystem.FileSystem> =>
    // an untyped caller's download that is neither (bytes, a promise): refused, not a defect
    !isDownload(download)
      ? Effect.fail(
        new InvalidInput({ field: "download", message: "download must be a stream of bytes, or an effect of one" })
      )
      : Download.toFile<E | E2, R>(
        // an effect is also a stream (of its one value): tell them apart by the effect's mark
        isStreamEffect(download) ? Download.unwrap(download) : download,
        path,
        typeof options === "object" && options !== null ? options.onProgress : undefined
      )
)

/**
 * The brand of a {@link FileSource}.
 *
 * @since 0.2.0
 * @category Type IDs
 */
export const FileSourceTypeId: typeof internalUpload.FileSourceTypeId = internalUpload.FileSourceTypeId

/**
 * The type of {@link FileSourceTypeId}.
 *
 * @since 0.2.0
 * @category Type IDs
 */
export type FileSourceTypeId = typeof FileSourceTypeId

/**
 * A file on disk to upload (see {@link file}).
 *
 * @since 0.2.0
 * @category Models
 */
export interface FileSource {
  readonly [FileSourceTypeId]: FileSourceTypeId
  readonly _tag: "FileSource"
  readonly path: string
  /** The file name sent in a multipart part (default: the path's last segment). */
  readonly name: string
}

/**
 * What a file field of a request takes: a `Uint8Array`, a file on disk ({@link file}) or a
 * `Stream` of `Uint8Array` (sent once, never retried once read from).
 *
 * @since 0.2.0
 * @category Models
 */
export type Upload = Uint8Array | FileSource | Stream.Stream<Uint8Array, unknown>

/**
 * A file on disk as an upload: read as it is sent (256 KiB at a time), its size measured when the
 * call runs and declared; `name` is the file name sent in a multipart part (default: the path's
 * last segment). A missing or unreadable file is `InvalidInput` before anything is sent; a file that changes
 * size while it is sent fails the call with a `TransportError` saying so.
 *
 * @since 0.2.0
 * @category Uploads
 * @example
 * ```ts
 * import { Filesystem, KernelFiles } from "effect-kernel"
 *
 * const program = Filesystem.upload({
 *   id: "browser-id",
 *   files: [{ file: KernelFiles.file("/tmp/report.pdf"), dest_path: "/home/user/report.pdf" }]
 * })
 * ```
 */
export const file: (path: string, options?: { readonly name?: string | undefined }) => FileSource = internalUpload.file

/**
 * Whether a value is a {@link FileSource}.
 *
 * @since 0.2.0
 * @category Guards
 */
export const isFileSource: (u: unknown) => u is FileSource = internalUpload.isFileSource
