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
