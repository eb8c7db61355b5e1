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
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Types from "effect/Types"
import type * as KernelClient from "../KernelClient.js"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import { bound, formatParseError } from "./bounded.js"
import * as Client from "./client.js"
import type { Answer, Operation, Parameter, RequestBody } from "./definition.js"
import type * as Operations from "./operations.js"
import * as Pages from "./pages.js"

// ---------------------------------------------------------------------------------------------
// types
// ---------------------------------------------------------------------------------------------

/**
 * One page of a paged answer: its items, whether more follow (`X-Has-More`) and the offset of the
 * next page (`X-Next-Offset`, `undefined` when the server sent none).
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
 * - `sse`: the events as a stream of the schema's type.
 *
 * @internal
 */
export type AnswerValue<A, E> = A extends { readonly kind: "json"; readonly schema: infer S } ? Schema.Schema.Type<S>
  : A extends { readonly kind: "page"; readonly schema: infer S } ? Page<Schema.Schema.Type<S>>
  : A extends { readonly kind: "none" } ? void
  : A extends { readonly kind: "bytes" } ? Stream.Stream<Uint8Array, E>
  : A extends { readonly kind: "sse"; readonly schema: infer S } ? Stream.Stream<Schema.Schema.Type<S>, E>
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
  : B extends { readonly kind: "bytes"; readonly field: infer F extends string } ? { readonly [K in F]: Uint8Array }
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

/**
 * The paging headers of a page: `X-Has-More` (`true` / `false`, in any case; absent: `false`) and
 * `X-Next-Offset` (a whole number; absent: `undefined`). Any other value is a `DecodeError`.
 */
const pageHeaders = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<{ readonly hasMore: boolean; readonly nextOffset: number | undefined }, KernelError.DecodeError> => {
  const more = response.headers["x-has-more"]?.trim().toLowerCase()
  if (more !== undefined && more !== "" && more !== "true" && more !== "false") {
    return Effect.fail(
      pageDecodeError(request, response.status, `X-Has-More: expected true or false, got ${JSON.stringify(more)}`)
    )
  }
  const next = response.headers["x-next-offset"]?.trim()
  let nextOffset: number | undefined
  if (next !== undefined && next !== "") {
    nextOffset = /^\d+$/.test(next) ? Number(next) : NaN
    if (!Number.isSafeInteger(nextOffset)) {
      return Effect.fail(
        pageDecodeError(
          request,
          response.status,
          `X-Next-Offset: expected a whole number, got ${JSON.stringify(next.slice(0, 40))}`
        )
      )
    }
  }
  return Effect.succeed({ hasMore: more === "true", nextOffset })
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
      // the rest is dropped with its connection when the attempt ends
      return (_request, response) => Effect.asVoid(Client.readBounded(response))
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
  const success = successOf(definition)
  if (!(typeof success === "function")) return () => () => Effect.fail(success)
  return Client.makeCall(definition, success)
}

/**
 * The call of an operation whose one answer is a stream (binary, or events): it succeeds at once
 * (once its params are checked) with the stream, which sends the request when it is run (each run
 * sends its own): the status is checked when the head arrives (within `timeout`, retried as any
 * call), then the bytes (or the events, each decoded by the schema) flow as they arrive. The
 * request belongs to the stream: it is released when the stream ends, fails or is interrupted. The
 * body fails with `TransportError` when it is cut short (fewer bytes than its `Content-Length`, a
 * dropped connection); a binary body with `Timeout` when no byte arrived for `idleTimeout` (an
 * event stream may stay quiet: it has no idle time-out).
 */
const streamCall = (
  definition: Operation,
  status: number,
  answer: Extract<Answer, { readonly kind: "bytes" | "sse" }>
): Untyped => {
  const requestOf = Client.requestOf(definition)
  const undocumented = Client.operation<never>(definition.name, [])
  const events = answer.kind === "sse" ? eventsOf(answer.schema) : undefined
  return ({ config, httpClient }) => (params) => {
    const checked = requestOf(params)
    if (checked._tag === "Left") return Effect.fail(checked.left)
    const open = Effect.gen(function*() {
      const { op, request } = yield* requestOf(params)
      // the request's scope: closing it aborts the request (the stream ending or interrupted)
      const requestScope = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(requestScope, Exit.void))
      const response = yield* Client.execute(
        httpClient,
        config,
        op,
        request,
        (response, attemptScope) =>
          response.status === status
            ? Effect.as(Scope.addFinalizer(requestScope, Scope.close(attemptScope, Exit.void)), response)
            : Client.statusError(undocumented, request, response),
        () => true
      )
      const bytes = yield* bodyOf(request, response, config, requestScope, events === undefined)
      return events === undefined ? bytes : events(request, response.status, bytes)
    })
    return Effect.succeed(Stream.unwrapScoped(open))
  }
}

/**
 * A `text/event-stream` body as its events' data, each parsed as JSON and decoded by the schema
 * (a `DecodeError` fails the stream). The `data:` lines of an event are joined by line breaks;
 * comments, `event:`, `id:` and `retry:` lines are skipped; an event not ended by a blank line when
 * the body ends is dropped (as the format says).
 */
const eventsOf = (schema: Schema.Schema.AnyNoContext) => {
  let made: ((u: unknown) => Either.Either<unknown, ParseResult.ParseError>) | undefined
  const decode = (u: unknown) => (made ??= Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" }))(u)
  return <E>(
    request: HttpClientRequest.HttpClientRequest,
    status: number,
    bytes: Stream.Stream<Uint8Array, E>
  ): Stream.Stream<unknown, E | KernelError.DecodeError> => {
    const failed = (message: string) =>
      new KernelError.DecodeError({ ...Client.describe(request), status, message: bound(message, 512) })
    return bytes.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.mapAccum(new Array<string>(), (data, line): readonly [Array<string>, Option.Option<string>] => {
        if (line === "") return data.length === 0 ? [data, Option.none()] : [[], Option.some(data.join("\n"))]
        const colon = line.indexOf(":")
        const field = colon < 0 ? line : line.slice(0, colon)
        if (field === "data") {
          const value = colon < 0 ? "" : line.slice(colon + 1)
          data.push(value.startsWith(" ") ? value.slice(1) : value)
        }
        return [data, Option.none()]
      }),
      Stream.filterMap((event) => event),
      Stream.mapEffect((text): Effect.Effect<unknown, KernelError.DecodeError> => {
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch (cause) {
          return Effect.fail(
            failed(`event data is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
          )
        }
        return Either.match(decode(json), {
          onLeft: (error) => Effect.fail(failed(`event: ${formatParseError(error)}`)),
          onRight: Effect.succeed
        })
      })
    )
  }
}

/** A binary body as it arrives: counted against its `Content-Length`, watched for stalls. */
const bodyOf = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  config: KernelConfig.Service,
  requestScope: Scope.CloseableScope,
  watched: boolean
): Effect.Effect<Stream.Stream<Uint8Array, KernelError.TransportError | KernelError.Timeout>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const info = Client.describe(request)
    const clock = yield* Effect.clock
    const idle = Duration.toMillis(config.idleTimeout)
    const length = response.headers["content-length"]
    const declared = length !== undefined && /^\s*\d+\s*$/.test(length) ? Number(length) : undefined
    let received = 0
    let lastChunkAt = clock.unsafeCurrentTimeMillis()
    let timedOut = false
    // one fiber for the whole body (not a timer per chunk): aborts the request once it stalled
    const watchdog: Effect.Effect<void> = Effect.suspend(() => {
      const quiet = clock.unsafeCurrentTimeMillis() - lastChunkAt
      if (quiet < idle) return Effect.flatMap(Effect.sleep(idle - quiet), () => watchdog)
      timedOut = true
      return Scope.close(requestScope, Exit.void)
    })
    if (watched) yield* Effect.forkScoped(watchdog)
    const end = Effect.suspend((): Effect.Effect<void, KernelError.TransportError | KernelError.Timeout> =>
      timedOut
        ? Effect.fail(new KernelError.Timeout({ ...info, timeout: config.idleTimeout }))
        : declared !== undefined && declared !== received
        ? Effect.fail(
          new KernelError.TransportError({
            ...info,
            message: `body cut short: received ${received} of ${declared} bytes`
          })
        )
        : Effect.void
    )
    return response.stream.pipe(
      Stream.mapChunks((chunks) => {
        lastChunkAt = clock.unsafeCurrentTimeMillis()
        for (const chunk of chunks) received += chunk.length
        return chunks
      }),
      Stream.catchAll((error): Stream.Stream<never, KernelError.TransportError | KernelError.Timeout> =>
        Stream.fail(
          timedOut
            ? new KernelError.Timeout({ ...info, timeout: config.idleTimeout })
            : Client.transportError(request, error)
        )
      ),
      Stream.concat(Stream.drain(Stream.fromEffect(end))),
      // the end of the body, however it ends, releases the request at once
      Stream.ensuring(Scope.close(requestScope, Exit.void))
    )
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
 * the stream sends the request when run (see `streamCall`). A stream answer among several is not
 * supported yet: such a call fails with `InvalidInput` (`field: "operation"`) before anything is
 * sent.
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
