import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** @internal */
export type HeaderRecord = Readonly<Record<string, string | undefined>>

const decimal = /^\s*\d+(\.\d+)?\s*$/

/**
 * Reads a `Retry-After` value: non-negative seconds, or an HTTP date (relative to `now`).
 * Anything else (negative, garbage) is none.
 *
 * @internal
 */
export const parseRetryAfter = (value: string | undefined, now: number): Option.Option<Duration.Duration> => {
  if (value === undefined) return Option.none()
  if (decimal.test(value)) return Option.some(Duration.millis(Math.round(Number(value) * 1000)))
  // an HTTP date must name a weekday or month; plain numbers with signs are not dates
  if (!/[a-z]/i.test(value)) return Option.none()
  const at = Date.parse(value)
  return Number.isNaN(at) ? Option.none() : Option.some(Duration.millis(Math.max(0, at - now)))
}

/**
 * The server's requested wait: `retry-after-ms` first, then `Retry-After`.
 *
 * @internal
 */
export const fromHeaders = (headers: HeaderRecord, now: number): Option.Option<Duration.Duration> => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && decimal.test(ms)) return Option.some(Duration.millis(Number(ms)))
  return parseRetryAfter(headers["retry-after"], now)
}

/**
 * The `x-should-retry` header, when it is `true` or `false`.
 *
 * @internal
 */
export const shouldRetry = (headers: HeaderRecord): boolean | undefined => {
  const value = headers["x-should-retry"]
  return value === "true" ? true : value === "false" ? false : undefined
}
