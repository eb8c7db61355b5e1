import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as KernelError from "../KernelError.js"
import { bound } from "./bounded.js"
import { describe, scrub } from "./errors.js"
import type * as Operations from "./operations.js"
import { keepUndocumented, lazy, readErrorText } from "./responseBody.js"
import * as RetryAfter from "./retryAfter.js"
import { setOwn, withoutSecretFields } from "./secrets.js"

/**
 * A class of error that answers one documented status.
 *
 * @internal
 */
export type StatusErrorClass<E> = Operations.StatusErrorClass<E>

/**
 * What one operation is: its span name, the statuses it documents (beyond the common ones) and
 * the attributes of its span.
 *
 * @internal
 */
export interface Operation<E> {
  readonly name: string
  readonly documented: ReadonlyArray<StatusErrorClass<E>>
  readonly attributes: Readonly<Record<string, unknown>>
  /**
   * Whether repeating the request is harmless: when `false`, a failure is retried only if the
   * request provably never reached the server, or the server answered 429 (see `retry` in retryPolicy.ts).
   */
  readonly idempotent: boolean
  /**
   * The secrets the call's input sends (`Secrets.sentSecrets`): taken out of its errors, where a
   * server may echo them (`withoutKey` in execute.ts).
   */
  readonly secrets: ReadonlyArray<string>
}

// a class, not an object literal: made once per call (see perCall.ts)
class OperationImpl<E> implements Operation<E> {
  constructor(
    readonly name: string,
    readonly documented: ReadonlyArray<StatusErrorClass<E>>,
    readonly attributes: Readonly<Record<string, unknown>>,
    readonly idempotent: boolean,
    readonly secrets: ReadonlyArray<string>
  ) {}
}

const noAttributes: Readonly<Record<string, unknown>> = {}
const noSecrets: ReadonlyArray<string> = []

/** @internal */
export const operation = <E>(
  name: string,
  documented: ReadonlyArray<StatusErrorClass<E>>,
  attributes: Readonly<Record<string, unknown>> = noAttributes,
  idempotent: boolean = true,
  secrets: ReadonlyArray<string> = noSecrets
): Operation<E> => new OperationImpl(name, documented, attributes, idempotent, secrets)

/** @internal */
export type CommonStatusError =
  | KernelError.Unauthorized
  | KernelError.Conflict
  | KernelError.RateLimited
  | KernelError.InternalServerError
  | KernelError.UnexpectedStatus

const common: ReadonlyArray<StatusErrorClass<CommonStatusError>> = [
  KernelError.Unauthorized,
  KernelError.Conflict,
  KernelError.RateLimited,
  KernelError.InternalServerError
]

const excerptLength = 512
/** The longest `code` kept from an error body. */
const codeLength = 200
/** How many `details` entries of an error body are kept. */
const maxDetails = 20
/** The most text (codes and messages) kept from `details` and `inner_error` together. */
const detailsBudget = 1024
/**
 * The longest `message` kept from an error body: with the code, the details and the fixed
 * fields, `JSON.stringify` of any status error stays under 4 KiB.
 */
const messageLength = 2048

const boundDetail = (detail: KernelError.ErrorDetail, budget: number = 1024): KernelError.ErrorDetail =>
  new KernelError.ErrorDetail({
    ...(detail.code !== undefined ? { code: bound(detail.code, Math.min(codeLength, budget)) } : {}),
    ...(detail.message !== undefined ? { message: bound(detail.message, budget) } : {})
  })

/** The size of a kept detail, as counted against {@link detailsBudget}. */
const detailSize = (detail: KernelError.ErrorDetail): number =>
  (detail.code?.length ?? 0) + (detail.message?.length ?? 0) + 8

/**
 * The `details` (and `inner_error`) of an error body, bounded as a whole: at most `maxDetails`
 * entries and `detailsBudget` characters, whatever the server sent (the rendering of an error
 * stays a few KiB).
 */
const boundDetails = (
  body: KernelError.ErrorBody
): { readonly details?: ReadonlyArray<KernelError.ErrorDetail>; readonly innerError?: KernelError.ErrorDetail } => {
  let left = detailsBudget
  let innerError: KernelError.ErrorDetail | undefined
  if (body.inner_error !== undefined) {
    innerError = boundDetail(body.inner_error, 256)
    left -= detailSize(innerError)
  }
  let details: Array<KernelError.ErrorDetail> | undefined
  if (body.details !== undefined) {
    details = []
    for (const detail of body.details.slice(0, maxDetails)) {
      if (left <= 16) break
      const kept = boundDetail(detail, Math.min(256, left - 8))
      details.push(kept)
      left -= detailSize(kept)
    }
  }
  return {
    ...(details !== undefined ? { details } : {}),
    ...(innerError !== undefined ? { innerError } : {})
  }
}

const decodeErrorBody = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(KernelError.ErrorBody)))

/**
 * The document's other error body, `BrowserCurlTransportError` (`Browsers.curl`'s 502: the request
 * could not reach its destination): a `message`, with Chromium's `net_error` and its name.
 */
const TransportErrorBody = Schema.Struct({
  message: Schema.String,
  net_error: Schema.optional(Schema.Number),
  net_error_name: Schema.optional(Schema.String)
})

const decodeTransportErrorBody = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(TransportErrorBody)))

/** The answers whose error body is the document's `BrowserCurlTransportError`, by operation and status. */
const transportErrorAnswers: ReadonlySet<string> = new Set(["curlBrowser 502"])

/**
 * The `Error` body of an answer (`code`, `message`...), or, where the document answers a
 * `BrowserCurlTransportError` instead (`Browsers.curl`'s 502), the one it makes: its `net_error_name` as
 * the code (`ERR_NAME_NOT_RESOLVED`), its message, and its `net_error` as a detail
 * (`{ code: "net_error", message: "-105" }`).
 */
const errorBodyOf = (text: string, operation: string, status: number): Option.Option<KernelError.ErrorBody> => {
  const body = decodeErrorBody()(text)
  if (Option.isSome(body)) return status === 409 ? Option.some(withExistingId(body.value, text)) : body
  if (!transportErrorAnswers.has(`${operation} ${status}`)) return body
  return Option.map(decodeTransportErrorBody()(text), (transport) =>
    new KernelError.ErrorBody({
      code: transport.net_error_name ?? "unknown",
      message: transport.message,
      ...(transport.net_error !== undefined
        ? { details: [new KernelError.ErrorDetail({ code: "net_error", message: String(transport.net_error) })] }
        : {})
    }))
}

/**
 * A 409's body with the id of what already exists (the document's `existing_id`, on `AuthConnections.create`'s
 * "Auth connection already exists"), kept as its first detail, `{ code: "existing_id", message: id }` (the
 * bound on details never cuts it).
 */
const withExistingId = (body: KernelError.ErrorBody, text: string): KernelError.ErrorBody =>
  Option.match(decodeExistingId()(text), {
    onNone: () => body,
    onSome: ({ existing_id }) =>
      new KernelError.ErrorBody({
        ...body,
        details: [new KernelError.ErrorDetail({ code: "existing_id", message: existing_id }), ...body.details ?? []]
      })
  })

const decodeExistingId = lazy(() =>
  Schema.decodeUnknownOption(Schema.parseJson(Schema.Struct({ existing_id: Schema.String })))
)

const decodeDetails = lazy(() => Schema.decodeUnknownOption(Schema.Array(KernelError.ErrorDetail)))
const decodeDetail = lazy(() => Schema.decodeUnknownOption(KernelError.ErrorDetail))

/**
 * The `code` and `message` of an error body that is not an `Error` as a whole, when it has them (or a
 * `message` alone, the browser's server's error, its code `"unknown"`): one
 * whose `details` or `inner_error` do not fit (a string, a list of lists: those are left out), or one
 * cut short by the 64 KiB the SDK reads (its leading `"code"` and `"message"` strings, a message cut
 * with it). Only those two fields are taken: the rest of such a body is quoted, if at all, without its
 * secret fields.
 */
const salvagedErrorBody = (text: string): Option.Option<KernelError.ErrorBody> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return leadingErrorBody(text)
  }
  if (typeof parsed !== "object" || parsed === null) return Option.none()
  const code: unknown = Reflect.get(parsed, "code")
  const message: unknown = Reflect.get(parsed, "message")
  // the browser's own server's error (`kernel/kernel-images`: `{ "message": ... }` alone, no code)
  if (code === undefined && typeof message === "string" && Object.keys(parsed).length === 1) {
    return Option.some(new KernelError.ErrorBody({ code: "unknown", message }))
  }
  if (typeof code !== "string" || typeof message !== "string") return Option.none()
  const details = decodeDetails()(Reflect.get(parsed, "details"))
  const innerError = decodeDetail()(Reflect.get(parsed, "inner_error"))
  return Option.some(
    new KernelError.ErrorBody({
      code,
      message,
      ...(Option.isSome(details) ? { details: details.value } : {}),
      ...(Option.isSome(innerError) ? { inner_error: innerError.value } : {})
    })
  )
}

/** A JSON string's text (between its quotes): each escape whole, up to the closing quote or the end. */
const stringText = String.raw`((?:[^"\\]|\\.)*)`
/** One leading member of an object whose value is a string (`"code": "not_found",`). */
const stringMember = new RegExp(String.raw`\s*"${stringText}"\s*:\s*"${stringText}"\s*[,}]`, "y")
/** One leading member whose value is a number, `true`, `false` or `null` (`"status": 400,`): passed over. */
const scalarMember = new RegExp(String.raw`\s*"${stringText}"\s*:\s*(?:-?\d[\d.eE+-]*|true|false|null)\s*,`, "y")
/** A member whose string value runs to the end of the text (a body cut inside it, perhaps inside an escape). */
const cutMember = new RegExp(String.raw`\s*"${stringText}"\s*:\s*"${stringText}\\?$`, "y")

/**
 * A JSON string's value from its text, or `undefined` when it is not one. A string `cut` by the end of
 * the body may end inside an escape (`\u00`): up to 5 of its last characters are dropped to find one.
 */
const unquoted = (inner: string, cut = false): string | undefined => {
  for (let drop = 0; drop <= (cut ? 5 : 0) && drop <= inner.length; drop++) {
    try {
      const value: unknown = JSON.parse(`"${inner.slice(0, inner.length - drop)}"`)
      if (typeof value === "string") return value
    } catch {
      // a unicode escape cut short: one character fewer
    }
  }
  return undefined
}

/**
 * The `code` and `message` among the leading string members of an object's text cut short
 * (`{"code":"x","message":"y…`).
 */
const leadingErrorBody = (text: string): Option.Option<KernelError.ErrorBody> => {
  const found = leadingStrings(text)
  // both, as of a whole body: a `code` alone may be a resource's secret (a TOTP code), not an error's
  const code = found.get("code")
  const message = found.get("message")
  if (code === undefined || code.endsWith("…") || message === undefined) return Option.none()
  return Option.some(new KernelError.ErrorBody({ code, message }))
}

/**
 * The leading string members of an object's text cut short, past its leading members of other scalar
 * values (`"status": 400`), up to the first of another kind (an object, an array); the last one cut inside
 * its value with `…` after what was read of it.
 */
const leadingStrings = (text: string): ReadonlyMap<string, string> => {
  const found = new Map<string, string>()
  const open = /^\s*\{/.exec(text)
  if (open === null) return found
  let at = open[0].length
  for (let members = 0; members < 16; members++) {
    stringMember.lastIndex = at
    const member = stringMember.exec(text)
    if (member === null) {
      scalarMember.lastIndex = at
      const scalar = scalarMember.exec(text)
      if (scalar !== null) {
        // not a string: a `code` or `message` given so is none, as in a whole body
        const key = unquoted(scalar[1]!)
        if (key === undefined) break
        found.delete(key)
        at = scalarMember.lastIndex
        continue
      }
      // the last member cut inside its value: what was read of it (a long message)
      cutMember.lastIndex = at
      const cut = cutMember.exec(text)
      const key = cut === null ? undefined : unquoted(cut[1]!)
      const value = cut === null ? undefined : unquoted(cut[2]!, true)
      if (key !== undefined && value !== undefined) found.set(key, `${value}…`)
      break
    }
    const key = unquoted(member[1]!)
    const value = unquoted(member[2]!)
    if (key === undefined || value === undefined) break
    // a key given twice: the last, as `JSON.parse` takes it from a whole body
    found.set(key, value)
    at = stringMember.lastIndex
  }
  return found
}

/**
 * What an undocumented 2xx's text says it made, for a scoped resource to end: its JSON, or, cut short by the
 * 64 KiB read of it, the leading string members that were read whole (a `session_id` among them).
 */
const madeBy = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    const members: Record<string, string> = {}
    for (const [key, value] of leadingStrings(text)) if (!value.endsWith("…")) setOwn(members, key, value)
    return members
  }
}

/**
 * Turns a non-2xx response into the operation's typed error.
 *
 * @internal
 */
export const statusError = <E>(
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  secret?: Redacted.Redacted<string>
): Effect.Effect<never, E | CommonStatusError> =>
  Effect.flatMap(Effect.zip(readErrorText(response), Clock.currentTimeMillis), ([read, now]): Effect.Effect<
    never,
    E | CommonStatusError
  > => {
    // what the server answered may quote the request's credentials: never kept
    const text = scrub(read, request, secret)
    // an undocumented success carries the operation's data, which may be secrets (a created API
    // key, a browser's CDP URL): it is neither decoded nor quoted, only measured
    if (response.status >= 200 && response.status < 300) {
      const undocumented = new KernelError.UnexpectedStatus({
        ...describe(request),
        status: response.status,
        code: "unknown",
        message: `HTTP ${response.status} on ${request.method} ${
          describe(request).path
        }, a success this operation does not document (its body, ${
          new TextEncoder().encode(text).length
        } bytes read, is not shown: a success may carry secrets)`,
        body: ""
      })
      // what it made (a browser a create answered 201) is still named there, for a scoped resource to end
      keepUndocumented(undocumented, madeBy(text))
      return Effect.fail(undocumented)
    }
    const whole = errorBodyOf(text, op.name, response.status)
    // its code and message, when it has them (its other fields do not fit, or it was cut short)
    const body = Option.isSome(whole) ? whole : salvagedErrorBody(text)
    // a body that is not an error object is quoted: never with a secret field of a resource in it (an
    // error's own code, when it has one, is no secret)
    const quoted = Option.isSome(whole) ? "" : withoutSecretFields(text, Option.isSome(body) ? errorOwn : undefined)
    const retryAfter = RetryAfter.fromHeaders(response.headers, now)
    const shouldRetry = RetryAfter.shouldRetry(response.headers)
    // the server's message, or what its body quotes (nothing for an empty one)
    const said = Option.match(body, {
      onNone: () => quoted.length > 0 ? excerpt(quoted) : "",
      onSome: (b) => bound(b.message, messageLength)
    })
    const detail = said === "" ? "" : `: ${said}`
    const props: KernelError.ApiErrorFields = {
      ...describe(request),
      status: response.status,
      code: Option.match(body, { onNone: () => "unknown", onSome: (b) => bound(b.code, codeLength) }),
      // a documented status's tag says what it is: its message is the server's
      message: Option.isSome(body) ? said : `HTTP ${response.status}${detail}`,
      ...(Option.isSome(body) ? boundDetails(body.value) : {}),
      ...(Option.isSome(retryAfter) ? { retryAfter: retryAfter.value } : {}),
      ...(shouldRetry !== undefined ? { shouldRetry } : {})
    }
    for (const Class of op.documented) {
      if (Class.status === response.status) return Effect.fail(new Class(props))
    }
    for (const Class of common) {
      if (Class.status === response.status) return Effect.fail(new Class(props))
    }
    // an undocumented one says which status, on which request (a stray `/v1` in the base URL shows)
    return Effect.fail(
      new KernelError.UnexpectedStatus({
        ...props,
        message: `HTTP ${response.status} on ${props.method} ${props.path}${detail}`,
        // an Error body too may carry a resource beside its code and message (a browser and its CDP URL)
        body: excerpt(Option.isSome(whole) ? withoutSecretFields(text, errorOwn) : quoted)
      })
    )
  })

/** An Error body's own members, shown in its excerpt (its `code` is no secret, as a resource's would be). */
const errorOwn: ReadonlySet<string> = new Set(["code"])

const excerpt = (text: string): string => {
  const flat = text.slice(0, excerptLength * 4).replace(/\s+/g, " ").trim()
  return flat.length > excerptLength ? `${flat.slice(0, excerptLength)}…` : flat
}
