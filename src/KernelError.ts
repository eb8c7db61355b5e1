/**
 * The typed errors of effect-kernel.
 *
 * Every failure an operation can produce is one of the classes below, each a `Schema.TaggedError`
 * with a stable `_tag`, so `Effect.catchTag` / `Effect.catchTags` can handle them exhaustively.
 * No error carries the API key: requests are described by their method and path only.
 *
 * @since 0.1.0
 */
import type * as Arbitrary from "effect/Arbitrary"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { type ErrorClass, withMessage } from "./internal/declaredClass.js"

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
 * An `ErrorDetail`'s fields: one, or a plain object (not an array, a date, a map...) whose `code` and
 * `message` are strings when present.
 */
const isDetailFields = (
  u: unknown
): u is { readonly code?: string | undefined; readonly message?: string | undefined } =>
  typeof u === "object" && u !== null &&
  (u instanceof ErrorDetail || Object.getPrototypeOf(u) === Object.prototype || Object.getPrototypeOf(u) === null) &&
  (!("code" in u) || u.code === undefined || typeof u.code === "string") &&
  (!("message" in u) || u.message === undefined || typeof u.message === "string")

const toDetail = (u: { readonly code?: string | undefined; readonly message?: string | undefined }): ErrorDetail =>
  u instanceof ErrorDetail ? u : new ErrorDetail({
    ...(u.code === undefined ? {} : { code: u.code }),
    ...(u.message === undefined ? {} : { message: u.message })
  })

// what `Pretty` and `Arbitrary` make of the two below (a declared schema has to say)
const prettyDetail = (detail: ErrorDetail): string => `ErrorDetail(${JSON.stringify(detail)})`

const arbitraryDetail: Arbitrary.LazyArbitrary<ErrorDetail> = (fc) =>
  fc.record({ code: fc.string(), message: fc.string() }, { requiredKeys: [] }).map(toDetail)

// An error's `innerError`: an `ErrorDetail`, given as one or as its fields (a test's fake builds an error
// with `{ code, message }`, which the type allows: it was a defect, the class's check refusing it)
const DetailSelf = Schema.declare([], {
  decode: () => (u, _, ast) =>
    isDetailFields(u) ? ParseResult.succeed(toDetail(u)) : ParseResult.fail(new ParseResult.Type(ast, u)),
  encode: () => (u, _, ast) =>
    u instanceof ErrorDetail ? ParseResult.succeed(u) : ParseResult.fail(new ParseResult.Type(ast, u))
}, {
  identifier: "ErrorDetail",
  pretty: () => prettyDetail,
  arbitrary: () => (fc) => arbitraryDetail(fc)
})

// An error's `details`: `ErrorDetail`s, given as such or as their fields, kept as a `Data.array`, so that
// two errors with the same details are `Equal` (a plain array is equal to itself only: an error sent
// through JSON and decoded did not come back `Equal`)
const DetailsSelf = Schema.declare([], {
  decode: () => (u, _, ast) =>
    // every index (`every` passes over an array's holes, which would stay in it)
    Array.isArray(u) && Array.from(u).every(isDetailFields)
      ? ParseResult.succeed(Data.array(Array.from(u, toDetail)))
      : ParseResult.fail(new ParseResult.Type(ast, u)),
  encode: () => (u, _, ast) =>
    Array.isArray(u) && u.every((item) => item instanceof ErrorDetail)
      ? ParseResult.succeed<ReadonlyArray<ErrorDetail>>(u)
      : ParseResult.fail(new ParseResult.Type(ast, u))
}, {
  identifier: "ErrorDetails",
  pretty: () => (details) => `Data.array([${details.map(prettyDetail).join(", ")}])`,
  arbitrary: () => (fc) => fc.array(arbitraryDetail(fc)).map((details) => Data.array(details))
})

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
  details: Schema.optional(Schema.compose(Schema.Array(ErrorDetail), DetailsSelf)),
  innerError: Schema.optional(Schema.compose(ErrorDetail, DetailSelf)),
  retryAfter: Schema.optional(Schema.Duration),
  shouldRetry: Schema.optional(Schema.Boolean),
  method: Schema.String,
  path: Schema.String
}

type ErrorDetailEncoded = {
  readonly code?: string | undefined
  readonly message?: string | undefined
}

// a duration's encoded side (`Schema.Duration`'s): JSON, so that an error survives a round trip
// through `JSON.stringify` / `Schema.decode` (a worker, an RPC, a log shipped elsewhere)
type DurationEncoded = typeof Schema.Duration.Encoded

type ApiErrorShape<Detail, D = Duration.Duration> = {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly details?: ReadonlyArray<Detail> | undefined
  readonly innerError?: Detail | undefined
  readonly retryAfter?: D | undefined
  readonly shouldRetry?: boolean | undefined
  readonly method: string
  readonly path: string
}

// `Schema.Struct.Constructor<typeof apiErrorFields>`, written out (test/error-classes.test.ts checks
// that it is the same type). Spelled as that mapped type, it made tsc match each field's schema
// against `Schema.optional`'s in every program that related two error classes (an `Effect.gen` that
// yields two operations does): a program relating four error classes took 3,102 type instantiations
// and 0.10 s of tsc's check time, now 344 and 0.03 s.
/**
 * The constructor argument of every API error class: the values of {@link apiErrorFields} (`status`,
 * `code`, `message`, `method` and `path`; `details`, `innerError`, `retryAfter` and `shouldRetry`
 * when known).
 *
 * @since 0.1.0
 * @category Fields
 */
export type ApiErrorFields = ApiErrorShape<ErrorDetail>

type ApiErrorClass<Self, Tag extends string> = ErrorClass<
  Self,
  Tag,
  typeof apiErrorFields,
  ApiErrorShape<ErrorDetail>,
  ApiErrorShape<ErrorDetailEncoded, DurationEncoded>
>

const BadRequestBase: ApiErrorClass<BadRequest, "BadRequest"> = Schema.TaggedError<BadRequest>(
  "effect-kernel/BadRequest"
)("BadRequest", apiErrorFields)

/**
 * 400: the request was invalid (for example a malformed body or id).
 *
 * @since 0.1.0
 * @category Errors
 */
export class BadRequest extends BadRequestBase {
  /** @since 0.1.0 */
  static readonly status = 400
}

const UnauthorizedBase: ApiErrorClass<Unauthorized, "Unauthorized"> = Schema.TaggedError<Unauthorized>(
  "effect-kernel/Unauthorized"
)("Unauthorized", apiErrorFields)

/**
 * 401: the API key is missing or invalid.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Unauthorized extends UnauthorizedBase {
  /** @since 0.1.0 */
  static readonly status = 401
}

const ForbiddenBase: ApiErrorClass<Forbidden, "Forbidden"> = Schema.TaggedError<Forbidden>("effect-kernel/Forbidden")(
  "Forbidden",
  apiErrorFields
)

/**
 * 403: the API key's permissions or plan do not allow the operation.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Forbidden extends ForbiddenBase {
  /** @since 0.1.0 */
  static readonly status = 403
}

const NotFoundBase: ApiErrorClass<NotFound, "NotFound"> = Schema.TaggedError<NotFound>("effect-kernel/NotFound")(
  "NotFound",
  apiErrorFields
)

/**
 * 404: the browser, replay or deployment does not exist (or is not visible to the caller).
 *
 * @since 0.1.0
 * @category Errors
 */
export class NotFound extends NotFoundBase {
  /** @since 0.1.0 */
  static readonly status = 404
}

const ConflictBase: ApiErrorClass<Conflict, "Conflict"> = Schema.TaggedError<Conflict>("effect-kernel/Conflict")(
  "Conflict",
  apiErrorFields
)

/**
 * 409: the resource is in a conflicting state. Retried as transient before it is returned.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Conflict extends ConflictBase {
  /** @since 0.1.0 */
  static readonly status = 409
}

const GoneBase: ApiErrorClass<Gone, "Gone"> = Schema.TaggedError<Gone>("effect-kernel/Gone")("Gone", apiErrorFields)

/**
 * 410: the resource existed but is gone for good (for example a deleted or expired one). Not
 * retried.
 *
 * @since 0.2.0
 * @category Errors
 */
export class Gone extends GoneBase {
  /** @since 0.2.0 */
  static readonly status = 410
}

const UnprocessableEntityBase: ApiErrorClass<UnprocessableEntity, "UnprocessableEntity"> = Schema.TaggedError<
  UnprocessableEntity
>("effect-kernel/UnprocessableEntity")("UnprocessableEntity", apiErrorFields)

/**
 * 422: the request was well-formed but its content was refused (for example a value
 * out of range, or a state the operation cannot start from). Not retried.
 *
 * @since 0.2.0
 * @category Errors
 */
export class UnprocessableEntity extends UnprocessableEntityBase {
  /** @since 0.2.0 */
  static readonly status = 422
}

const RateLimitedBase: ApiErrorClass<RateLimited, "RateLimited"> = Schema.TaggedError<RateLimited>(
  "effect-kernel/RateLimited"
)("RateLimited", apiErrorFields)

/**
 * 429: too many requests. Retried (honouring `Retry-After`) before it is returned.
 *
 * @since 0.1.0
 * @category Errors
 */
export class RateLimited extends RateLimitedBase {
  /** @since 0.1.0 */
  static readonly status = 429
}

const InternalServerErrorBase: ApiErrorClass<InternalServerError, "InternalServerError"> = Schema.TaggedError<
  InternalServerError
>("effect-kernel/InternalServerError")("InternalServerError", apiErrorFields)

/**
 * 500: the service failed. Retried as transient before it is returned.
 *
 * @since 0.1.0
 * @category Errors
 */
export class InternalServerError extends InternalServerErrorBase {
  /** @since 0.1.0 */
  static readonly status = 500
}

const BadGatewayBase: ApiErrorClass<BadGateway, "BadGateway"> = Schema.TaggedError<BadGateway>(
  "effect-kernel/BadGateway"
)("BadGateway", apiErrorFields)

/**
 * 502: a gateway in front of the service got no valid answer from it. Retried as transient
 * before it is returned.
 *
 * @since 0.2.0
 * @category Errors
 */
export class BadGateway extends BadGatewayBase {
  /** @since 0.2.0 */
  static readonly status = 502
}

const OverloadedBase: ApiErrorClass<Overloaded, "Overloaded"> = Schema.TaggedError<Overloaded>(
  "effect-kernel/Overloaded"
)("Overloaded", apiErrorFields)

/**
 * 529: the service is overloaded. Retried as transient (honouring `Retry-After`) before it is
 * returned.
 *
 * @since 0.2.0
 * @category Errors
 */
export class Overloaded extends OverloadedBase {
  /** @since 0.2.0 */
  static readonly status = 529
}

const unexpectedStatusFields = { ...apiErrorFields, body: Schema.String }

type UnexpectedStatusShape<Detail, D = Duration.Duration> = ApiErrorShape<Detail, D> & {
  readonly body: string
}

const UnexpectedStatusBase: ErrorClass<
  UnexpectedStatus,
  "UnexpectedStatus",
  typeof unexpectedStatusFields,
  UnexpectedStatusShape<ErrorDetail>,
  UnexpectedStatusShape<ErrorDetailEncoded, DurationEncoded>
> = Schema.TaggedError<UnexpectedStatus>("effect-kernel/UnexpectedStatus")(
  "UnexpectedStatus",
  unexpectedStatusFields
)

/**
 * Any status the operation does not document (for example a 502 from a proxy, or a redirect).
 * `body` holds the first bytes of the response body, for diagnosis.
 *
 * @since 0.1.0
 * @category Errors
 */
export class UnexpectedStatus extends UnexpectedStatusBase {}

const transportErrorFields = {
  method: Schema.String,
  path: Schema.String,
  message: Schema.String,
  code: Schema.optional(Schema.String),
  transient: Schema.optional(Schema.Boolean)
}

type TransportErrorShape = {
  readonly method: string
  readonly path: string
  readonly message: string
  readonly code?: string | undefined
  readonly transient?: boolean | undefined
}

const TransportErrorBase: ErrorClass<
  TransportError,
  "TransportError",
  typeof transportErrorFields,
  TransportErrorShape
> = Schema.TaggedError<TransportError>("effect-kernel/TransportError")(
  "TransportError",
  transportErrorFields
)

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
export class TransportError extends TransportErrorBase {}

const timeoutFields = {
  method: Schema.String,
  path: Schema.String,
  timeout: Schema.Duration,
  idle: Schema.optional(Schema.Boolean)
}

type TimeoutShape<D = Duration.Duration> = {
  readonly method: string
  readonly path: string
  readonly timeout: D
  readonly idle?: boolean | undefined
}

const TimeoutBase: ErrorClass<Timeout, "Timeout", typeof timeoutFields, TimeoutShape, TimeoutShape<DurationEncoded>> =
  Schema.TaggedError<Timeout>(
    "effect-kernel/Timeout"
  )(
    "Timeout",
    timeoutFields
  )

/**
 * An attempt took longer than the configured `timeout`, or (`idle: true`) a body or an event stream
 * received no byte for the configured `idleTimeout`. The message names the setting.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Timeout extends TimeoutBase {
  /** @since 0.1.0 */
  override get message(): string {
    return this.idle === true
      ? `${this.method} ${this.path} received no byte for ${Duration.format(this.timeout)} (idleTimeout)`
      : `${this.method} ${this.path} timed out after ${Duration.format(this.timeout)}`
  }

  /**
   * The fields and the message (computed from them, so `Data.Error`'s JSON of the fields leaves it
   * out): what `JSON.stringify` and a JSON logger print.
   *
   * @since 0.2.0
   */
  override toJSON(): unknown {
    return withMessage(super.toJSON(), this.message)
  }
}

const decodeErrorFields = {
  method: Schema.String,
  path: Schema.String,
  status: Schema.Number,
  message: Schema.String
}

type DecodeErrorShape = {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly message: string
}

const DecodeErrorBase: ErrorClass<DecodeError, "DecodeError", typeof decodeErrorFields, DecodeErrorShape> = Schema
  .TaggedError<DecodeError>("effect-kernel/DecodeError")(
    "DecodeError",
    decodeErrorFields
  )

/**
 * A successful response whose body is not what the operation documents. `message` names the
 * offending field.
 *
 * @since 0.1.0
 * @category Errors
 */
export class DecodeError extends DecodeErrorBase {}

const invalidInputFields = {
  field: Schema.String,
  message: Schema.String
}

type InvalidInputShape = {
  readonly field: string
  readonly message: string
}

const InvalidInputBase: ErrorClass<InvalidInput, "InvalidInput", typeof invalidInputFields, InvalidInputShape> = Schema
  .TaggedError<InvalidInput>("effect-kernel/InvalidInput")(
    "InvalidInput",
    invalidInputFields
  )

/**
 * The input was rejected before any request was sent (for example an empty id).
 *
 * @since 0.1.0
 * @category Errors
 */
export class InvalidInput extends InvalidInputBase {}

const replayNotReadyFields = {
  id: Schema.String,
  replayId: Schema.String,
  retryAfter: Schema.Duration,
  waited: Schema.Duration,
  polls: Schema.Number
}

type ReplayNotReadyShape<D = Duration.Duration> = {
  readonly id: string
  readonly replayId: string
  readonly retryAfter: D
  readonly waited: D
  readonly polls: number
}

const ReplayNotReadyBase: ErrorClass<
  ReplayNotReady,
  "ReplayNotReady",
  typeof replayNotReadyFields,
  ReplayNotReadyShape,
  ReplayNotReadyShape<DurationEncoded>
> = Schema.TaggedError<ReplayNotReady>("effect-kernel/ReplayNotReady")(
  "ReplayNotReady",
  replayNotReadyFields
)

/**
 * The replay was still being recorded when the wait budget (`maxWait`, or the caller's schedule)
 * ran out. Carries the last `Retry-After` the service sent and the total time waited.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ReplayNotReady extends ReplayNotReadyBase {
  /** @since 0.1.0 */
  override get message(): string {
    return `replay ${this.replayId} of browser ${this.id} is still recording after ${
      Duration.format(this.waited)
    } (${this.polls} polls, last Retry-After ${Duration.format(this.retryAfter)})`
  }

  /**
   * The fields and the message (computed from them, so `Data.Error`'s JSON of the fields leaves it
   * out): what `JSON.stringify` and a JSON logger print.
   *
   * @since 0.2.0
   */
  override toJSON(): unknown {
    return withMessage(super.toJSON(), this.message)
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
 * The errors of an operation: its documented statuses' (`Status`), the common ones
 * ({@link CommonError}), a body that does not decode, and input refused before sending. Each
 * operation's `…Error` type is one (`Browsers.RetrieveBrowserError`, …).
 *
 * @since 0.2.0
 * @category Models
 */
export type OperationError<Status extends KernelError> =
  | Status
  | CommonError
  | DecodeError
  | InvalidInput

/**
 * The errors of an operation whose every answer has no content (a 204, or a 200 without a body): as
 * {@link OperationError}, without `DecodeError` (there is nothing to decode).
 *
 * @since 0.2.0
 * @category Models
 */
export type OperationErrorNoContent<Status extends KernelError> =
  | Status
  | CommonError
  | InvalidInput

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
 * The `_tag`s of every error of effect-kernel's calls (`BrowserPools.NoBrowserAvailable`, the 204 that
 * `acquireScoped` makes an error, is `BrowserPools`': not among them, nor a {@link KernelError}).
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
  // `instanceof` by the brand and the tag, not by the prototype alone: a program can hold two copies of
  // the package (the CommonJS and the ES build, or Node's build and a bundler's in one test run), and an
  // error made by one is still an instance of the other's class. A user's subclass keeps the plain rule.
  const tag: unknown = Class._tag
  const ordinary = Function.prototype[Symbol.hasInstance]
  Object.defineProperty(Class, Symbol.hasInstance, {
    value(this: unknown, u: unknown): boolean {
      return ordinary.call(this, u) || (this === Class && isKernelError(u) && u._tag === tag)
    }
  })
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
