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
  // one property set on an object of the prototype (an object literal copied by `Object.assign` cost
  // about twice the rest of a timestamp's decode)
  const make = (epochMillis: number): DateTime.Utc => {
    const made = Object.create(prototype)
    made.epochMillis = epochMillis
    return made
  }
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

// RFC 3339 (section 5.6): `T` and `Z` in either case
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/
const rfc3339Message = "expected an RFC 3339 date-time such as 2025-01-02T03:04:05Z"

/** The number of two digits at `i` of `text` (checked as digits by the pattern). */
const two = (text: string, i: number): number => (text.charCodeAt(i) - 48) * 10 + text.charCodeAt(i + 1) - 48

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (month 1–12). */
const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  return era * 146097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719468
}

const daysIn = (year: number, month: number): number =>
  month === 2
    ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28)
    : month === 4 || month === 6 || month === 9 || month === 11
    ? 30
    : 31

/**
 * The milliseconds of a text the RFC 3339 pattern accepted, computed from its digits (`Date.parse`
 * costs most of a decoded event's time), where every field is within its calendar range (month,
 * day of that month, hours < 24, minutes and seconds < 60, the offset's too); anything else (a 24:00,
 * a February 30) is no RFC 3339 date-time: `NaN` (`Date.parse` would move it to another day). A leap second (`23:59:60` in UTC, which
 * RFC 3339 allows and `Date` cannot hold) is the next second, as POSIX time counts it. The fraction is
 * cut to milliseconds, as `Date.parse` cuts it. test/fastDecode.test.ts compares the two.
 */
const millisOf = (text: string): number => {
  const year = two(text, 0) * 100 + two(text, 2)
  const month = two(text, 5)
  const day = two(text, 8)
  const hours = two(text, 11)
  const minutes = two(text, 14)
  const seconds = two(text, 17)
  let i = 19
  let millis = 0
  if (text.charCodeAt(i) === 46) {
    // "." then 1 to 9 digits: the first three are the milliseconds
    let scale = 100
    for (i++; i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57; i++) {
      millis += (text.charCodeAt(i) - 48) * scale
      scale /= 10
    }
    millis = Math.floor(millis)
  }
  let offset = 0
  const zone = text.charCodeAt(i)
  // not `Z` / `z`
  if (zone !== 90 && zone !== 122) {
    const offsetHours = two(text, i + 1)
    const offsetMinutes = two(text, i + 4)
    if (offsetHours > 23 || offsetMinutes > 59) return Number.NaN
    offset = (zone === 45 ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  }
  const leap = seconds === 60 && (hours * 60 + minutes - offset / 60_000 + 1440) % 1440 === 1439
  if (
    month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hours > 23 || minutes > 59 ||
    (seconds > 59 && !leap)
  ) return Number.NaN
  const epochMillis = daysFromCivil(year, month, day) * 86_400_000 + hours * 3_600_000 + minutes * 60_000 +
    seconds * 1000 + millis - offset
  // a leap second that would be year 10000's first second: past what a date-time's four digits write back
  return leap && epochMillis > lastMillis ? Number.NaN : epochMillis
}

/** 9999-12-31T23:59:59.999Z, the last instant a four-digit year writes. */
const lastMillis = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * The `DateTime.Utc` of an RFC 3339 `date-time`, or `undefined` when `text` is not one (the
 * pattern, then the calendar: `2025-13-01T00:00:00Z`, `2025-02-30T00:00:00Z` and `T24:00:00` are refused). The
 * decoding of {@link Timestamp}, also used on its own by the answers' compiled decoders.
 *
 * @internal
 */
export const parseTimestamp = (text: string): DateTime.Utc | undefined => {
  if (!rfc3339.test(text)) return undefined
  // the pattern always has a zone (`Z` or an offset), so the text is read as `DateTime.make` would
  const millis = millisOf(text)
  return Number.isNaN(millis) ? undefined : makeUtc(millis)
}

// One transformation (pattern check and `DateTime` in one step) rather than a refined string
// composed with `Schema.DateTimeUtc`: the same values pass, at about a third less of the cost of
// the 10,000-pool decode's timestamps.
/**
 * An RFC 3339 `date-time` (the OpenAPI format; the spec: "ISO 8601 UTC timestamp"), e.g.
 * `2025-01-02T03:04:05Z` or `2025-01-02T03:04:05.123+02:00`, decoded to a `DateTime.Utc`.
 * RFC 3339's lower-case `t` and `z` are read too, and a leap second (`23:59:60` in UTC) as the next second.
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
