import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** @internal */
export type HeaderRecord = Readonly<Record<string, string | undefined>>

const decimal = /^\s*\d+(\.\d+)?\s*$/

const day = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
const month = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
const time = "\\d{2}:\\d{2}:\\d{2}"

/**
 * The three forms of an HTTP date (RFC 9110 §5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
 * the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime's (`Sun Nov  6 08:49:37
 * 1994`, which is UTC). `Date.parse` alone accepts far more: `Retry 5` or `a 1` read as a day of
 * 2001 (no wait at all), `x 2030` as the year 2030 (the longest wait allowed).
 */
const httpDate = new RegExp(
  `^(?:${day}, \\d{2} ${month} \\d{4} ${time} GMT|${day}[a-z]*, \\d{2}-${month}-\\d{2} ${time} GMT|${day} ${month} [ \\d]\\d ${time} \\d{4})$`,
  "i"
)
const asctime = /\d{4}$/

/**
 * Reads a `Retry-After` value: non-negative seconds, or an HTTP date (relative to `now`) in one of
 * its three forms. Anything else (negative, garbage, another date format) is none.
 *
 * @internal
 */
export const parseRetryAfter = (value: string | undefined, now: number): Option.Option<Duration.Duration> => {
  if (value === undefined) return Option.none()
  if (decimal.test(value)) return Option.some(Duration.millis(Math.round(Number(value) * 1000)))
  const trimmed = value.trim()
  if (!httpDate.test(trimmed)) return Option.none()
  // asctime's form names no zone: UTC, not the local time `Date.parse` would take it for
  const at = Date.parse(asctime.test(trimmed) ? `${trimmed} GMT` : trimmed)
  return Number.isNaN(at) ? Option.none() : Option.some(Duration.millis(Math.max(0, at - now)))
}

/**
 * The server's requested wait: `retry-after-ms` first when it asks for one (a `0` asks for none, and
 * leaves `Retry-After` to say, as the official client reads them), then `Retry-After`.
 *
 * @internal
 */
export const fromHeaders = (headers: HeaderRecord, now: number): Option.Option<Duration.Duration> => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && decimal.test(ms) && Number(ms) > 0) return Option.some(Duration.millis(Number(ms)))
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
