/**
 * The one definition of every operation: its method, path template and parameters, request body,
 * kind of success, documented error statuses, span attributes and idempotency. The operation
 * services (`make<Op>`), their error union types, the simulator's routes and the status table of
 * docs/errors.md are all derived from this table.
 *
 * Adding an operation: one entry here (and in {@link table}), one public module with its types,
 * schemas, `make<Op>` / `layer<Op>` / accessor and docs, and one simulator handler.
 */
import * as Chunk from "effect/Chunk"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Stream from "effect/Stream"
import * as KernelError from "../KernelError.js"
import { bound } from "./bounded.js"
import { isSendableHeaderValue } from "./credentials.js"
import type { Answer, Method, Operation, Parameter, StatusErrorClass } from "./definition.js"
import * as FastDecode from "./fastDecode.js"
import { encodeSegment, illFormedAt, loneSurrogate } from "./path.js"
import * as Upload from "./upload.js"

export type {
  /** @internal */
  Answer,
  /** @internal */
  Method,
  /** @internal */
  Operation,
  /** @internal */
  Parameter,
  /** @internal */
  StatusErrorClass
}

/**
 * One operation: an {@link Operation} of `definition.ts` (the generator's contract), kept with its
 * literal types.
 *
 * @internal
 */
export type Definition = Operation

const define = <const D extends Operation>(definition: D): D => definition

/** A path parameter holding a string (`{field}` in the template, `name` in the document). */
const pathParameter = <const Field extends string, const Name extends string = Field>(
  field: Field,
  name?: Name
) => ({ field, name: name ?? field, in: "path", required: true, schema: Schema.String }) as const

// Every call in a definition is marked pure: a program that never uses an operation bundles none
// of it (its arguments would otherwise be kept for their possible side effects).
// The public modules decode these five answers with their own schemas (`Computer.MousePosition`,
// `BrowserPools.BrowserPool`...), which this module cannot import (they import it: an import cycle
// that the modules' top-level code cannot survive). The schemas here are the answers' wire shapes.

/** @internal */
export const downloadReplay = /*#__PURE__*/ define({
  name: "downloadReplay",
  operationId: "downloadReplay",
  module: "Replays",
  accessor: "download",
  method: "GET",
  path: "/browsers/{id}/replays/{replayId}",
  parameters: [/*#__PURE__*/ pathParameter("id"), /*#__PURE__*/ pathParameter("replayId", "replay_id")],
  body: undefined,
  answers: { 200: { kind: "bytes", contentType: "video/mp4" }, 202: { kind: "none" } },
  errors: [KernelError.BadRequest, KernelError.Forbidden, KernelError.NotFound],
  attributes: { id: "kernel.browser.id", replayId: "kernel.replay.id" },
  idempotent: true
})

/** @internal */
export const setCursorVisibility = /*#__PURE__*/ define({
  name: "setCursorVisibility",
  operationId: "setCursorVisibility",
  module: "Computer",
  accessor: "setCursorVisibility",
  method: "POST",
  path: "/browsers/{id}/computer/cursor",
  parameters: [/*#__PURE__*/ pathParameter("id")],
  body: { kind: "json", schema: /*#__PURE__*/ Schema.Struct({ hidden: Schema.Boolean }), required: true },
  answers: { 200: { kind: "json", schema: /*#__PURE__*/ Schema.Struct({ ok: Schema.Boolean }) } },
  errors: [KernelError.BadRequest, KernelError.NotFound],
  attributes: { id: "kernel.browser.id", hidden: "kernel.cursor.hidden" },
  idempotent: true
})

/** @internal */
export const getMousePosition = /*#__PURE__*/ define({
  name: "getMousePosition",
  operationId: "getMousePosition",
  module: "Computer",
  accessor: "getMousePosition",
  method: "POST",
  path: "/browsers/{id}/computer/get_mouse_position",
  parameters: [/*#__PURE__*/ pathParameter("id")],
  body: undefined,
  answers: { 200: { kind: "json", schema: /*#__PURE__*/ Schema.Struct({ x: Schema.Int, y: Schema.Int }) } },
  errors: [KernelError.BadRequest, KernelError.NotFound],
  attributes: { id: "kernel.browser.id" },
  idempotent: true
})

/** @internal */
export const listBrowserPools = /*#__PURE__*/ define({
  name: "listBrowserPools",
  operationId: "listBrowserPools",
  module: "BrowserPools",
  accessor: "list",
  method: "GET",
  path: "/browser_pools",
  parameters: [],
  body: undefined,
  answers: { 200: { kind: "json", schema: /*#__PURE__*/ Schema.Array(Schema.Unknown) } },
  errors: [KernelError.Forbidden],
  attributes: {},
  idempotent: true
})

/** @internal */
export const deleteDeployment = /*#__PURE__*/ define({
  name: "deleteDeployment",
  operationId: "deleteDeployment",
  module: "Deployments",
  accessor: "delete",
  method: "DELETE",
  path: "/deployments/{id}",
  parameters: [/*#__PURE__*/ pathParameter("id")],
  body: undefined,
  answers: { 204: { kind: "none" } },
  errors: [KernelError.NotFound],
  attributes: { id: "kernel.deployment.id" },
  idempotent: true
})

/**
 * Every operation, in the order of the docs.
 *
 * @internal
 */
export const table = [
  downloadReplay,
  setCursorVisibility,
  getMousePosition,
  listBrowserPools,
  deleteDeployment
] as const

/** @internal */
export type Name = (typeof table)[number]["name"]

/**
 * The errors of a documented status of the operation.
 *
 * @internal
 */
export type StatusErrors<D extends Operation> = InstanceType<D["errors"][number]>

/**
 * The kinds of the operation's documented 2xx answers.
 *
 * @internal
 */
export type AnswerKinds<D extends Operation> = {
  readonly [K in keyof D["answers"]]: D["answers"][K] extends { readonly kind: infer Kind } ? Kind : never
}[keyof D["answers"]]

/**
 * Everything an operation can fail with, derived from its definition: its documented statuses,
 * the common errors, `InvalidInput` (its input or the credentials, refused before sending), and
 * `DecodeError` when one of its answers has a body to decode.
 *
 * @internal
 */
export type ErrorOf<D extends Operation> =
  | StatusErrors<D>
  | KernelError.CommonError
  | ([AnswerKinds<D>] extends ["none"] ? never : KernelError.DecodeError)
  | KernelError.InvalidInput

/** Whether one of the operation's answers has a body to decode. @internal */
export const hasBody = (definition: Operation): boolean =>
  Object.values(definition.answers).some((answer) => answer.kind !== "none")

/**
 * The error tags an operation's error union has beyond the common ones (docs/errors.md).
 *
 * @internal
 */
export const ownTags = (definition: Operation): ReadonlyArray<string> => [
  ...definition.errors.map((Class) => tagOf(Class)),
  ...(hasBody(definition) ? ["DecodeError"] : []),
  "InvalidInput"
]

/** @internal */
export const tagOf = (Class: StatusErrorClass<KernelError.KernelError>): string => {
  const tag: unknown = "_tag" in Class ? Class._tag : undefined
  return typeof tag === "string" ? tag : Class.name
}

/**
 * A path template as segments: a literal, or the input field that fills it.
 *
 * @internal
 */
export type Segment = { readonly literal: string } | { readonly param: string }

/** @internal */
export const segmentsOf = (path: string): ReadonlyArray<Segment> =>
  path.split("/").slice(1).map((part) =>
    part.startsWith("{") && part.endsWith("}") ? { param: part.slice(1, -1) } : { literal: part }
  )

/**
 * The route a request is for, from its method and its decoded path segments: the operation, a
 * known path asked with another method (`WrongMethod`, with the allowed one), or `undefined`.
 *
 * @internal
 */
export const route = (
  method: string,
  segments: ReadonlyArray<string>
): Name | { readonly _tag: "WrongMethod"; readonly allow: string } | undefined => {
  for (const compiled of routes()) {
    if (compiled.segments.length !== segments.length) continue
    let matches = true
    for (let i = 0; i < segments.length; i++) {
      const expected = compiled.segments[i]
      if ("literal" in expected && expected.literal !== segments[i]) {
        matches = false
        break
      }
    }
    if (matches) {
      return compiled.method === method ? compiled.name : { _tag: "WrongMethod", allow: compiled.method }
    }
  }
  return undefined
}

// made on first use: a program that never routes (every client) keeps none of the table
const makeRoutes = () =>
  table.map((definition) => ({
    name: definition.name,
    method: definition.method,
    segments: segmentsOf(definition.path)
  }))
let routesMade: ReturnType<typeof makeRoutes> | undefined
const routes = () => routesMade ??= makeRoutes()

/**
 * What a call sends, built from its input: the path (each parameter percent-encoded as one
 * segment), the query parameters (as encoded by their schemas, a repeated name per array item),
 * the header parameters and the body (JSON or multipart encoded by its schema, or raw bytes), or
 * the input's `InvalidInput`.
 *
 * @internal
 */
export interface Prepared {
  readonly path: string
  readonly query: ReadonlyArray<readonly [string, string]> | undefined
  readonly headers: Readonly<Record<string, string>> | undefined
  /** The JSON body, encoded (`undefined`: none). */
  readonly body: unknown
  /** The JSON body's text, what is sent (made here: a value JSON cannot hold is `InvalidInput`, not a defect). */
  readonly json?: string | undefined
  /** A body that is not JSON: raw bytes with their content type (`multipart/form-data` included). */
  readonly content?: Content | undefined
  readonly attributes: Record<string, unknown>
}

/**
 * A body that is not JSON: bytes in memory (sent again by a retry), or a stream of them (files on
 * disk, re-read by each attempt, with their total length; or a caller's one-shot stream, never
 * retried).
 *
 * @internal
 */
export type Content =
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array; readonly contentType: string }
  | {
    readonly _tag: "Stream"
    readonly stream: Stream.Stream<Uint8Array, unknown>
    readonly contentType: string
    readonly contentLength: number | undefined
    readonly oneShot: boolean
    /** Whether a one-shot stream was ever read from (always `false` for a body that can be sent again). */
    readonly started: () => boolean
  }

/** A part's name or file name in a `Content-Disposition` header (as the HTML form encoding escapes it). */
const dispositionName = (name: string): string =>
  name.includes("\"") || name.includes("\r") || name.includes("\n")
    ? name.replace(/\r\n|\r|\n/g, "%0D%0A").replace(/"/g, "%22")
    : name

/**
 * The file name of a file part without one: the field's last `[key]` (`files[0][file]`: `file`), else
 * the field's; as `name.replace(/^.*\[([^\]]*)\]$/, "$1")` gives it (a line break before that `[`: the
 * field's), without running a regular expression per part.
 *
 * @internal
 */
export const fieldFileName = (name: string): string => {
  const open = name.lastIndexOf("[")
  if (open < 0 || !name.endsWith("]") || name.indexOf("]", open) !== name.length - 1) return name
  const head = name.slice(0, open)
  return head.includes("\n") || head.includes("\r") || head.includes("\u2028") || head.includes("\u2029")
    ? name
    : name.slice(open + 1, -1)
}

const utf8 = new TextEncoder()

/** Whether a value holds a file (then an object is flattened into `key[field]` parts, not JSON). */
const holdsFile = (value: unknown, depth = 0): boolean => {
  if (Upload.isUpload(value)) return true
  if (depth >= 8 || typeof value !== "object" || value === null) return false
  for (const key in value) {
    if (Object.prototype.hasOwnProperty.call(value, key) && holdsFile(Reflect.get(value, key), depth + 1)) return true
  }
  return false
}

/** A value's JSON text, or why it cannot be sent as JSON (a bigint, a cycle, a `toJSON` that throws). */
const jsonText = (value: unknown): string | { readonly message: string } => {
  try {
    return JSON.stringify(value)
  } catch (cause) {
    return { message: `cannot be sent as JSON: ${bound(messageOf(cause), 200)}` }
  }
}

const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** A body the content is made of: bytes, or a file / stream sent as it is read. */
type Piece = Uint8Array | Upload.FileSource | Stream.Stream<Uint8Array, unknown>

/** Random bytes for boundaries, drawn from the system's generator 4 KiB at a time (see `nextBoundary`). */
const randomPool = Buffer.allocUnsafeSlow(4096)
let randomUsed = randomPool.length

/**
 * A multipart body's boundary: `effect-kernel-` and 128 random bits of its own in hex (46 characters, under
 * RFC 2046's 70), so that no file content can hold it but by chance, and seeing one body's tells nothing of
 * the next. The bits come from a pool filled by `crypto.getRandomValues`: a `crypto.randomUUID()` per
 * body cost about 5 % of a small form's calls per second (docs/performance.md).
 */
const nextBoundary = (): string => {
  if (randomUsed + 16 > randomPool.length) {
    globalThis.crypto.getRandomValues(randomPool)
    randomUsed = 0
  }
  const random = randomPool.toString("hex", randomUsed, randomUsed + 16)
  randomUsed += 16
  return `effect-kernel-${random}`
}

/**
 * The encoded fields of a multipart body as `multipart/form-data` (built here, the same on every
 * transport), named as the official client names them:
 * - a file (`Uint8Array`, `KernelFiles.file(path)`, a `Stream`) is a file part
 *   (`application/octet-stream`; its file name: the file's, else the field's);
 * - an array repeats its field with its index: `files[0][file]`, `files[0][dest_path]`;
 * - an object holding a file, and `env_vars`, are flattened: `key[field]`; another object is one
 *   JSON part (`application/json`, e.g. `source`);
 * - a string, number or boolean is a text part; `undefined` fields are left out.
 * Bytes only: one `Uint8Array`. With files or streams: a stream of the parts (its length known
 * unless a caller's stream is in it).
 */
/** Why a multipart body cannot be sent, naming the field (its path: `env_vars[KEY]`, `files[0][file]`). */
interface Refused {
  readonly field: string
  readonly message: string
}

// the field as `InvalidInput` names a JSON body's (`extensions.0.zip_file`), the message as the part is
// named (`extensions[0][zip_file]`)
const fieldOf = (name: string): string => name.replace(/\[([^\]]*)\]/g, ".$1")

const refused = (name: string, message: string): Refused => ({ field: fieldOf(name), message })

const multipartOf = (fields: unknown): Content | Refused => {
  if (typeof fields !== "object" || fields === null) return refused("body", "a multipart body must be an object")
  const boundary = nextBoundary()
  // the text between files, as text: encoded once, into the body's one buffer (or, streamed, per run)
  const pieces: Array<string | Piece> = []
  let text = ""
  let inMemory = true
  const opening = `--${boundary}\r\nContent-Disposition: form-data; name="`
  const part = (name: string, value: unknown, depth: number): Refused | undefined => {
    if (value === undefined) return undefined
    if (depth > 8) return refused(name, `${name}: nested too deep for a multipart body`)
    // a lone surrogate would be sent as U+FFFD: another value than the one given
    if (loneSurrogate.test(name)) return refused(name, `${name} is not well-formed Unicode`)
    const head = opening + dispositionName(name) + "\""
    if (Upload.isUpload(value)) {
      const fileName = Upload.isFileSource(value) ? value.name : fieldFileName(name)
      if (loneSurrogate.test(fileName)) return refused(name, `${name}: its file name is not well-formed Unicode`)
      pieces.push(
        `${text}${head}; filename="${dispositionName(fileName)}"\r\nContent-Type: application/octet-stream\r\n\r\n`
      )
      if (!(value instanceof Uint8Array)) inMemory = false
      pieces.push(value)
      text = "\r\n"
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const refusal = part(`${name}[${i}]`, value[i], depth + 1)
        if (refusal !== undefined) return refusal
      }
    } else if (typeof value === "string") {
      if (loneSurrogate.test(value)) return refused(name, `${name} is not well-formed Unicode`)
      text += `${head}\r\n\r\n${value}\r\n`
    } else if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
      text += `${head}\r\n\r\n${String(value)}\r\n`
    } else if (typeof value === "object" && value !== null) {
      if (name === "env_vars" || holdsFile(value)) {
        for (const key in value) {
          if (!Object.prototype.hasOwnProperty.call(value, key)) continue
          // a part's name cannot carry a quote or a line break (they would be sent escaped: another name),
          // nor a bracket (`env_vars[A]B[C]` is not one key)
          if (/["\r\n[\]]/.test(key)) {
            return {
              field: `${fieldOf(name)}.${key}`,
              message: `${name}: the key ${
                JSON.stringify(key)
              } cannot be sent as a part's name (a quote, a line break or a bracket)`
            }
          }
          const refusal = part(`${name}[${key}]`, Reflect.get(value, key), depth + 1)
          if (refusal !== undefined) return refusal
        }
        return undefined
      }
      const json = jsonText(value)
      if (typeof json !== "string") return refused(name, `${name}: ${json.message}`)
      if (json.includes("\\ud")) {
        const at = illFormedAt(value, name)
        if (at !== undefined) return refused(at, `${at} is not well-formed Unicode`)
      }
      text += `${head}\r\nContent-Type: application/json\r\n\r\n${json}\r\n`
    } else return refused(name, `${name}: cannot be sent as a multipart part`)
    return undefined
  }
  for (const name in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, name)) continue
    const refusal = part(name, Reflect.get(fields, name), 0)
    if (refusal !== undefined) return refusal
  }
  pieces.push(`${text}--${boundary}--\r\n`)
  const contentType = `multipart/form-data; boundary=${boundary}`
  if (inMemory) return { _tag: "Bytes", bytes: bytesOf(pieces), contentType }
  const streamed = streamOf(pieces.map((piece) => typeof piece === "string" ? utf8.encode(piece) : piece), contentType)
  return typeof streamed === "string" ? refused("body", streamed) : streamed
}

/** Text and bytes in one buffer, the text encoded into it as UTF-8 (no copy of it made on the way). */
const bytesOf = (pieces: ReadonlyArray<string | Piece>): Uint8Array => {
  let size = 0
  for (const piece of pieces) {
    size += typeof piece === "string" ? Buffer.byteLength(piece) : piece instanceof Uint8Array ? piece.length : 0
  }
  // a body of its own (not a slice of Node's pool of small buffers), written through a `Buffer` view
  const out = new Uint8Array(size)
  const view = Buffer.from(out.buffer, out.byteOffset, out.length)
  let offset = 0
  for (const piece of pieces) {
    if (typeof piece === "string") offset += view.write(piece, offset)
    else if (piece instanceof Uint8Array) {
      out.set(piece, offset)
      offset += piece.length
    }
  }
  return out
}

const never = (): boolean => false

/** Pieces as one stream body: its length when every piece's is known, one-shot when a stream is in it. */
const streamOf = (pieces: ReadonlyArray<Piece>, contentType: string): Content | string => {
  let length: number | undefined = 0
  let oneShot = false
  // each file's size as measured now: what its read must find (see `Upload.read`)
  const sizes = new Map<Upload.FileSource, number>()
  for (const piece of pieces) {
    if (piece instanceof Uint8Array) {
      if (length !== undefined) length += piece.length
    } else if (Upload.isFileSource(piece)) {
      const size = Upload.sizeOf(piece)
      if (typeof size === "string") return size
      sizes.set(piece, size)
      if (length !== undefined) length += size
    } else {
      length = undefined
      oneShot = true
    }
  }
  const streamOfPiece = (piece: Piece): Stream.Stream<Uint8Array, unknown> =>
    piece instanceof Uint8Array
      ? Stream.succeed(piece)
      : Upload.isFileSource(piece)
      ? Upload.read(piece, sizes.get(piece) ?? 0)
      : piece
  // the pieces one after the other: a concatenation hands each chunk on as it is, where a flatMap would
  // pass every chunk through a stream of its own (a raw body is one piece: its stream as it is)
  const [first] = pieces
  const stream = pieces.length === 1 && first !== undefined
    ? streamOfPiece(first)
    : Stream.concatAll(Chunk.fromIterable(pieces.map(streamOfPiece)))
  const once = oneShot ? Upload.once(stream) : undefined
  return {
    _tag: "Stream",
    stream: once === undefined ? stream : once.stream,
    contentType,
    contentLength: length,
    oneShot,
    started: once === undefined ? never : once.started
  }
}

const invalid = (field: string, message: string): Either.Either<never, KernelError.InvalidInput> =>
  Either.left(new KernelError.InvalidInput({ field, message }))

/**
 * The first issue of a parse error as `InvalidInput`, naming the field (its path under `field`).
 * `given` is what was encoded (the params, or the parameter's value): an issue inside a `Redacted`
 * it holds is about a secret's content, which the message never quotes.
 */
const invalidFrom = (
  field: string | undefined,
  error: ParseResult.ParseError,
  given: unknown
): Either.Either<never, KernelError.InvalidInput> => {
  const issue = meantIssue(ParseResult.ArrayFormatter.formatErrorSync(error))
  const inner = issue !== undefined && issue.path.length > 0 ? issue.path.map(String).join(".") : undefined
  const named = field === undefined ? inner ?? "body" : inner === undefined ? field : `${field}.${inner}`
  const message = issue === undefined
    ? "invalid"
    : insideSecret(given, issue.path)
    ? withoutActual(issue.message)
    : withoutSecret(issue.message)
  return invalid(named, `${named}: ${message}`)
}

/**
 * The issue of the shape the caller likely meant, among a union's branches' (each branch reports its
 * first issue): a key no branch has last; else the deepest (the branch that matched furthest: a
 * deployment from a `source` whose `ref` is not a string is refused for `source.ref`, not for the
 * `file` the other branch requires); at one depth, a wrong value before a missing one (a profile's
 * `name` that breaks its pattern, not the `id` the other branch requires); else the first.
 */
const meantIssue = (
  issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>
): ParseResult.ArrayFormatterIssue | undefined => {
  let meant: ParseResult.ArrayFormatterIssue | undefined
  for (const issue of issues) {
    if (meant === undefined || rankOf(issue) > rankOf(meant)) meant = issue
  }
  return meant
}

const rankOf = (issue: ParseResult.ArrayFormatterIssue): number =>
  issue._tag === "Unexpected" ? 0 : 1 + issue.path.length * 2 + (issue._tag === "Missing" ? 0 : 1)

/**
 * Whether the value at `path` in `given`, or one on the way to it, is a `Redacted`: an issue there
 * is about what a secret holds (`Redacted.make(1234)` where a `Redacted<string>` is expected: its
 * issue, "Expected string, actual 1234", says nothing of `Redacted`).
 */
const insideSecret = (given: unknown, path: ReadonlyArray<PropertyKey>): boolean => {
  let value = given
  for (const key of path) {
    if (Redacted.isRedacted(value)) return true
    if (typeof value !== "object" || value === null) return false
    value = Reflect.get(value, key)
  }
  return Redacted.isRedacted(value)
}

/** An issue's message about a secret's content: what was expected, never what was given. */
const withoutActual = (message: string): string => {
  const actual = message.indexOf(", actual ")
  return `${actual < 0 ? "invalid" : message.slice(0, actual)}, actual a secret's content (not shown)`
}

/**
 * A message that expected a `Redacted` (a secret the caller sends: a credential's values, a TOTP
 * secret, ...) never quotes what it got instead: that may be the secret, given in plain text.
 */
const withoutSecret = (message: string): string => {
  if (!message.includes("Redacted(")) return message
  const actual = message.indexOf(", actual ")
  return `${
    actual < 0 ? message : message.slice(0, actual)
  }, actual a value that is not one (not shown: it may be a secret); wrap the secret in Redacted.make(...)`
}

/** The shapes a value of `ast` may take when encoded: its union's branches, under refinements and suspensions. */
const shapesOf = (ast: SchemaAST.AST, into: Array<SchemaAST.AST> = [], depth = 0): Array<SchemaAST.AST> => {
  if (depth > 32) return into
  switch (ast._tag) {
    case "Union":
      for (const member of ast.types) shapesOf(member, into, depth + 1)
      return into
    case "Refinement":
      return shapesOf(ast.from, into, depth + 1)
    case "Suspend":
      return shapesOf(ast.f(), into, depth + 1)
    case "Transformation":
      // what is encoded is the decoded side
      return shapesOf(ast.to, into, depth + 1)
  }
  into.push(ast)
  return into
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)

/** What {@link prunerOf} makes: `value` with the keys no shape of it has left out, at every depth. */
type Pruner = (value: unknown) => unknown

/**
 * The pruner of the values `shapes` (the branches a value may match) describe: `value` with the keys
 * no shape of it has left out, at every depth, so that what a strict encoding then refuses is a wrong
 * value, never a key TypeScript let through. Built once per body schema; a field's pruner on first
 * use (a recursive schema is pruned as deep as its value goes).
 */
const prunerOf = (shapes: ReadonlyArray<SchemaAST.AST>): Pruner => {
  // one pruner per node of a single shape: a recursive schema's levels share theirs
  if (shapes.length === 1) {
    let pruner = pruners.get(shapes[0]!)
    if (pruner === undefined) {
      pruner = makePruner(shapes)
      pruners.set(shapes[0]!, pruner)
    }
    return pruner
  }
  return makePruner(shapes)
}

const pruners = new WeakMap<SchemaAST.AST, Pruner>()

const makePruner = (shapes: ReadonlyArray<SchemaAST.AST>): Pruner => {
  const items = shapes.flatMap((shape) =>
    SchemaAST.isTupleType(shape)
      ? [...shape.elements.map((element) => element.type), ...shape.rest.map((rest) => rest.type)]
      : []
  )
  let item: Pruner | undefined
  const objects = shapes.filter(SchemaAST.isTypeLiteral)
  const closed = objects.length > 0 && objects.every((shape) => shape.indexSignatures.length === 0)
  // per key: the types it has in the shapes that name it
  const types = new Map<string, Array<SchemaAST.AST>>()
  if (closed) {
    for (const shape of objects) {
      for (const signature of shape.propertySignatures) {
        if (typeof signature.name !== "string") continue
        const known = types.get(signature.name)
        if (known === undefined) types.set(signature.name, [signature.type])
        else known.push(signature.type)
      }
    }
  }
  const fields = new Map<string, Pruner>()
  const fieldOf = (key: string, of: ReadonlyArray<SchemaAST.AST>): Pruner => {
    let pruner = fields.get(key)
    if (pruner === undefined) {
      pruner = prunerOf(of.flatMap((type) => shapesOf(type)))
      fields.set(key, pruner)
    }
    return pruner
  }
  return (value) => {
    if (Array.isArray(value)) {
      if (items.length === 0) return value
      const each = item ??= prunerOf(items.flatMap((type) => shapesOf(type)))
      return value.map((element) => each(element))
    }
    if (!closed || !isRecord(value)) return value
    const own: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      const of = types.get(key)
      if (of !== undefined) own[key] = fieldOf(key, of)(value[key])
    }
    return own
  }
}

/**
 * A body's encoder. The params object holds the path, query and header parameters too: the body's own
 * fields are taken from it, and below them a key that no shape of the schema has at its place is left
 * out (TypeScript lets an object with more properties through: a decoded `Profile` given as a
 * browser's `profile`). What is left is encoded strictly, so a union never takes a branch that fits
 * only by dropping the input's fields: a custom proxy's `config` whose `password` was not a `Redacted`
 * was sent as `{}`, its first branch (every field optional) having fit; it is now `InvalidInput`
 * naming `config.password`.
 */
const bodyEncoderOf = (schema: Schema.Schema.AnyNoContext) => {
  let made: ((input: object) => Either.Either<unknown, ParseResult.ParseError>) | undefined
  const make = (): (input: object) => Either.Either<unknown, ParseResult.ParseError> => {
    const shapes = shapesOf(schema.ast)
    // a body that is not an object (or a union of objects) with named fields: encoded as it is given
    if (!shapes.every((shape) => SchemaAST.isTypeLiteral(shape) && shape.indexSignatures.length === 0)) {
      return Schema.encodeUnknownEither(schema)
    }
    // `Schema.encodeUnknownEither(schema, { onExcessProperty: "error" })`, compiled
    const exact = FastDecode.encoder(schema)
    const prune = prunerOf(shapes)
    return (input) => exact(prune(isRecord(input) ? input : { ...input }))
  }
  return (input: object) => (made ??= make())(input)
}

/** A query parameter's or header's encoded value as text: a string, a finite number or a boolean. */
const scalarText = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))
    ? String(value)
    : typeof value === "bigint"
    ? value.toString()
    : undefined

interface CompiledParameter {
  readonly parameter: Parameter
  /** `undefined` for a path parameter typed as a plain string (its segment is checked as it is encoded). */
  readonly encode: ((u: unknown) => Either.Either<unknown, ParseResult.ParseError>) | undefined
}

// a parameter's schema is a scalar's (no struct: the strict encoder's excess-key rule never applies),
// encoded by the compiled encoder, without `ParseResult` when the value fits (0.8 µs a call of
// `Browsers.list` went to encoding its `limit`). A query or header parameter typed as a string is
// checked too (a number given for it was sent as its text); a path parameter's segment is checked by
// `encodeSegment`
const compileParameter = (parameter: Parameter): CompiledParameter => ({
  parameter,
  encode: parameter.in === "path" && SchemaAST.isStringKeyword(parameter.schema.ast)
    ? undefined
    : FastDecode.encoder(parameter.schema)
})

/** The fields of a JSON body's schema (its Type side, as the caller passes them). */
const bodyFieldsOf = (schema: Schema.Schema.AnyNoContext): ReadonlyArray<PropertyKey> => {
  const ast = SchemaAST.typeAST(schema.ast)
  return SchemaAST.isTypeLiteral(ast) ? ast.propertySignatures.map((signature) => signature.name) : []
}

/**
 * The required array fields of a multipart body's schema: a form sends no part for an empty array, so
 * the field would reach the service as missing (refused there): refused before sending instead.
 */
const requiredFormArraysOf = (schema: Schema.Schema.AnyNoContext): ReadonlyArray<string> => {
  const ast = SchemaAST.encodedAST(schema.ast)
  if (!SchemaAST.isTypeLiteral(ast)) return []
  return ast.propertySignatures.flatMap((signature) => {
    let type = signature.type
    while (SchemaAST.isRefinement(type)) type = type.from
    return !signature.isOptional && typeof signature.name === "string" && SchemaAST.isTupleType(type)
      ? [signature.name]
      : []
  })
}

/** Whether a body's schema has a field that must be given. */
const hasRequiredFields = (schema: Schema.Schema.AnyNoContext): boolean => {
  const ast = SchemaAST.typeAST(schema.ast)
  return !SchemaAST.isTypeLiteral(ast) || ast.propertySignatures.some((signature) => !signature.isOptional)
}

/**
 * Checks an input against a definition and builds what the call sends. Refused before any request:
 * an input that is not an object, a body field of the wrong type, a path parameter that is not a
 * non-empty well-formed string (or is `.` / `..`), a query or header parameter its schema refuses,
 * a missing required parameter (or one the document requires in prose under a condition: `path` when
 * `source` is `"path"`).
 *
 * @internal
 */
export const preparer = (
  definition: Operation
): (input: unknown) => Either.Either<Prepared, KernelError.InvalidInput> => {
  const segments = segmentsOf(definition.path)
  const byField = new Map<string, CompiledParameter>()
  const query: Array<CompiledParameter> = []
  const headers: Array<CompiledParameter> = []
  for (const parameter of definition.parameters) {
    const compiled = compileParameter(parameter)
    if (parameter.in === "path") byField.set(parameter.field, compiled)
    else if (parameter.in === "query") query.push(compiled)
    else headers.push(compiled)
  }
  const body = definition.method === "GET" ? undefined : definition.body
  const jsonBody = body?.kind === "json" ? body : undefined
  const encodeBody = jsonBody === undefined ? undefined : bodyEncoderOf(jsonBody.schema)
  const formBody = body?.kind === "multipart" ? body : undefined
  const encodeForm = formBody === undefined ? undefined : bodyEncoderOf(formBody.schema)
  let bodyFields: ReadonlyArray<PropertyKey> | undefined
  let requiredFormArrays: ReadonlyArray<string> | undefined
  const attributeEntries = Object.entries(definition.attributes ?? {})
  // whether the params may be omitted (nothing in them is required): found on first need, as it
  // walks the body's schema
  let needsInputMade: boolean | undefined
  const needsInput = () =>
    needsInputMade ??= definition.parameters.some((p) => p.required) ||
      (body !== undefined && body.kind !== "json") ||
      (jsonBody !== undefined && jsonBody.required && hasRequiredFields(jsonBody.schema))
  const takesInput = definition.parameters.length > 0 || body !== undefined
  const encodeParameter = (
    compiled: CompiledParameter,
    value: unknown
  ): Either.Either<unknown, KernelError.InvalidInput> => {
    if (compiled.encode === undefined) return Either.right(value)
    const encoded = compiled.encode(value)
    return Either.isLeft(encoded)
      ? invalidFrom(compiled.parameter.field, encoded.left, value)
      : Either.right(encoded.right)
  }
  const prepare = (given: unknown): Either.Either<Prepared, KernelError.InvalidInput> => {
    if (!takesInput) {
      return Either.right({
        path: definition.path,
        query: undefined,
        headers: undefined,
        body: undefined,
        attributes: {}
      })
    }
    const input: unknown = given === undefined && !needsInput() ? {} : given
    if (typeof input !== "object" || input === null) {
      return invalid("params", `params must be an object, got ${input === null ? "null" : typeof input}`)
    }
    let sent: unknown
    let json: string | undefined
    let content: Content | undefined
    if (body?.kind === "bytes") {
      const bytes: unknown = Reflect.get(input, body.field)
      if (!Upload.isUpload(bytes)) {
        return invalid(
          body.field,
          `${body.field} must be a Uint8Array, a KernelFiles.file(path) or a Stream of Uint8Array`
        )
      }
      if (bytes instanceof Uint8Array) content = { _tag: "Bytes", bytes, contentType: body.contentType }
      else {
        const streamed = streamOf([bytes], body.contentType)
        if (typeof streamed === "string") return invalid(body.field, `${body.field}: ${streamed}`)
        content = streamed
      }
    } else if (encodeForm !== undefined) {
      const encoded = encodeForm(input)
      if (Either.isLeft(encoded)) return invalidFrom(undefined, encoded.left, input)
      for (const field of requiredFormArrays ??= formBody === undefined ? [] : requiredFormArraysOf(formBody.schema)) {
        const form = encoded.right
        const items: unknown = typeof form === "object" && form !== null ? Reflect.get(form, field) : undefined
        if (Array.isArray(items) && items.length === 0) {
          return invalid(field, `${field}: at least one item is required (a form sends no part for an empty array)`)
        }
      }
      const form = multipartOf(encoded.right)
      if (!("_tag" in form)) return invalid(form.field, form.message)
      content = form
    } else if (encodeBody !== undefined && jsonBody !== undefined) {
      let present = jsonBody.required
      if (!present) {
        for (const field of bodyFields ??= bodyFieldsOf(jsonBody.schema)) {
          if (Reflect.get(input, field) !== undefined) {
            present = true
            break
          }
        }
      }
      if (present) {
        const encoded = encodeBody(input)
        if (Either.isLeft(encoded)) return invalidFrom(undefined, encoded.left, input)
        sent = encoded.right
        const text = jsonText(sent)
        if (typeof text !== "string") return invalid("body", `body ${text.message}`)
        // `JSON.stringify` escapes a lone surrogate (`\ud800`), which the server reads as U+FFFD: another
        // value than the one given (the text holds `\ud` only then, or for a backslash sent before `ud`)
        if (text.includes("\\ud")) {
          const at = illFormedAt(sent, "")
          if (at !== undefined) return invalid(at, `${at} is not well-formed Unicode`)
        }
        json = text
      }
    }
    let path = ""
    for (const part of segments) {
      if ("literal" in part) {
        path += `/${part.literal}`
        continue
      }
      const compiled = byField.get(part.param)
      let value: unknown = Reflect.get(input, part.param)
      if (compiled?.encode !== undefined) {
        const encoded = encodeParameter(compiled, value)
        if (Either.isLeft(encoded)) return Either.left(encoded.left)
        value = typeof encoded.right === "string" ? encoded.right : scalarText(encoded.right)
      }
      const segment = encodeSegment(part.param, value)
      if (typeof segment !== "string") return Either.left(segment)
      path += `/${segment}`
    }
    let pairs: Array<readonly [string, string]> | undefined
    for (const compiled of query) {
      const { field, name, required } = compiled.parameter
      const value: unknown = Reflect.get(input, field)
      const when = compiled.parameter.requiredWhen
      if (
        (value === undefined || value === "") && when !== undefined && Reflect.get(input, when.field) === when.value
      ) {
        return invalid(field, `${field} is required when ${when.field} is ${JSON.stringify(when.value)}`)
      }
      if (value === undefined) {
        if (required) return invalid(field, `${field} is required`)
        continue
      }
      const encoded = encodeParameter(compiled, value)
      if (Either.isLeft(encoded)) return Either.left(encoded.left)
      const values: ReadonlyArray<unknown> = Array.isArray(encoded.right) ? encoded.right : [encoded.right]
      for (const item of values) {
        const text = scalarText(item)
        if (text === undefined) return invalid(field, `${field} must be a string, a number or a boolean`)
        if (loneSurrogate.test(text)) return invalid(field, `${field} is not well-formed Unicode`)
        ;(pairs ??= []).push([name, text])
      }
    }
    let headerValues: Record<string, string> | undefined
    for (const compiled of headers) {
      const { field, name, required } = compiled.parameter
      const value: unknown = Reflect.get(input, field)
      if (value === undefined) {
        if (required) return invalid(field, `${field} is required`)
        continue
      }
      const encoded = encodeParameter(compiled, value)
      if (Either.isLeft(encoded)) return Either.left(encoded.left)
      const text = scalarText(encoded.right)
      if (text === undefined || !isSendableHeaderValue(text)) {
        return invalid(field, `${field} cannot be sent as an HTTP header value`)
      }
      ;(headerValues ??= {})[name] = text
    }
    const attributes: Record<string, unknown> = {}
    for (const [field, attribute] of attributeEntries) attributes[attribute] = Reflect.get(input, field)
    return Either.right({ path, query: pairs, headers: headerValues, body: sent, json, content, attributes })
  }
  // params that throw as they are read (a getter, a revoked proxy, a value effect's schema cannot look
  // at): `InvalidInput`, nothing sent, never a defect
  return (given) => {
    try {
      return prepare(given)
    } catch (cause) {
      return invalid("params", `params could not be read: ${bound(messageOf(cause), 200)}`)
    }
  }
}
