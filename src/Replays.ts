/**
 * Replay recordings of browser sessions: waiting for a recording to finish, then streaming its
 * mp4 without holding it in memory.
 *
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Interval from "effect/ScheduleInterval"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as internal from "./internal/client.js"
import * as Log from "./internal/log.js"
import { segment } from "./internal/path.js"
import * as RetryAfter from "./internal/retryAfter.js"
import { KernelClient } from "./KernelClient.js"
import type * as KernelConfig from "./KernelConfig.js"
import type * as KernelError from "./KernelError.js"
import { BadRequest, DecodeError, Forbidden, NotFound, ReplayNotReady, Timeout, TransportError } from "./KernelError.js"

/**
 * Identifies a replay recording.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ReplayParams {
  /** The browser session id. */
  readonly id: string
  /** The replay recording id. */
  readonly replayId: string
}

/**
 * One "still recording" answer (202): what the wait schedule is fed with.
 *
 * @since 0.1.0
 * @category Models
 */
export class ReplayPending extends Data.TaggedClass("ReplayPending")<{
  /** The wait the service asked for: `Retry-After`, at least 1 s, capped at `maxRetryAfter`. */
  readonly retryAfter: Duration.Duration
  /** How many polls have answered 202 so far, this one included. */
  readonly polls: number
}> {}

/**
 * Options of {@link download} and {@link downloadToFile}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DownloadOptions {
  /**
   * The whole budget for waiting on a recording that is still in progress. Default 5 minutes.
   * Ignored when `schedule` is given.
   */
  readonly maxWait?: Duration.DurationInput | undefined
  /**
   * Replaces the wait policy: fed each 202 as a {@link ReplayPending}, it decides how long to wait
   * before asking again, and gives up (with `ReplayNotReady`) by ending.
   */
  readonly schedule?: Schedule.Schedule<unknown, ReplayPending> | undefined
}

/**
 * Everything a download can fail with: its documented statuses (400, 401, 403, 404, 500), the
 * common errors, a success that is not an mp4, input rejected before sending, and the wait
 * budget running out.
 *
 * @since 0.1.0
 * @category Errors
 */
export type DownloadReplayError =
  | BadRequest
  | Forbidden
  | NotFound
  | KernelError.CommonError
  | KernelError.DecodeError
  | KernelError.InvalidInput
  | KernelError.ReplayNotReady

/**
 * The download-replay operation (`GET /browsers/{id}/replays/{replay_id}`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface DownloadReplayService {
  readonly download: (
    params: ReplayParams,
    options?: DownloadOptions
  ) => Stream.Stream<Uint8Array, DownloadReplayError>
}

/**
 * The download-replay operation as a service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class DownloadReplay
  extends Context.Tag("effect-kernel/DownloadReplay")<DownloadReplay, DownloadReplayService>()
{}

/**
 * The default wait policy: waits what each 202 asks (`Retry-After`), but never more than what is
 * left of `maxWait`, then asks a last time; ends (and the download fails with `ReplayNotReady`)
 * once `maxWait` has been waited. Its output is the total time waited.
 *
 * @since 0.1.0
 * @category Schedules
 * @example
 * ```ts
 * import { Replays } from "effect-kernel"
 *
 * const tenMinutes = Replays.waitSchedule({ maxWait: "10 minutes" })
 * ```
 */
export const waitSchedule = (options: {
  readonly maxWait: Duration.DurationInput
}): Schedule.Schedule<Duration.Duration, ReplayPending> => {
  const budget = Duration.toMillis(options.maxWait)
  return Schedule.makeWithState(0, (now, pending: ReplayPending, waited: number) => {
    const remaining = budget - waited
    if (remaining <= 0) return Effect.succeed([waited, Duration.millis(waited), ScheduleDecision.done] as const)
    const delay = Math.min(Duration.toMillis(pending.retryAfter), remaining)
    return Effect.succeed(
      [
        waited + delay,
        Duration.millis(waited + delay),
        ScheduleDecision.continueWith(Interval.after(now + delay))
      ] as const
    )
  })
}

const documented: ReadonlyArray<internal.StatusErrorClass<BadRequest | Forbidden | NotFound>> = [
  BadRequest,
  Forbidden,
  NotFound
]
const minimumRetryAfter = Duration.seconds(1)

const retryAfterOf = (
  response: HttpClientResponse.HttpClientResponse,
  now: number,
  config: KernelConfig.Service
): Duration.Duration =>
  RetryAfter.parseRetryAfter(response.headers["retry-after"], now).pipe(
    Option.getOrElse(() => minimumRetryAfter),
    Duration.max(minimumRetryAfter),
    Duration.min(config.maxRetryAfter)
  )

/**
 * A 200 answer waiting to be streamed. Spans record it by its status only: the response object
 * itself would print its request, headers included.
 */
class Ready {
  readonly _tag = "Ready"
  constructor(readonly response: HttpClientResponse.HttpClientResponse) {}
  toJSON() {
    return { _tag: this._tag, status: this.response.status }
  }
  toString() {
    return `Ready(${this.response.status})`
  }
  [Inspectable.NodeInspectSymbol]() {
    return this.toJSON()
  }
}

const isVideo = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return true
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type.startsWith("video/") || type === "application/octet-stream" || type === "binary/octet-stream"
}

/**
 * Builds the operation on the shared client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeDownload: Effect.Effect<DownloadReplayService, never, KernelClient> = Effect.map(
  KernelClient,
  ({ config, httpClient }) => {
    /** Waits for the replay and opens its body, in the stream's scope. */
    const open = (
      { id, replayId }: ReplayParams,
      options: DownloadOptions
    ): Effect.Effect<Stream.Stream<Uint8Array, TransportError | Timeout>, DownloadReplayError, Scope.Scope> =>
      Effect.gen(function*() {
        const browser = yield* segment("id", id)
        const replay = yield* segment("replayId", replayId)
        const request = HttpClientRequest.get(`/browsers/${browser}/replays/${replay}`).pipe(
          HttpClientRequest.accept("video/mp4, application/json")
        )
        const info = internal.describe(request)
        const op = internal.operation("downloadReplay", documented, {
          "kernel.browser.id": id,
          "kernel.replay.id": replayId
        })
        // Requests are tied to this scope: closing it aborts them (the stream ending, being
        // interrupted, or the idle watchdog firing).
        const requestScope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(requestScope, Exit.void))
        const client = HttpClient.withScope(httpClient)
        let polls = 0
        const poll = internal.execute(
          client,
          config,
          op,
          request,
          (response): Effect.Effect<Either.Either<Ready, ReplayPending>, DecodeError> => {
            if (response.status === 202) {
              polls++
              return Effect.map(
                Clock.currentTimeMillis,
                (now) => Either.left(new ReplayPending({ retryAfter: retryAfterOf(response, now, config), polls }))
              )
            }
            const contentType = response.headers["content-type"]
            if (!isVideo(contentType)) {
              return Effect.fail(
                new DecodeError({
                  ...info,
                  status: response.status,
                  message: `expected an mp4 body, got content-type ${contentType}`
                })
              )
            }
            return Effect.succeed(Either.right(new Ready(response)))
          }
        )
        const schedule = options.schedule ?? waitSchedule({ maxWait: options.maxWait ?? Duration.minutes(5) })
        const driver = yield* Schedule.driver(schedule)
        const started = yield* Clock.currentTimeMillis
        while (true) {
          const result = yield* Scope.extend(poll, requestScope)
          if (Either.isRight(result)) {
            return yield* body(result.right.response, info, config, requestScope)
          }
          const pending = result.left
          const next = yield* Effect.option(driver.next(pending))
          if (Option.isNone(next)) {
            const now = yield* Clock.currentTimeMillis
            return yield* new ReplayNotReady({
              id,
              replayId,
              retryAfter: pending.retryAfter,
              waited: Duration.millis(now - started),
              polls: pending.polls
            })
          }
          yield* Log.debug(
            `Kernel.downloadReplay: replay ${replayId} still recording, waited ${Duration.format(pending.retryAfter)}`
          )
        }
      })
    return {
      // The span lasts as long as the stream (it ends when the stream's scope closes) and is the
      // parent of the requests. It is not provided to each pull of the body, as `Stream.withSpan`
      // would do: that costs more per chunk than reading the chunk.
      download: (params, options = {}) =>
        Stream.unwrapScoped(Effect.flatMap(
          Effect.makeSpanScoped("Kernel.downloadReplay.stream", {
            kind: "client",
            captureStackTrace: false,
            attributes: { "kernel.browser.id": params.id, "kernel.replay.id": params.replayId }
          }),
          (span) => Effect.withParentSpan(open(params, options), span)
        ))
    }
  }
)

/**
 * The body of a 200: counted (a body shorter than its Content-Length fails), and watched by one
 * fiber that aborts the request when no chunk arrived for `idleTimeout`. The per-chunk cost is a
 * clock read; racing a timer against every pull would cost more than the transfer itself.
 */
const body = (
  response: HttpClientResponse.HttpClientResponse,
  info: { readonly method: string; readonly path: string },
  config: KernelConfig.Service,
  requestScope: Scope.CloseableScope
): Effect.Effect<Stream.Stream<Uint8Array, TransportError | Timeout>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const idle = Duration.toMillis(config.idleTimeout)
    const declared = Number(response.headers["content-length"])
    let received = 0
    let lastChunkAt = clock.unsafeCurrentTimeMillis()
    let timedOut = false
    const watchdog: Effect.Effect<void> = Effect.suspend(() => {
      const quiet = clock.unsafeCurrentTimeMillis() - lastChunkAt
      if (quiet < idle) return Effect.flatMap(Effect.sleep(idle - quiet), () => watchdog)
      timedOut = true
      return Scope.close(requestScope, Exit.void)
    })
    yield* Effect.forkScoped(watchdog)
    // once the body ended: a stall that ended it is a time-out; a short body is a transport error
    const checkEnd = Effect.suspend((): Effect.Effect<void, Timeout | TransportError> =>
      timedOut
        ? Effect.fail(new Timeout({ ...info, timeout: config.idleTimeout }))
        : Number.isFinite(declared) && declared !== received
        ? Effect.fail(
          new TransportError({ ...info, message: `body cut short: received ${received} of ${declared} bytes` })
        )
        : Effect.void
    )
    return response.stream.pipe(
      Stream.mapChunks((chunks) => {
        lastChunkAt = clock.unsafeCurrentTimeMillis()
        for (const chunk of chunks) received += chunk.length
        return chunks
      }),
      Stream.catchAll((error): Stream.Stream<never, TransportError | Timeout> =>
        timedOut
          ? Stream.fail(new Timeout({ ...info, timeout: config.idleTimeout }))
          : Stream.fail(internal.transportError(error.request, error))
      ),
      Stream.concat(Stream.drain(Stream.fromEffect(checkEnd)))
    )
  })

/**
 * The operation as a layer over the shared client.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerDownload: Layer.Layer<DownloadReplay, never, KernelClient> = Layer.effect(
  DownloadReplay,
  makeDownload
)

/**
 * Downloads a replay as a stream of mp4 bytes. While the recording is in progress (202) it waits
 * as the service asks (see {@link waitSchedule}); the body is never buffered whole, and
 * interrupting the stream aborts the request. A body that stalls for longer than the configured
 * `idleTimeout` fails with `Timeout`.
 *
 * @since 0.1.0
 * @category Accessors
 * @example
 * ```ts
 * import { Replays } from "effect-kernel"
 * import { Effect, Stream } from "effect"
 *
 * const size = Replays.download({ id: "browser-id", replayId: "replay-id" }, { maxWait: "2 minutes" }).pipe(
 *   Stream.runFold(0, (n, chunk) => n + chunk.length)
 * )
 * ```
 */
export const download = (
  params: ReplayParams,
  options?: DownloadOptions
): Stream.Stream<Uint8Array, DownloadReplayError, DownloadReplay> =>
  Stream.unwrap(Effect.map(DownloadReplay, (service) => service.download(params, options)))

/**
 * Options of {@link downloadToFile}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DownloadToFileOptions extends DownloadOptions {
  /** Called after each chunk is written, with the bytes written so far. */
  readonly onProgress?: ((bytes: number) => Effect.Effect<void>) | undefined
}

/**
 * What {@link downloadToFile} wrote.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DownloadedFile {
  readonly path: string
  readonly bytes: number
}

/**
 * Downloads a replay into a file in constant memory. The bytes go to a temporary file next to
 * `path`, which is renamed to `path` only once the download is complete: a failed or interrupted
 * download leaves no file (and no partial file) at `path`. Needs a `FileSystem` (e.g.
 * `NodeFileSystem.layer` or `NodeContext.layer`).
 *
 * @since 0.1.0
 * @category Accessors
 * @example
 * ```ts
 * import { Replays } from "effect-kernel"
 *
 * const program = Replays.downloadToFile({ id: "browser-id", replayId: "replay-id" }, "replay.mp4")
 * ```
 */
export const downloadToFile = (
  params: ReplayParams,
  path: string,
  options: DownloadToFileOptions = {}
): Effect.Effect<
  DownloadedFile,
  DownloadReplayError | PlatformError.PlatformError,
  DownloadReplay | FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const suffix = (yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)
    const temporary = `${path}.${suffix}.partial`
    const write = Effect.scoped(Effect.gen(function*() {
      const file = yield* fs.open(temporary, { flag: "wx" })
      let bytes = 0
      yield* Stream.runForEach(download(params, options), (chunk) => {
        bytes += chunk.length
        const written = file.writeAll(chunk)
        return options.onProgress === undefined ? written : Effect.zipRight(written, options.onProgress(bytes))
      })
      yield* file.sync
      return bytes
    }))
    const bytes = yield* write.pipe(
      Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Effect.ignore(fs.remove(temporary)))
    )
    yield* fs.rename(temporary, path).pipe(Effect.tapError(() => Effect.ignore(fs.remove(temporary))))
    return { path, bytes }
  })
