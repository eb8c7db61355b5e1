import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"
import { astHoldsSecret } from "./secrets.js"

/**
 * The longest message or excerpt an error built from server data carries, in UTF-16 code units.
 *
 * @internal
 */
export const maxMessageLength = 4096

/**
 * An answer's `Content-Type` as an error message names it: `no content-type` when the header is
 * absent, `an empty content-type` when its value is blank (HTTP's whitespace, spaces and tabs; or
 * only commas between them, as the transports join blank header lines that repeat), else
 * `content-type <value>` (bounded).
 *
 * @internal
 */
export const contentTypeShown = (contentType: string | undefined): string =>
  contentType === undefined
    ? "no content-type"
    : /^[ \t,]*$/.test(contentType)
    ? "an empty content-type"
    : `content-type ${bound(contentType, 100)}`

/** How many characters `JSON.stringify` (and `util.inspect`) writes for the UTF-16 code unit `code`. */
const escapedWidth = (code: number): number =>
  code < 0x20
    ? (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6)
    : code === 0x22 || code === 0x5c
    ? 2
    : 1

/**
 * `text` cut so that it is at most `max` code units long AND renders in at most `max` characters
 * once escaped by `JSON.stringify` (control characters, quotes, backslashes and lone surrogates
 * take more than one): an ellipsis marks the cut. Never splits a surrogate pair.
 *
 * @internal
 */
export const bound = (text: string, max: number = maxMessageLength): string => {
  if (text.length * 6 <= max) return text
  const limit = Math.max(0, max - 1)
  let used = 0
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    let units = 1
    let width: number
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        units = 2
        width = 2
      } else {
        width = 6
      }
    } else {
      width = code >= 0xdc00 && code <= 0xdfff ? 6 : escapedWidth(code)
    }
    if (used + width > (i + units === text.length ? max : limit)) break
    used += width
    i += units
  }
  return i === text.length ? text : `${text.slice(0, i)}…`
}

/**
 * What a `JSON.parse` failure says, without the text it quotes: V8 quotes the source around the
 * error (up to ten characters each side, or all of a short source: `Unexpected token 'k', "{"key":
 * sk_live_ab"... is not valid JSON`), which may be part of a secret of the answer. The quoted part
 * is dropped (`Unexpected token 'k' (not valid JSON)`); the other messages quote nothing and are
 * kept (`Unexpected end of JSON input`, `... in JSON at position 7`).
 *
 * @internal
 */
export const jsonSyntaxMessage = (cause: unknown): string => {
  const message = cause instanceof Error ? cause.message : String(cause)
  if (!message.endsWith("is not valid JSON")) return message
  // the quote follows the token (`'x', "`), or starts the message (`"undefined" is not ...`)
  const quoted = message.startsWith("\"") ? 0 : message.search(/, (?:\.\.\.)?"/)
  return quoted === -1 ? message : `${message.slice(0, quoted)}${quoted === 0 ? "" : " "}(not valid JSON)`
}

const previewLength = 120

/**
 * A short description of a value from a response body: its kind, and for scalars a bounded
 * rendering. Never walks into nested values, so its cost does not depend on the input's size or depth.
 *
 * @internal
 */
export const preview = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(bound(value, previewLength))
    case "number":
    case "boolean":
    case "bigint":
      return String(value)
    case "undefined":
      return "undefined"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`
      const keys: Array<string> = []
      let count = 0
      for (const key in value) {
        if (count < 5) keys.push(JSON.stringify(bound(key, 40)))
        count++
        if (count > 1000) break
      }
      return count === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}${count > 5 ? ", …" : ""}`
    }
    default:
      return typeof value
  }
}

const describeAst = (ast: unknown): string => {
  try {
    return bound(String(ast), 200)
  } catch {
    return "the expected type"
  }
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0 ? "" : `at ${bound(path.map((key) => `[${JSON.stringify(String(key))}]`).join(""), 400)}: `

/**
 * A bounded, non-recursive rendering of a decoding failure: the path to the first failing value,
 * what was expected there, and a preview of what was found. Unlike `TreeFormatter`, it never
 * renders the whole actual value (which may be megabytes, or nested deeper than the stack).
 *
 * @internal
 */
/** Whether `ast` expects an object or an array (as sent on the wire), or a union of some. */
const structured = (ast: AST.AST, depth: number = 0): boolean => {
  const encoded = AST.encodedAST(ast)
  return AST.isTypeLiteral(encoded) || AST.isTupleType(encoded) ||
    (depth < 8 && AST.isUnion(encoded) && encoded.types.some((member) => structured(member, depth + 1)))
}

/**
 * What was found instead of a value, unless a `Redacted` (a secret) was expected there, or a
 * string where an object was: a whole answer encoded twice (a proxy's JSON string of the JSON),
 * whose secrets would be quoted with it; its length is shown instead.
 */
const hiddenSecret = "a value that is not one (not shown: it may be a secret)"

const shown = (ast: AST.AST, actual: unknown): string =>
  describeAst(ast).includes("Redacted(")
    ? hiddenSecret
    : typeof actual === "string" && structured(ast)
    ? `a string of ${actual.length} characters (not shown: it may be a whole answer, secrets included)`
    : preview(actual)

export const formatParseError = (error: ParseResult.ParseError): string => {
  const path: Array<PropertyKey> = []
  let issue: ParseResult.ParseIssue = error.issue
  // whether the value found is where a secret was expected: a schema holding a `Redacted` met on
  // the way with a value that is not a container (the encoded side of `Redacted(String)` is a plain
  // `string`, a member of `NullOr(Redacted(...))` the literal `null`: neither says "Redacted")
  let secret = false
  // (a string where a structure was, a whole answer encoded twice, is measured as before)
  const shownHere = (ast: AST.AST, actual: unknown): string =>
    secret && !(typeof actual === "string" && structured(ast)) ? hiddenSecret : shown(ast, actual)
  // the issue tree follows the schema, not the data; the bound is a guard only
  for (let depth = 0; depth < 1000; depth++) {
    if (
      !secret && issue._tag !== "Pointer" && issue._tag !== "Unexpected" && issue._tag !== "Missing" &&
      (typeof issue.actual !== "object" || issue.actual === null) &&
      astHoldsSecret(issue.ast)
    ) {
      secret = true
    }
    switch (issue._tag) {
      case "Pointer": {
        const at = issue.path
        if (typeof at === "object") path.push(...at)
        else path.push(at)
        issue = issue.issue
        continue
      }
      case "Composite": {
        const issues = issue.issues
        issue = "_tag" in issues ? issues : issues[0]
        continue
      }
      case "Refinement":
      case "Transformation": {
        if (issue.kind === "From" || issue.kind === "Encoded") {
          issue = issue.issue
          continue
        }
        return bound(
          `${pathText(path)}expected ${describeAst(issue.ast)}, got ${shownHere(issue.ast, issue.actual)}${
            issue.issue._tag === "Type" && issue.issue.message !== undefined
              ? ` (${bound(issue.issue.message, 400)})`
              : ""
          }`
        )
      }
      case "Missing":
        return bound(`${pathText(path)}is missing (expected ${describeAst(issue.ast)})`)
      case "Unexpected":
        return bound(`${pathText(path)}is unexpected, got ${preview(issue.actual)}`)
      case "Forbidden":
        return bound(`${pathText(path)}cannot be decoded synchronously`)
      case "Type":
        return bound(`${pathText(path)}expected ${describeAst(issue.ast)}, got ${shownHere(issue.ast, issue.actual)}`)
    }
  }
  return "the body does not match the expected schema"
}

/**
 * Byte chunks as one array (a copy, even of a single chunk: the result owns its buffer).
 *
 * @internal
 */
export const concatBytes = (chunks: Iterable<Uint8Array>): Uint8Array<ArrayBuffer> => {
  let size = 0
  for (const chunk of chunks) size += chunk.length
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/**
 * Bytes gathered a chunk at a time in one buffer that doubles as it grows: a server dripping one
 * byte per read costs a byte each, not an object each (a `Uint8Array` kept per chunk, or a
 * cons-string node per decoded piece, is ~100 bytes of heap for one byte of body). The buffer is
 * at most twice its bytes, and never more than the largest power of two times 64 that they need.
 *
 * @internal
 */
export class GrowableBytes {
  private buffer: Uint8Array<ArrayBuffer> = new Uint8Array(0)
  /** How many bytes it holds: `buffer[0, length)`. */
  length = 0

  /** Appends `chunk[from, to)` (a copy: the transport may reuse its buffers). */
  append(chunk: Uint8Array, from = 0, to = chunk.length): void {
    const needed = this.length + to - from
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2, 64))
      grown.set(this.buffer.subarray(0, this.length))
      this.buffer = grown
    }
    this.buffer.set(chunk.subarray(from, to), this.length)
    this.length = needed
  }

  /** The bytes held: a view of the buffer (read it before the next `append`). */
  view(): Uint8Array<ArrayBuffer> {
    return this.buffer.subarray(0, this.length)
  }

  /** Emptied; a buffer grown past `keep` bytes is let go. */
  clear(keep = 0): void {
    this.length = 0
    if (this.buffer.length > keep) this.buffer = new Uint8Array(0)
  }
}
