import * as Headers from "@effect/platform/Headers"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientErrorNs from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpClientResponseNs from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Stream from "effect/Stream"
import { concatBytes } from "./bounded.js"
import { redactAll } from "./secrets.js"

/**
 * A request as it may be shown: its `Authorization` header replaced by `<redacted>`.
 *
 * @internal
 */
export const redactRequest = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest =>
  Headers.has(request.headers, "authorization")
    ? HttpClientRequest.setHeader(request, "authorization", "<redacted>")
    : request

/**
 * Where a transport's response whose `request` is already redacted (`KernelTransport`'s) gives the
 * `Authorization` value it was sent with: the token to look for in what the server answered.
 *
 * @internal
 */
export const sentAuthorization: unique symbol = Symbol.for("effect-kernel/sentAuthorization")

/** The `Authorization` value a response's request was sent with. */
const authorizationSent = (response: HttpClientResponse.HttpClientResponse): string | undefined => {
  const sent: unknown = Reflect.get(response, sentAuthorization)
  return typeof sent === "string" ? sent : response.request.headers["authorization"]
}

/** The token of an `Authorization` value (`Bearer <token>`), to look for where a server echoed it. */
const tokenOf = (authorization: string | undefined): string | undefined =>
  authorization?.replace(/^Bearer\s+/i, "").trim()

/**
 * Response headers as they may be shown (their sensitive names already redacted): a server (a
 * gateway's `WWW-Authenticate`) may echo the request's token in a value, replaced by `<redacted>`.
 *
 * @internal
 */
export const headersShown = (headers: unknown, authorization: string | undefined): unknown => {
  const token = tokenOf(authorization)
  if (token === undefined || typeof headers !== "object" || headers === null) return headers
  const shown: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(headers)) {
    shown[name] = typeof value === "string" ? redactAll(value, [token]) : value
  }
  return shown
}

/**
 * Removes, in place, a request's token from the text fields of a transport's error and of its
 * causes: undici's `HTTPParserError` keeps the bytes of the answer it could not parse in `data`,
 * and a server that echoed the request's `Authorization` there put the token in
 * `util.inspect(error)` (and in the `http.client` span's exit, which holds the same object).
 * Every own string field is scrubbed (`message`, `stack`, `data`, ...), to a few causes deep.
 *
 * @internal
 */
export const scrubCauses = (cause: unknown, authorization: string | undefined): void => {
  const token = tokenOf(authorization)
  if (token === undefined || token === "" || token === "<redacted>") return
  let error = cause
  for (let depth = 0; depth < 8 && typeof error === "object" && error !== null; depth++) {
    for (const key of Object.getOwnPropertyNames(error)) {
      const descriptor = Object.getOwnPropertyDescriptor(error, key)
      if (descriptor === undefined || typeof descriptor.value !== "string" || !descriptor.value.includes(token)) {
        continue
      }
      if (descriptor.writable !== true && descriptor.configurable !== true) continue
      Object.defineProperty(error, key, { ...descriptor, value: redactAll(descriptor.value, [token]) })
    }
    error = Reflect.get(error, "cause")
  }
}

/**
 * An error of the authenticated client, made safe to print anywhere (no credentials in it).
 *
 * @internal
 */
export const redactError = (error: HttpClientError.HttpClientError): HttpClientError.HttpClientError =>
  error._tag === "RequestError"
    ? new HttpClientErrorNs.RequestError({
      request: redactRequest(error.request),
      reason: error.reason,
      cause: error.cause,
      ...(error.description !== undefined ? { description: error.description } : {})
    })
    : redactResponseError(error)

/**
 * {@link redactError} of a response's error: its request and its response show no credentials.
 *
 * @internal
 */
export const redactResponseError = (error: HttpClientError.ResponseError): HttpClientError.ResponseError =>
  new HttpClientErrorNs.ResponseError({
    request: redactRequest(error.request),
    response: error.response instanceof RedactedResponse ? error.response : new RedactedResponse(error.response),
    reason: error.reason,
    cause: error.cause,
    ...(error.description !== undefined ? { description: error.description } : {})
  })

/**
 * A response whose `request` (and every error it fails with) shows no credentials: printing it,
 * `JSON.stringify` or `util.inspect` of it or of its errors, never renders the bearer token.
 *
 * @internal
 */
export class RedactedResponse implements HttpClientResponse.HttpClientResponse {
  readonly [HttpClientResponseNs.TypeId]: HttpClientResponse.TypeId = HttpClientResponseNs.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly request: HttpClientRequest.HttpClientRequest
  /** Private (not an own enumerable property): it holds the request as sent, token included. */
  readonly #original: HttpClientResponse.HttpClientResponse
  /** The body as read by the pump of an escape-hatch response (see {@link pumped}), if any. */
  readonly #body: Stream.Stream<Uint8Array, HttpClientError.ResponseError> | undefined
  #bytes: Effect.Effect<Uint8Array<ArrayBuffer>, HttpClientError.ResponseError> | undefined
  constructor(
    original: HttpClientResponse.HttpClientResponse,
    body?: Stream.Stream<Uint8Array, HttpClientError.ResponseError>
  ) {
    this.#original = original
    this.#body = body
    this.request = redactRequest(original.request)
  }
  /** The transport's response, credentials included in its request: never print it. */
  get original(): HttpClientResponse.HttpClientResponse {
    return this.#original
  }
  get status() {
    return this.original.status
  }
  get headers() {
    return this.original.headers
  }
  get cookies() {
    return this.original.cookies
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  /** The whole pumped body, read once and kept (as the transports keep their text). */
  private get bytes(): Effect.Effect<Uint8Array<ArrayBuffer>, HttpClientError.ResponseError> {
    const body = this.#body!
    return this.#bytes ??= Stream.runCollect(body).pipe(
      Effect.map(concatBytes),
      Effect.cached,
      Effect.runSync
    )
  }
  private decodeFailure(cause: unknown): HttpClientError.ResponseError {
    return new HttpClientErrorNs.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }
  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    if (this.#body === undefined) return Effect.mapError(this.original.formData, redactResponseError)
    return Effect.flatMap(this.bytes, (bytes) =>
      Effect.tryPromise({
        try: () => new Response(bytes, { headers: { "content-type": this.headers["content-type"] ?? "" } }).formData(),
        catch: (cause) => this.decodeFailure(cause)
      }))
  }
  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    if (this.#body === undefined) return Effect.mapError(this.original.text, redactResponseError)
    return Effect.map(this.bytes, (bytes) => new TextDecoder().decode(bytes))
  }
  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    if (this.#body === undefined) return Effect.mapError(this.original.json, redactResponseError)
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: (): unknown => text === "" ? null : JSON.parse(text),
        catch: (cause) => this.decodeFailure(cause)
      }))
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    if (this.#body === undefined) return Effect.mapError(this.original.urlParamsBody, redactResponseError)
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => UrlParams.fromInput(new URLSearchParams(text)),
        catch: (cause) => this.decodeFailure(cause)
      }))
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    if (this.#body === undefined) return Effect.mapError(this.original.arrayBuffer, redactResponseError)
    return Effect.map(this.bytes, (bytes) => {
      const out = new ArrayBuffer(bytes.length)
      new Uint8Array(out).set(bytes)
      return out
    })
  }
  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    if (this.#body === undefined) return Stream.mapError(this.original.stream, redactResponseError)
    return this.#body
  }
  toJSON(): unknown {
    return {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status,
      headers: headersShown(
        Headers.redact(this.headers, ["authorization", "cookie", "set-cookie", "x-api-key"]),
        authorizationSent(this.original)
      )
    }
  }
  toString(): string {
    return Inspectable.format(this.toJSON())
  }
  [Inspectable.NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
}
