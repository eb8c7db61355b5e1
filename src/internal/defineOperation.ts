/**
 * The helpers the generated operation definitions (scripts/generate) are written with: `define`
 * checks a definition against `Operation` and keeps its literal types; the others write its parts.
 * And the error unions of operations (declared in `KernelError`).
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type { Operation, RequiredWhen } from "./definition.js"

/** @internal */
export const define = /* @__NO_SIDE_EFFECTS__ */ <const D extends Operation>(definition: D): D => definition

/**
 * A path parameter: the input field `field`, the segment `{name}`; a string, or one with the
 * document's limits (a `format: uuid`). @internal
 */
export const path = /* @__NO_SIDE_EFFECTS__ */ <
  const Field extends string,
  const Name extends string,
  S extends Schema.Schema<string, string> = typeof Schema.String
>(
  field: Field,
  name: Name,
  schema?: S
) => ({ field, name, in: "path", required: true, schema: schema ?? Schema.String }) as const

/**
 * A query parameter (the input field is its name), required when the document says so in prose
 * (`requiredWhen`: when the query parameter `field` is `value`). @internal
 */
export const query = /* @__NO_SIDE_EFFECTS__ */ <
  const Name extends string,
  S extends Schema.Schema.AnyNoContext,
  const Required extends boolean
>(name: Name, schema: S, required: Required, requiredWhen?: RequiredWhen) =>
  ({ field: name, name, in: "query", required, schema, requiredWhen }) as const

/** A header parameter (the input field is its name). @internal */
export const header = /* @__NO_SIDE_EFFECTS__ */ <
  const Name extends string,
  S extends Schema.Schema.AnyNoContext,
  const Required extends boolean
>(name: Name, schema: S, required: Required) => ({ field: name, name, in: "header", required, schema }) as const

/** A JSON request body. @internal */
export const jsonBody = /* @__NO_SIDE_EFFECTS__ */ <
  S extends Schema.Schema.AnyNoContext,
  const Required extends boolean
>(
  schema: S,
  required: Required
) => ({ kind: "json", schema, required }) as const

/** A `multipart/form-data` request body. @internal */
export const multipartBody = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "multipart", schema }) as const

/** A raw request body, the input field `field`. @internal */
export const bytesBody = /* @__NO_SIDE_EFFECTS__ */ <const Field extends string, const ContentType extends string>(
  field: Field,
  contentType: ContentType
) => ({ kind: "bytes", field, contentType }) as const

/** A JSON answer. @internal */
export const json = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "json", schema }) as const

/** A paged JSON answer: the schema is the item's. @internal */
export const page = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "page", schema }) as const

/** A `text/event-stream` answer: the schema is the event's. @internal */
export const sse = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "sse", schema }) as const

/** A binary answer. @internal */
export const bytes = /* @__NO_SIDE_EFFECTS__ */ <const ContentType extends string>(contentType: ContentType) =>
  ({ kind: "bytes", contentType }) as const

/** An answer without content. @internal */
export const none = { kind: "none" } as const

// The error unions of operations are declared in `KernelError` (a user's declarations name them there,
// never by a path inside the package: TS2742), and re-exported here for the modules that import them.
export type {
  /** @internal */
  OperationError,
  /** @internal */
  OperationErrorNoContent
} from "../KernelError.js"
