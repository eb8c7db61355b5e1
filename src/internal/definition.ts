/**
 * The shape of one operation of the Kernel API as data: its request (method, path, path / query /
 * header parameters, body) and its answers (per documented status), its documented error statuses
 * and whether repeating it is harmless. `scripts/generate` writes one `Definition` per operation
 * of the OpenAPI document (`src/internal/generated/`); the call pipeline (`client.ts`), the error
 * unions, the simulator's routes and the docs tables are derived from them.
 *
 * Nothing here depends on how a call is executed: an edition for another runtime binds the same
 * definitions.
 *
 * @internal
 */
import type * as Schema from "effect/Schema"
import type * as KernelError from "../KernelError.js"

/** @internal */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/**
 * A class of error that answers one documented status.
 *
 * @internal
 */
export interface StatusErrorClass<E> {
  readonly status: number
  new(props: KernelError.ApiErrorFields): E
}

/**
 * A path, query or header parameter. Its value is the input field `field`; on the wire it is
 * `name`. A path parameter's field is camelCase (`replay_id` → `replayId`), a query or header
 * parameter's field is its wire name. The schema is the value's (a string, number, integer, boolean
 * or literal, or an array of those for a query parameter, which repeats the name).
 *
 * @internal
 */
export interface Parameter {
  readonly field: string
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: Schema.Schema.AnyNoContext
  /** A query parameter the document requires in prose only, under a condition (see {@link RequiredWhen}). */
  readonly requiredWhen?: RequiredWhen | undefined
}

/**
 * The document's "only required if source is path": the parameter must be given (non-empty) when
 * the query parameter `field` is `value`.
 *
 * @internal
 */
export interface RequiredWhen {
  readonly field: string
  readonly value: string
}

/**
 * What a request sends:
 * - `json`: the input's fields named by the schema (a `Schema.Struct`), encoded by it;
 * - `multipart`: the input's fields as `multipart/form-data` parts (files are `Uint8Array`s,
 *   streams or paths on disk), checked by the schema;
 * - `bytes`: the input field `field` as the raw body, with its content type.
 *
 * @internal
 */
export type RequestBody =
  | { readonly kind: "json"; readonly schema: Schema.Schema.AnyNoContext; readonly required: boolean }
  | { readonly kind: "multipart"; readonly schema: Schema.Schema.AnyNoContext }
  | { readonly kind: "bytes"; readonly field: string; readonly contentType: string }

/**
 * What a documented 2xx answer is:
 * - `json`: a body decoded by the schema;
 * - `page`: a JSON array of the schema's items, paged by `X-Has-More` / `X-Next-Offset`;
 * - `none`: no content (any body is discarded);
 * - `bytes`: a binary body streamed as is (its content type, e.g. `video/mp4`, `image/png`);
 * - `sse`: a `text/event-stream` of events decoded by the schema.
 *
 * @internal
 */
export type Answer =
  | { readonly kind: "json"; readonly schema: Schema.Schema.AnyNoContext }
  | { readonly kind: "page"; readonly schema: Schema.Schema.AnyNoContext }
  | { readonly kind: "none" }
  | { readonly kind: "bytes"; readonly contentType: string }
  | { readonly kind: "sse"; readonly schema: Schema.Schema.AnyNoContext }

/**
 * One operation of the API.
 *
 * @internal
 */
export interface Operation {
  /** The operation's name: span `Kernel.<name>`, the service `effect-kernel/<Name>`, the simulator's fault name. */
  readonly name: string
  /** The document's `operationId`. */
  readonly operationId: string
  /** The public module (one per area) and the accessor's name in it (the official client's names). */
  readonly module: string
  readonly accessor: string
  readonly method: Method
  /** The path template: `{field}` is one percent-encoded segment of the input field `field`. */
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  readonly body: RequestBody | undefined
  /** The documented 2xx statuses and their answers. */
  readonly answers: Readonly<Record<number, Answer>>
  /** The documented error statuses (beyond the common ones), as their error classes. */
  readonly errors: ReadonlyArray<StatusErrorClass<KernelError.KernelError>>
  /** Whether repeating the request has the effect of one (safe to retry after a time-out or a 5xx). */
  readonly idempotent: boolean
  /** Optional: input field → attribute of the span `Kernel.<name>` (e.g. `id` → `kernel.browser.id`). */
  readonly attributes?: Readonly<Record<string, string>> | undefined
}
