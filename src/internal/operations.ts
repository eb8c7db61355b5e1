/**
 * The one definition of every operation: its method, path template and parameters, request body,
 * kind of success, documented error statuses, span attributes and idempotency. The operation
 * services (`make<Op>`), their error union types, the simulator's routes and the status table of
 * docs/errors.md are all derived from this table.
 *
 * Adding an operation: one entry here (and in {@link table}), one public module with its types,
 * schemas, `make<Op>` / `layer<Op>` / accessor and docs, and one simulator handler.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as KernelError from "../KernelError.js"
import { encodeSegment } from "./path.js"

/**
 * A class of error that answers one documented status.
 *
 * @internal
 */
export interface StatusErrorClass<E> {
  readonly status: number
  new(props: KernelError.ApiErrorFields): E
}

/** @internal */
export type Method = "GET" | "POST" | "DELETE"

/**
 * What a 2xx answer is: a JSON body decoded by the operation's schema, no content (any body is
 * discarded), or an mp4 stream.
 *
 * @internal
 */
export type Success = "json" | "none" | "mp4"

/**
 * One operation.
 *
 * @internal
 */
export interface Definition<
  Name extends string = string,
  Param extends string = string,
  Errors extends ReadonlyArray<StatusErrorClass<KernelError.KernelError>> = ReadonlyArray<
    StatusErrorClass<KernelError.KernelError>
  >,
  Body extends Schema.Struct.Fields = Schema.Struct.Fields,
  S extends Success = Success
> {
  /** The operation's name: span `Kernel.<name>`, simulator route, `make<Name>` / `layer<Name>`. */
  readonly name: Name
  /** The public module and its accessor (documented names; `<module>.<name>` is an alias where they differ). */
  readonly module: "Replays" | "Computer" | "BrowserPools" | "Deployments"
  readonly accessor: string
  readonly method: Method
  /** The path template: `{param}` is one percent-encoded segment of the input field `param`. */
  readonly path: string
  /** The input fields of the path, in order. */
  readonly params: ReadonlyArray<Param>
  /** The JSON request body: these input fields, checked before sending. */
  readonly body: Body | undefined
  /** Extra request headers. */
  readonly headers: Readonly<Record<string, string>>
  readonly success: S
  /** The statuses the operation documents (beyond the common ones), as their error classes. */
  readonly errors: Errors
  /** Input field → span attribute. */
  readonly attributes: Readonly<Record<string, string>>
  /** Whether repeating the request has the effect of one (safe to retry transient failures). */
  readonly idempotent: boolean
}

const define = <
  const Name extends string,
  const Param extends string,
  const Errors extends ReadonlyArray<StatusErrorClass<KernelError.KernelError>>,
  const S extends Success,
  Body extends Schema.Struct.Fields = Record<never, never>
>(
  definition: Omit<Definition<Name, Param, Errors, Body, S>, "body" | "headers"> & {
    readonly body?: Body
    readonly headers?: Readonly<Record<string, string>>
  }
): Definition<Name, Param, Errors, Body, S> => ({
  ...definition,
  body: definition.body,
  headers: definition.headers ?? {}
})

/** @internal */
export const downloadReplay = /*#__PURE__*/ define({
  name: "downloadReplay",
  module: "Replays",
  accessor: "download",
  method: "GET",
  path: "/browsers/{id}/replays/{replayId}",
  params: ["id", "replayId"],
  headers: { accept: "video/mp4, application/json", "accept-encoding": "identity" },
  success: "mp4",
  errors: [KernelError.BadRequest, KernelError.Forbidden, KernelError.NotFound],
  attributes: { id: "kernel.browser.id", replayId: "kernel.replay.id" },
  idempotent: true
})

/** @internal */
export const setCursorVisibility = /*#__PURE__*/ define({
  name: "setCursorVisibility",
  module: "Computer",
  accessor: "setCursorVisibility",
  method: "POST",
  path: "/browsers/{id}/computer/cursor",
  params: ["id"],
  body: { hidden: Schema.Boolean },
  success: "json",
  errors: [KernelError.BadRequest, KernelError.NotFound],
  attributes: { id: "kernel.browser.id", hidden: "kernel.cursor.hidden" },
  idempotent: true
})

/** @internal */
export const getMousePosition = /*#__PURE__*/ define({
  name: "getMousePosition",
  module: "Computer",
  accessor: "getMousePosition",
  method: "POST",
  path: "/browsers/{id}/computer/get_mouse_position",
  params: ["id"],
  success: "json",
  errors: [KernelError.BadRequest, KernelError.NotFound],
  attributes: { id: "kernel.browser.id" },
  idempotent: true
})

/** @internal */
export const listBrowserPools = /*#__PURE__*/ define({
  name: "listBrowserPools",
  module: "BrowserPools",
  accessor: "list",
  method: "GET",
  path: "/browser_pools",
  params: [],
  success: "json",
  errors: [KernelError.Forbidden],
  attributes: {},
  idempotent: true
})

/** @internal */
export const deleteDeployment = /*#__PURE__*/ define({
  name: "deleteDeployment",
  module: "Deployments",
  accessor: "delete",
  method: "DELETE",
  path: "/deployments/{id}",
  params: ["id"],
  success: "none",
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
export type StatusErrors<D extends Definition> = InstanceType<D["errors"][number]>

/**
 * Everything an operation can fail with, derived from its definition: its documented statuses,
 * the common errors, `InvalidInput` (its input or the credentials, refused before sending), and
 * `DecodeError` when its success has a body to decode.
 *
 * @internal
 */
export type ErrorOf<D extends Definition> =
  | StatusErrors<D>
  | KernelError.CommonError
  | (D["success"] extends "none" ? never : KernelError.DecodeError)
  | KernelError.InvalidInput

/**
 * The error tags an operation's error union has beyond the common ones (docs/errors.md).
 *
 * @internal
 */
export const ownTags = (definition: Definition): ReadonlyArray<string> => [
  ...definition.errors.map((Class) => tagOf(Class)),
  ...(definition.success === "none" ? [] : ["DecodeError"]),
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
 * segment) and the JSON body, or the input's `InvalidInput`.
 *
 * @internal
 */
export interface Prepared {
  readonly path: string
  readonly body: Record<string, unknown> | undefined
  readonly attributes: Record<string, unknown>
}

/**
 * Checks an input against a definition and builds what the call sends. Refused before any request:
 * an input that is not an object, a body field of the wrong type, a path parameter that is not a
 * non-empty well-formed string (or is `.` / `..`).
 *
 * @internal
 */
export const preparer = (
  definition: Definition
): (input: unknown) => Either.Either<Prepared, KernelError.InvalidInput> => {
  const segments = segmentsOf(definition.path)
  const bodyFields = definition.body === undefined ? undefined : Object.keys(definition.body)
  let validate: ((u: unknown) => Either.Either<unknown, ParseResult.ParseError>) | undefined
  const validateBody = (body: Record<string, unknown>) =>
    (validate ??= Schema.validateEither(Schema.Struct(definition.body ?? {})))(body)
  const attributeEntries = Object.entries(definition.attributes)
  const needsInput = definition.params.length > 0 || bodyFields !== undefined
  return (input) => {
    if (!needsInput) return Either.right({ path: definition.path, body: undefined, attributes: {} })
    if (typeof input !== "object" || input === null) {
      return Either.left(
        new KernelError.InvalidInput({
          field: "params",
          message: `params must be an object, got ${input === null ? "null" : typeof input}`
        })
      )
    }
    let body: Record<string, unknown> | undefined
    if (bodyFields !== undefined) {
      body = {}
      for (const field of bodyFields) body[field] = Reflect.get(input, field)
      const checked = validateBody(body)
      if (Either.isLeft(checked)) {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(checked.left)[0]
        const field = issue !== undefined && issue.path.length > 0 ? String(issue.path[0]) : "body"
        return Either.left(
          new KernelError.InvalidInput({ field, message: `${field}: ${issue?.message ?? "invalid"}` })
        )
      }
    }
    let path = ""
    for (const part of segments) {
      if ("literal" in part) {
        path += `/${part.literal}`
        continue
      }
      const encoded = encodeSegment(part.param, Reflect.get(input, part.param))
      if (typeof encoded !== "string") return Either.left(encoded)
      path += `/${encoded}`
    }
    const attributes: Record<string, unknown> = {}
    for (const [field, attribute] of attributeEntries) attributes[attribute] = Reflect.get(input, field)
    return Either.right({ path, body, attributes })
  }
}
