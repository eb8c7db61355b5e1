/**
 * The retry policy of effect-kernel, as `Schedule`s that can be used, composed or replaced.
 *
 * An idempotent operation (a read, a flag that is set rather than toggled, a delete) is retried
 * after any transient failure. One that is not (creating something, running an action) is retried
 * only when its request provably never reached the server, or the server answered 429; wrap a
 * call in {@link retryNonIdempotent} to retry it like an idempotent one, and in {@link withPolicy}
 * (or {@link noRetries}) to retry it by its own schedule.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { dual } from "effect/Function"
import { globalValue } from "effect/GlobalValue"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Interval from "effect/ScheduleInterval"
import * as Stream from "effect/Stream"
import type { KernelError } from "./KernelError.js"
import { isTransient } from "./KernelError.js"

/**
 * Options of {@link policy}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PolicyOptions {
  /** How many retries at most. */
  readonly maxRetries: number
  /** The longest server-requested wait honoured; longer `Retry-After`s are capped to it. */
  readonly maxRetryAfter: Duration.DurationInput
}

/**
 * The back-off before retry number `attempt` (0-based) when the server asked for no delay:
 * `min(0.5 · 2^attempt, 8)` seconds, reduced by up to 25 % according to `jitter` in `[0, 1)`.
 *
 * @since 0.1.0
 * @category Delays
 */
export const backoff = (attempt: number, jitter: number): Duration.Duration =>
  Duration.millis(Math.round(Math.min(500 * 2 ** attempt, 8000) * (1 - 0.25 * jitter)))

/**
 * The delay before retry number `attempt` after `error`: the server's `retry-after-ms` /
 * `Retry-After` when it sent one asking for a wait, the jittered {@link backoff} otherwise (no header,
 * or one asking for none: `0`, a date already past).
 *
 * A server-requested wait is lengthened by up to 25 % according to `jitter` in `[0, 1)` (never
 * shortened: the call does not come back before the server said), so that the many calls of a
 * fan-out refused at once (a 429 storm, all with `Retry-After: 1`) do not all come back at the same
 * instant and be refused again together. It stays within `maxRetryAfter`: a wait capped there is
 * reduced by up to 25 % instead, and never shorter than the {@link backoff} (a cap under it must not
 * make a requested wait shorter than no request at all).
 *
 * @since 0.1.0
 * @category Delays
 */
export const delayFor = (
  error: KernelError,
  attempt: number,
  jitter: number,
  maxRetryAfter: Duration.DurationInput
): Duration.Duration => {
  const requested = "retryAfter" in error ? error.retryAfter : undefined
  const asked = requested === undefined ? 0 : Duration.toMillis(requested)
  // none, `0` or a date already past: no wait asked for, the backoff (as the official client); taken
  // as asked, every call of a fan-out refused at once would come back at once, again and again
  if (asked <= 0) return backoff(attempt, jitter)
  const cap = Duration.toMillis(Duration.decode(maxRetryAfter))
  // capped: spread below the cap, and never sooner than the backoff (a cap under it, a `maxRetryAfter`
  // of 0 or 100 ms, must not make a requested wait shorter than no request at all)
  if (asked >= cap) {
    return Duration.millis(Math.max(Math.round(cap * (1 - 0.25 * jitter)), Duration.toMillis(backoff(attempt, jitter))))
  }
  return Duration.millis(Math.min(cap, Math.max(asked, Math.round(asked * (1 + 0.25 * jitter)))))
}

/**
 * The default retry policy: retries transient errors (408, 409, 429, 5xx, transport failures,
 * time-outs; `x-should-retry` overrides) up to `maxRetries` times, waiting {@link delayFor} each
 * time. Its output is the number of retries so far.
 *
 * @since 0.1.0
 * @category Schedules
 * @example
 * ```ts
 * import { KernelRetry } from "effect-kernel"
 *
 * const fiveRetries = KernelRetry.policy({ maxRetries: 5, maxRetryAfter: "30 seconds" })
 * ```
 */
export const policy = (options: PolicyOptions): Schedule.Schedule<number, KernelError> =>
  Schedule.makeWithState(0, (now, error: KernelError, attempt: number) => {
    if (attempt >= options.maxRetries || !isTransient(error)) {
      return Effect.succeed([attempt, attempt, ScheduleDecision.done] as const)
    }
    return Effect.map(Random.next, (jitter) => {
      const delay = Duration.toMillis(delayFor(error, attempt, jitter, options.maxRetryAfter))
      return [attempt + 1, attempt + 1, ScheduleDecision.continueWith(Interval.after(now + delay))] as const
    })
  })

/**
 * Whether the calls of the current fiber retry their transient failures even when their
 * operation is not idempotent (see {@link retryNonIdempotent}). Default `false`.
 *
 * @since 0.2.0
 * @category FiberRefs
 */
export const currentRetryNonIdempotent: FiberRef.FiberRef<boolean> = globalValue(
  "effect-kernel/KernelRetry/currentRetryNonIdempotent",
  () => FiberRef.unsafeMake(false)
)

/**
 * Retries the calls within `self` after any transient failure (a time-out, a 5xx, a connection
 * lost after the request was sent), as if their operations were idempotent. Without it, a call
 * that is not idempotent (it creates something or runs an action) is retried only when its
 * request never reached the server, or the server answered 429: repeating it could do it twice.
 * Use it for a call you know is safe to repeat (for example one carrying its own idempotency key).
 *
 * @since 0.2.0
 * @category Combinators
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KernelRetry } from "effect-kernel"
 *
 * // a call of an operation that is not idempotent (here a stand-in)
 * const create = Effect.succeed("created")
 *
 * // retried after a 503 or a time-out too
 * const program = create.pipe(KernelRetry.retryNonIdempotent)
 * ```
 */
export const retryNonIdempotent = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, currentRetryNonIdempotent, true)

/**
 * The retry schedule of the calls of the current fiber, in place of the configured one
 * (`KernelConfig`'s `retrySchedule`, else `maxRetries`): set by {@link withPolicy}. Default: none.
 *
 * @since 0.2.0
 * @category FiberRefs
 */
export const currentPolicy: FiberRef.FiberRef<Option.Option<Schedule.Schedule<unknown, KernelError>>> = globalValue(
  "effect-kernel/KernelRetry/currentPolicy",
  () => FiberRef.unsafeMake<Option.Option<Schedule.Schedule<unknown, KernelError>>>(Option.none())
)

/**
 * Retries the calls within `self` by `schedule` instead of the configured policy: one call with more
 * (or fewer) retries than the rest of the program, without a second `KernelConfig`. The schedule is
 * given each transient failure, as `KernelConfig`'s `retrySchedule` is. Which failures are retried
 * does not change: a call that is not idempotent is still retried only when its request never reached
 * the server or the server answered 429 (see {@link retryNonIdempotent}), and a call whose body is a
 * one-shot `Stream` is never retried once the stream was read from.
 *
 * @since 0.2.0
 * @category Combinators
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { KernelRetry } from "effect-kernel"
 *
 * // a call (here a stand-in)
 * const retrieve = Effect.succeed("browser")
 *
 * // up to 5 retries, a second apart, for this call only
 * const patient = retrieve.pipe(
 *   KernelRetry.withPolicy(Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(5))))
 * )
 * // or KernelRetry's own policy with other options
 * const lenient = retrieve.pipe(KernelRetry.withPolicy(KernelRetry.policy({ maxRetries: 5, maxRetryAfter: "30 seconds" })))
 * ```
 */
export const withPolicy: {
  (
    schedule: Schedule.Schedule<unknown, KernelError>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, schedule: Schedule.Schedule<unknown, KernelError>): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, schedule: Schedule.Schedule<unknown, KernelError>): Effect.Effect<A, E, R> =>
    Effect.locally(self, currentPolicy, Option.some(schedule))
)

/**
 * The calls within `self` are not retried: each one's first failure is its failure (`withPolicy`
 * with `Schedule.stop`). For a caller that retries by its own rules, or must answer fast.
 *
 * @since 0.2.0
 * @category Combinators
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KernelRetry } from "effect-kernel"
 *
 * // a call (here a stand-in)
 * const retrieve = Effect.succeed("browser")
 *
 * const once = retrieve.pipe(KernelRetry.noRetries)
 * ```
 */
export const noRetries = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, currentPolicy, Option.some(Schedule.stop))

/**
 * `self` with `ref` set to `value` while it pulls its chunks, and only then: what the caller does
 * with a chunk (`Stream.runForEach`'s function, a `Stream.mapEffect` after it) runs with the fiber's
 * own value.
 */
const locallyPulled = <A, E, R, X>(
  self: Stream.Stream<A, E, R>,
  ref: FiberRef.FiberRef<X>,
  value: X
): Stream.Stream<A, E, R> =>
  Stream.fromPull(Effect.map(Stream.toPull(self), (pull) => Effect.locally(pull, ref, value)))

/**
 * {@link withPolicy} for a `Stream` the SDK gives directly (`Replays.download`,
 * `Filesystem.readFileStream`, `Computer.captureScreenshotStream`, ...): the calls the stream makes as
 * it runs are retried by `schedule`. The calls of what consumes the stream (a `Stream.runForEach`'s
 * function) keep the fiber's own policy.
 *
 * @since 0.2.0
 * @category Combinators
 * @example
 * ```ts
 * import { Schedule, Stream } from "effect"
 * import { KernelRetry } from "effect-kernel"
 *
 * // a stream the SDK gives (here a stand-in)
 * const download = Stream.make(new Uint8Array([1, 2, 3]))
 *
 * const patient = download.pipe(KernelRetry.withPolicyStream(Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(5)))))
 * ```
 */
export const withPolicyStream: {
  (
    schedule: Schedule.Schedule<unknown, KernelError>
  ): <A, E, R>(self: Stream.Stream<A, E, R>) => Stream.Stream<A, E, R>
  <A, E, R>(self: Stream.Stream<A, E, R>, schedule: Schedule.Schedule<unknown, KernelError>): Stream.Stream<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Stream.Stream<A, E, R>, schedule: Schedule.Schedule<unknown, KernelError>): Stream.Stream<A, E, R> =>
    locallyPulled(self, currentPolicy, Option.some(schedule))
)

/**
 * {@link noRetries} for a `Stream` the SDK gives directly (`Replays.download`,
 * `Filesystem.readFileStream`, `Computer.captureScreenshotStream`, ...): the calls the stream makes as
 * it runs are not retried. The calls of what consumes the stream (a `Stream.runForEach`'s function)
 * keep the fiber's own policy.
 *
 * @since 0.2.0
 * @category Combinators
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { KernelRetry } from "effect-kernel"
 *
 * // a stream the SDK gives (here a stand-in)
 * const download = Stream.make(new Uint8Array([1, 2, 3]))
 *
 * const once = download.pipe(KernelRetry.noRetriesStream)
 * ```
 */
export const noRetriesStream = <A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  locallyPulled(self, currentPolicy, Option.some(Schedule.stop))
