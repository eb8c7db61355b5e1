/**
 * An RFC 3339 `date-time` decoded to a `DateTime.Utc`: the hand-written modules and the generated
 * schemas (`format: date-time`) share it. Public as `BrowserPools.Timestamp`.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Equal from "effect/Equal"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * A `DateTime.Utc` made without `DateTime.unsafeMake`'s cost (a `Date` made and checked again, then
 * `Object.defineProperty` for the hidden `partsUtc` cache: about 0.3 µs each, most of a decoded
 * event's time). The value's prototype is effect's own `Utc` prototype under one level that holds
 * `partsUtc` as a hidden accessor (its cache kept in a `WeakMap`): the same own keys (`epochMillis`),
 * the same methods, `DateTime.isDateTime`, `DateTime.isUtc`, `Equal.equals` and every `DateTime`
 * function work on it as on one `DateTime.unsafeMake` made.
 *
 * Checked once at import (equality both ways, the parts, the ISO text and the own keys); if a version
 * of effect made them differ, `DateTime.unsafeMake` is used instead.
 */
const makeUtcFast = (() => {
  const sample = DateTime.unsafeMake(0)
  const parts = new WeakMap<object, unknown>()
  const prototype: object = Object.create(Object.getPrototypeOf(sample), {
    partsUtc: {
      get(this: object) {
        return parts.get(this)
      },
      set(this: object, value: unknown) {
        parts.set(this, value)
      },
      enumerable: false,
      configurable: true
    }
  })
  const make = (epochMillis: number): DateTime.Utc => Object.assign(Object.create(prototype), { epochMillis })
  const millis = Date.UTC(2025, 0, 2, 3, 4, 5, 6)
  const made = make(millis)
  const expected = DateTime.unsafeMake(millis)
  const same = DateTime.isDateTime(made) && DateTime.isUtc(made) && Equal.equals(made, expected) &&
    Equal.equals(expected, made) && DateTime.formatIso(made) === DateTime.formatIso(expected) &&
    DateTime.toParts(made).millis === 6 && DateTime.toParts(made).day === 2 &&
    Object.keys(made).join() === Object.keys(expected).join()
  return same ? make : DateTime.unsafeMake
})()

/**
 * The `DateTime.Utc` of a number of milliseconds since the epoch (finite, within `Date`'s range):
 * `DateTime.unsafeMake(epochMillis)`, made more cheaply.
 *
 * @internal
 */
export const makeUtc = (epochMillis: number): DateTime.Utc => makeUtcFast(epochMillis)

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/
const rfc3339Message = "expected an RFC 3339 date-time such as 2025-01-02T03:04:05Z"

/**
 * The `DateTime.Utc` of an RFC 3339 `date-time`, or `undefined` when `text` is not one (the
 * pattern, then the calendar: `2025-13-01T00:00:00Z` is refused). The decoding of {@link Timestamp},
 * also used on its own by the event streams' decoders (without the schema's machinery).
 *
 * @internal
 */
export const parseTimestamp = (text: string): DateTime.Utc | undefined => {
  if (!rfc3339.test(text)) return undefined
  // the pattern always has a zone (`Z` or an offset), so `Date.parse` reads it as `DateTime.make` would
  const millis = Date.parse(text)
  return Number.isNaN(millis) ? undefined : makeUtc(millis)
}

// One transformation (pattern check and `DateTime` in one step) rather than a refined string
// composed with `Schema.DateTimeUtc`: the same values pass, at about a third less of the cost of
// the 10,000-pool decode's timestamps.
/**
 * An RFC 3339 `date-time` (the OpenAPI format; the spec: "ISO 8601 UTC timestamp"), e.g.
 * `2025-01-02T03:04:05Z` or `2025-01-02T03:04:05.123+02:00`, decoded to a `DateTime.Utc`.
 * Anything else (`"0"`, `"yesterday"`, a date without a time or zone) is refused.
 *
 * @internal
 */
export const Timestamp: Schema.Schema<DateTime.Utc, string> = Schema.transformOrFail(
  Schema.String,
  Schema.DateTimeUtcFromSelf,
  {
    strict: true,
    decode: (text, _, ast) => {
      const made = parseTimestamp(text)
      return made === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, text, rfc3339Message))
        : ParseResult.succeed(made)
    },
    encode: (dateTime) => ParseResult.succeed(DateTime.formatIso(dateTime))
  }
).annotations({
  identifier: "Timestamp",
  arbitrary: () => (fc) =>
    fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
      .map((date) => DateTime.unsafeMake(date))
})
