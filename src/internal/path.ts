import * as Effect from "effect/Effect"
import { InvalidInput } from "../KernelError.js"

/**
 * Percent-encodes an identifier as exactly one path segment. Empty ids, `.` and `..` (which URL
 * normalisation would resolve to another route, even when encoded) and strings that are not
 * well-formed Unicode are rejected before any request is sent.
 *
 * @internal
 */
export const segment = (field: string, value: string): Effect.Effect<string, InvalidInput> => {
  const encoded = encodeSegment(field, value)
  return typeof encoded === "string" ? Effect.succeed(encoded) : Effect.fail(encoded)
}

/**
 * {@link segment} without an effect: the encoded segment, or the `InvalidInput` refusing it.
 *
 * @internal
 */
export const encodeSegment = (field: string, value: unknown): string | InvalidInput => {
  if (typeof value !== "string" || value.length === 0) {
    return new InvalidInput({ field, message: `${field} must be a non-empty string` })
  }
  if (value === "." || value === "..") {
    return new InvalidInput({ field, message: `${field} cannot be "${value}"` })
  }
  try {
    return encodeURIComponent(value)
  } catch {
    return new InvalidInput({ field, message: `${field} is not well-formed Unicode` })
  }
}

/**
 * The params object of an operation, checked: untyped callers may pass `null`, a string or
 * nothing, which must be `InvalidInput`, never a defect.
 *
 * @internal
 */
export const params = <P extends object>(value: P): Effect.Effect<P, InvalidInput> =>
  typeof value === "object" && value !== null
    ? Effect.succeed(value)
    : Effect.fail(
      new InvalidInput({
        field: "params",
        message: `params must be an object, got ${value === null ? "null" : typeof value}`
      })
    )

/**
 * A lone surrogate: a string holding one is not well-formed Unicode, which a query string cannot
 * carry (`URLSearchParams` would send U+FFFD in its place, another value than the one given). The
 * simulator refuses a JSON body holding one by the same test.
 *
 * @internal
 */
export const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The path (`text`, `actions.2.text`, as `InvalidInput` names a field) of the first string of a JSON
 * value, or of its keys, that is not well-formed Unicode, if any.
 *
 * @internal
 */
export const illFormedAt = (value: unknown, path: string, depth = 0): string | undefined => {
  if (typeof value === "string") return loneSurrogate.test(value) ? path || "body" : undefined
  if (depth >= 64 || typeof value !== "object" || value === null) return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = illFormedAt(value[i], path === "" ? String(i) : `${path}.${i}`, depth + 1)
      if (at !== undefined) return at
    }
    return undefined
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue
    const at = path === "" ? key : `${path}.${key}`
    if (loneSurrogate.test(key)) return at
    const inner = illFormedAt(Reflect.get(value, key), at, depth + 1)
    if (inner !== undefined) return inner
  }
  return undefined
}
