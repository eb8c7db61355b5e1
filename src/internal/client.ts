import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import * as KernelRetry from "../KernelRetry.js"
import * as Log from "./log.js"
import * as RetryAfter from "./retryAfter.js"
import * as Timeout from "./timeout.js"

/** @internal */
export const projectHeader = "x-kernel-project-id"

/**
 * The transport with the base URL, credentials and JSON accept header applied.
 *
 * @internal
 */
export const authenticate = (config: KernelConfig.Service) => (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.mapRequest(client, (request) => {
    let out = HttpClientRequest.bearerToken(HttpClientRequest.prependUrl(request, config.baseUrl), config.apiKey)
    if (!Headers.has(out.headers, "accept")) out = HttpClientRequest.acceptJson(out)
    return Option.isSome(config.projectId)
      ? HttpClientRequest.setHeader(out, projectHeader, config.projectId.value)
      : out
  })

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
 * What one operation is: its span name, the statuses it documents (beyond the common ones) and
 * the attributes of its span.
 *
 * @internal
 */
export interface Operation<E> {
  readonly name: string
  readonly documented: ReadonlyArray<StatusErrorClass<E>>
  readonly attributes: Readonly<Record<string, string | boolean>>
}

/** @internal */
export const operation = <E>(
  name: string,
  documented: ReadonlyArray<StatusErrorClass<E>>,
  attributes: Readonly<Record<string, string | boolean>> = {}
): Operation<E> => ({ name, documented, attributes })

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

/**
 * A function made on first use: building a schema's decoder walks its whole AST, work that
 * should not happen at import time (cold start) for operations a program may never call.
 */
const lazy = <F>(make: () => F): () => F => {
  let made: F | undefined
  return () => (made ??= make())
}

const decodeErrorBody = lazy(() => Schema.decodeUnknownOption(Schema.parseJson(KernelError.ErrorBody)))

const readBounded = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
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
  Effect.flatMap(Effect.zip(readBounded(response), Clock.currentTimeMillis), ([text, now]): Effect.Effect<
    never,
    E | CommonStatusError
  > => {
    const body = decodeErrorBody()(text)
    const retryAfter = RetryAfter.fromHeaders(response.headers, now)
    const shouldRetry = RetryAfter.shouldRetry(response.headers)
    const props: KernelError.ApiErrorFields = {
      ...describe(request),
      status: response.status,
      code: Option.match(body, { onNone: () => "unknown", onSome: (b) => b.code }),
      message: Option.match(body, {
        onNone: () => `HTTP ${response.status}${text.length > 0 ? `: ${excerpt(text)}` : ""}`,
        onSome: (b) => b.message
      }),
      ...(Option.isSome(body) && body.value.details !== undefined ? { details: body.value.details } : {}),
      ...(Option.isSome(body) && body.value.inner_error !== undefined ? { innerError: body.value.inner_error } : {}),
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
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > excerptLength ? `${flat.slice(0, excerptLength)}…` : flat
}

/** @internal */
export const transportError = (
  request: HttpClientRequest.HttpClientRequest,
  error: HttpClientError.HttpClientError
): KernelError.TransportError =>
  new KernelError.TransportError({
    ...describe(request),
    message: error.reason === "Transport" || error.reason === "Decode"
      ? `${error.reason === "Transport" ? "request failed" : "response body failed"}: ${causeMessage(error.cause)}`
      : `${error.reason}: ${error.description ?? causeMessage(error.cause)}`
  })

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
    message: ParseResult.TreeFormatter.formatErrorSync(error)
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
  onSuccess: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E2>
): Effect.Effect<A, E | E2 | CommonStatusError | KernelError.TransportError | KernelError.Timeout, R> => {
  const info = describe(request)
  let attempts = 0
  const attempt = Effect.suspend(() => {
    attempts++
    return attempts === 1
      ? client.execute(request)
      : Effect.zipRight(Effect.annotateCurrentSpan("kernel.attempts", attempts), client.execute(request))
  }).pipe(
    Effect.catchAll((error) => Effect.fail(transportError(request, error))),
    Effect.flatMap((response): Effect.Effect<A, E | E2 | CommonStatusError, R> =>
      response.status >= 200 && response.status < 300
        ? onSuccess(response)
        : statusError(op, request, response)
    ),
    (self) =>
      Timeout.timeoutFail(self, config.timeout, () => new KernelError.Timeout({ ...info, timeout: config.timeout }))
  )
  const logged = Effect.tapError(attempt, (error) =>
    KernelError.isTransient(error)
      ? Log.debug(`Kernel.${op.name}: attempt ${attempts} failed with ${error._tag}`)
      : Effect.void)
  return retryTransient(logged, policyFor(config)).pipe(
    Effect.withSpan(`Kernel.${op.name}`, {
      kind: "client",
      captureStackTrace: false,
      attributes: { "http.request.method": info.method, "url.path": info.path, "kernel.attempts": 1, ...op.attributes }
    })
  )
}

/**
 * `Effect.retry(effect, { schedule, while: isTransient })`, except that the schedule's driver is
 * only made once a transient failure happened: the common case, success at the first attempt,
 * allocates nothing for retries.
 *
 * @internal
 */
export const retryTransient = <A, E extends KernelError.KernelError, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, KernelError.KernelError>
): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, KernelError.isTransient, (first) =>
    Effect.flatMap(Schedule.driver(schedule), (driver) => {
      const loop = (error: E): Effect.Effect<A, E, R> =>
        Effect.matchEffect(driver.next(error), {
          onFailure: () => Effect.fail(error),
          onSuccess: () => Effect.catchIf(effect, KernelError.isTransient, loop)
        })
      return loop(first)
    }))

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
    response.text.pipe(
      Effect.mapError((error) => transportError(request, error)),
      Effect.flatMap((text) => {
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch (cause) {
          return Effect.fail(
            new KernelError.DecodeError({
              ...describe(request),
              status: response.status,
              message: `body is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`
            })
          )
        }
        return Either.match(decoder()(json), {
          onLeft: (error) => Effect.fail(decodeError(request, response.status, error)),
          onRight: Effect.succeed
        })
      })
    )
}

/** @internal */
export const policyFor = (config: KernelConfig.Service) =>
  Option.getOrElse(config.retrySchedule, () => KernelRetry.policy(config))
