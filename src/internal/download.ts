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
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as KernelError from "../KernelError.js"
import { InvalidInput } from "../KernelError.js"
import * as Timeout from "./timeout.js"

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
 * A body whose head arrived before the stream runs (a profile's `Ok` value): each run tells the
 * {@link currentTotalListener} of the fiber running it the declared size, as a body opened by its
 * own run does when its head arrives (a `downloadToFile` given the stream then reports its total).
 *
 * @internal
 */
export const announced = <E>(stream: Stream.Stream<Uint8Array, E>, declared: number | undefined) =>
  unwrap(Effect.map(FiberRef.get(currentTotalListener), (listener) => {
    listener?.(declared)
    return stream
  }))

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
 * Writes `stream` to `path` atomically (see the module). The declared total is what the body tells
 * the {@link currentTotalListener} of the fiber running it.
 *
 * @internal
 */
export const toFile = <E, R>(
  stream: Stream.Stream<Uint8Array, E, R>,
  path: string,
  onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined
): Effect.Effect<DownloadedFile, E | InvalidInput | PlatformError.PlatformError, R | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (typeof path !== "string" || path.length === 0 || path.includes("\0")) {
      return yield* new InvalidInput({ field: "path", message: "path must be a non-empty string without NUL" })
    }
    const fs = yield* FileSystem.FileSystem
    // what is at `path` already: a directory is refused before anything is sent (its rename would
    // fail once the whole body was down); a file's permissions are the new file's (the rename put a
    // file of mode 0666 & ~umask in place of a 0600 one), without its setuid / setgid / sticky bits
    const existing = Option.getOrUndefined(yield* Effect.option(fs.stat(path)))
    if (existing?.type === "Directory") {
      return yield* new InvalidInput({ field: "path", message: `${path} is a directory` })
    }
    const mode = existing?.type === "File" ? existing.mode & 0o777 : undefined
    const suffix = (yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)
    const temporary = temporaryName(path, suffix)
    const write = Effect.scoped(Effect.gen(function*() {
      const file = yield* fs.open(temporary, { flag: "wx" })
      if (mode !== undefined) yield* fs.chmod(temporary, mode)
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
      yield* Effect.locally(run, currentTotalListener, setTotal)
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

// ---------------------------------------------------------------------------------------------
// a body streamed after its attempt
// ---------------------------------------------------------------------------------------------

/**
 * How {@link streamBody} treats one body: who asked for it (for its errors), its idle time-out,
 * its declared length, and the caller's own checks.
 *
 * @internal
 */
export interface BodyOptions<E> {
  readonly info: { readonly method: string; readonly path: string }
  readonly idleTimeout: Duration.Duration
  /** The body's `Content-Length` (`undefined`: not declared, not checked). */
  readonly declared: number | undefined
  /** The transport's failure of the body as the SDK's error. */
  readonly transportError: (error: HttpClientError.ResponseError) => KernelError.TransportError
  /** Each chunk in order, as it passes: a failure ends the body with it. */
  readonly onChunk?: ((chunk: Uint8Array) => E | undefined) | undefined
  /** The body ended whole as the transport saw it, its length as declared: a failure, or none. */
  readonly onEnd?: ((received: number) => E | undefined) | undefined
}

/**
 * The key of a response's body read pull by pull: a transport whose responses have it
 * (`KernelTransport`) hands {@link streamBody} its chunks with no `Stream` stage in between.
 *
 * @internal
 */
export const PullBody: unique symbol = Symbol.for("effect-kernel/Download/PullBody")

/**
 * A body pull by pull: `next` takes the chunks the transport buffered since the last pull (waiting
 * for one if there is none; `undefined` at the end); `cancel` releases the exchange (a no-op once
 * the body is over).
 *
 * @internal
 */
export interface PullBody {
  readonly next: Effect.Effect<Chunk.Chunk<Uint8Array> | undefined, HttpClientError.ResponseError>
  readonly cancel: () => void
}

/** A response whose body can be read pull by pull. */
interface PullBodySource {
  readonly [PullBody]: () => PullBody
}

const hasPullBody = (response: object): response is PullBodySource =>
  PullBody in response && typeof response[PullBody] === "function"

/**
 * A body as {@link streamBody} streams it, and its release (run by the stream's end; for a caller
 * whose stream around it may end before the body's was run).
 *
 * @internal
 */
export interface StreamedBody<E> {
  readonly stream: Stream.Stream<Uint8Array, E>
  readonly close: Effect.Effect<void>
}

/**
 * What a transport's response answers to when the SDK watches its body itself (`streamBody`'s idle
 * watch): `KernelTransport`'s then leaves an unread body to that watch, where it would release it after
 * its own `abandonedBodyTimeout` (10 s), well before the `idleTimeout` the SDK promises (a profile's `Ok`
 * stream, whose head comes with its call, read later).
 *
 * @internal
 */
export const watchedBody: unique symbol = Symbol.for("effect-kernel/watchedBody")

/**
 * A response body streamed after the attempt that received it (a download): counted against its
 * declared length (fewer bytes is `TransportError` "body cut short"), checked chunk by chunk by the
 * caller, and watched for network silence: the clock runs from the moment the consumer asks for the
 * next chunk until the transport hands one over (or from now until the consumer first asks), and
 * past `idleTimeout` the request is released and the body fails with `Timeout`. The time the
 * consumer spends on a chunk (a slow disk, a slow upload downstream) does not count: the transport
 * then has the rest buffered or its connection paused by back-pressure, which is not a stalled server.
 *
 * `release` frees the request (the attempt's release of a response it kept): it runs once (with
 * the watch stopped), when the body ends however it ends (its end, a failure, an interruption, the
 * consumer stopping early), when the watch fires (even if the stream is never run), or by `close`.
 *
 * No scope, fiber or effect per chunk: the watch is the live clock's own timer (a fiber sleeping on
 * any other clock, such as `TestClock`), and one channel stage counts, checks and passes the chunks
 * on as they came. Opening a download costs what a JSON call costs, not the several scopes, context
 * copies and forked fiber it took before (issue 19: about 10× a JSON call's CPU).
 *
 * @internal
 */
export const streamBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  release: Effect.Effect<void>,
  options: BodyOptions<E>
): Effect.Effect<StreamedBody<KernelError.TransportError | KernelError.Timeout | E>> =>
  Effect.clockWith((clock) => {
    const { declared, idleTimeout, info, onChunk, onEnd, transportError } = options
    const idle = Duration.toMillis(idleTimeout)
    const timer = Timeout.timerMillis(clock, idleTimeout)
    let received = 0
    let waitingSince: number | undefined = clock.unsafeCurrentTimeMillis()
    let timedOut = false
    let released = false
    let stopWatch: (() => void) | undefined
    const close = Effect.suspend(() => {
      if (released) return Effect.void
      released = true
      stopWatch?.()
      return release
    })
    /** How long the body may still be silent; `undefined`: it timed out. */
    const remaining = (): number | undefined => {
      if (waitingSince === undefined) return idle
      const quiet = clock.unsafeCurrentTimeMillis() - waitingSince
      if (quiet < idle) return idle - quiet
      timedOut = true
      return undefined
    }
    const timeout = () => new KernelError.Timeout({ ...info, timeout: idleTimeout, idle: true })
    // no time-out (`Duration.infinity`): no watch (a transport's own release of unread bodies stays)
    if (Number.isFinite(idle)) {
      const watched: unknown = Reflect.get(response, watchedBody)
      if (typeof watched === "function") Reflect.apply(watched, response, [])
    }
    const start: Effect.Effect<void> = !Number.isFinite(idle) ? Effect.void : timer !== undefined
      ? Effect.sync(() => {
        let handle: ReturnType<typeof setTimeout> | undefined
        const check = () => {
          const left = remaining()
          if (left !== undefined) handle = setTimeout(check, left)
          else {
            stopWatch = undefined
            Effect.runFork(close)
          }
        }
        handle = setTimeout(check, timer)
        stopWatch = () => clearTimeout(handle)
      })
      : Effect.map(
        Effect.forkDaemon(Effect.interruptible(Effect.suspend(function watch(): Effect.Effect<void> {
          const left = remaining()
          if (left !== undefined) return Effect.flatMap(Effect.sleep(left), watch)
          // the watch releases the request itself (it must not interrupt itself doing so)
          stopWatch = undefined
          return close
        }))),
        (fiber) => {
          stopWatch = () => fiber.unsafeInterruptAsFork(FiberId.none)
        }
      )
    const ended = (): KernelError.TransportError | KernelError.Timeout | E | undefined =>
      timedOut
        ? timeout()
        : declared !== undefined && declared !== received
        ? new KernelError.TransportError({
          ...info,
          message: received < declared
            ? `body cut short: received ${received} of ${declared} bytes`
            : `body longer than its Content-Length: received ${received} of ${declared} bytes`
        })
        : onEnd?.(received)
    type Failure = KernelError.TransportError | KernelError.Timeout | E
    type Pass = Channel.Channel<
      Chunk.Chunk<Uint8Array>,
      Chunk.Chunk<Uint8Array>,
      Failure,
      HttpClientError.ResponseError,
      unknown,
      unknown
    >
    const fail = (failure: Failure): Pass => Channel.fail(failure)
    /** The transport's failure of the body (a release by the watch: the time-out). */
    const failureOf = (error: HttpClientError.ResponseError): Failure => timedOut ? timeout() : transportError(error)
    /** The chunks of a pull, counted and checked as they pass: a failure, or none. */
    const check = (chunks: Chunk.Chunk<Uint8Array>): Failure | undefined => {
      waitingSince = undefined
      for (const chunk of chunks) {
        received += chunk.length
        const failure = onChunk?.(chunk)
        if (failure !== undefined) return failure
      }
      return undefined
    }
    /** The end of the body: its checks (time-out, declared length, the caller's), a failure or none. */
    const end = (): Channel.Channel<never, unknown, Failure, unknown, void, unknown> => {
      waitingSince = undefined
      const failure = ended()
      return failure === undefined ? Channel.void : Channel.fail(failure)
    }
    /** The chunks of a pull checked and passed on, then `more`; or the first failure a check gives. */
    const passOn = <InElem, InErr>(
      chunks: Chunk.Chunk<Uint8Array>,
      more: () => Channel.Channel<Chunk.Chunk<Uint8Array>, InElem, Failure, InErr, void, unknown>
    ): Channel.Channel<Chunk.Chunk<Uint8Array>, InElem, Failure, InErr, void, unknown> => {
      const failure = check(chunks)
      return failure === undefined ? Channel.flatMap(Channel.write(chunks), more) : Channel.fail(failure)
    }
    // one stage per pull: the consumer asking again (the continuation after a write) starts the clock
    const pass = (): Pass => {
      waitingSince = clock.unsafeCurrentTimeMillis()
      return Channel.readWithCause({
        onInput: (chunks: Chunk.Chunk<Uint8Array>): Pass => passOn(chunks, pass),
        onFailure: (cause): Pass => {
          const failure = Cause.failureOption(cause)
          // an interruption or a defect, as it is (no failure in it to map)
          if (Option.isNone(failure)) return Channel.failCause(Cause.map(cause, timeout))
          return fail(failureOf(failure.value))
        },
        onDone: end
      })
    }
    const direct = hasPullBody(response) ? response[PullBody]() : undefined
    if (direct === undefined) {
      return Effect.as(start, {
        stream: Stream.ensuring(Stream.pipeThroughChannel(response.stream, Channel.suspend(pass)), close),
        close
      })
    }
    // the transport's pulls, checked as they come: one channel, no stage piped into another (a pipe
    // costs each pull a round trip through the executor), and no `Option`, tuple or nested channel
    // per pull as `Stream.repeatEffectChunkOption` makes
    type Out = Channel.Channel<Chunk.Chunk<Uint8Array>, unknown, Failure, unknown, void, unknown>
    const next = Effect.mapError(direct.next, failureOf)
    const taken = (chunks: Chunk.Chunk<Uint8Array> | undefined): Out =>
      chunks === undefined ? end() : passOn(chunks, pull)
    // the consumer asking again (the continuation after a write) starts the clock
    const pull = (): Out => {
      waitingSince = clock.unsafeCurrentTimeMillis()
      return Channel.flatMap(Channel.fromEffect(next), taken)
    }
    const cancel = Effect.sync(direct.cancel)
    return Effect.as(start, {
      stream: Stream.ensuring(Stream.fromChannel(Channel.suspend(pull)), Effect.zipRight(cancel, close)),
      close
    })
  })

/**
 * `Stream.unwrap` run as the channel's own unwrap: the inner stream's channel becomes the stream's,
 * where `Stream.unwrap` (a `flatten`) passes every chunk through a nested stream (about 0.5 µs a
 * chunk in a microbenchmark; a 256 MiB download is about 4,000 chunks).
 *
 * @internal
 */
export const unwrap = <A, E, R, E2, R2>(
  effect: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | R2> => Stream.fromChannel(Channel.unwrap(Effect.map(effect, Stream.toChannel)))

/**
 * {@link unwrap} with a scope: the effect's scope closes when the stream ends (`Stream.unwrapScoped`
 * without its nested stream).
 *
 * @internal
 */
export const unwrapScoped = <A, E, R, E2, R2>(
  effect: Effect.Effect<Stream.Stream<A, E, R>, E2, R2>
): Stream.Stream<A, E | E2, R | Exclude<R2, Scope.Scope>> =>
  Stream.fromChannel(Channel.unwrapScoped(Effect.map(effect, Stream.toChannel)))
