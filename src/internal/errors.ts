import * as Headers from "@effect/platform/Headers"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as KernelError from "../KernelError.js"
import { bound, formatParseError } from "./bounded.js"
import * as Failures from "./failures.js"
import { redactError, scrubCauses } from "./redact.js"
import { redactAll } from "./secrets.js"

/** The most of a request's path an error holds, in characters (a 200,000-character id is cut, marked `…`). */
const maxPathLength = 1024

/** @internal */
export const describe = (request: HttpClientRequest.HttpClientRequest) => ({
  method: request.method,
  path: bound(request.url.startsWith("/") ? request.url : pathOf(request.url), maxPathLength)
})

const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname
  } catch {
    return "(invalid url)"
  }
}

/** @internal */
export const transportError = (
  request: HttpClientRequest.HttpClientRequest,
  error: HttpClientError.HttpClientError
): KernelError.TransportError => {
  // the cause is kept: never with the token a server echoed into it (the platform's transports)
  scrubCauses(error.cause, error.request.headers["authorization"] ?? request.headers["authorization"])
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
 * Removes any credential a text may have echoed (fetch quotes an invalid header value whole; a
 * server or a proxy may quote the request's `Authorization` in its answer): the bearer token as
 * sent in the request, and anything after `Bearer`.
 *
 * @internal
 */
export const scrub = (
  message: string,
  request: HttpClientRequest.HttpClientRequest,
  secret?: Redacted.Redacted<string>
): string => {
  // the token the authenticated client sends (the request here has no Authorization yet)
  let out = redactAll(message, secret === undefined ? [] : [Redacted.value(secret)])
  const authorization = request.headers["authorization"]
  if (authorization !== undefined && authorization.length > 0) {
    const token = authorization.replace(/^Bearer\s+/i, "")
    out = redactAll(out, [authorization, token, ...token.split(/[\r\n]+/)])
  }
  return out.replace(/Bearer[^"'\s]*\s*[^"'\s]*/gi, "Bearer <redacted>")
}

const causeMessage = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner: unknown = "cause" in cause ? cause.cause : undefined
    // fetch says only "fetch failed": what failed is its cause (a code, or else its message: a
    // request body's stream that failed, ...)
    const code = !(inner instanceof Error)
      ? ""
      : "code" in inner
      ? ` (${String(inner.code)})`
      : errorText(inner) === "" || inner.message === cause.message
      ? ""
      : `: ${errorText(inner)}`
    return `${errorText(cause)}${code}`
  }
  return String(cause)
}

/**
 * An error's message, or its tag when it has none (a request body's `Stream` that failed with the
 * caller's `Data.TaggedError`, whose message is empty): never an empty text.
 */
const errorText = (error: Error): string =>
  error.message !== ""
    ? error.message
    : "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : error.name

/** @internal */
export const decodeError = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  error: ParseResult.ParseError
): KernelError.DecodeError =>
  new KernelError.DecodeError({
    ...describe(request),
    status,
    message: scrub(formatParseError(error), request)
  })
