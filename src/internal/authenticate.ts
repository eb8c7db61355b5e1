import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientErrorNs from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import type * as KernelConfig from "../KernelConfig.js"
import { isSendableHeaderValue, isSendableToken } from "./credentials.js"
import { RedactedResponse, redactError, redactRequest, redactResponseError } from "./redact.js"
import { acceptEncoding } from "./responseBody.js"
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
 *
 * @internal
 */
export const ownedByAttempt = globalValue("effect-kernel/client/ownedByAttempt", () => FiberRef.unsafeMake(false))

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
      // checked again as it is sent: a request made from one already authenticated skips the step
      // above (`HttpClient.followRedirects` sends a 3xx's `Location` with the same headers,
      // `HttpClient.mapRequest` changes the URL after it), and must not take the token elsewhere
      HttpClient.transform((effect, request) =>
        resolveUrl(base, request.url) === undefined
          ? Effect.fail(
            invalidUrl(
              request,
              `refusing to send the Kernel credentials outside ${base.origin}: a request (a redirect) to another origin`
            )
          )
          : effect
      ),
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
      const credentials = Headers.fromInput({
        authorization: `Bearer ${token}`,
        ...(Option.isSome(config.projectId) ? { [projectHeader]: config.projectId.value } : {})
      })
      directClients.set(authenticated, {
        // fetch must not follow redirects for the operations either: `execute` turns them off
        // (as manualRedirects does) in the step that gives an attempt its scope; the SDK's own
        // transport never follows them
        transport: client,
        owned: Transport.isOwnable(client),
        base: base.href,
        headers: Headers.merge(
          Headers.fromInput({ accept: "application/json", "accept-encoding": acceptEncoding }),
          credentials
        ),
        credentials
      })
    }
    return authenticated
  }

/**
 * What {@link authenticate} applies, for the operations' own requests: the transport under it, the
 * base URL (ending with `/`) and the headers. An operation's path is built by the SDK (every
 * parameter percent-encoded as one segment, `.` and `..` refused), so it resolves to `base + path`
 * without parsing a URL per call, and its errors are redacted when they become the SDK's errors.
 *
 * @internal
 */
export interface Direct {
  readonly transport: HttpClient.HttpClient
  /** The transport is a `KernelTransport`: attempts own their requests without a scope. */
  readonly owned: boolean
  readonly base: string
  /** The credentials, the JSON accept header and the accepted content codings. */
  readonly headers: Headers.Headers
  /** The credentials alone (the token, and the project when configured). */
  readonly credentials: Headers.Headers
}

const directClients = new WeakMap<HttpClient.HttpClient, Direct>()

/**
 * What {@link authenticate} applied to this client, if it made it (and its credentials are sendable).
 *
 * @internal
 */
export const directOf = (client: HttpClient.HttpClient): Direct | undefined => directClients.get(client)
