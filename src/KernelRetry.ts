/**
 * The retry policy of effect-kernel, as `Schedule`s that can be used, composed or replaced.
 *
 * All five operations are idempotent (reads, a visibility flag that is set, not toggled, and a
 * delete that is a no-op on a stopped deployment), so retrying any of them is safe.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Interval from "effect/ScheduleInterval"
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
 * `Retry-After` (capped at `maxRetryAfter`) when it sent one, the jittered {@link backoff}
 * otherwise.
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
  return requested !== undefined ? Duration.min(requested, maxRetryAfter) : backoff(attempt, jitter)
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
