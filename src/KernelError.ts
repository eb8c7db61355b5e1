/**
 * The typed errors of effect-kernel.
 *
 * Every failure an operation can produce is one of the classes below, each a `Schema.TaggedError`
 * with a stable `_tag`, so `Effect.catchTag` / `Effect.catchTags` can handle them exhaustively.
 * No error carries the API key: requests are described by their method and path only.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * One entry of the `details` array, or the `inner_error`, of an error response.
 *
 * @since 0.1.0
 * @category Schemas
 */
export class ErrorDetail extends Schema.Class<ErrorDetail>("effect-kernel/ErrorDetail")({
  code: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
}) {}

/**
 * The JSON body of an error response, as the service sends it.
 *
 * @since 0.1.0
 * @category Schemas
 */
export class ErrorBody extends Schema.Class<ErrorBody>("effect-kernel/ErrorBody")({
  code: Schema.String,
  message: Schema.String,
  details: Schema.optional(Schema.Array(ErrorDetail)),
  inner_error: Schema.optional(ErrorDetail)
}) {}

/**
 * The fields shared by every error that answers an HTTP status.
 *
 * - `status`: the HTTP status code.
 * - `code` / `message`: from the Error body (`code` is `"unknown"` when the body was not an Error).
 * - `details` / `innerError`: from the Error body, when sent.
 * - `retryAfter`: the server's `retry-after-ms` or `Retry-After`, when sent.
 * - `shouldRetry`: the server's `x-should-retry` header, when sent.
 * - `method` / `path`: the request, without host, query or credentials.
 *
 * @since 0.1.0
 * @category Fields
 */
export const apiErrorFields = {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  details: Schema.optional(Schema.Array(ErrorDetail)),
  innerError: Schema.optional(ErrorDetail),
  retryAfter: Schema.optional(Schema.DurationFromSelf),
  shouldRetry: Schema.optional(Schema.Boolean),
  method: Schema.String,
  path: Schema.String
}

/**
 * The constructor argument of every API error class.
 *
 * @since 0.1.0
 * @category Fields
 */
export type ApiErrorFields = Schema.Struct.Constructor<typeof apiErrorFields>

/**
 * 400: the request was invalid (for example a malformed body or id).
 *
 * @since 0.1.0
 * @category Errors
 */
export class BadRequest extends Schema.TaggedError<BadRequest>("effect-kernel/BadRequest")(
  "BadRequest",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 400
}

/**
 * 401: the API key is missing or invalid.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("effect-kernel/Unauthorized")(
  "Unauthorized",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 401
}

/**
 * 403: the API key's permissions or plan do not allow the operation.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("effect-kernel/Forbidden")(
  "Forbidden",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 403
}

/**
 * 404: the browser, replay or deployment does not exist (or is not visible to the caller).
 *
 * @since 0.1.0
 * @category Errors
 */
export class NotFound extends Schema.TaggedError<NotFound>("effect-kernel/NotFound")(
  "NotFound",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 404
}

/**
 * 409: the resource is in a conflicting state. Retried as transient before it is returned.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Conflict extends Schema.TaggedError<Conflict>("effect-kernel/Conflict")(
  "Conflict",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 409
}

/**
 * 410: the resource existed but is gone for good (for example a deleted or expired one). Not
 * retried.
 *
 * @since 0.2.0
 * @category Errors
 */
export class Gone extends Schema.TaggedError<Gone>("effect-kernel/Gone")(
  "Gone",
  apiErrorFields
) {
  /** @since 0.2.0 */
  static readonly status = 410
}

/**
 * 422: the request was well-formed but its content was refused (for example a value
 * out of range, or a state the operation cannot start from). Not retried.
 *
 * @since 0.2.0
 * @category Errors
 */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>("effect-kernel/UnprocessableEntity")(
  "UnprocessableEntity",
  apiErrorFields
) {
  /** @since 0.2.0 */
  static readonly status = 422
}

/**
 * 429: too many requests. Retried (honouring `Retry-After`) before it is returned.
 *
 * @since 0.1.0
 * @category Errors
 */
export class RateLimited extends Schema.TaggedError<RateLimited>("effect-kernel/RateLimited")(
  "RateLimited",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 429
}

/**
 * 500: the service failed. Retried as transient before it is returned.
 *
 * @since 0.1.0
 * @category Errors
 */
export class InternalServerError extends Schema.TaggedError<InternalServerError>("effect-kernel/InternalServerError")(
  "InternalServerError",
  apiErrorFields
) {
  /** @since 0.1.0 */
  static readonly status = 500
}

/**
 * 502: a gateway in front of the service got no valid answer from it. Retried as transient
 * before it is returned.
 *
 * @since 0.2.0
 * @category Errors
 */
export class BadGateway extends Schema.TaggedError<BadGateway>("effect-kernel/BadGateway")(
  "BadGateway",
  apiErrorFields
) {
  /** @since 0.2.0 */
  static readonly status = 502
}

/**
 * 529: the service is overloaded. Retried as transient (honouring `Retry-After`) before it is
 * returned.
 *
 * @since 0.2.0
 * @category Errors
 */
export class Overloaded extends Schema.TaggedError<Overloaded>("effect-kernel/Overloaded")(
  "Overloaded",
  apiErrorFields
) {
  /** @since 0.2.0 */
  static readonly status = 529
}

/**
 * Any status the operation does not document (for example a 502 from a proxy, or a redirect).
 * `body` holds the first bytes of the response body, for diagnosis.
 *
 * @since 0.1.0
 * @category Errors
 */
export class UnexpectedStatus extends Schema.TaggedError<UnexpectedStatus>("effect-kernel/UnexpectedStatus")(
  "UnexpectedStatus",
  { ...apiErrorFields, body: Schema.String }
) {}

/**
 * The request did not get a response: connection refused or reset, DNS failure, a body cut short,
 * a certificate refused, a response that is not HTTP.
 *
 * - `code`: the underlying error's code when the SDK recognised it (`ECONNREFUSED`, `EMFILE`,
 *   `DEPTH_ZERO_SELF_SIGNED_CERT`, `UND_ERR_HEADERS_OVERFLOW`, `HPE_INVALID_CONSTANT`, ...).
 * - `transient`: `false` when a second attempt cannot succeed (a certificate the client refuses, a
 *   header block too large, a malformed response); such an error is not retried. Absent: transient.
 *
 * @since 0.1.0
 * @category Errors
 */
export class TransportError extends Schema.TaggedError<TransportError>("effect-kernel/TransportError")(
  "TransportError",
  {
    method: Schema.String,
    path: Schema.String,
    message: Schema.String,
    code: Schema.optional(Schema.String),
    transient: Schema.optional(Schema.Boolean)
  }
) {}

/**
 * An attempt took longer than the configured `timeout` (or a download stalled for longer than
 * its idle timeout).
 *
 * @since 0.1.0
 * @category Errors
 */
export class Timeout extends Schema.TaggedError<Timeout>("effect-kernel/Timeout")(
  "Timeout",
  {
    method: Schema.String,
    path: Schema.String,
    timeout: Schema.DurationFromSelf
  }
) {
  /** @since 0.1.0 */
  override get message(): string {
    return `${this.method} ${this.path} timed out after ${Duration.format(this.timeout)}`
  }
}

/**
 * A successful response whose body is not what the operation documents. `message` names the
 * offending field.
 *
 * @since 0.1.0
 * @category Errors
 */
export class DecodeError extends Schema.TaggedError<DecodeError>("effect-kernel/DecodeError")(
  "DecodeError",
  {
    method: Schema.String,
    path: Schema.String,
    status: Schema.Number,
    message: Schema.String
  }
) {}

/**
 * The input was rejected before any request was sent (for example an empty id).
 *
 * @since 0.1.0
 * @category Errors
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>("effect-kernel/InvalidInput")(
  "InvalidInput",
  {
    field: Schema.String,
    message: Schema.String
  }
) {}

/**
 * The replay was still being recorded when the wait budget (`maxWait`, or the caller's schedule)
 * ran out. Carries the last `Retry-After` the service sent and the total time waited.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ReplayNotReady extends Schema.TaggedError<ReplayNotReady>("effect-kernel/ReplayNotReady")(
  "ReplayNotReady",
  {
    id: Schema.String,
    replayId: Schema.String,
    retryAfter: Schema.DurationFromSelf,
    waited: Schema.DurationFromSelf,
    polls: Schema.Number
  }
) {
  /** @since 0.1.0 */
  override get message(): string {
    return `replay ${this.replayId} of browser ${this.id} is still recording after ${
      Duration.format(this.waited)
    } (${this.polls} polls, last Retry-After ${Duration.format(this.retryAfter)})`
  }
}

/**
 * The errors that answer an HTTP status.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | RateLimited
  | InternalServerError
  | Gone
  | UnprocessableEntity
  | BadGateway
  | Overloaded
  | UnexpectedStatus

/**
 * The errors every operation can produce, whatever it documents: a 401 (every operation needs
 * the token), a 409/429 (any route of a production service), a 500, an undocumented status, and
 * the transport and time-out failures.
 *
 * @since 0.1.0
 * @category Models
 */
export type CommonError =
  | Unauthorized
  | Conflict
  | RateLimited
  | InternalServerError
  | UnexpectedStatus
  | TransportError
  | Timeout

/**
 * Every error of effect-kernel.
 *
 * @since 0.1.0
 * @category Models
 */
export type KernelError =
  | ApiError
  | TransportError
  | Timeout
  | DecodeError
  | InvalidInput
  | ReplayNotReady

/**
 * The `_tag`s of every error of effect-kernel.
 *
 * @since 0.1.0
 * @category Models
 */
export const tags = [
  "BadRequest",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "Conflict",
  "RateLimited",
  "InternalServerError",
  "Gone",
  "UnprocessableEntity",
  "BadGateway",
  "Overloaded",
  "UnexpectedStatus",
  "TransportError",
  "Timeout",
  "DecodeError",
  "InvalidInput",
  "ReplayNotReady"
] as const satisfies ReadonlyArray<KernelError["_tag"]>

const tagSet: ReadonlySet<unknown> = new Set(tags)

/**
 * The brand every error of effect-kernel carries (on its prototype), as `HttpClientError` and
 * `AiError` do: {@link isKernelError} tests it, so another library's error with the same `_tag`
 * (a `Data.TaggedError("Timeout")`) is not mistaken for one of ours.
 *
 * @since 0.2.0
 * @category Type IDs
 */
export const TypeId: unique symbol = Symbol.for("effect-kernel/KernelError")

/**
 * The type of {@link TypeId}.
 *
 * @since 0.2.0
 * @category Type IDs
 */
export type TypeId = typeof TypeId

for (
  const Class of [
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    Conflict,
    RateLimited,
    InternalServerError,
    Gone,
    UnprocessableEntity,
    BadGateway,
    Overloaded,
    UnexpectedStatus,
    TransportError,
    Timeout,
    DecodeError,
    InvalidInput,
    ReplayNotReady
  ]
) {
  Object.defineProperty(Class.prototype, TypeId, { value: TypeId, enumerable: false })
}

/**
 * Whether a value is one of the errors of effect-kernel: it carries the {@link TypeId} brand
 * (an error made by another library, even with the same `_tag`, is not).
 *
 * @since 0.1.0
 * @category Guards
 */
export const isKernelError = (u: unknown): u is KernelError =>
  Predicate.hasProperty(u, TypeId) && Predicate.hasProperty(u, "_tag") && tagSet.has(u._tag) && u instanceof Error

/**
 * Whether an error is transient: 408, 409, 429, 5xx (502 and 529 included), a transport failure or
 * a time-out (410 and 422 are not), unless the server said `x-should-retry: false` (and always when
 * it said `true`). A `TransportError` with `transient: false` (a refused certificate, a malformed
 * response) is not.
 * This is the rule the default retry policy follows.
 *
 * @since 0.1.0
 * @category Guards
 */
export const isTransient = (error: KernelError): boolean => {
  switch (error._tag) {
    case "TransportError":
      return error.transient !== false
    case "Timeout":
      return true
    case "DecodeError":
    case "InvalidInput":
    case "ReplayNotReady":
      return false
    default: {
      if (error.shouldRetry !== undefined) return error.shouldRetry
      const status = error.status
      return status === 408 || status === 409 || status === 429 || status >= 500
    }
  }
}
