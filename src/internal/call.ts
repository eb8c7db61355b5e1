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
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Types from "effect/Types"
import type * as KernelClient from "../KernelClient.js"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import type * as KernelEvents from "../KernelEvents.js"
import * as Client from "./client.js"
import type { Answer, Operation, Parameter, RequestBody } from "./definition.js"
import * as Download from "./download.js"
import * as Events from "./events.js"
import type * as Operations from "./operations.js"
import * as Pages from "./pages.js"
import type * as Upload from "./upload.js"

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

/**
 * The paging headers of a page: `X-Has-More` (`true` / `false`, in any case; absent: `false`) and
 * `X-Next-Offset` (a whole number; absent, or `null` — the document marks the header nullable, as on
 * a last page: `undefined`). Any other value is a `DecodeError`.
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
  if (next !== undefined && next !== "" && next !== "null") {
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
    return Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const { op, request } = yield* requestOf(params)
        const requestScope = yield* Scope.make()
        const exit = yield* Effect.exit(restore(Client.execute(
          httpClient,
          config,
          op,
          request,
          (response, attemptScope) =>
            response.status === bytesStatus
              ? Effect.as(Scope.addFinalizer(requestScope, Scope.close(attemptScope, Exit.void)), response)
              : statuses.has(response.status)
              ? Effect.as(Client.readBounded(response), response)
              : Client.statusError(undocumented, request, response),
          (response) => response.status === bytesStatus
        )))
        if (Exit.isFailure(exit)) {
          yield* Scope.close(requestScope, Exit.void)
          return yield* exit
        }
        const response = exit.value
        if (response.status !== bytesStatus) {
          yield* Scope.close(requestScope, Exit.void)
          return { _tag: reasonOf(response.status) }
        }
        const value = yield* Scope.extend(bodyOf(request, response, config, requestScope), requestScope)
        return { _tag: reasonOf(bytesStatus), value }
      })
    )
  }
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
  return ({ config, httpClient }) => (params) => {
    const checked = requestOf(params)
    if (checked._tag === "Left") return Effect.fail(checked.left)
    const openWith = (params: unknown) =>
      Effect.gen(function*() {
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
        const bytes = yield* bodyOf(request, response, config, requestScope)
        return events === undefined ? bytes : events(request, response.status, params, bytes)
      })
    if (!resume) return Effect.succeed(Stream.unwrapScoped(openWith(params)))
    const base: object = typeof params === "object" && params !== null ? params : {}
    return Effect.succeed(
      Events.resumable(
        Client.describe(checked.right.request),
        (lastEventId) =>
          Stream.unwrapScoped(
            openWith(lastEventId === undefined ? params : { ...base, "Last-Event-ID": lastEventId })
          )
      )
    )
  }
}

/** A binary body as it arrives: counted against its `Content-Length`, watched for stalls. */
const bodyOf = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  config: KernelConfig.Service,
  requestScope: Scope.CloseableScope
): Effect.Effect<Stream.Stream<Uint8Array, KernelError.TransportError | KernelError.Timeout>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const info = Client.describe(request)
    const clock = yield* Effect.clock
    const idle = Duration.toMillis(config.idleTimeout)
    const length = response.headers["content-length"]
    const declared = length !== undefined && /^\s*\d+\s*$/.test(length) ? Number(length) : undefined // a download to a file in this fiber hears the declared size (its progress's total)
    ;(yield* FiberRef.get(Download.currentTotalListener))?.(declared)
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
    // interruptible even when the call runs uninterruptibly (a binary outcome): it never holds up a close
    yield* Effect.forkScoped(Effect.interruptible(watchdog))
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
