/**
 * The call pipeline of any {@link Operation} of `definition.ts`: the input checked and encoded into
 * the request (path, query and header parameters; a JSON or multipart body encoded by its schema,
 * or raw bytes), the request executed on the shared client (time-out, retries by the operation's
 * idempotency, span `Kernel.<name>`), each documented answer decoded into the success (JSON, a
 * page, nothing, a byte stream, an event stream), each documented error status into its tagged
 * error.
 *
 * `make(definition)(client)(params)` is one call; `paginate(definition)(client)(params)` streams
 * the items of a paged operation, page after page.
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Types from "effect/Types"
import type * as KernelClient from "../KernelClient.js"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import * as KernelEvents from "../KernelEvents.js"
import * as KernelRetry from "../KernelRetry.js"
import { bound, contentTypeShown } from "./bounded.js"
import * as Client from "./client.js"
import type { Answer, Operation, Parameter, RequestBody } from "./definition.js"
import * as Download from "./download.js"
import * as Events from "./events.js"
import type * as Operations from "./operations.js"
import * as Pages from "./pages.js"
import * as RetryPolicy from "./retryPolicy.js"
import type * as Upload from "./upload.js"

// ---------------------------------------------------------------------------------------------
// types
// ---------------------------------------------------------------------------------------------

/**
 * One page of a paged answer: its items, whether more follow (`X-Has-More`) and the offset of the
 * next page (`X-Next-Offset`; `undefined` on the last page, whatever the header says, and when the
 * server sent none).
 *
 * @internal
 */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly hasMore: boolean
  readonly nextOffset: number | undefined
}

/**
 * The `_tag` of a 2xx status in a multi-status success: its reason phrase (`Ok`, `Created`,
 * `Accepted`, `NoContent`), `Status<code>` for the other 2xx.
 *
 * @internal
 */
export type Reason<Code> = Code extends 200 ? "Ok"
  : Code extends 201 ? "Created"
  : Code extends 202 ? "Accepted"
  : Code extends 204 ? "NoContent"
  : Code extends number ? `Status${Code}`
  : never

/**
 * The value of one documented answer:
 * - `json`: the schema's type;
 * - `page`: a {@link Page} of the schema's type;
 * - `none`: `void`;
 * - `bytes`: the body as a stream (read as it arrives; failing with the operation's errors);
 * - `sse`: the events as a stream of the schema's type, as `KernelEvents.Event` says (no heartbeat,
 *   unknown types as `UnknownEvent`, a process's output as `ProcessOutput`).
 *
 * @internal
 */
export type AnswerValue<A, E> = A extends { readonly kind: "json"; readonly schema: infer S } ? Schema.Schema.Type<S>
  : A extends { readonly kind: "page"; readonly schema: infer S } ? Page<Schema.Schema.Type<S>>
  : A extends { readonly kind: "none" } ? void
  : A extends { readonly kind: "bytes" } ? Stream.Stream<Uint8Array, E>
  : A extends { readonly kind: "sse"; readonly schema: infer S } ?
    Stream.Stream<KernelEvents.Event<Schema.Schema.Type<S>>, E>
  : never

/**
 * The success of an operation with several documented 2xx answers: one case per status, tagged by
 * its {@link Reason}, with the answer's `value` unless it has no content:
 * `{ _tag: "Ok"; value: A } | { _tag: "Accepted"; value: B } | { _tag: "NoContent" }`.
 *
 * @internal
 */
export type Outcome<D extends Operation> = {
  readonly [Code in keyof D["answers"]]: D["answers"][Code] extends { readonly kind: "none" }
    ? { readonly _tag: Reason<Code> }
    : { readonly _tag: Reason<Code>; readonly value: AnswerValue<D["answers"][Code], Failure<D>> }
}[keyof D["answers"]]

type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never

/**
 * What a call of the operation succeeds with: the value of its one documented 2xx answer, or the
 * {@link Outcome} tagged by status when it documents several.
 *
 * @internal
 */
export type Success<D extends Operation> = IsUnion<keyof D["answers"]> extends false
  ? AnswerValue<D["answers"][keyof D["answers"]], Failure<D>>
  : Outcome<D>

/**
 * Everything a call of the operation can fail with: its documented error statuses, the common
 * errors (`KernelError.CommonError`), `DecodeError` when an answer has a body, and `InvalidInput`
 * (input refused before sending). The same union as `Operations.ErrorOf`.
 *
 * @internal
 */
export type Failure<D extends Operation> = Operations.ErrorOf<D>

/**
 * What the call itself fails with, before its answer: for an operation answered only by a stream (an
 * event stream, a download), whose request is sent when the stream runs and whose failures fail the
 * stream, only `InvalidInput` (its input refused); for any other, {@link Failure}.
 *
 * @internal
 */
export type CallFailure<D extends Operation> = IsUnion<keyof D["answers"]> extends false
  ? D["answers"][keyof D["answers"]] extends { readonly kind: "sse" | "bytes" } ? KernelError.InvalidInput
  : Failure<D>
  : Failure<D>

type ParameterFields<Ps extends ReadonlyArray<Parameter>> =
  & { readonly [P in Ps[number] as P["required"] extends false ? never : P["field"]]: Schema.Schema.Type<P["schema"]> }
  & {
    readonly [P in Ps[number] as P["required"] extends false ? P["field"] : never]?:
      | Schema.Schema.Type<P["schema"]>
      | undefined
  }

type BodyFields<B extends RequestBody | undefined> = B extends
  { readonly kind: "json"; readonly schema: infer S; readonly required: infer Required }
  ? Required extends false ? Partial<Schema.Schema.Type<S>> : Schema.Schema.Type<S>
  : B extends { readonly kind: "multipart"; readonly schema: infer S } ? Schema.Schema.Type<S>
  : B extends { readonly kind: "bytes"; readonly field: infer F extends string } ? { readonly [K in F]: Upload.Upload }
  : Record<never, never>

type Fields<D extends Operation> = Types.Simplify<
  & ParameterFields<D["parameters"]>
  & (D["method"] extends "GET" ? Record<never, never> : BodyFields<D["body"]>)
>

/**
 * The params of a call, as one object: each path parameter under its `field` (camelCase), each
 * query and header parameter and each field of a JSON (or multipart) body under its name, as their
 * schemas' types (the runtime encodes them); a raw byte body under its `field`, as a `Uint8Array`.
 * A parameter that is not required is optional, and so is every field of a body that is not. A
 * GET never has a body (its body fields are not params). When nothing is required (no parameter,
 * or only optional ones), the params may be omitted: `call()` (the type is then `P | void`).
 *
 * @internal
 */
export type Params<D extends Operation> = Record<never, never> extends Fields<D> ? Fields<D> | void : Fields<D>

/**
 * The items of a paged operation's pages.
 *
 * @internal
 */
export type Item<D extends Operation> = {
  readonly [Code in keyof D["answers"]]: D["answers"][Code] extends
    { readonly kind: "page"; readonly schema: infer S } ? Schema.Schema.Type<S>
    : never
}[keyof D["answers"]]

// ---------------------------------------------------------------------------------------------
// answers
// ---------------------------------------------------------------------------------------------

type Handler = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
) => Effect.Effect<unknown, KernelError.KernelError>

const reasons: Readonly<Record<number, string>> = { 200: "Ok", 201: "Created", 202: "Accepted", 204: "NoContent" }

/** The `_tag` of a status in an {@link Outcome}. @internal */
export const reasonOf = (status: number): string => reasons[status] ?? `Status${status}`

const pageDecodeError = (request: HttpClientRequest.HttpClientRequest, status: number, message: string) =>
  new KernelError.DecodeError({ ...Client.describe(request), status, message })

/** The paging headers of a page (`Client.pagingOf`); an invalid one is a `DecodeError`. */
const pageHeaders = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<{ readonly hasMore: boolean; readonly nextOffset: number | undefined }, KernelError.DecodeError> => {
  const paging = Client.pagingOf((name) => Client.headerOf(response, name))
  return typeof paging === "string"
    ? Effect.fail(pageDecodeError(request, response.status, paging))
    : Effect.succeed(paging)
}

const unsupported = (definition: Operation, what: string) =>
  new KernelError.InvalidInput({
    field: "operation",
    message: `${definition.name}: ${what} are not supported yet by this version of effect-kernel (nothing was sent)`
  })

/** How one documented answer is read, or why it cannot be (yet). */
const handlerOf = (definition: Operation, answer: Answer): Handler | KernelError.InvalidInput => {
  switch (answer.kind) {
    case "json": {
      const decode = Client.decodeJson(answer.schema)
      return (request, response) => decode(request)(response)
    }
    case "page": {
      const decode = Client.decodeJson(Schema.Array(answer.schema))
      return (request, response) =>
        Effect.flatMap(
          pageHeaders(request, response),
          ({ hasMore, nextOffset }) =>
            Effect.map(decode(request)(response), (items): Page<unknown> => ({ items, hasMore, nextOffset }))
        )
    }
    case "none":
      // whatever it carries is not kept: up to 64 KiB is read (the connection may then be reused),
      // past that it is dropped with its connection
      return (_request, response) => Client.discardBody(response)
    case "bytes":
      // streamed by `streamCall` when it is the only answer
      return unsupported(definition, `binary answers (${answer.contentType}) among several answers`)
    case "sse":
      return unsupported(definition, "event-stream answers among several answers")
  }
}

/**
 * The success handler of a definition: the documented status's answer (tagged by status when
 * several are documented); an undocumented 2xx is `UnexpectedStatus`.
 */
const successOf = (
  definition: Operation
):
  | ((request: HttpClientRequest.HttpClientRequest) => (
    response: HttpClientResponse.HttpClientResponse
  ) => Effect.Effect<unknown, KernelError.KernelError>)
  | KernelError.InvalidInput =>
{
  const handlers = new Map<number, { readonly handle: Handler; readonly tag: string; readonly none: boolean }>()
  for (const [code, answer] of Object.entries(definition.answers)) {
    const handle = handlerOf(definition, answer)
    if (!(typeof handle === "function")) return handle
    const status = Number(code)
    handlers.set(status, { handle, tag: reasonOf(status), none: answer.kind === "none" })
  }
  const tagged = handlers.size > 1
  const undocumented = Client.operation<never>(definition.name, [])
  return (request) => (response) => {
    const handler = handlers.get(response.status)
    if (handler === undefined) return Client.statusError(undocumented, request, response)
    const result = handler.handle(request, response)
    if (!tagged) return result
    return handler.none
      ? Effect.as(result, { _tag: handler.tag })
      : Effect.map(result, (value) => ({ _tag: handler.tag, value }))
  }
}

// ---------------------------------------------------------------------------------------------
// make
// ---------------------------------------------------------------------------------------------

type Untyped = (client: KernelClient.Service) => (params: unknown) => Effect.Effect<unknown, KernelError.KernelError>

const makeUntyped = (definition: Operation): Untyped => {
  const answers = Object.entries(definition.answers)
  if (answers.length === 1) {
    const [code, answer] = answers[0]!
    if (answer.kind === "bytes" || answer.kind === "sse") return streamCall(definition, Number(code), answer)
  }
  const binary = answers.filter(([, answer]) => answer.kind === "bytes")
  if (binary.length === 1 && answers.every(([, answer]) => answer.kind === "bytes" || answer.kind === "none")) {
    return binaryOutcome(definition, Number(binary[0]![0]))
  }
  const success = successOf(definition)
  if (!(typeof success === "function")) return () => () => Effect.fail(success)
  return Client.makeCall(definition, success)
}

/**
 * The call of an operation whose answers are one binary body and statuses with no content
 * (`Profiles.download`: 200 the bytes, 202 no saved state): the request is sent when the call
 * runs, and it succeeds with the status's case: `{ _tag: "Ok", value: stream }` (the body, read
 * as it arrives, once: the request is released when the stream ends, fails or is interrupted, or
 * when nothing read it for `idleTimeout`) or `{ _tag: "Accepted" }`.
 */
const binaryOutcome = (definition: Operation, bytesStatus: number): Untyped => {
  const requestOf = Client.requestOf(definition)
  const undocumented = Client.operation<never>(definition.name, [])
  const statuses = new Set(Object.keys(definition.answers).map(Number))
  return ({ config, httpClient }) => (params) => {
    const checked = requestOf(params)
    if (checked._tag === "Left") return Effect.fail(checked.left)
    const { op, request } = checked.right
    const shown = shownBy(config, op.name)
    // from the kept response to its body's watch, uninterruptible: nothing ends it unreleased
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        restore(Client.executeRequest(
          httpClient,
          config,
          op,
          request,
          (response, release): Effect.Effect<Kept | HttpClientResponse.HttpClientResponse, KernelError.KernelError> =>
            response.status === bytesStatus
              ? Effect.succeed(new Kept(response, release))
              : statuses.has(response.status)
              ? Effect.as(Client.discardBody(response), response)
              : Client.statusError(undocumented, request, response),
          (answer) => answer instanceof Kept
        )),
        (answer): Effect.Effect<unknown, KernelError.DecodeError> => {
          if (!(answer instanceof Kept)) return Effect.succeed({ _tag: reasonOf(answer.status) })
          const refused = encodedBody(request, answer.response)
          if (refused !== undefined) return Effect.zipRight(answer.release, Effect.fail(shown(refused)))
          // the head came before whatever runs the stream (a `downloadToFile` given the `Ok` value):
          // its run is told the declared size (its progress's total), not only this call
          return Effect.map(
            bodyOf(request, answer, config.idleTimeout),
            ({ stream }) => ({
              _tag: reasonOf(bytesStatus),
              value: Stream.mapError(readOnce(request, Download.announced(stream, declaredOf(answer.response))), shown)
            })
          )
        }
      )
    )
  }
}

/**
 * The body of an answer whose head came before its stream runs (a profile's `Ok` value): one
 * request, so one run. A second run (a `Stream.retry`, an `Effect.retry` around a `downloadToFile`
 * given it, a second `runCollect`) would find the body read, ended or released, and took it for
 * an empty body (or, on `fetch`, died with a locked `ReadableStream`): it fails with a
 * `TransportError` (`transient: false`) saying so, never a success with the bytes it missed.
 */
const readOnce = <E>(
  request: HttpClientRequest.HttpClientRequest,
  stream: Stream.Stream<Uint8Array, E>
): Stream.Stream<Uint8Array, E | KernelError.TransportError> => {
  let ran = false
  return Stream.suspend((): Stream.Stream<Uint8Array, E | KernelError.TransportError> => {
    if (!ran) {
      ran = true
      return stream
    }
    return Stream.fail(
      new KernelError.TransportError({
        ...Client.describe(request),
        message: "this answer's body was already read (it can be read once): download it again",
        transient: false
      })
    )
  })
}

/**
 * An error of a stream operation as its caller gets it: without the API key a server echoed into it, and
 * named by its call (`Client.located`).
 */
const shownBy = (config: KernelConfig.Service, operation: string) => <X>(error: X): X =>
  Client.located(Client.withoutKey(config)(error), operation)

/** A response whose body is streamed after its attempt, and what releases its request. */
class Kept {
  constructor(
    readonly response: HttpClientResponse.HttpClientResponse,
    readonly release: Effect.Effect<void>
  ) {}
}

/**
 * The call of an operation whose one answer is a stream (binary, or events): it succeeds at once
 * (once its params are checked) with the stream, which sends the request when it is run (each run
 * sends its own): the status is checked when the head arrives (within `timeout`, retried as any
 * call), then the bytes (or the events, each decoded by the schema) flow as they arrive. The
 * request belongs to the stream: it is released when the stream ends, fails or is interrupted. The
 * body fails with `TransportError` when it is cut short (fewer bytes than its `Content-Length`, a
 * dropped connection), and with `Timeout` when no byte arrived for `idleTimeout` (network silence
 * only: an event stream's heartbeats keep it alive). An event stream is decoded by `events.ts`
 * (heartbeats dropped, unknown event types as `KernelEvents.UnknownEvent`, the end at a terminal
 * event, a drop as `TransportError`, telemetry resumed with `Last-Event-ID`).
 */
const streamCall = (
  definition: Operation,
  status: number,
  answer: Extract<Answer, { readonly kind: "bytes" | "sse" }>
): Untyped => {
  const requestOf = Client.requestOf(definition)
  const undocumented = Client.operation<never>(definition.name, [])
  const events = answer.kind === "sse" ? Events.decoder(definition.name, answer.schema) : undefined
  const resume = answer.kind === "sse" && Events.policies[definition.name]?.resume === true
  const settle = answer.kind === "sse" ? Events.policies[definition.name]?.settle : undefined
  return ({ config, httpClient }) => (params) => {
    const checked = requestOf(params)
    if (checked._tag === "Left") return Effect.fail(checked.left)
    const openWith = (
      params: unknown,
      retrySettings: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ): Stream.Stream<unknown, KernelError.KernelError> =>
      Stream.suspend(() => {
        const checked = requestOf(params)
        if (checked._tag === "Left") return Stream.fail(checked.left)
        const { op, request } = checked.right
        // the request's release once the attempt kept its response; run when the stream ends,
        // fails or is interrupted, whether or not the body was reached
        let release: Effect.Effect<void> = Effect.void
        const opened = Effect.flatMap(
          retrySettings(Client.executeRequest(
            httpClient,
            config,
            op,
            request,
            (response, kept) => {
              if (response.status !== status) return Client.statusError(undocumented, request, response)
              release = kept
              return Effect.succeed(response)
            },
            () => true
          )),
          (response) => {
            const refused = (events === undefined
              ? notDeclaredType(request, response, answer)
              : notEventStream(request, response, config)) ??
              encodedBody(request, response)
            const shown = shownBy(config, op.name)
            return refused !== undefined ? Effect.fail(shown(refused)) : Effect.map(
              // an event stream's idle time-out: the caller's for the streams it runs (`KernelEvents.IdleTimeout`)
              events === undefined
                ? bodyOf(request, new Kept(response, release), config.idleTimeout)
                : Effect.flatMap(KernelEvents.IdleTimeout, (idleTimeout) =>
                  bodyOf(request, new Kept(response, release), idleTimeout ?? config.idleTimeout)),
              ({ close, stream }) => {
                // the body's own release from here (its watch stopped with it)
                release = close
                // an event may quote what the server echoed: the key is taken out of its errors; a
                // failure of the body (cut, gone idle, an event that does not decode) names its call
                return Stream.mapError(
                  events === undefined ? stream : events(
                    request,
                    response.status,
                    params,
                    stream,
                    config.apiKey,
                    settle === undefined ? undefined : settledBy(settle, httpClient, config, op, request)
                  ),
                  shown
                )
              }
            )
          }
        )
        // the channel's own unwrap: `Stream.unwrap` costs a nested stream (a third of a call's CPU)
        return Stream.ensuring(
          Download.unwrap(opened),
          Effect.suspend(() =>
            release
          )
        )
      })
    // the caller's `KernelRetry` settings where the accessor runs hold for the request the stream sends
    if (!resume) return Effect.map(RetryPolicy.captureRetrySettings, (settings) => openWith(params, settings))
    const base: object = typeof params === "object" && params !== null ? params : {}
    // what the resumption itself refuses (a gap in `seq`, a `seq` gone back) names its call too
    return Effect.map(RetryPolicy.captureRetrySettings, (settings) =>
      Stream.mapError(
        Events.resumable(
          Client.describe(checked.right.request),
          (lastEventId) =>
            openWith(lastEventId === undefined ? params : { ...base, "Last-Event-ID": lastEventId }, settings),
          lastEventIdOf(base)
        ),
        shownBy(config, definition.name)
      ))
  }
}

/** A JSON answer read as it is (what `Events.Policy.settle`'s `read` reads is checked there). */
const anyJson = Client.decodeJson(Schema.Unknown)

/**
 * The longest a stream's end waits for its settling GET (`Events.Policy.settle`), sent once: what it
 * asks is short-lived (the browser's server keeps a process's status 10 s after its exit), and the
 * drop it may settle is told late by as much.
 */
const settleTimeout = Duration.seconds(5)

/**
 * What an event stream's body that ended before its terminal event still stands for: the answer of a
 * GET of the resource's state (`policy.settle`: a process's status once its output stream ended
 * without the exit), sent with the stream's request's headers, once, within {@link settleTimeout}:
 * the terminal event it stands for, or what it said instead (the end is then the drop it was, saying so).
 * Nothing is built or sent until the body ended so.
 */
const settledBy = (
  settle: NonNullable<Events.Policy["settle"]>,
  httpClient: HttpClient.HttpClient,
  config: KernelConfig.Service,
  op: Client.Operation<unknown>,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<Either.Either<unknown, string>> =>
  Effect.suspend(() => {
    if (!settle.stream.test(request.url)) return Effect.succeed(Either.left(`${settle.what} was not asked`))
    // its own span name, the stream's attributes (the browser's id) and secrets
    const stateOp = Client.operation<never>(settle.operation, [], op.attributes, true, op.secrets)
    const state = HttpClientRequest.setHeader(
      HttpClientRequest.setUrl(request, request.url.replace(settle.stream, settle.with)),
      "accept",
      "application/json"
    )
    const once = { ...config, timeout: Duration.min(config.timeout, settleTimeout) }
    return Effect.match(
      KernelRetry.noRetries(Client.executeRequest(
        httpClient,
        once,
        stateOp,
        state,
        (response) =>
          response.status === 200
            ? Effect.map(anyJson(state)(response), settle.read)
            : Effect.as(Client.discardBody(response), Either.left(`${settle.what} answered ${response.status}`))
      )),
      {
        onFailure: (error) =>
          Either.left(
            "status" in error && error._tag !== "DecodeError"
              ? `${settle.what} answered ${error.status}`
              : `${settle.what} could not be read (${error._tag})`
          ),
        onSuccess: (settled) => settled
      }
    )
  })

/** The caller's own `Last-Event-ID` parameter, when it gave one. */
const lastEventIdOf = (params: object): string | undefined => {
  const given: unknown = Reflect.get(params, "Last-Event-ID")
  return typeof given === "string" ? given : undefined
}

/**
 * Why a documented event stream's answer is not one: a `Content-Type` other than
 * `text/event-stream` (a proxy's or a login portal's page) is a `DecodeError` naming it, before any
 * byte of the body is read (never taken for an event stream that ended: a drop, which telemetry
 * resumes). No `Content-Type` at all is not one either: the service always says it.
 */
const notEventStream = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  config: KernelConfig.Service
): KernelError.DecodeError | undefined => {
  const contentType = response.headers["content-type"]
  if (contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "text/event-stream") {
    return undefined
  }
  return new KernelError.DecodeError({
    ...Client.describe(request),
    status: response.status,
    message: Client.scrub(
      `expected an event stream (text/event-stream), got ${contentTypeShown(contentType)}`,
      request,
      config.apiKey
    )
  })
}

/** The content types a body of a declared binary type may come as: its own, of its kind, or generic binary. */
const acceptsAs = (declared: string, type: string): boolean =>
  type === declared || genericBinary.has(type) ||
  (declared.startsWith("image/") && /^image\/[\w.+-]+$/.test(type) && !type.endsWith("+xml")) ||
  (declared === "application/zip" && /^(?:application\/(?:x-)?zip(?:-compressed)?|multipart\/x-zip)$/.test(type))

/** The content types of bytes of any kind (servers that force a download send the last two). */
const genericBinary: ReadonlySet<string> = new Set([
  "application/octet-stream",
  "binary/octet-stream",
  "application/x-download",
  "application/force-download"
])

/**
 * Why a download's body is not the file the operation declares, when its content type says so: one
 * that is not the answer's binary type (`image/png`, `application/zip`), of its kind (`image/webp`,
 * `application/x-zip-compressed`) or generic binary (`application/octet-stream`) — a proxy's or a
 * captive portal's page, an error sent with 200. A DecodeError naming both, before any byte is read;
 * a generic binary answer (`application/octet-stream`: a file of the browser, of any type) and an
 * answer without a content type (or an empty one) are not checked.
 */
const notDeclaredType = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  answer: Answer
): KernelError.DecodeError | undefined => {
  if (answer.kind !== "bytes" || answer.contentType === "application/octet-stream") return undefined
  const contentType = response.headers["content-type"]
  if (contentType === undefined) return undefined
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "" || acceptsAs(answer.contentType, type)
    ? undefined
    : new KernelError.DecodeError({
      ...Client.describe(request),
      status: response.status,
      message: `expected ${answer.contentType}, got ${contentTypeShown(contentType)}`
    })
}

/**
 * Why a stream's body (a download's bytes, an event stream) is not as sent: a content coding (the
 * request asks for none: a server that compresses anyway would hand over the compressed bytes as the
 * file, or as events that never parse), or a transfer coding other than chunked. A `DecodeError`
 * naming it, before any byte is read, on every transport.
 */
const encodedBody = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
): KernelError.DecodeError | undefined => {
  const encoding = response.headers["content-encoding"]
  const transfer = response.headers["transfer-encoding"]
  // also where the transport would decode it (fetch): its decoder does not check that the coded stream
  // is complete (one cut short was a shorter success), and a corrupt one past 64 KiB left its read
  // pending for good, past the idle time-out (Node's fetch)
  const refused = Client.codingsOf(encoding).length > 0
    ? `content-encoding ${bound(encoding ?? "", 100)}`
    : Client.codingsOf(transfer).some((coding) => coding !== "chunked")
    ? `transfer-encoding ${bound(transfer ?? "", 100)}`
    : undefined
  return refused === undefined ? undefined : new KernelError.DecodeError({
    ...Client.describe(request),
    status: response.status,
    message: `the body has ${refused}, which the SDK does not decode (it asks for none)`
  })
}

/** A binary body's declared length (`undefined`: not declared, or not the length of the bytes handed over). */
const declaredOf = (response: HttpClientResponse.HttpClientResponse): number | undefined =>
  // a body the transport decoded (fetch) has more bytes than the compressed length declared
  Client.codingsOf(response.headers["content-encoding"]).length > 0
    ? undefined
    : Client.declaredLength(response.headers["content-length"])

/** A binary body as it arrives: counted against its `Content-Length`, watched for network silence. */
const bodyOf = (
  request: HttpClientRequest.HttpClientRequest,
  { release, response }: Kept,
  idleTimeout: Duration.Duration
): Effect.Effect<Download.StreamedBody<KernelError.TransportError | KernelError.Timeout>> =>
  Effect.flatMap(FiberRef.get(Download.currentTotalListener), (listener) => {
    const declared = declaredOf(response)
    // a download to a file in this fiber hears the declared size (its progress's total)
    listener?.(declared)
    return Download.streamBody<never>(response, release, {
      info: Client.describe(request),
      idleTimeout,
      declared,
      transportError: (error) => Client.transportError(request, error)
    })
  })

/**
 * The call of an operation: `make(definition)(client)(params)`. The params are checked and encoded
 * by their schemas before anything is sent (a refused one is `InvalidInput` naming its field);
 * the answer is decoded by the documented status's schema (unknown keys ignored; for a union, the
 * first member that fits). Time-outs and retries follow the client's configuration; an operation
 * that is not idempotent is retried only when its request never reached the server or the server
 * answered 429 (see `KernelRetry.retryNonIdempotent`).
 *
 * An operation whose one answer is a stream (`bytes`, or `sse` events) succeeds at once with it;
 * the stream sends the request when run (see `streamCall`). A binary answer among statuses with
 * no content succeeds with the status's case, the body's stream as the `value` (see
 * `binaryOutcome`). Another stream answer among several is not supported yet: such a call fails
 * with `InvalidInput` (`field: "operation"`) before anything is sent.
 *
 * @internal
 */
export const make: <const D extends Operation>(
  definition: D
) => (client: KernelClient.Service) => (params: Params<D>) => Effect.Effect<Success<D>, Failure<D>> = typedMake

// the typed signature over the pipeline, which works on any definition (its values are the
// schemas' and the statuses', known only at run time): an overload, not a cast
function typedMake<const D extends Operation>(
  definition: D
): (client: KernelClient.Service) => (params: Params<D>) => Effect.Effect<Success<D>, Failure<D>>
function typedMake(
  definition: Operation
): (client: KernelClient.Service) => (params: never) => Effect.Effect<unknown, KernelError.KernelError> {
  return makeUntyped(definition)
}

/**
 * The items of a paged operation (an answer of kind `page`), page after page:
 * `paginate(definition)(client)(params)`: the one-page call of {@link make}, followed by
 * `pages.follow` (the paging rules, shared with the generated `<accessor>All` accessors). The
 * first page is asked with the params as given (their `offset`, or none); each next one with the
 * `offset` query parameter set to the previous page's `X-Next-Offset`, as given, until a page says
 * `X-Has-More: false`. A page that says more follow but gives no next offset, or a next offset
 * that does not move past the current one (which would repeat pages forever), fails the stream
 * with `DecodeError` after that page's items.
 *
 * @internal
 */
export const paginate: <const D extends Operation>(
  definition: D
) => (client: KernelClient.Service) => (params: Params<D>) => Stream.Stream<Item<D>, Failure<D>> = typedPaginate

function typedPaginate<const D extends Operation>(
  definition: D
): (client: KernelClient.Service) => (params: Params<D>) => Stream.Stream<Item<D>, Failure<D>>
function typedPaginate(
  definition: Operation
): (client: KernelClient.Service) => (params: never) => Stream.Stream<unknown, KernelError.KernelError> {
  const call = makeUntyped(definition)
  return (client) => {
    const run = call(client)
    const page = (params: unknown): Effect.Effect<Page<unknown>, KernelError.KernelError> =>
      Effect.flatMap(
        run(params),
        (value) =>
          isPage(value)
            ? Effect.succeed(value)
            : Effect.dieMessage(`${definition.name}: paginate needs an operation whose answer is a page`)
      )
    return (params: unknown) => Pages.follow(definition, page, params)
  }
}

const isPage = (value: unknown): value is Page<unknown> =>
  typeof value === "object" && value !== null && "items" in value && Array.isArray(value.items) &&
  "hasMore" in value && typeof value.hasMore === "boolean"
