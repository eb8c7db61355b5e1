/**
 * Replay recordings of browser sessions: waiting for a recording to finish, then streaming its
 * mp4 without holding it in memory.
 *
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Interval from "effect/ScheduleInterval"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { bound, contentTypeShown } from "./internal/bounded.js"
import * as internal from "./internal/client.js"
import type { OperationError } from "./internal/defineOperation.js"
import * as Download from "./internal/download.js"
import * as Generated from "./internal/generated/modules/Replays.js"
import * as Log from "./internal/log.js"
import * as Mp4 from "./internal/mp4.js"
import * as Operations from "./internal/operations.js"
import * as RetryAfter from "./internal/retryAfter.js"
import * as Surface from "./internal/surface.js"
import { KernelClient } from "./KernelClient.js"
import type * as KernelConfig from "./KernelConfig.js"
import type * as KernelError from "./KernelError.js"
import { DecodeError, InvalidInput, ReplayNotReady, Timeout, TransportError, UnexpectedStatus } from "./KernelError.js"

/**
 * The generated part of the module: the schemas and the operations of the area that are not
 * written here (see scripts/generate).
 *
 * @since 0.2.0
 */
export * from "./internal/generated/modules/Replays.js"

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
   * The budget for waiting on a recording that is still in progress: the clock's time from the first
   * 202, the polls' own time included, up to the last poll (see {@link waitSchedule}). Default 5
   * minutes. Ignored when `schedule` is given.
   */
  readonly maxWait?: Duration.DurationInput | undefined
  /**
   * Replaces the wait policy: fed each 202 as a {@link ReplayPending}, it decides how long to wait
   * before asking again, and gives up (with `ReplayNotReady`) by ending.
   */
  readonly schedule?: Schedule.Schedule<unknown, ReplayPending> | undefined
  /**
   * Whether the body must prove to be a complete mp4: its top-level boxes must start with `ftyp`
   * and add up exactly to the body (the only proof of completeness when the server sends neither
   * `Content-Length` nor chunked framing). Default `true`. `false` passes the bytes through
   * whatever they are; the HTTP checks stay (status 200, no content encoding, a video or binary
   * content type, `Content-Length` met).
   *
   * @since 0.2.0
   */
  readonly verifyMp4?: boolean | undefined
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
  | OperationError<KernelError.BadRequest | KernelError.Forbidden | KernelError.NotFound>
  | KernelError.ReplayNotReady

/**
 * The input of {@link download} (the naming rule's `<Operation>Params`, as every generated
 * operation has).
 *
 * @since 0.2.0
 * @category Models
 */
export type DownloadReplayParams = ReplayParams

/**
 * What {@link download} gives: the mp4's bytes as a stream (the service's method answers the stream
 * itself, not an effect of it, as `Computer.captureScreenshotStream` does).
 *
 * @since 0.2.0
 * @category Models
 */
export type DownloadReplaySuccess = Stream.Stream<Uint8Array, DownloadReplayError>

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
{
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/DownloadReplay"
}

/**
 * The default wait policy: waits what each 202 asks (`Retry-After`), but never more than what is
 * left of `maxWait`, then asks a last time; ends (and the download fails with `ReplayNotReady`)
 * once `maxWait` has passed since the first 202. The time is the clock's: the requests' own time
 * counts (a server slow to answer each poll ends the wait as soon as one quick to answer it), not
 * only the waits between them. Its output is the time since the first 202 when the next poll is
 * made.
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
  // the state: when the first 202 was decided on (`undefined` before it)
  return Schedule.makeWithState<number | undefined, ReplayPending, Duration.Duration>(
    undefined,
    (now, pending, first) => {
      const start = first ?? now
      const remaining = budget - (now - start)
      if (remaining <= 0) return Effect.succeed([start, Duration.millis(now - start), ScheduleDecision.done] as const)
      const delay = Math.min(Duration.toMillis(pending.retryAfter), remaining)
      return Effect.succeed(
        [
          start,
          Duration.millis(now - start + delay),
          ScheduleDecision.continueWith(Interval.after(now + delay))
        ] as const
      )
    }
  )
}

// prepared on first use, not when the module is imported
const requestOf = Surface.lazy(() => internal.requestOf(Operations.downloadReplay))
const minimumRetryAfter = Duration.seconds(1)

const retryAfterOf = (
  response: HttpClientResponse.HttpClientResponse,
  now: number,
  config: KernelConfig.Service
): Duration.Duration =>
  // capped at `maxRetryAfter`, then held to the minimum: a cap under a second (even 0) never makes the
  // wait a loop of requests that `maxWait` does not end (each poll adds its wait to the time waited)
  RetryAfter.parseRetryAfter(response.headers["retry-after"], now).pipe(
    Option.getOrElse(() => minimumRetryAfter),
    Duration.min(config.maxRetryAfter),
    Duration.max(minimumRetryAfter)
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
  return type.startsWith("video/") || type === "application/mp4" || type === "application/octet-stream" ||
    type === "binary/octet-stream"
}

/** Whether a `Content-Encoding` or `Transfer-Encoding` list holds a coding other than `allowed` ones. */
const encodedWith = (value: string | undefined, allowed: ReadonlyArray<string>): boolean =>
  value !== undefined && value.split(",").some((coding) => {
    const name = coding.split(";")[0]!.trim().toLowerCase()
    return name !== "" && !allowed.includes(name)
  })

/**
 * Why a 2xx other than 202 is not the replay, if it is not: only a `200` with no content
 * encoding and a video or generic binary content type is.
 */
const refuse = (
  response: HttpClientResponse.HttpClientResponse,
  info: { readonly method: string; readonly path: string }
): DecodeError | UnexpectedStatus | undefined => {
  if (response.status !== 200) {
    return new UnexpectedStatus({
      ...info,
      status: response.status,
      code: "unknown",
      message: `expected 200 with the replay (or 202 while recording), got ${response.status}${
        response.status === 206 ? " Partial Content: a fragment is not the replay" : ""
      }`,
      body: ""
    })
  }
  const encoding = response.headers["content-encoding"]
  if (encodedWith(encoding, ["identity"])) {
    return new DecodeError({
      ...info,
      status: response.status,
      message: `expected an mp4 body without content encoding, got content-encoding ${bound(encoding, 100)}`
    })
  }
  // a transfer coding other than chunked (`gzip, chunked`) is not decoded by the transports: the
  // bytes would be the compressed ones
  const transfer = response.headers["transfer-encoding"]
  if (encodedWith(transfer, ["chunked", "identity"])) {
    return new DecodeError({
      ...info,
      status: response.status,
      message: `expected an mp4 body without transfer coding other than chunked, got transfer-encoding ${
        bound(transfer ?? "", 100)
      }`
    })
  }
  const contentType = response.headers["content-type"]
  if (!isVideo(contentType)) {
    return new DecodeError({
      ...info,
      status: response.status,
      message: `expected an mp4 body, got ${contentTypeShown(contentType)}`
    })
  }
  return undefined
}

/** A span attribute from an id an untyped caller may have passed as anything. */
const attribute = (value: unknown): string => typeof value === "string" ? value : typeof value

/**
 * The span's attributes of a download's params; none when they cannot be read (a getter that throws,
 * a revoked proxy: the request is then refused as `InvalidInput`, never a defect).
 */
const spanAttributes = (params: unknown): Record<string, string> => {
  if (typeof params !== "object" || params === null) return {}
  try {
    return {
      "kernel.browser.id": attribute(Reflect.get(params, "id")),
      "kernel.replay.id": attribute(Reflect.get(params, "replayId"))
    }
  } catch {
    return {}
  }
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
      params: ReplayParams,
      given: DownloadOptions
    ): Effect.Effect<
      Stream.Stream<Uint8Array, TransportError | Timeout | DecodeError>,
      DownloadReplayError,
      Scope.Scope
    > =>
      Effect.gen(function*() {
        if (typeof params !== "object" || params === null) {
          return yield* new InvalidInput({ field: "params", message: "params must be an object { id, replayId }" })
        }
        // read once, as given (an untyped caller's getter that throws is `InvalidInput`, not a defect)
        const options = yield* Effect.try({
          try: (): DownloadOptions => ({
            maxWait: given.maxWait,
            schedule: given.schedule,
            verifyMp4: given.verifyMp4
          }),
          catch: () => new InvalidInput({ field: "options", message: "options could not be read" })
        })
        const maxWait = options.maxWait === undefined ? Option.some(Duration.minutes(5)) : Duration.decodeUnknown(
          options.maxWait
        )
        if (Option.isNone(maxWait) || !(Duration.toMillis(maxWait.value) >= 0)) {
          return yield* new InvalidInput({
            field: "maxWait",
            message: "maxWait must be a duration such as \"5 minutes\""
          })
        }
        // the params checked (and read) first: a getter that throws, a revoked proxy are `InvalidInput`
        const { op, request } = yield* requestOf()(params)
        const { id, replayId } = yield* Effect.try({
          try: () => ({ id: params.id, replayId: params.replayId }),
          catch: () => new InvalidInput({ field: "params", message: "params could not be read" })
        })
        const info = internal.describe(request)
        // The replay's request is tied to this scope: closing it aborts it (the stream ending,
        // being interrupted, or the idle watchdog firing). Every other response (a 202, an
        // error, a refused 200) is released by its attempt before the next step.
        const requestScope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(requestScope, Exit.void))
        let polls = 0
        const poll = internal.executeRequest(
          httpClient,
          config,
          op,
          request,
          (
            response,
            release
          ): Effect.Effect<Either.Either<Ready, ReplayPending>, DecodeError | UnexpectedStatus> => {
            if (response.status === 202) {
              // the attempt's scope closes on return: the body is discarded (the connection
              // closed if it was not complete) before the wait, never held across it
              polls++
              return Effect.map(
                Clock.currentTimeMillis,
                (now) => Either.left(new ReplayPending({ retryAfter: retryAfterOf(response, now, config), polls }))
              )
            }
            const refused = refuse(response, info)
            if (refused !== undefined) return Effect.fail(refused)
            return Effect.as(
              Scope.addFinalizer(requestScope, release),
              Either.right(new Ready(response))
            )
          },
          Either.isRight
        )
        const schedule = options.schedule ?? waitSchedule({ maxWait: maxWait.value })
        const driver = yield* Schedule.driver(schedule)
        const started = yield* Clock.currentTimeMillis
        while (true) {
          const result = yield* poll
          if (Either.isRight(result)) {
            const response = result.right.response
            // a download to a file running this stream hears the declared size (its progress's total)
            const listener = yield* FiberRef.get(Download.currentTotalListener)
            listener?.(internal.declaredLength(response.headers["content-length"]))
            return yield* body(response, info, config, requestScope, options.verifyMp4 !== false)
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
      // a failure names its call (a body cut, gone idle, not an mp4: see `internal.located`)
      download: (params, options) =>
        Stream.mapError(
          Download.unwrapScoped(Effect.flatMap(
            Effect.makeSpanScoped("Kernel.downloadReplay.stream", {
              kind: "client",
              captureStackTrace: false,
              attributes: spanAttributes(params)
            }),
            // untyped callers may pass `null` or a non-object as options: the defaults then
            (span) =>
              Effect.withParentSpan(open(params, typeof options === "object" && options !== null ? options : {}), span)
          )),
          (error) => internal.located(error, "downloadReplay")
        )
    }
  }
)

/**
 * The body of a 200: counted (a body shorter than its Content-Length fails), checked as an mp4
 * while it streams (see {@link DownloadOptions.verifyMp4}), and watched for network silence past
 * `idleTimeout` (the time the consumer spends on a chunk does not count), as every download's body
 * is (`Download.streamBody`). The per-chunk cost is a walk over the box headers the chunk holds.
 */
const body = (
  response: HttpClientResponse.HttpClientResponse,
  info: { readonly method: string; readonly path: string },
  config: KernelConfig.Service,
  requestScope: Scope.CloseableScope,
  verifyMp4: boolean
): Effect.Effect<Stream.Stream<Uint8Array, TransportError | Timeout | DecodeError>> => {
  const lengthHeader = response.headers["content-length"]
  const declared = lengthHeader !== undefined && /^\d+$/.test(lengthHeader.trim()) ? Number(lengthHeader) : undefined
  const verifier = verifyMp4 ? new Mp4.Verifier() : undefined
  const decodeError = (message: string) => new DecodeError({ ...info, status: response.status, message })
  return Effect.map(
    Download.streamBody(response, Scope.close(requestScope, Exit.void), {
      info,
      idleTimeout: config.idleTimeout,
      declared,
      transportError: (error) => internal.transportError(error.request, error),
      onChunk: verifier === undefined ? undefined : (chunk) => {
        const failure = verifier.push(chunk)
        return failure === undefined ? undefined : decodeError(failure)
      },
      onEnd: (received) => {
        const failure = verifier?.end()
        if (failure === undefined) return undefined
        // when the HTTP framing proved the body whole (Content-Length met, or the chunked
        // terminator, without which the transports fail the body), it is not cut: it is not an mp4
        const framed = declared !== undefined || encodedWith(response.headers["transfer-encoding"], [])
        return received === 0 || framed
          ? decodeError(failure)
          : new TransportError({ ...info, message: `body cut short: ${failure}` })
      }
    }),
    ({ stream }) => stream
  )
}

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
 * {@link makeDownload} under the name the naming rule gives it (`make<Operation>`).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const makeDownloadReplay: Effect.Effect<DownloadReplayService, never, KernelClient> = makeDownload

/**
 * {@link layerDownload} under the name the naming rule gives it (`layer<Operation>`).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerDownloadReplay: Layer.Layer<DownloadReplay, never, KernelClient> = layerDownload

/**
 * Downloads a replay as a stream of mp4 bytes. While the recording is in progress (202) it waits
 * as the service asks (see {@link waitSchedule}); the body is never buffered whole, and
 * interrupting the stream aborts the request. A body that stalls for longer than the configured
 * `idleTimeout` fails with `Timeout`.
 *
 * Retried on a transient failure (a 5xx, a time-out, a lost connection): repeating it is harmless.
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
  Download.unwrap(Effect.map(DownloadReplay, (service) => service.download(params, options)))

/**
 * {@link download} under the operation's name (`downloadReplay`).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const downloadReplay: (
  params: ReplayParams,
  options?: DownloadOptions
) => Stream.Stream<Uint8Array, DownloadReplayError, DownloadReplay> = download

/**
 * {@link download} under the name every download's `Stream` form has (`<accessor>Stream`:
 * `Filesystem.readFileStream`, `Computer.captureScreenshotStream`, …): `Replays.download` is
 * already that form, and stays as it is.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const downloadStream: (
  params: ReplayParams,
  options?: DownloadOptions
) => Stream.Stream<Uint8Array, DownloadReplayError, DownloadReplay> = download

/**
 * Options of {@link downloadToFile}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DownloadToFileOptions extends DownloadOptions {
  /**
   * Called after each chunk is written, with the bytes written so far and the total when the
   * server declared it (`Content-Length`).
   */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

/**
 * How far a {@link downloadToFile} is: `bytes` written so far, of `total` when the server
 * declared the size (`Content-Length`), `undefined` otherwise.
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
  maybeOptions?: DownloadToFileOptions
): Effect.Effect<
  DownloadedFile,
  DownloadReplayError | PlatformError.PlatformError,
  DownloadReplay | FileSystem.FileSystem
> =>
  Effect.suspend(() => {
    // untyped callers may pass `null` or a non-object: the defaults then
    const options: DownloadToFileOptions = typeof maybeOptions === "object" && maybeOptions !== null ? maybeOptions : {}
    // the download tells the fiber running it the declared size when the 200 arrives (before, a
    // listener keyed by these options was never found: the download reads a copy of them)
    return Download.toFile(download(params, options), path, options.onProgress)
  })

/**
 * Builds every Replays operation on the shared client, the generated ones and the hand-written ones,
 * as one context.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const make: Effect.Effect<
  Context.Context<Layer.Layer.Success<typeof Generated.layer> | DownloadReplay>,
  never,
  KernelClient
> = /*#__PURE__*/ Effect.zipWith(
  Generated.make,
  makeDownload,
  (context, service) => Context.add(context, DownloadReplay, service)
)

/**
 * Every Replays operation as one layer over the shared client (one context, not a merge of layers).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layer: Layer.Layer<Layer.Layer.Success<typeof Generated.layer> | DownloadReplay, never, KernelClient> =
  /*#__PURE__*/ Layer.effectContext(make)
