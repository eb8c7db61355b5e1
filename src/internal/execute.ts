import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as Headers from "@effect/platform/Headers"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpClientResponseNs from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import { ownedByAttempt } from "./authenticate.js"
import { isSendableHeaderValue, isSendableToken } from "./credentials.js"
import { describe, transportError } from "./errors.js"
import * as Log from "./log.js"
import * as PerCall from "./perCall.js"
import { failedUnsent, retry, scheduleOf, timedOutUnsent } from "./retryPolicy.js"
import { redactAll } from "./secrets.js"
import { type CommonStatusError, type Operation, statusError } from "./statusError.js"
import * as Timeout from "./timeout.js"
import * as Tracing from "./tracing.js"
import * as Transport from "./transport.js"

/**
 * What handles a 2xx answer within its attempt: the response, and the release of its request for
 * a response the caller keeps (see {@link execute}'s `keep`).
 *
 * @internal
 */
export type OnSuccess<A, E2> = (
  response: HttpClientResponse.HttpClientResponse,
  release: Effect.Effect<void>
) => Effect.Effect<A, E2>

/**
 * An operation's run: its answer, or its documented errors and the SDK's own.
 *
 * @internal
 */
export type Executed<A, E, E2, R = never> = Effect.Effect<
  A,
  E | E2 | CommonStatusError | KernelError.TransportError | KernelError.Timeout | KernelError.InvalidInput,
  R
>

/**
 * One attempt's answer: the transport's failure as a `TransportError`, a 2xx response handled by
 * `onSuccess`, any other status as the operation's typed error.
 */
const answer = <A, E, E2, R>(
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  sent: Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, R>,
  onSuccess: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E2>,
  secret: Redacted.Redacted<string>
): Effect.Effect<A, E | E2 | CommonStatusError | KernelError.TransportError, R> =>
  PerCall.matchEffect(
    sent,
    (error) => Effect.fail(transportError(request, error)),
    (response): Effect.Effect<A, E | E2 | CommonStatusError> =>
      response.status >= 200 && response.status < 300
        ? onSuccess(response)
        : statusError(op, request, response, secret)
  )

/** The request of an attempt after the first: the count recorded on the operation's span first. */
const nth = <A, E, R>(attempts: number, send: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  attempts === 1 ? send : Effect.zipRight(annotateAttempts(attempts), send)

/**
 * Runs one request as an operation: one attempt is sending it and handling the 2xx response
 * within the time-out; non-2xx answers become typed errors; transient failures are retried by
 * the configured policy; the whole runs in the span `Kernel.<operation>`.
 *
 * `client` is the authenticated client, or (`direct`) the transport under it, which an operation's
 * own request (its URL and headers already those `authenticate` applies) is sent on as is: then
 * the request does not pass through `authenticate`'s pipeline, and fetch's redirects are turned
 * off here, in the same step that gives the attempt its scope.
 *
 * @internal
 */
export const execute = <A, E extends KernelError.KernelError, E2 extends KernelError.KernelError, R = never>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  config: KernelConfig.Service,
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  onSuccess: OnSuccess<A, E2>,
  keep: (a: A) => boolean = () => false,
  direct = false
): Executed<A, E, E2, R> => {
  const scoped = HttpClient.withScope(client)
  const timeout = () => new KernelError.Timeout({ ...describe(request), timeout: config.timeout })
  // Every attempt owns its request: when the attempt ends (an error body read in part, a
  // time-out, an interruption, a body not read to its end), the request is aborted, which
  // destroys an unread body and closes its connection if the body was not complete. No body is
  // ever left paused and unowned (undici 7 can crash the process on such a body when the peer
  // closes: nodejs/undici#5360). On the direct path, a 2xx body its handler read to the end
  // needs no abort (the request is over): the abort (an `AbortController`'s event and its
  // `DOMException`) is skipped.
  // Only a response the caller keeps (`keep`, a body being streamed) outlives its attempt, and
  // then its release (`onSuccess`'s second argument: closing the attempt's scope) is the caller's.
  // A stream body's run is the attempt's too (see `ownedBody`).
  // without a tracer, the platform's `http.client` span of a direct request would be seen by
  // nothing (as the SDK's own spans, made only when tracing): not made
  const sendOf = (sent: HttpClientRequest.HttpClientRequest, tracing: boolean) =>
    direct && !tracing ? untraced(scoped.execute(sent)) : scoped.execute(sent)
  const send = direct ? sendOf(request, false) : scoped.execute(request)
  // the transport's spans (the platform's `http.client`) never record the token a server echoed
  const traced = <X, Y, Z>(self: Effect.Effect<X, Y, Z>, tracing: boolean) =>
    tracing ? Tracing.scrubbingSpans(self, config.apiKey) : self
  const streamed = request.body._tag === "Stream"
  const run = (attempts: number, tracing: boolean, progress: Timeout.Progress | undefined) =>
    Effect.acquireUseRelease(
      Effect.map(Scope.make(), (scope) => new Attempt(scope)),
      (attempt) =>
        answer(
          op,
          request,
          nth(
            attempts,
            traced(
              streamed
                ? Effect.flatMap(ownedBody(request, attempt.scope, progress), (owned) => sendOf(owned, tracing))
                : tracing || !direct
                ? scoped.execute(request)
                : send,
              tracing
            )
          ).pipe(
            direct ? ownedDirect(attempt.scope) : ownedAuthenticated(attempt.scope)
          ),
          (response) =>
            onSuccess(direct ? new Watched(response, attempt) : response, Scope.close(attempt.scope, Exit.void)),
          config.apiKey
        ),
      // a stream body's run ends with its attempt even when the answer was read whole: a server may
      // answer before it read the body, and fetch then never cancels the body it was sending (its
      // file left open, its stream's finalizers never run)
      (attempt, exit) =>
        Exit.isSuccess(exit) && (keep(exit.value) || (attempt.complete && !streamed))
          ? Effect.void
          : Scope.close(attempt.scope, Exit.void)
    )
  return runOperation(
    config,
    op,
    request,
    // a streamed body's deadline moves with each chunk the transport takes (see `Timeout.Progress`)
    (attempts, _millis, tracing) =>
      streamed
        ? Timeout.timeoutFailFlowing((progress) => run(attempts, tracing, progress), config.timeout, timeout)
        : Timeout.timeoutFail(run(attempts, tracing, undefined), config.timeout, timeout)
  )
}

/**
 * The request an attempt sends, its stream body's run owned by the attempt's scope: when the attempt
 * ends, however it ends, a run still going is interrupted (the body's scope closed: a file being
 * uploaded, a caller's finalizer) and a run not started yet fails as interrupted when it starts.
 * A transport may run the body on a fiber of its own that nothing else ends: fetch's
 * (`Stream.toReadableStreamEffect`) starts with the `ReadableStream`, before fetch reads it, and
 * fetch aborted before it reads the body (or in the middle of it) does not always cancel the
 * `ReadableStream`, whose fiber then waits forever with the body's scope open.
 * Each chunk the transport takes of it, and its end, move the attempt's deadline on (`progress`: see
 * `Timeout.timeoutFailFlowing`).
 * A body of bytes is the request as it is; `KernelTransport` (`executeOwned`) ends the run itself.
 */
const ownedBody = (
  request: HttpClientRequest.HttpClientRequest,
  scope: Scope.Scope,
  progress: Timeout.Progress | undefined
): Effect.Effect<HttpClientRequest.HttpClientRequest> => {
  const body = request.body
  if (body._tag !== "Stream") return Effect.succeed(request)
  const run = new BodyRun(progress)
  return Effect.as(
    Scope.addFinalizer(scope, run.end),
    HttpClientRequest.setBody(request, HttpBody.stream(run.own(body.stream), body.contentType, body.contentLength))
  )
}

/**
 * The run of an attempt's stream body: the fiber running it, from its start to its end, and the
 * attempt's {@link Timeout.Progress}, moved on as the transport takes the body's chunks.
 */
class BodyRun {
  private fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  private ended = false

  constructor(private readonly progress: Timeout.Progress | undefined) {}

  /**
   * The stream, its run noted from its start to its end (a per-run cost), and each chunk the
   * transport pulls (a clock read per chunk), and the end it pulls, noted on the attempt's progress.
   */
  own<E>(stream: Stream.Stream<Uint8Array, E>): Stream.Stream<Uint8Array, E> {
    const progress = this.progress
    const start = Effect.withFiberRuntime<void>((fiber) => {
      if (this.ended) return Effect.interrupt
      this.fiber = fiber
      return Effect.void
    })
    const stop = Effect.sync(() => {
      this.fiber = undefined
      progress?.took()
    })
    // one byte array a chunk: a chunk of many (`Stream.fromIterable(buffers)`) is handed to the
    // transport whole, which then takes nothing more until it drained, and the deadline stops moving
    const taken = progress === undefined ? stream : Stream.mapChunks(Stream.rechunk(stream, 1), (chunk) => {
      progress.took()
      return chunk
    })
    return Stream.fromChannel(
      Channel.ensuring(Channel.flatMap(Channel.fromEffect(start), () => Stream.toChannel(taken)), stop)
    )
  }

  /** The attempt's end: the run still going interrupted (and awaited), no run started after it. */
  readonly end: Effect.Effect<void> = Effect.withFiberRuntime((current) => {
    this.ended = true
    const fiber = this.fiber
    this.fiber = undefined
    return fiber === undefined || fiber === current ? Effect.void : Effect.asVoid(Fiber.interrupt(fiber))
  })
}

/** The transport's request without the platform's span (`HttpClient`'s tracer turned off for it). */
const untraced = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, FiberRef.currentTracerEnabled, false)

/** One attempt: the scope that owns its request, and whether its 2xx body was read to the end. */
class Attempt {
  complete = false
  constructor(readonly scope: Scope.CloseableScope) {}
}

/** The attempt's scope (its request's owner) for the authenticated client, whose responses it then owns. */
const ownedAuthenticated =
  (scope: Scope.CloseableScope) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
    self.pipe(Effect.locally(ownedByAttempt, true), Scope.extend(scope))

/**
 * The attempt's scope (its request's owner) and, for fetch, redirects not followed (as
 * `authenticate` does for its own requests: a redirect comes back as its 3xx), in one copy of the
 * caller's context.
 */
const ownedDirect =
  (scope: Scope.CloseableScope) => <A, E, R>(self: Effect.Effect<A, E, R | Scope.Scope>): Effect.Effect<A, E, R> =>
    Effect.mapInputContext(self, (context: Context.Context<R>) =>
      Context.merge(
        context,
        Context.make(Scope.Scope, scope).pipe(
          Context.add(
            FetchHttpClient.RequestInit,
            manualRedirects(Context.getOption(context, FetchHttpClient.RequestInit))
          )
        )
      ))

const manualInits = new WeakMap<globalThis.RequestInit, globalThis.RequestInit>()
const manualInit: globalThis.RequestInit = { redirect: "manual" }

/** The caller's `RequestInit` with `redirect: "manual"` (made once per `RequestInit`). */
const manualRedirects = (init: Option.Option<globalThis.RequestInit>): globalThis.RequestInit => {
  if (Option.isNone(init)) return manualInit
  let manual = manualInits.get(init.value)
  if (manual === undefined) {
    manual = { ...init.value, redirect: "manual" }
    manualInits.set(init.value, manual)
  }
  return manual
}

/**
 * A 2xx response as its handler sees it: the transport's, which notes on its attempt when its
 * body was read to the end (its text, JSON, bytes, form, or its stream to its last chunk).
 * `source` is the transport's own (fetch's `Response`: see `responseBody.ts`).
 */
class Watched implements HttpClientResponse.HttpClientResponse {
  readonly [HttpClientResponseNs.TypeId]: HttpClientResponse.TypeId = HttpClientResponseNs.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  #headers: Headers.Headers | undefined
  constructor(readonly original: HttpClientResponse.HttpClientResponse, private readonly attempt: Attempt) {}
  get source(): unknown {
    return Reflect.get(this.original, "source")
  }
  get request() {
    return this.original.request
  }
  get status() {
    return this.original.status
  }
  /** Read once: a transport may build its record of every header at each read (the platform's undici client does). */
  get headers() {
    return this.#headers ??= this.original.headers
  }
  get cookies() {
    return this.original.cookies
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  private whole<A>(
    read: Effect.Effect<A, HttpClientError.ResponseError>
  ): Effect.Effect<A, HttpClientError.ResponseError> {
    return Effect.map(read, (value) => {
      this.attempt.complete = true
      return value
    })
  }
  get text() {
    return this.whole(this.original.text)
  }
  get json() {
    return this.whole(this.original.json)
  }
  get arrayBuffer() {
    return this.whole(this.original.arrayBuffer)
  }
  get formData() {
    return this.whole(this.original.formData)
  }
  get urlParamsBody() {
    return this.whole(this.original.urlParamsBody)
  }
  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return Stream.concat(
      this.original.stream,
      Stream.execute(Effect.sync(() => {
        this.attempt.complete = true
      }))
    )
  }
  toJSON(): unknown {
    return this.original.toJSON()
  }
  toString(): string {
    return this.original.toString()
  }
  [Inspectable.NodeInspectSymbol](): unknown {
    return this.original[Inspectable.NodeInspectSymbol]()
  }
}

/**
 * Records the attempt count on the operation's span, which exists only when tracing (see
 * `isTracing`): without it, the current span is the caller's, which is not the SDK's to annotate.
 */
const annotateAttempts = (attempts: number): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) =>
    Tracing.isTracing(fiber) ? Effect.annotateCurrentSpan("kernel.attempts", attempts) : Effect.void
  )

/** ` (HTTP 503)`: the status a failure answered with, for the retry's log line; nothing for a transport's. */
const statusOf = (error: KernelError.KernelError): string =>
  "status" in error && typeof error.status === "number" && error.status >= 100 ? ` (HTTP ${error.status})` : ""

/**
 * One operation's run around its attempts: the credentials checked, transient failures retried
 * by the configured policy (each logged at debug level), the whole in the span `Kernel.<operation>`.
 * `attempt` is given the attempt's number and the live clock's delay for its deadline (`undefined`
 * on another clock: see `Timeout.timerMillis`).
 */
const runOperation = <A, E extends KernelError.KernelError, R>(
  config: KernelConfig.Service,
  op: Operation<unknown>,
  request: HttpClientRequest.HttpClientRequest,
  attempt: (attempts: number, millis: number | undefined, tracing: boolean) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | KernelError.InvalidInput, R> =>
  Effect.withFiberRuntime((fiber) => {
    const invalid = credentialsFailure(config)
    const millis = Timeout.timerMillis(Context.get(fiber.currentDefaultServices, Clock.Clock), config.timeout)
    // the count of attempts belongs to one run of the operation, not to the effect value
    let attempts = 1
    const tracing = Tracing.isTracing(fiber)
    const onTransient = (error: E) =>
      KernelError.isTransient(error)
        ? Log.debug(`Kernel.${op.name}: attempt ${attempts} failed with ${error._tag}${statusOf(error)}`)
        : Effect.void
    const self: Effect.Effect<A, E | KernelError.InvalidInput, R> = invalid !== undefined
      ? Effect.fail(invalid)
      : Effect.mapError(
        retry(
          attempt(1, millis, tracing),
          () => Effect.tapError(Effect.suspend(() => attempt(++attempts, millis, tracing)), onTransient),
          { idempotent: op.idempotent, schedule: (override) => scheduleOf(config, override), onTransient }
        ),
        (error) => located(withoutKey(config, op.secrets)(error), op.name)
      )
    if (!tracing) {
      return self
    }
    const info = describe(request)
    // the span ends with the outcome boxed: a tracer that renders it (`JSON.stringify`, `inspect`) sees no
    // response kept for a stream (its request as sent, the token in it, on the platform's transports) and
    // reads no body (the platform's `toJSON` of a response reads it, which the caller then cannot)
    return Effect.map(
      Effect.withSpan(Effect.map(self, (value) => new Outcome(value)), `Kernel.${op.name}`, {
        kind: "client",
        captureStackTrace: false,
        attributes: {
          "http.request.method": info.method,
          "url.path": info.path,
          "kernel.attempts": 1,
          ...op.attributes
        }
      }),
      (outcome) => outcome.value
    )
  })

/** A traced call's value as its span ends with it: shown as `Outcome {}`, the value kept private. */
class Outcome<A> {
  readonly #value: A
  constructor(value: A) {
    this.#value = value
  }
  get value(): A {
    return this.#value
  }
  toJSON(): unknown {
    return {}
  }
}

/**
 * {@link execute} on a `KernelTransport`, for an answer handled within its attempt: the attempt
 * owns its request through the transport's `Owner` rather than a scope and an `AbortController`,
 * and its deadline is the live clock's timer cancelling the request (the attempt then fails with
 * `Timeout`) rather than a forked fiber. When the attempt ends, however it ends, the request is
 * released: a body not read to the end is destroyed with its connection, never left paused.
 * On another clock (`TestClock`) the deadline is `Effect.timeoutFail`'s, as in {@link execute}.
 * A response the caller keeps (`keep`: a body streamed after its attempt) is released by the
 * caller, with `onSuccess`'s second argument; the deadline stops with the attempt.
 * `prefetch` names the answers whose body the transport reads whole before handing the response
 * over (within the bound it returns; see `Transport.Owner.prefetch`): what `onSuccess` reads of
 * them is then already there.
 *
 * @internal
 */
export const executeOwned = <A, E extends KernelError.KernelError, E2 extends KernelError.KernelError>(
  client: HttpClient.HttpClient,
  config: KernelConfig.Service,
  op: Operation<E>,
  request: HttpClientRequest.HttpClientRequest,
  onSuccess: OnSuccess<A, E2>,
  keep?: (a: A) => boolean,
  prefetch?: (response: Transport.ResponseImpl) => number | undefined
): Executed<A, E, E2> => {
  const timeout = () => new KernelError.Timeout({ ...describe(request), timeout: config.timeout })
  const send = Transport.executeOf(client)(request)
  const streamed = request.body._tag === "Stream"
  // per run of the attempt (the same effect value may run on several fibers at once): the owner,
  // keyed by the fiber that sends, is made where nothing can interrupt before the release is in
  // place; the release runs however the attempt ends (but for a response kept), and a failure
  // after the deadline passed is the Timeout. A streamed body's deadline moves with each chunk the
  // transport takes (`progress`, which the transport moves on: see `Timeout.Progress`): the timer,
  // when it fires early, is set again for what is left
  const run = (attempts: number, millis: number | undefined, progress: Timeout.Progress | undefined) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.withFiberRuntime<A, E | E2 | CommonStatusError | KernelError.TransportError | KernelError.Timeout>(
        (fiber) => {
          const owner = new Transport.Owner(fiber, request)
          owner.prefetch = prefetch
          // the deadline counts from the attempt's start until a chunk is taken
          progress?.took()
          owner.progress = progress
          const expire = millis === undefined || progress === undefined ? () => owner.expire() : () => {
            const left = progress.left(millis)
            if (left > 0) timer = setTimeout(expire, left)
            else owner.expire()
          }
          let timer = millis === undefined ? undefined : setTimeout(expire, millis)
          const release = () => {
            if (timer !== undefined) clearTimeout(timer)
            owner.release()
          }
          // the caller's release of a response it keeps (an attempt that keeps none releases itself)
          const kept = keep === undefined ? Effect.void : Effect.sync(() => owner.release())
          const handle = (response: HttpClientResponse.HttpClientResponse) => onSuccess(response, kept)
          return Effect.matchCauseEffect(restore(answer(op, request, nth(attempts, send), handle, config.apiKey)), {
            onFailure: (cause) => {
              release()
              const failure = Cause.failureOrCause(cause)
              const failed = Either.isLeft(failure)
                // a time-out before undici took the request (queued at the `connections` cap) never
                // sent it: safe to repeat, even for an operation that is not idempotent
                // (and a failure before undici began to write the request, a connection that failed
                // however it failed: never sent either)
                ? Effect.fail(
                  owner.timedOut
                    ? (owner.sent ? timeout() : timedOutUnsent(timeout()))
                    : owner.sent
                    ? failure.left
                    : failedUnsent(failure.left)
                )
                : Effect.failCause(failure.right)
              // a streamed body's run (its file, its finalizers) ends before the attempt returns
              return streamed ? Effect.zipRight(owner.bodyEnd, failed) : failed
            },
            onSuccess: (value) => {
              if (keep !== undefined && keep(value)) {
                if (timer !== undefined) clearTimeout(timer)
                owner.detach()
                return Effect.succeed(value)
              }
              release()
              // a handler that succeeds whatever its read gave (an answer without content, discarded)
              // still ends at the deadline: the read it ignored was cancelled by the time-out
              const done = owner.timedOut ? Effect.fail(timeout()) : Effect.succeed(value)
              return streamed ? Effect.zipRight(owner.bodyEnd, done) : done
            }
          })
        }
      )
    )
  return runOperation(
    config,
    op,
    request,
    (attempts, millis) =>
      millis === undefined
        ? streamed
          ? Timeout.timeoutFailFlowing((progress) => run(attempts, undefined, progress), config.timeout, timeout)
          : Timeout.timeoutFail(run(attempts, undefined, undefined), config.timeout, timeout)
        : run(attempts, millis, streamed ? new Timeout.Progress(Timeout.liveClock) : undefined)
  )
}

/** The strings of an error that a server's answer may have filled, and its nested details. */
const echoFields = ["message", "code", "body", "stack"] as const

/**
 * Where `Data.Error` (the base of `Schema.TaggedError`) keeps the fields it was made with: its
 * `toJSON` prints them, so they are cleaned too.
 */
const plainArgs = Symbol.for("effect/Data/Error/plainArgs")

const scrubIn = (target: object, secrets: ReadonlyArray<string>, depth: number): void => {
  const args: unknown = Reflect.get(target, plainArgs)
  if (typeof args === "object" && args !== null && args !== target) scrubIn(args, secrets, depth)
  for (const field of echoFields) {
    const value: unknown = Reflect.get(target, field)
    // a secret whole (as sent, or as an excerpt squeezed its whitespace), or the start of one an
    // excerpt's cut left (before its `…`)
    if (typeof value === "string") {
      const redacted = redactAll(value, secrets)
      if (redacted !== value) Reflect.set(target, field, redacted)
    }
  }
  if (depth === 0) return
  const details: unknown = Reflect.get(target, "details")
  if (Array.isArray(details)) {
    for (const detail of details) if (typeof detail === "object" && detail !== null) scrubIn(detail, secrets, 0)
  }
  const inner: unknown = Reflect.get(target, "innerError")
  if (typeof inner === "object" && inner !== null) scrubIn(inner, secrets, 0)
}

/**
 * The error with a stack that names the call (`at Kernel.<operation> (<METHOD> <path>)`) in place of the
 * SDK's own frames, which say nothing of it: `Cause.pretty`, an uncaught error's report and a logged error
 * then say which call of a program failed, without tracing (the error's `message` stays the server's).
 *
 * @internal
 */
export const located = <X>(error: X, operation: string): X => {
  if (error instanceof Error && "method" in error && "path" in error) {
    try {
      Object.defineProperty(error, "stack", {
        value: `${error.name}: ${error.message}\n    at Kernel.${operation} (${String(error.method)} ${
          String(error.path)
        })`,
        configurable: true,
        writable: true,
        enumerable: false
      })
    } catch {
      // a frozen error keeps its stack
    }
  }
  return error
}

/**
 * Removes the API key from an operation's error: a service or a proxy that echoes the
 * `Authorization` header in its answer (an error body's message, code or details, the excerpt of
 * an unexpected status, a decode error quoting a field) must not put the key into the caller's
 * errors, logs and spans; nor may the secrets the call sent (`sent`: its input's `Redacted` values,
 * a credential's password quoted by a validation message). The errors are the SDK's own, made for
 * this failure: their fields are replaced in place before the caller sees them.
 *
 * @internal
 */
export const withoutKey = (
  config: KernelConfig.Service,
  sent: ReadonlyArray<string> = []
) =>
<X>(error: X): X => {
  const token = Redacted.value(config.apiKey)
  // `redactAll` leaves out a key too short to look for alone (a test's `"t"` would blank every `t`),
  // never the `Bearer` form of it
  const secrets = token.length > 0 ? [`Bearer ${token}`, token, ...sent] : sent
  if (secrets.length > 0 && typeof error === "object" && error !== null) scrubIn(error, secrets, 1)
  return error
}

const checkedCredentials = new WeakMap<KernelConfig.Service, KernelError.InvalidInput | null>()

/**
 * The API key and project id must be sendable as header values: a key with a line break (a
 * trailing newline from a file) can never be sent, and some transports quote the invalid value
 * whole in their error. Rejected before any request, without echoing the value (checked once per
 * configuration).
 */
const credentialsFailure = (config: KernelConfig.Service): KernelError.InvalidInput | undefined => {
  let checked = checkedCredentials.get(config)
  if (checked === undefined) {
    checked = !isSendableToken(Redacted.value(config.apiKey))
      ? new KernelError.InvalidInput({
        field: "apiKey",
        message:
          "apiKey contains characters that cannot be sent in an HTTP header (a space, a line break, a control or non-ASCII character); the key is not shown"
      })
      : Option.isSome(config.projectId) && !isSendableHeaderValue(config.projectId.value)
      ? new KernelError.InvalidInput({
        field: "projectId",
        message:
          "projectId contains characters that cannot be sent in an HTTP header (a line break, a control or non-ASCII character, or surrounding spaces)"
      })
      : null
    checkedCredentials.set(config, checked)
  }
  return checked ?? undefined
}
