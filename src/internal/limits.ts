/**
 * The document's value limits (`minLength`, `maximum`, `pattern`, `maxItems`, ...) on the generated
 * schemas: checked when a value is encoded, that is on what the SDK sends (a request's body, query
 * and header parameters), never when an answer is decoded. A request that breaks one fails as
 * `InvalidInput` naming the field before anything is sent; an answer whose value is out of a
 * documented range (the service moved a limit) still decodes: answers stay forward compatible.
 *
 * @internal
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * The limits of a value, as JSON Schema spells them (`pattern` is the document's text, a regular
 * expression with `u`, compiled on first use).
 *
 * @internal
 */
export interface Limits {
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
  /** A string's `format`, of those the SDK checks (the others are types of their own or free). */
  readonly format?: Format
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: number
  readonly exclusiveMaximum?: number
  readonly multipleOf?: number
  readonly minItems?: number
  readonly maxItems?: number
  readonly uniqueItems?: boolean
}

/**
 * The string formats of the document checked on what the SDK sends: `uuid` (a process's id in a
 * path), as JSON Schema's validators (and Prism) read it. Not `uri`: the document's one request
 * field with it (`login_url`) is cleared by sending an empty string, which is no URI.
 *
 * @internal
 */
export type Format = "uuid"

const formats: Record<Format, { readonly test: RegExp; readonly text: string }> = {
  uuid: { test: /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i, text: "a UUID" }
}

/**
 * Whether the document's `format` is one the SDK checks.
 *
 * @internal
 */
export const isFormat = (format: unknown): format is Format =>
  typeof format === "string" && Object.prototype.hasOwnProperty.call(formats, format)

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`

const hasDuplicates = (items: ReadonlyArray<unknown>): boolean => {
  const seen = new Set<string>()
  for (const item of items) {
    const key = JSON.stringify(item) ?? "undefined"
    if (seen.has(key)) return true
    seen.add(key)
  }
  return false
}

/**
 * Why a value breaks its limits (`undefined`: it keeps them, or is not a string, a number or an
 * array). The value of a string is never quoted (it may be a secret); its length is.
 *
 * @internal
 */
export const violation = (
  limits: Limits,
  value: unknown,
  regex: () => RegExp = () => new RegExp(limits.pattern ?? "", "u")
): string | undefined => {
  if (typeof value === "string") {
    // JSON Schema counts characters (code points), not UTF-16 units
    const length = limits.minLength === undefined && limits.maxLength === undefined ? 0 : [...value].length
    if (limits.minLength !== undefined && length < limits.minLength) {
      return `must be at least ${plural(limits.minLength, "character")} long, got ${length}`
    }
    if (limits.maxLength !== undefined && length > limits.maxLength) {
      return `must be at most ${plural(limits.maxLength, "character")} long, got ${length}`
    }
    if (limits.pattern !== undefined && !regex().test(value)) return `must match the pattern ${limits.pattern}`
    if (limits.format !== undefined && !formats[limits.format].test.test(value)) {
      return `must be ${formats[limits.format].text}`
    }
    return undefined
  }
  if (typeof value === "number") {
    if (limits.minimum !== undefined && value < limits.minimum) return `must be >= ${limits.minimum}, got ${value}`
    if (limits.maximum !== undefined && value > limits.maximum) return `must be <= ${limits.maximum}, got ${value}`
    if (limits.exclusiveMinimum !== undefined && value <= limits.exclusiveMinimum) {
      return `must be > ${limits.exclusiveMinimum}, got ${value}`
    }
    if (limits.exclusiveMaximum !== undefined && value >= limits.exclusiveMaximum) {
      return `must be < ${limits.exclusiveMaximum}, got ${value}`
    }
    if (limits.multipleOf !== undefined && !Number.isInteger(value / limits.multipleOf)) {
      return `must be a multiple of ${limits.multipleOf}, got ${value}`
    }
    return undefined
  }
  if (Array.isArray(value)) {
    if (limits.minItems !== undefined && value.length < limits.minItems) {
      return `must have at least ${plural(limits.minItems, "item")}, got ${value.length}`
    }
    if (limits.maxItems !== undefined && value.length > limits.maxItems) {
      return `must have at most ${plural(limits.maxItems, "item")}, got ${value.length}`
    }
    if (limits.uniqueItems === true && hasDuplicates(value)) return "must not have the same item twice"
  }
  return undefined
}

/**
 * A schema with the document's limits: decoding is the schema's own (an answer is not checked
 * against them); encoding checks the limits first, failing with a message that says which one
 * (the field is the path). The types are the schema's.
 *
 * @internal
 */
export const limited = /* @__NO_SIDE_EFFECTS__ */ <A, I>(
  schema: Schema.Schema<A, I>,
  limits: Limits
): Schema.Schema<A, I> => {
  let compiled: RegExp | undefined
  const regex = () => compiled ??= new RegExp(limits.pattern ?? "", "u")
  return Schema.transformOrFail(schema, Schema.typeSchema(schema), {
    strict: true,
    decode: ParseResult.succeed,
    encode: (value, _, ast) => {
      const problem = violation(limits, value, regex)
      return problem === undefined ? ParseResult.succeed(value) : ParseResult.fail(
        new ParseResult.Type(ast, value, problem)
      )
    }
  })
}
