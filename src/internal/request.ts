import * as Headers from "@effect/platform/Headers"
import * as HttpBody from "@effect/platform/HttpBody"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as KernelConfig from "../KernelConfig.js"
import type * as KernelError from "../KernelError.js"
import { type Direct, directOf } from "./authenticate.js"
import { execute, type Executed, executeOwned, type OnSuccess } from "./execute.js"
import * as Operations from "./operations.js"
import { acceptEncoding, discardPrefetch, jsonPrefetch } from "./responseBody.js"
import { retryUntilStarted } from "./retryPolicy.js"
import * as Secrets from "./secrets.js"
import { type CommonStatusError, type Operation, operation, type StatusErrorClass } from "./statusError.js"
import type * as Transport from "./transport.js"

/**
 * The request headers a definition implies: a binary answer is asked for by its content type (and
 * `application/json`, for the errors), without content coding (the bytes are streamed as sent);
 * an event stream as `text/event-stream`, without content coding too: its body is parsed as it
 * arrives and a coded one is refused on the transports that hand the bytes over as sent (a request
 * that offered gzip would invite a compressing proxy to break every event stream).
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
    ? { accept: "text/event-stream", "accept-encoding": "identity" }
    : {}
}

/**
 * A JSON body on a request. One that holds secrets (a credential's values, a login's fields: `sendsSecrets`)
 * is sent as it is but shown as its size only (`toJSON`, which the platform's `inspect` and `toString` use):
 * the platform's `http.client` span ends with the response, whose request holds this body, and a tracer
 * that renders that outcome would otherwise print the secrets (the platform shows a JSON body as text).
 */
const withJson = (
  request: HttpClientRequest.HttpClientRequest,
  json: string,
  sendsSecrets: boolean
): HttpClientRequest.HttpClientRequest => {
  if (!sendsSecrets) return HttpClientRequest.bodyText(request, json, "application/json")
  const body = HttpBody.text(json, "application/json")
  const shown = {
    _id: "@effect/platform/HttpBody",
    _tag: "Uint8Array",
    body: `<redacted: ${body.body.length} bytes that may hold secrets>`,
    contentType: body.contentType,
    contentLength: body.contentLength
  }
  Object.defineProperty(body, "toJSON", { value: () => shown, enumerable: false })
  return HttpClientRequest.setBody(request, body)
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
 * The configuration of a call whose body is a caller's one-shot stream: no retry once the stream
 * was read from (its bytes cannot be sent again).
 */
const forContent = (config: KernelConfig.Service, content: Operations.Content | undefined): KernelConfig.Service =>
  content?._tag === "Stream" && content.oneShot ? retryUntilStarted(config, content.started) : config

/**
 * The operations the server answers only after a wait their input sets, by that input's field (seconds): a
 * pool's `acquire` holds the request until a browser is free, up to `acquire_timeout_seconds` (then 204).
 */
const serverWaits: Readonly<Record<string, string>> = { acquireBrowser: "acquire_timeout_seconds" }

/**
 * The configuration of a call the server holds for a wait its input sets ({@link serverWaits}): its
 * `timeout` counts after that wait, so a wait longer than `timeout` ends with the server's answer (a 204,
 * or the browser leased at the last moment), not a `Timeout` that would lose a lease granted as the
 * client gave up.
 */
const forWait = (
  field: string | undefined,
  config: KernelConfig.Service,
  input: unknown
): KernelConfig.Service => {
  if (field === undefined || typeof input !== "object" || input === null) return config
  const seconds: unknown = Reflect.get(input, field)
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0
    ? { ...config, timeout: Duration.sum(config.timeout, Duration.seconds(seconds)) }
    : config
}

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
  const prefetch = prefetchOf(definition)
  const sendsSecrets = sendsSecretsOf(definition)
  const waits = serverWaits[definition.name]
  return (
    { config, httpClient }: { readonly config: KernelConfig.Service; readonly httpClient: HttpClient.HttpClient }
  ) => {
    const direct = directOf(httpClient)
    // built once per operation: the headers (credentials, accept, the definition's own)
    const headers = direct === undefined
      ? undefined
      : Headers.merge(direct.headers, Headers.fromInput(ownHeaders))
    // the request of a call without header parameters, but for its URL (one copy per call, not three)
    const template = headers === undefined ? undefined : make("", { headers })
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
            onRight: ({ op, oneShot, request }) =>
              execute(
                httpClient,
                oneShot === undefined
                  ? forWait(waits, config, input)
                  : retryUntilStarted(forWait(waits, config, input), oneShot),
                op,
                request,
                onSuccess(request)
              )
          })
        )
      }
      const prepared = prepare(input)
      if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
      const { attributes, content, json, path, query } = prepared.right
      const url = direct.base + path.slice(1)
      const op = operation(
        definition.name,
        definition.errors,
        attributes,
        definition.idempotent,
        sendsSecrets ? Secrets.sentSecrets(input) : undefined
      )
      // the header parameters never replace the credentials or the accept header
      const requestHeaders = prepared.right.headers === undefined
        ? headers
        : Headers.merge(Headers.fromInput(prepared.right.headers), headers)
      // a request per run: the same effect value may run on several fibers at once, and a
      // request's identity keys what owns it (the platform's `withScope`, the transport's owner)
      return Effect.suspend(() => {
        let request = template !== undefined && requestHeaders === headers
          ? HttpClientRequest.setUrl(template, url)
          : make(url, { headers: requestHeaders })
        if (query !== undefined) request = HttpClientRequest.setUrlParams(request, query)
        if (json !== undefined) request = withJson(request, json, sendsSecrets)
        else if (content !== undefined) request = withContent(request, content)
        return executeDirect(
          direct,
          forContent(forWait(waits, config, input), content),
          op,
          request,
          onSuccess(request),
          undefined,
          prefetch
        )
      })
    }
  }
}

/** An operation's run on a client: its configuration, operation, request, 2xx handler and what it keeps. */
type Run<A, E, E2> = readonly [
  config: KernelConfig.Service,
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  onSuccess: OnSuccess<A, E2>,
  keep?: (a: A) => boolean,
  prefetch?: (response: Transport.ResponseImpl) => number | undefined
]

/**
 * A request whose URL and headers are those `authenticate` applies, executed on the transport under
 * the authenticated client: on a `KernelTransport` its attempts own it without a scope.
 */
const executeDirect = <A, E extends KernelError.KernelError, E2 extends KernelError.KernelError>(
  direct: Direct,
  ...[config, op, request, onSuccess, keep, prefetch]: Run<A, E, E2>
) =>
  direct.owned
    ? executeOwned(direct.transport, config, op, request, onSuccess, keep, prefetch)
    : execute(direct.transport, config, op, request, onSuccess, keep, true)

/**
 * What `KernelTransport` reads of an operation's answer before handing it over: the body of a
 * JSON (or page) answer, which the call reads whole anyway (`responseBody.jsonPrefetch`), and of an
 * answer without content, which the call discards (`responseBody.discardPrefetch`); nothing of
 * another status (an error's body, bytes, events).
 */
const prefetchOf = (
  definition: Operations.Definition
): ((response: Transport.ResponseImpl) => number | undefined) | undefined => {
  const statuses = new Map<number, boolean>()
  const discarded = new Set<number>()
  for (const [code, answer] of Object.entries(definition.answers)) {
    if (answer.kind === "json" || answer.kind === "page") statuses.set(Number(code), answer.kind === "page")
    if (answer.kind === "none") discarded.add(Number(code))
  }
  if (statuses.size === 0 && discarded.size === 0) return undefined
  return (response) => {
    if (discarded.has(response.status)) return discardPrefetch
    const page = statuses.get(response.status)
    // a page whose paging headers are invalid fails at once, its body unread (as it did before
    // the transport read bodies first): not read, so that a stalled body cannot turn that
    // DecodeError into a Timeout
    return page === undefined || (page && typeof pagingOf((name) => response.header(name)) === "string")
      ? undefined
      : jsonPrefetch(response)
  }
}

/**
 * A header's value as an error quotes it: whole and as sent when short (so that the key scrub, which
 * matches the key exactly, removes an echoed key), else only its length (a cut value could hold part
 * of a key, which no scrub would find).
 */
const quoted = (value: string): string =>
  value.length <= 40 ? JSON.stringify(value) : `a value of ${value.length} characters`

/**
 * The paging headers of a page: `X-Has-More` (`true` / `false`, in any case; absent: `false`) and
 * `X-Next-Offset` (a whole number; absent, or `null` — the document marks the header nullable, as on
 * a last page: `undefined`), or why they are invalid. `header` gives a header's value by its
 * lower-case name. A last page has no next offset, whatever the header says: the service sends
 * `X-Next-Offset: 0` there (its stop sentinel, which the official pagers stop on), and a loop
 * `while (page.nextOffset !== undefined)` must end.
 *
 * @internal
 */
export const pagingOf = (
  header: (name: string) => string | undefined
): { readonly hasMore: boolean; readonly nextOffset: number | undefined } | string => {
  const given = header("x-has-more")?.trim()
  const more = given?.toLowerCase()
  if (given !== undefined && more !== "" && more !== "true" && more !== "false") {
    return `X-Has-More: expected true or false, got ${quoted(given)}`
  }
  // a last page's next offset is not read (the service's `0`, another server's `-1`)
  if (more !== "true") return { hasMore: false, nextOffset: undefined }
  const next = header("x-next-offset")?.trim()
  let nextOffset: number | undefined
  if (next !== undefined && next !== "" && next !== "null") {
    nextOffset = /^\d+$/.test(next) ? Number(next) : NaN
    if (!Number.isSafeInteger(nextOffset)) {
      return `X-Next-Offset: expected a whole number, got ${quoted(next)}`
    }
  }
  return { hasMore: true, nextOffset }
}

/**
 * Executes a request of {@link requestOf} (a path without credentials) on the operations' client,
 * as {@link makeCall} does: directly on the transport under the client `authenticate` made (its
 * base URL and credentials applied here), else through the client's own pipeline. `onSuccess`
 * handles a 2xx answer; a response it keeps (`keep`: a body streamed after its attempt) is released
 * by its second argument, which the caller owns from then on.
 *
 * @internal
 */
export const executeRequest = <A, E extends KernelError.KernelError, E2 extends KernelError.KernelError>(
  httpClient: HttpClient.HttpClient,
  ...[config, op, request, onSuccess, keep]: Run<A, E, E2>
): Executed<A, E, E2> => {
  const direct = directOf(httpClient)
  if (direct === undefined || !request.url.startsWith("/")) {
    return execute(httpClient, config, op, request, onSuccess, keep)
  }
  // the credentials replace any header parameter of the same name, as `authenticate` does
  const sent = HttpClientRequest.setHeaders(
    HttpClientRequest.setUrl(request, direct.base + request.url.slice(1)),
    direct.credentials
  )
  return executeDirect(direct, config, op, sent, onSuccess, keep)
}
/**
 * Whether a definition's input may hold secrets to send (a `Redacted` field of its body or of a
 * parameter): only then is the input of a call walked for them (`Secrets.sentSecrets`), for its
 * errors to take out of what the server echoes.
 */
const sendsSecretsOf = (definition: Operations.Definition): boolean =>
  (definition.body !== undefined && definition.body.kind !== "bytes" && Secrets.holdsSecrets(definition.body.schema)) ||
  definition.parameters.some((parameter) => Secrets.holdsSecrets(parameter.schema))

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
  const sendsSecrets = sendsSecretsOf(definition)
  // accept set here (not left to `authenticate`, which keeps a request's own): a header parameter
  // named accept cannot replace it
  const headers = Object.entries({ accept: "application/json", ...definitionHeaders(definition) })
  return (
    input: unknown
  ): Either.Either<
    {
      readonly request: HttpClientRequest.HttpClientRequest
      readonly op: Operation<Operations.StatusErrors<D>>
      /**
       * When its body is a caller's one-shot stream (not retried once read from): whether the
       * stream was read from.
       */
      readonly oneShot: (() => boolean) | undefined
    },
    KernelError.InvalidInput
  > =>
    Either.map(prepare(input), ({ attributes, content, headers: own, json, path, query }) => {
      let request = query === undefined ? make(path) : make(path, { urlParams: query })
      request = HttpClientRequest.setHeader(request, "accept-encoding", acceptEncoding)
      // the header parameters first: the definition's own headers (and the credentials) win
      if (own !== undefined) request = HttpClientRequest.setHeaders(request, own)
      for (const [name, value] of headers) request = HttpClientRequest.setHeader(request, name, value)
      if (json !== undefined) request = withJson(request, json, sendsSecrets)
      else if (content !== undefined) request = withContent(request, content)
      return {
        request,
        op: operation(
          definition.name,
          definition.errors,
          attributes,
          definition.idempotent,
          sendsSecrets ? Secrets.sentSecrets(input) : undefined
        ),
        oneShot: content?._tag === "Stream" && content.oneShot ? content.started : undefined
      }
    })
}
