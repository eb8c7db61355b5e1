import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientErrorNs from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpClientResponseNs from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import * as KernelRetry from "../KernelRetry.js"
import { bound, formatParseError } from "./bounded.js"
import { isSendableHeaderValue, isSendableToken } from "./credentials.js"
import * as Failures from "./failures.js"
import * as Log from "./log.js"
import * as Operations from "./operations.js"
import * as RetryAfter from "./retryAfter.js"
import * as Timeout from "./timeout.js"
import { isTracing } from "./tracing.js"
import * as Transport from "./transport.js"

/** @internal */
export const projectHeader = "x-kernel-project-id"

/**
 * Where a request goes: its URL resolved as a URL path against the base URL (keeping the base's
 * own path), or `undefined` when it would leave the base's origin. A leading `/` is relative to
 * the base's path, not to the host; an absolute URL is accepted only for the base's origin.
 *
 * @internal
 */
export const resolveUrl = (base: URL, url: string): URL | undefined => {
  let resolved: URL
  try {
    resolved = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(url) ? new URL(url) : new URL(url.replace(/^[/\\]+/, ""), base)
  } catch {
    return undefined
  }
  return resolved.origin === base.origin && resolved.username === "" && resolved.password === ""
    ? resolved
    : undefined
}

const baseOf = (baseUrl: string): URL => {
  const base = new URL(baseUrl)
  if (!base.pathname.endsWith("/")) base.pathname = `${base.pathname}/`
  base.search = ""
  base.hash = ""
  return base
}

/** A request as it may be shown: its `Authorization` header replaced by `<redacted>`. */
const redactRequest = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest =>
  Headers.has(request.headers, "authorization")
    ? HttpClientRequest.setHeader(request, "authorization", "<redacted>")
    : request

/** An error of the authenticated client, made safe to print anywhere (no credentials in it). */
const redactError = (error: HttpClientError.HttpClientError): HttpClientError.HttpClientError =>
  error._tag === "RequestError"
    ? new HttpClientErrorNs.RequestError({
      request: redactRequest(error.request),
      reason: error.reason,
      cause: error.cause,
      ...(error.description !== undefined ? { description: error.description } : {})
    })
    : new HttpClientErrorNs.ResponseError({
      request: redactRequest(error.request),
      response: error.response instanceof RedactedResponse ? error.response : new RedactedResponse(error.response),
      reason: error.reason,
      cause: error.cause,
      ...(error.description !== undefined ? { description: error.description } : {})
    })

const redactResponseError = (error: HttpClientError.ResponseError): HttpClientError.ResponseError =>
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
      Effect.map((chunks) => {
        let size = 0
        for (const chunk of chunks) size += chunk.length
        const out = new Uint8Array(size)
        let offset = 0
        for (const chunk of chunks) {
          out.set(chunk, offset)
          offset += chunk.length
        }
        return out
      }),
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
      headers: Headers.redact(this.headers, ["authorization", "cookie", "set-cookie", "x-api-key"])
    }
  }
  toString(): string {
    return Inspectable.format(this.toJSON())
  }
  [Inspectable.NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
}

/**
 * Runs a request with redirects not followed by `fetch` (`redirect: "manual"`, merged into the
 * user's `FetchHttpClient.RequestInit`): like undici's client, a 3xx comes back as it is (an
 * `UnexpectedStatus` for the operations). Followed, the answer of another origin would be taken
 * for the service's (fetch drops the token on the way, not the trust in the answer).
 */
const manualRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Effect.serviceOption(FetchHttpClient.RequestInit),
    (init) =>
      Effect.provideService(effect, FetchHttpClient.RequestInit, {
        ...Option.getOrElse(init, () => ({})),
        redirect: "manual"
      })
  )

/**
 * Whether the response being received belongs to an operation's attempt, which owns its body
 * (the attempt's scope aborts the request when it ends). Responses of the escape-hatch client
 * (`KernelClient.httpClient`) do not: their body is pumped (see {@link pumped}).
 */
const ownedByAttempt = globalValue("effect-kernel/client/ownedByAttempt", () => FiberRef.unsafeMake(false))

/** The most an escape-hatch response body is read ahead of its reader before the request is aborted. */
const pumpLimit = 16 * 1024 * 1024

/** Interrupts the pump of an escape-hatch response once the response is no longer referenced. */
const pumpRegistry = globalValue(
  "effect-kernel/client/pumpRegistry",
  () =>
    typeof FinalizationRegistry === "function"
      ? new FinalizationRegistry<Fiber.RuntimeFiber<unknown, unknown>>((fiber) => {
        Effect.runFork(Fiber.interrupt(fiber))
      })
      : undefined
)

/**
 * An escape-hatch response whose body is read at once, in the background, into a queue its reader
 * takes from: the transport's body is never left paused and unowned (on undici 7 a paused body
 * whose peer closes crashes the process, nodejs/undici#5360), whether the caller reads the body,
 * part of it, or only the status. Read ahead of its reader by more than `pumpLimit`, the request
 * is aborted (the reader then gets the bytes buffered, then a `ResponseError`); once the response
 * is garbage, the pump stops and the request is aborted.
 */
const pumped = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<HttpClientResponse.HttpClientResponse> =>
  Effect.flatMap(Queue.unbounded<Take.Take<Uint8Array, HttpClientError.ResponseError>>(), (queue) => {
    const counter = { ahead: 0, taken: false }
    return Effect.map(startPump(response, queue, counter), (pump) => {
      const wrapper = new RedactedResponse(response, pumpedBody(response, queue, counter, pump))
      pumpRegistry?.register(wrapper, pump)
      return wrapper
    })
  })

/** Reads the body into the queue. Holds no reference to the response's wrapper (so it can be collected). */
const startPump = (
  response: HttpClientResponse.HttpClientResponse,
  queue: Queue.Queue<Take.Take<Uint8Array, HttpClientError.ResponseError>>,
  counter: { ahead: number }
) =>
  Stream.runForEach(response.stream, (chunk) => {
    counter.ahead += chunk.length
    return counter.ahead > pumpLimit
      ? Effect.fail(
        new HttpClientErrorNs.ResponseError({
          request: response.request,
          response,
          reason: "Decode",
          description: `the body was not read: more than ${pumpLimit} bytes were waiting for their reader`
        })
      )
      : Queue.offer(queue, Take.of(chunk))
  }).pipe(
    Effect.mapError(redactResponseError),
    Effect.exit,
    Effect.flatMap((exit) => Queue.offer(queue, Exit.isSuccess(exit) ? Take.end : Take.failCause(exit.cause))),
    Effect.forkDaemon
  )

/** The body as its reader sees it: what the pump queued, once. */
const pumpedBody = (
  response: HttpClientResponse.HttpClientResponse,
  queue: Queue.Queue<Take.Take<Uint8Array, HttpClientError.ResponseError>>,
  counter: { ahead: number; taken: boolean },
  pump: Fiber.RuntimeFiber<unknown, unknown>
): Stream.Stream<Uint8Array, HttpClientError.ResponseError> =>
  Stream.suspend(() => {
    if (counter.taken) {
      return Stream.fail(
        redactResponseError(
          new HttpClientErrorNs.ResponseError({
            request: response.request,
            response,
            reason: "Decode",
            description: "the body was already read"
          })
        )
      )
    }
    counter.taken = true
    return Stream.fromQueue(queue).pipe(
      Stream.flattenTake,
      Stream.tap((chunk) =>
        Effect.sync(() => {
          counter.ahead -= chunk.length
        })
      ),
      // the reader stopped (`Stream.take`, an interruption, a failure downstream): the pump stops
      // and the request is aborted, its socket freed at once (a no-op once the body was read whole)
      Stream.ensuring(Fiber.interrupt(pump))
    )
  })

const invalidUrl = (request: HttpClientRequest.HttpClientRequest, description: string) =>
  new HttpClientErrorNs.RequestError({ request: redactRequest(request), reason: "InvalidUrl", description })

/**
 * The transport with the base URL, credentials and JSON accept header applied. The token goes
 * only to the base URL's origin: a request URL is joined to the base as a URL path (never as
 * text), and one that resolves to another origin is refused before anything is sent. Errors
 * and responses come back with the `Authorization` header redacted in their request.
 *
 * @internal
 */
export const authenticate =
  (config: KernelConfig.Service) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
    const base = baseOf(config.baseUrl)
    const token = Redacted.value(config.apiKey)
    const tokenOk = isSendableToken(token)
    const projectOk = Option.isNone(config.projectId) || isSendableHeaderValue(config.projectId.value)
    const authenticated = client.pipe(
      HttpClient.mapRequestEffect((request) => {
        const url = resolveUrl(base, request.url)
        if (url === undefined) {
          return Effect.fail(
            invalidUrl(
              request,
              `refusing to send the Kernel credentials outside ${base.origin}: the URL must be a path, or a URL of that origin`
            )
          )
        }
        if (!tokenOk || !projectOk) {
          return Effect.fail(
            new HttpClientErrorNs.RequestError({
              request: redactRequest(request),
              reason: "Encode",
              description: !tokenOk
                ? "the API key contains characters that cannot be sent in an HTTP header; it is not shown"
                : "the project id contains characters that cannot be sent in an HTTP header"
            })
          )
        }
        // the URL as text: its own query is sent as written (`?flag`, `%20` kept; a `URL` would be
        // parsed into url params and re-encoded), then the request's url params (`setUrlParam`)
        // and hash, as the platform sends them
        let out = HttpClientRequest.bearerToken(HttpClientRequest.setUrl(request, url.href), token)
        if (!Headers.has(out.headers, "accept")) out = HttpClientRequest.acceptJson(out)
        return Effect.succeed(
          Option.isSome(config.projectId)
            ? HttpClientRequest.setHeader(out, projectHeader, config.projectId.value)
            : out
        )
      }),
      HttpClient.transformResponse((effect) =>
        Effect.flatMap(
          Effect.zip(
            Effect.mapError(manualRedirects(effect), redactError),
            FiberRef.get(ownedByAttempt)
          ),
          ([response, owned]): Effect.Effect<HttpClientResponse.HttpClientResponse> =>
            owned ? Effect.succeed(new RedactedResponse(response)) : pumped(response)
        )
      )
    )
    if (tokenOk && projectOk) {
      directClients.set(authenticated, {
        // fetch must not follow redirects for the operations either (see manualRedirects); the
        // SDK's own transport never follows them
        transport: Transport.isOwnable(client) ? client : HttpClient.transformResponse(client, manualRedirects),
        owned: Transport.isOwnable(client),
        base: base.href,
        headers: Headers.fromInput({
          authorization: `Bearer ${token}`,
          accept: "application/json",
          "accept-encoding": acceptEncoding,
          ...(Option.isSome(config.projectId) ? { [projectHeader]: config.projectId.value } : {})
        })
      })
    }
    return authenticated
  }

/**
 * What {@link authenticate} applies, for the operations' own requests: the transport under it, the
 * base URL (ending with `/`) and the headers. An operation's path is built by the SDK (every
 * parameter percent-encoded as one segment, `.` and `..` refused), so it resolves to `base + path`
 * without parsing a URL per call, and its errors are redacted when they become the SDK's errors.
 */
interface Direct {
  readonly transport: HttpClient.HttpClient
  /** The transport is a `KernelTransport`: attempts own their requests without a scope. */
  readonly owned: boolean
  readonly base: string
  readonly headers: Headers.Headers
}

const directClients = new WeakMap<HttpClient.HttpClient, Direct>()

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
   * request provably never reached the server, or the server answered 429 (see {@link retryUnrepeatable}).
   */
  readonly idempotent: boolean
}

/** @internal */
export const operation = <E>(
  name: string,
  documented: ReadonlyArray<StatusErrorClass<E>>,
  attributes: Readonly<Record<string, unknown>> = {},
  idempotent: boolean = true
): Operation<E> => ({ name, documented, attributes, idempotent })

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

/** How much of an error body is read; the rest is discarded and the connection closed. */
const errorBodyLimit = 64 * 1024
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

/**
 * A function made on first use: building a schema's decoder walks its whole AST, work that
 * should not happen at import time (cold start) for operations a program may never call.
 */
const lazy = <F>(make: () => F): () => F => {
  let made: F | undefined
  return () => (made ??= make())
}

const decodeErrorBody = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(KernelError.ErrorBody)))

/**
 * Up to 64 KiB of a body as text ("" if it could not be read): an error body, or a body the SDK
 * discards. The rest is never read; the attempt ending releases it.
 *
 * @internal
 */
export const readBounded = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
  response.stream.pipe(
    Stream.runFoldWhile(
      { parts: new Array<Uint8Array>(), size: 0 },
      (acc) => acc.size < errorBodyLimit,
      (acc, chunk) => {
        acc.parts.push(chunk)
        acc.size += chunk.length
        return acc
      }
    ),
    Effect.map(({ parts }) => {
      const decoder = new TextDecoder()
      let text = ""
      for (const part of parts) text += decoder.decode(part, { stream: true })
      return (text + decoder.decode()).slice(0, errorBodyLimit)
    }),
    Effect.orElseSucceed(() => "")
  )

/**
 * An error body as text: {@link readBounded}, decoded when it came with a content coding the
 * transport did not undo (the operations ask for gzip, deflate and br). At most 64 KiB either
 * side; "" when it cannot be decoded.
 */
const readErrorText = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> => {
  const codings = codingsOf(response.headers["content-encoding"])
  if (codings.length === 0 || decodedByTransport(response)) return readBounded(response)
  if (codings.length > maxCodings || codings.some((coding) => !supportedCodings.has(coding))) return Effect.succeed("")
  return response.stream.pipe(
    Stream.runFoldWhile(
      { parts: new Array<Uint8Array>(), size: 0 },
      (acc) => acc.size < errorBodyLimit,
      (acc, chunk) => {
        acc.parts.push(chunk)
        acc.size += chunk.length
        return acc
      }
    ),
    Effect.zip(loadZlib),
    Effect.flatMap(([{ parts, size }, zlib]) => {
      let body: Effect.Effect<Buffer, unknown> = Effect.succeed(Buffer.concat(parts, size))
      for (const coding of [...codings].reverse()) {
        body = Effect.flatMap(body, (input) => inflate(zlib, coding, input, errorBodyLimit))
      }
      return body
    }),
    Effect.map((buffer) => new TextDecoder().decode(buffer.subarray(0, errorBodyLimit))),
    Effect.orElseSucceed(() => "")
  )
}

/** @internal */
export const describe = (request: HttpClientRequest.HttpClientRequest) => ({
  method: request.method,
  path: request.url.startsWith("/") ? request.url : pathOf(request.url)
})

const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname
  } catch {
    return "(invalid url)"
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
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<never, E | CommonStatusError> =>
  Effect.flatMap(Effect.zip(readErrorText(response), Clock.currentTimeMillis), ([text, now]): Effect.Effect<
    never,
    E | CommonStatusError
  > => {
    // an undocumented success carries the operation's data, which may be secrets (a created API
    // key, a browser's CDP URL): it is neither decoded nor quoted, only measured
    if (response.status >= 200 && response.status < 300) {
      return Effect.fail(
        new KernelError.UnexpectedStatus({
          ...describe(request),
          status: response.status,
          code: "unknown",
          message: `HTTP ${response.status}, a success this operation does not document (its body, ${
            new TextEncoder().encode(text).length
          } bytes read, is not shown: a success may carry secrets)`,
          body: ""
        })
      )
    }
    const body = decodeErrorBody()(text)
    const retryAfter = RetryAfter.fromHeaders(response.headers, now)
    const shouldRetry = RetryAfter.shouldRetry(response.headers)
    const props: KernelError.ApiErrorFields = {
      ...describe(request),
      status: response.status,
      code: Option.match(body, { onNone: () => "unknown", onSome: (b) => bound(b.code, codeLength) }),
      message: Option.match(body, {
        onNone: () => `HTTP ${response.status}${text.length > 0 ? `: ${excerpt(text)}` : ""}`,
        onSome: (b) => bound(b.message, messageLength)
      }),
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
    return Effect.fail(new KernelError.UnexpectedStatus({ ...props, body: excerpt(text) }))
  })

const excerpt = (text: string): string => {
  const flat = text.slice(0, excerptLength * 4).replace(/\s+/g, " ").trim()
  return flat.length > excerptLength ? `${flat.slice(0, excerptLength)}…` : flat
}

/** @internal */
export const transportError = (
  request: HttpClientRequest.HttpClientRequest,
  error: HttpClientError.HttpClientError
): KernelError.TransportError => {
  const known = error.reason === "Transport" || error.reason === "Decode" ? Failures.classify(error.cause) : undefined
  return withCause(
    new KernelError.TransportError({
      ...describe(request),
      message: scrub(
        bound(
          known !== undefined
            ? known.rule.describe(originOf(error.request, request), known.code)
            : error.reason === "Transport" || error.reason === "Decode"
            ? `${error.reason === "Transport" ? "request failed" : "response body failed"}: ${
              causeMessage(error.cause)
            }`
            : `${error.reason}: ${error.description ?? causeMessage(error.cause)}`
        ),
        request
      ),
      ...(known !== undefined ? { code: known.code, ...(known.rule.transient ? {} : { transient: false }) } : {})
    }),
    // the cause's request is shown without credentials, whichever client it came from
    Headers.has(error.request.headers, "authorization") && error.request.headers["authorization"] !== "<redacted>"
      ? redactError(error)
      : error
  )
}

/** The origin a request went to (scheme, host, port: never a credential), as far as it is known. */
const originOf = (...requests: ReadonlyArray<HttpClientRequest.HttpClientRequest>): string => {
  for (const request of requests) {
    try {
      return new URL(request.url).origin
    } catch {
      // a path: the origin is the other request's
    }
  }
  return "the server"
}

/**
 * Keeps the transport's error as the standard `cause` of ours, not enumerable: `JSON.stringify`
 * leaves it out, `util.inspect` shows it (its request is redacted by the authenticated client).
 */
const withCause = <E extends Error>(error: E, cause: unknown): E => {
  Object.defineProperty(error, "cause", { value: cause, enumerable: false, configurable: true, writable: true })
  return error
}

/**
 * Removes any credential a transport's message may have echoed (fetch quotes an invalid header
 * value whole): the bearer token as sent in the request, and anything after `Bearer`.
 */
const scrub = (message: string, request: HttpClientRequest.HttpClientRequest): string => {
  let out = message
  const authorization = request.headers["authorization"]
  if (authorization !== undefined && authorization.length > 0) {
    const token = authorization.replace(/^Bearer\s+/i, "")
    out = out.split(authorization).join("<redacted>")
    if (token.length >= 4) out = out.split(token).join("<redacted>")
    for (const line of token.split(/[\r\n]+/)) {
      if (line.length >= 4) out = out.split(line).join("<redacted>")
    }
  }
  return out.replace(/Bearer[^"'\s]*\s*[^"'\s]*/gi, "Bearer <redacted>")
}

const causeMessage = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner: unknown = "cause" in cause ? cause.cause : undefined
    const code = inner instanceof Error && "code" in inner ? ` (${String(inner.code)})` : ""
    return `${cause.message}${code}`
  }
  return String(cause)
}

/** @internal */
export const decodeError = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  error: ParseResult.ParseError
): KernelError.DecodeError =>
  new KernelError.DecodeError({
    ...describe(request),
    status,
    message: formatParseError(error)
  })

/**
 * Runs one request as an operation: one attempt is sending it and handling the 2xx response
 * within the time-out; non-2xx answers become typed errors; transient failures are retried by
 * the configured policy; the whole runs in the span `Kernel.<operation>`.
 *
 * @internal
 */
export const execute = <A, E extends KernelError.KernelError, E2 extends KernelError.KernelError, R = never>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KernelConfig.Service,
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  onSuccess: (response: HttpClientResponse.HttpClientResponse, scope: Scope.CloseableScope) => Effect.Effect<A, E2>,
  keep: (a: A) => boolean = () => false
): Effect.Effect<
  A,
  E | E2 | CommonStatusError | KernelError.TransportError | KernelError.Timeout | KernelError.InvalidInput,
  R
> => {
  const info = describe(request)
  const scoped = HttpClient.withScope(client)
  // Every attempt owns its request: when the attempt ends (its body read, an error body read in
  // part, a time-out, an interruption), the request is aborted, which destroys an unread body and
  // closes its connection if the body was not complete. No body is ever left paused and unowned
  // (undici 7 can crash the process on such a body when the peer closes: nodejs/undici#5360).
  // Only a response the caller keeps (`keep`, a replay body being streamed) outlives its attempt,
  // and then its scope is the caller's to close.
  const run = (attempts: number) =>
    Effect.acquireUseRelease(
      Scope.make(),
      (scope) =>
        (attempts === 1
          ? scoped.execute(request)
          : Effect.zipRight(annotateAttempts(attempts), scoped.execute(request))).pipe(
            Effect.locally(ownedByAttempt, true),
            Scope.extend(scope),
            Effect.catchAll((error) => Effect.fail(transportError(request, error))),
            Effect.flatMap((response): Effect.Effect<A, E | E2 | CommonStatusError> =>
              response.status >= 200 && response.status < 300
                ? onSuccess(response, scope)
                : statusError(op, request, response)
            )
          ),
      (scope, exit) => Exit.isSuccess(exit) && keep(exit.value) ? Effect.void : Scope.close(scope, Exit.void)
    )
  return runOperation(
    config,
    op,
    info,
    (attempts) =>
      Timeout.timeoutFail(
        run(attempts),
        config.timeout,
        () => new KernelError.Timeout({ ...info, timeout: config.timeout })
      )
  )
}

/**
 * Records the attempt count on the operation's span, which exists only when tracing (see
 * `isTracing`): without it, the current span is the caller's, which is not the SDK's to annotate.
 */
const annotateAttempts = (attempts: number): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) =>
    isTracing(fiber) ? Effect.annotateCurrentSpan("kernel.attempts", attempts) : Effect.void
  )

/**
 * One operation's run around its attempts: the credentials checked, transient failures retried
 * by the configured policy (each logged at debug level), the whole in the span `Kernel.<operation>`.
 */
const runOperation = <A, E extends KernelError.KernelError, R>(
  config: KernelConfig.Service,
  op: Operation<unknown>,
  info: { readonly method: string; readonly path: string },
  attempt: (attempts: number) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | KernelError.InvalidInput, R> =>
  // the count of attempts belongs to one run of the operation, not to the effect value
  Effect.suspend(() => {
    let attempts = 0
    const logged = Effect.tapError(Effect.suspend(() => attempt(++attempts)), (error) =>
      KernelError.isTransient(error)
        ? Log.debug(`Kernel.${op.name}: attempt ${attempts} failed with ${error._tag}`)
        : Effect.void)
    return Effect.zipRight(
      checkCredentials(config),
      op.idempotent ? retryTransient(logged, policyFor(config)) : retryUnrepeatable(logged, policyFor(config))
    )
  }).pipe((self) =>
    Effect.withFiberRuntime((fiber) =>
      isTracing(fiber)
        ? Effect.withSpan(self, `Kernel.${op.name}`, {
          kind: "client",
          captureStackTrace: false,
          attributes: {
            "http.request.method": info.method,
            "url.path": info.path,
            "kernel.attempts": 1,
            ...op.attributes
          }
        })
        : self
    )
  )

/**
 * {@link execute} on a `KernelTransport`, for an answer handled within its attempt: the attempt
 * owns its request through the transport's `Owner` rather than a scope and an `AbortController`,
 * and its deadline is the live clock's timer cancelling the request (the attempt then fails with
 * `Timeout`) rather than a forked fiber. When the attempt ends, however it ends, the request is
 * released: a body not read to the end is destroyed with its connection, never left paused.
 * On another clock (`TestClock`) the deadline is `Effect.timeoutFail`'s, as in {@link execute}.
 *
 * @internal
 */
export const executeOwned = <A, E extends KernelError.KernelError, E2 extends KernelError.KernelError>(
  client: HttpClient.HttpClient,
  config: KernelConfig.Service,
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  onSuccess: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E2>
): Effect.Effect<
  A,
  E | E2 | CommonStatusError | KernelError.TransportError | KernelError.Timeout | KernelError.InvalidInput
> => {
  const info = describe(request)
  const timeout = () => new KernelError.Timeout({ ...info, timeout: config.timeout })
  const send = client.execute(request)
  const run = (attempts: number, millis: number | undefined) =>
    Effect.suspend(() => {
      // per run of the attempt (the same effect value may run on several fibers at once); the
      // owner is made once the release is in place, and keyed by the fiber that sends
      let owner: Transport.Owner | undefined
      let timer: ReturnType<typeof setTimeout> | undefined
      return Effect.withFiberRuntime<A, E | E2 | CommonStatusError | KernelError.TransportError>((fiber) => {
        const attempt = owner = new Transport.Owner(fiber, request)
        if (millis !== undefined) timer = setTimeout(() => attempt.expire(), millis)
        return (attempts === 1 ? send : Effect.zipRight(annotateAttempts(attempts), send)).pipe(
          Effect.catchAll((error) => Effect.fail(transportError(request, error))),
          Effect.flatMap((response): Effect.Effect<A, E | E2 | CommonStatusError> =>
            response.status >= 200 && response.status < 300
              ? onSuccess(response)
              : statusError(op, request, response)
          )
        )
      }).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (timer !== undefined) clearTimeout(timer)
          owner?.release()
        })),
        Effect.catchAll((error) => Effect.fail(owner?.timedOut === true ? timeout() : error))
      )
    })
  return Effect.clockWith((clock) => {
    const millis = Timeout.timerMillis(clock, config.timeout)
    return runOperation(
      config,
      op,
      info,
      millis === undefined
        ? (attempts) => Timeout.timeoutFail(run(attempts, undefined), config.timeout, timeout)
        : (attempts) => run(attempts, millis)
    )
  })
}

const checkedCredentials = new WeakMap<KernelConfig.Service, Effect.Effect<void, KernelError.InvalidInput>>()

/**
 * The API key and project id must be sendable as header values: a key with a line break (a
 * trailing newline from a file) can never be sent, and some transports quote the invalid value
 * whole in their error. Rejected before any request, without echoing the value.
 *
 * @internal
 */
export const checkCredentials = (config: KernelConfig.Service): Effect.Effect<void, KernelError.InvalidInput> => {
  let checked = checkedCredentials.get(config)
  if (checked === undefined) {
    checked = !isSendableToken(Redacted.value(config.apiKey))
      ? Effect.fail(
        new KernelError.InvalidInput({
          field: "apiKey",
          message:
            "apiKey contains characters that cannot be sent in an HTTP header (a space, a line break, a control or non-ASCII character); the key is not shown"
        })
      )
      : Option.isSome(config.projectId) && !isSendableHeaderValue(config.projectId.value)
      ? Effect.fail(
        new KernelError.InvalidInput({
          field: "projectId",
          message:
            "projectId contains characters that cannot be sent in an HTTP header (a line break, a control or non-ASCII character, or surrounding spaces)"
        })
      )
      : Effect.void
    checkedCredentials.set(config, checked)
  }
  return checked
}

/**
 * `Effect.retry(effect, { schedule, while: retryable })` (by default `isTransient`), except that
 * the schedule's driver is only made once a retryable failure happened: the common case, success
 * at the first attempt, allocates nothing for retries.
 *
 * @internal
 */
export const retryTransient = <A, E extends KernelError.KernelError, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, KernelError.KernelError>,
  retryable: (error: KernelError.KernelError) => boolean = KernelError.isTransient
): Effect.Effect<A, E, R> => Effect.catchIf(effect, retryable, (first) => retryFrom(effect, schedule, retryable, first))

const retryFrom = <A, E extends KernelError.KernelError, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, KernelError.KernelError>,
  retryable: (error: KernelError.KernelError) => boolean,
  first: E
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Schedule.driver(schedule), (driver) => {
    const loop = (error: E): Effect.Effect<A, E, R> =>
      Effect.matchEffect(driver.next(error), {
        onFailure: () => Effect.fail(error),
        onSuccess: () => Effect.catchIf(effect, retryable, loop)
      })
    return loop(first)
  })

/**
 * {@link retryTransient} for a request that is not idempotent (repeating it could repeat its
 * action): a transient failure is retried only when the request provably never reached the
 * server ({@link neverSent}), or the server answered 429 or `x-should-retry: true` — never after a
 * time-out, a 5xx or a connection lost once the request may have been written. Within
 * `KernelRetry.retryNonIdempotent` (the caller's opt-in, per call), every transient failure is.
 *
 * @internal
 */
export const retryUnrepeatable = <A, E extends KernelError.KernelError, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, KernelError.KernelError>
): Effect.Effect<A, E, R> =>
  Effect.catchIf(
    effect,
    KernelError.isTransient,
    (first) =>
      Effect.flatMap(FiberRef.get(KernelRetry.currentRetryNonIdempotent), (optIn) => {
        const retryable = optIn ? KernelError.isTransient : isSafeToRepeat
        return retryable(first) ? retryFrom(effect, schedule, retryable, first) : Effect.fail(first)
      })
  )

/**
 * Whether a transient failure of a non-idempotent request may be retried without the risk of
 * doing its action twice: the server refused it unprocessed (429), said so (`x-should-retry:
 * true`), or the request was never sent ({@link neverSent}).
 *
 * @internal
 */
export const isSafeToRepeat = (error: KernelError.KernelError): boolean => {
  if (!KernelError.isTransient(error)) return false
  switch (error._tag) {
    case "TransportError":
      return neverSent(error)
    case "Timeout":
    case "DecodeError":
    case "InvalidInput":
    case "ReplayNotReady":
      return false
    default:
      return error.shouldRetry === true || error.status === 429
  }
}

/** The error codes of a connection that was never made: nothing of the request was written. */
const notConnected: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

/**
 * Whether a `TransportError` proves that the request never reached the server: the transport's
 * error (its `cause`) is a request refused before sending (an invalid URL, a body that could not
 * be encoded), or a failure to connect (refused, unknown host, DNS failure, unreachable, connect
 * time-out), found on the cause chain (`fetch failed` → `connect ECONNREFUSED`; an
 * `AggregateError` of connection attempts, all refused). Anything else (a reset, a socket closed
 * or a time-out after connecting) may have reached the server: `false`.
 *
 * @internal
 */
export const neverSent = (error: KernelError.TransportError): boolean => {
  const cause: unknown = Reflect.get(error, "cause")
  if (HttpClientErrorNs.isHttpClientError(cause) && cause._tag === "RequestError") {
    if (cause.reason === "InvalidUrl" || cause.reason === "Encode") return true
    return connectFailure(cause.cause, 0)
  }
  return false
}

const connectFailure = (error: unknown, depth: number): boolean => {
  if (depth > 8 || typeof error !== "object" || error === null) return false
  const code: unknown = Reflect.get(error, "code")
  if (typeof code === "string") return notConnected.has(code)
  const errors: unknown = Reflect.get(error, "errors")
  if (Array.isArray(errors) && errors.length > 0) return errors.every((inner) => connectFailure(inner, depth + 1))
  return connectFailure(Reflect.get(error, "cause"), depth + 1)
}

/**
 * The most a JSON answer may have: 64 MiB (a list of 10,000 browser pools is a few MiB). A larger
 * body is refused with a `DecodeError`, not buffered: a server cannot make the SDK hold more.
 *
 * @internal
 */
export const maxJsonBytes = 64 * 1024 * 1024

const tooLarge = (request: HttpClientRequest.HttpClientRequest, status: number, declared?: number) =>
  new KernelError.DecodeError({
    ...describe(request),
    status,
    message: `the JSON body${declared === undefined ? "" : ` (${declared} bytes)`} is larger than the ${
      maxJsonBytes / 1024 / 1024
    } MiB a JSON answer may have`
  })

/**
 * What the operations' JSON requests accept as content coding: the codings decoded here (or by
 * `fetch`). A replay download asks for `identity` instead (its definition's header).
 *
 * @internal
 */
export const acceptEncoding = "gzip, deflate, br"

const supportedCodings: ReadonlySet<string> = new Set(["gzip", "x-gzip", "deflate", "br"])

/** The content codings of a `Content-Encoding` header, in the order they were applied (`identity` left out). */
const codingsOf = (header: string | undefined): ReadonlyArray<string> =>
  header === undefined
    ? []
    : header.split(",").map((coding) => coding.trim().toLowerCase()).filter((coding) =>
      coding !== "" && coding !== "identity"
    )

/**
 * The most content codings a body may have (what undici's `fetch` accepts): each one is a decoding
 * pass, so a longer list is refused before any of it is decoded.
 */
const maxCodings = 5

/**
 * Whether the transport decoded the body itself: `fetch` does (its response wraps a web `Response`),
 * unless the header lists a coding it does not know, `identity` included (`gzip, identity`): it then
 * decodes none of them and hands the body over as sent.
 */
const decodedByTransport = (response: HttpClientResponse.HttpClientResponse): boolean => {
  const original = response instanceof RedactedResponse ? response.original : response
  return Predicate.hasProperty(original, "source") && isWebResponse(original.source) &&
    (response.headers["content-encoding"] ?? "").toLowerCase().split(",").every((coding) =>
      supportedCodings.has(coding.trim())
    )
}

/**
 * A web `Response`, whichever implementation made it: the global class, or another fetch's (npm
 * undici's `fetch` given to `FetchHttpClient.Fetch` returns its own `Response`, not the global one).
 */
const isWebResponse = (value: unknown): boolean =>
  (typeof Response === "function" && value instanceof Response) ||
  (Predicate.hasProperty(value, "bodyUsed") && typeof value.bodyUsed === "boolean" &&
    Predicate.hasProperty(value, "arrayBuffer") && Predicate.isFunction(value.arrayBuffer) &&
    Predicate.hasProperty(value, "headers") && Predicate.hasProperty(value, "status"))

type Zlib = typeof import("node:zlib")
let zlibModule: Promise<Zlib> | undefined
/** node:zlib, loaded on the first encoded answer of a transport that does not decode (never in a browser). */
const loadZlib = Effect.promise(() => zlibModule ??= import("node:zlib"))

/** One coding undone, at most {@link maxJsonBytes} of output (zlib stops there: a bomb is never inflated whole). */
const inflate = (
  zlib: Zlib,
  coding: string,
  input: Buffer,
  maxOutputLength: number = maxJsonBytes
): Effect.Effect<Buffer, unknown> =>
  Effect.async<Buffer, unknown>((resume) => {
    const options = { maxOutputLength }
    const done = (error: Error | null, output: Buffer) =>
      resume(error === null ? Effect.succeed(output) : Effect.fail(error))
    if (coding === "br") zlib.brotliDecompress(input, options, done)
    // "deflate" is the zlib format; some servers send raw deflate, which fetch accepts too
    else if (coding === "deflate" && input.length > 0 && (input[0]! & 0x0f) !== 8) zlib.inflateRaw(input, options, done)
    else if (coding === "deflate") zlib.inflate(input, options, done)
    else zlib.gunzip(input, options, done)
  })

/**
 * An encoded JSON body: read as sent (at most {@link maxJsonBytes}), then decoded with node:zlib,
 * the bound counting the decoded bytes: a small body that inflates past it is refused there.
 */
const readEncodedJson = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  codings: ReadonlyArray<string>
): Effect.Effect<string, KernelError.DecodeError | KernelError.TransportError> =>
  Effect.suspend(() => {
    const parts: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.mapError((error): KernelError.DecodeError | KernelError.TransportError => transportError(request, error)),
      Stream.runForEachChunk((chunks) => {
        for (const chunk of chunks) {
          size += chunk.length
          if (size > maxJsonBytes) return Effect.fail(tooLarge(request, response.status))
          parts.push(chunk)
        }
        return Effect.void
      }),
      Effect.zipRight(loadZlib),
      Effect.flatMap((zlib) => {
        let body: Effect.Effect<Buffer, unknown> = Effect.succeed(Buffer.concat(parts, size))
        // undone in the reverse order of their application
        for (const coding of [...codings].reverse()) {
          body = Effect.flatMap(body, (input) => inflate(zlib, coding, input))
        }
        return Effect.mapError(body, (cause) =>
          Predicate.hasProperty(cause, "code") && cause.code === "ERR_BUFFER_TOO_LARGE"
            ? tooLarge(request, response.status)
            : new KernelError.DecodeError({
              ...describe(request),
              status: response.status,
              message: bound(
                `the ${codings.join(", ")} body could not be decoded: ${
                  cause instanceof Error ? cause.message : String(cause)
                }`,
                512
              )
            }))
      }),
      Effect.map((buffer) =>
        new TextDecoder().decode(buffer)
      )
    )
  })

/**
 * A JSON body as text, bounded by {@link maxJsonBytes}: with a `Content-Length` (which the
 * transports enforce) the body is read whole, or refused before it is read when too large;
 * without one it is counted as it comes and the request released once it passes the bound.
 */
const readJsonText = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<string, KernelError.DecodeError | KernelError.TransportError> => {
  const length = response.headers["content-length"]
  const encoding = response.headers["content-encoding"]
  const codings = codingsOf(encoding)
  if (codings.length > 0) {
    const unsupported = codings.find((coding) => !supportedCodings.has(coding))
    if (unsupported !== undefined) {
      return Effect.fail(
        new KernelError.DecodeError({
          ...describe(request),
          status: response.status,
          message: `the JSON body has content-encoding ${
            bound(encoding ?? "", 100)
          }, which the SDK does not decode (it asks for ${acceptEncoding})`
        })
      )
    }
    if (codings.length > maxCodings) {
      return Effect.fail(
        new KernelError.DecodeError({
          ...describe(request),
          status: response.status,
          message: `the JSON body has ${codings.length} content codings, more than the ${maxCodings} the SDK decodes`
        })
      )
    }
    // fetch decodes what it receives (and the bytes it hands over are the decoded ones, counted
    // below); the other transports hand over the bytes as sent: decoded here
    if (!decodedByTransport(response)) return readEncodedJson(request, response, codings)
    // a body fetch could not decode fails its read ("terminated", caused by zlib's error): the
    // same DecodeError as on the other transports, not a transient TransportError retried
    return Effect.catchTag(
      readJsonBody(request, response, length, encoding),
      "TransportError",
      (error): Effect.Effect<never, KernelError.DecodeError | KernelError.TransportError> => {
        const failure = zlibFailure(error)
        return failure === undefined ? Effect.fail(error) : Effect.fail(
          new KernelError.DecodeError({
            ...describe(request),
            status: response.status,
            message: bound(`the ${codings.join(", ")} body could not be decoded: ${failure}`, 512)
          })
        )
      }
    )
  }
  return readJsonBody(request, response, length, encoding)
}

/** zlib's (or brotli's) error along a failure's `cause` chain, as `code: message`, if there is one. */
const zlibFailure = (failure: unknown): string | undefined => {
  let cause: unknown = failure
  for (let depth = 0; depth < 8 && Predicate.hasProperty(cause, "cause"); depth++) {
    cause = cause.cause
    if (
      Predicate.hasProperty(cause, "code") && typeof cause.code === "string" &&
      /^(?:Z_[A-Z_]+_ERROR|Z_NEED_DICT|ERR__ERROR_|ERR_BROTLI)/.test(cause.code)
    ) {
      return `${cause.code}: ${cause instanceof Error ? cause.message : String(cause.code)}`
    }
  }
  return undefined
}

/** A JSON body as text, decoded by the transport if it had a coding: bounded by {@link maxJsonBytes}. */
const readJsonBody = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  length: string | undefined,
  encoding: string | undefined
): Effect.Effect<string, KernelError.DecodeError | KernelError.TransportError> => {
  // a compressed body (fetch decodes it) may be far larger than its Content-Length: counted
  const declared = length !== undefined && /^\s*\d+\s*$/.test(length) &&
      (encoding === undefined || encoding.trim().toLowerCase() === "identity")
    ? Number(length)
    : undefined
  if (declared !== undefined) {
    return declared > maxJsonBytes
      ? Effect.fail(tooLarge(request, response.status, declared))
      : Effect.mapError(response.text, (error) => transportError(request, error))
  }
  if (response instanceof Transport.ResponseImpl) {
    // KernelTransport reads the body whole, dropping it past the bound
    return Effect.flatMap(
      Effect.mapError(response.textWithin(maxJsonBytes), (error) => transportError(request, error)),
      (text) => text === undefined ? Effect.fail(tooLarge(request, response.status)) : Effect.succeed(text)
    )
  }
  return Effect.suspend(() => {
    const decoder = new TextDecoder()
    let size = 0
    let text = ""
    return response.stream.pipe(
      Stream.mapError((error): KernelError.DecodeError | KernelError.TransportError => transportError(request, error)),
      Stream.runForEachChunk((chunks) => {
        for (const chunk of chunks) {
          size += chunk.length
          if (size > maxJsonBytes) return Effect.fail(tooLarge(request, response.status))
          text += decoder.decode(chunk, { stream: true })
        }
        return Effect.void
      }),
      Effect.map(() => text + decoder.decode())
    )
  })
}

/**
 * Decodes a JSON body with a schema, failing with `DecodeError` (naming the field) or
 * `TransportError` when the body could not be read.
 *
 * @internal
 */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
  const decoder = lazy(() => Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" }))
  return (
    request: HttpClientRequest.HttpClientRequest
  ) =>
  (
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<A, KernelError.DecodeError | KernelError.TransportError> =>
    readJsonText(request, response).pipe(
      Effect.flatMap((text) => {
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch (cause) {
          return Effect.fail(
            new KernelError.DecodeError({
              ...describe(request),
              status: response.status,
              message: bound(`body is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`, 512)
            })
          )
        }
        // decoding follows the schema, not the data; a failure here is a bug of ours, but it
        // must still not escape as a defect: whatever the server sent, the result is typed
        let result: Either.Either<A, ParseResult.ParseError>
        try {
          result = decoder()(json)
        } catch (cause) {
          return Effect.fail(
            new KernelError.DecodeError({
              ...describe(request),
              status: response.status,
              message: bound(
                `body could not be decoded: ${cause instanceof Error ? cause.message : String(cause)}`,
                512
              )
            })
          )
        }
        return Either.match(result, {
          onLeft: (error) => Effect.fail(decodeError(request, response.status, error)),
          onRight: Effect.succeed
        })
      })
    )
}

/**
 * The request headers a definition implies: a binary answer is asked for by its content type (and
 * `application/json`, for the errors), without content coding (the bytes are streamed as sent);
 * an event stream as `text/event-stream`.
 *
 * @internal
 */
export const definitionHeaders = (definition: Operations.Definition): Readonly<Record<string, string>> => {
  const types: Array<string> = []
  let events = false
  for (const answer of Object.values(definition.answers)) {
    if (answer.kind === "bytes" && !types.includes(answer.contentType)) types.push(answer.contentType)
    if (answer.kind === "sse") events = true
  }
  return types.length > 0
    ? { accept: `${types.join(", ")}, application/json`, "accept-encoding": "identity" }
    : events
    ? { accept: "text/event-stream" }
    : {}
}

/** A body that is not JSON on a request: bytes with their content type (a multipart form included). */
const withContent = (
  request: HttpClientRequest.HttpClientRequest,
  content: Operations.Content
): HttpClientRequest.HttpClientRequest =>
  content._tag === "Bytes"
    ? HttpClientRequest.bodyUint8Array(request, content.bytes, content.contentType)
    : HttpClientRequest.bodyStream(request, content.stream, {
      contentType: content.contentType,
      ...(content.contentLength === undefined ? {} : { contentLength: content.contentLength })
    })

/**
 * The configuration of a call whose body is a caller's one-shot stream: no retry (its bytes cannot
 * be sent again).
 */
const forContent = (config: KernelConfig.Service, content: Operations.Content | undefined): KernelConfig.Service =>
  content?._tag === "Stream" && content.oneShot ? noRetry(config) : config

const noRetry = (config: KernelConfig.Service): KernelConfig.Service => ({
  ...config,
  retrySchedule: Option.some(Schedule.stop)
})

/**
 * An operation's call, derived from its definition: the input checked and turned into the request
 * (path, query, header parameters and body from the definition), executed with the definition's
 * documented errors, span attributes and idempotency; a 2xx answer handled by `onSuccess`.
 *
 * @internal
 */
export const makeCall = <D extends Operations.Definition, A, E2 extends KernelError.KernelError>(
  definition: D & { readonly errors: ReadonlyArray<StatusErrorClass<Operations.StatusErrors<D>>> },
  onSuccess: (
    request: HttpClientRequest.HttpClientRequest
  ) => (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E2>
) => {
  const prepare = Operations.preparer(definition)
  const generic = requestOf(definition)
  const make = HttpClientRequest.make(definition.method)
  const ownHeaders = definitionHeaders(definition)
  return (
    { config, httpClient }: { readonly config: KernelConfig.Service; readonly httpClient: HttpClient.HttpClient }
  ) => {
    const direct = directClients.get(httpClient)
    // built once per operation: the headers (credentials, accept, the definition's own)
    const headers = direct === undefined
      ? undefined
      : Headers.merge(direct.headers, Headers.fromInput(ownHeaders))
    return (
      input: unknown
    ): Effect.Effect<
      A,
      | Operations.StatusErrors<D>
      | E2
      | CommonStatusError
      | KernelError.TransportError
      | KernelError.Timeout
      | KernelError.InvalidInput
    > => {
      if (direct === undefined || headers === undefined) {
        // a request per run, as below (a user's client may send the request it is given as is)
        return Effect.suspend(() =>
          Either.match(generic(input), {
            onLeft: Effect.fail,
            onRight: ({ oneShot, op, request }) =>
              execute(httpClient, oneShot ? noRetry(config) : config, op, request, onSuccess(request))
          })
        )
      }
      const prepared = prepare(input)
      if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
      const { attributes, body, content, path, query } = prepared.right
      const url = direct.base + path.slice(1)
      const op = operation(definition.name, definition.errors, attributes, definition.idempotent)
      // the header parameters never replace the credentials or the accept header
      const requestHeaders = prepared.right.headers === undefined
        ? headers
        : Headers.merge(Headers.fromInput(prepared.right.headers), headers)
      // a request per run: the same effect value may run on several fibers at once, and a
      // request's identity keys what owns it (the platform's `withScope`, the transport's owner)
      return Effect.suspend(() => {
        let request = query === undefined
          ? make(url, { headers: requestHeaders })
          : make(url, { headers: requestHeaders, urlParams: query })
        if (body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, body)
        else if (content !== undefined) request = withContent(request, content)
        const own = forContent(config, content)
        return direct.owned
          ? executeOwned(direct.transport, own, op, request, onSuccess(request))
          : execute(direct.transport, own, op, request, onSuccess(request))
      })
    }
  }
}
/**
 * The request and the operation (span name, documented errors, span attributes, idempotency) of
 * one call, from its definition and its input, or the `InvalidInput` refusing the input.
 *
 * @internal
 */
export const requestOf = <D extends Operations.Definition>(
  definition: D & { readonly errors: ReadonlyArray<StatusErrorClass<Operations.StatusErrors<D>>> }
) => {
  const prepare = Operations.preparer(definition)
  const make = HttpClientRequest.make(definition.method)
  // accept set here (not left to `authenticate`, which keeps a request's own): a header parameter
  // named accept cannot replace it
  const headers = Object.entries({ accept: "application/json", ...definitionHeaders(definition) })
  return (
    input: unknown
  ): Either.Either<
    {
      readonly request: HttpClientRequest.HttpClientRequest
      readonly op: Operation<Operations.StatusErrors<D>>
      /** Whether its body is a caller's one-shot stream (never retried). */
      readonly oneShot: boolean
    },
    KernelError.InvalidInput
  > =>
    Either.map(prepare(input), ({ attributes, body, content, headers: own, path, query }) => {
      let request = query === undefined ? make(path) : make(path, { urlParams: query })
      request = HttpClientRequest.setHeader(request, "accept-encoding", acceptEncoding)
      // the header parameters first: the definition's own headers (and the credentials) win
      if (own !== undefined) request = HttpClientRequest.setHeaders(request, own)
      for (const [name, value] of headers) request = HttpClientRequest.setHeader(request, name, value)
      if (body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, body)
      else if (content !== undefined) request = withContent(request, content)
      return {
        request,
        op: operation(definition.name, definition.errors, attributes, definition.idempotent),
        oneShot: content?._tag === "Stream" && content.oneShot
      }
    })
}

/** @internal */
export const policyFor = (config: KernelConfig.Service) =>
  Option.getOrElse(config.retrySchedule, () => KernelRetry.policy(config))
