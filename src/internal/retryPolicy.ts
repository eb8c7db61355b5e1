import * as HttpClientErrorNs from "@effect/platform/HttpClientError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as KernelConfig from "../KernelConfig.js"
import * as KernelError from "../KernelError.js"
import * as KernelRetry from "../KernelRetry.js"

/**
 * A signal that ends the retries of the calls of a fiber: once it is done, a wait between attempts ends at
 * once and no attempt follows (the call fails with its last failure). Set by a scoped resource's
 * acquisition when its caller is interrupted (`resource.ts`): the attempt in flight runs to its end, but
 * no new one starts for a caller that is gone.
 *
 * @internal
 */
export const currentRetryStop: FiberRef.FiberRef<Option.Option<Deferred.Deferred<void>>> = FiberRef.unsafeMake(
  Option.none()
)

/**
 * The caller's retry settings (`KernelRetry.withPolicy` / `noRetries`, `retryNonIdempotent`) as they
 * are where an accessor runs, for a request made later: an accessor that gives a stream sends its
 * request when the stream runs, often outside the caller's `KernelRetry.noRetries(...)`. The
 * function it gives applies them to the request, where the stream's run set none of its own.
 *
 * @internal
 */
export const captureRetrySettings: Effect.Effect<<A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>> =
  Effect.map(
    Effect.zip(FiberRef.get(KernelRetry.currentPolicy), FiberRef.get(KernelRetry.currentRetryNonIdempotent)),
    ([policy, optIn]) =>
      Option.isNone(policy) && !optIn ? asSent : (self) =>
        Effect.flatMap(
          Effect.zip(FiberRef.get(KernelRetry.currentPolicy), FiberRef.get(KernelRetry.currentRetryNonIdempotent)),
          ([runPolicy, runOptIn]) => {
            let out = self
            if (Option.isNone(runPolicy) && Option.isSome(policy)) {
              out = Effect.locally(out, KernelRetry.currentPolicy, policy)
            }
            if (!runOptIn && optIn) {
              out = Effect.locally(out, KernelRetry.currentRetryNonIdempotent, true)
            }
            return out
          }
        )
  )

const asSent = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => self

/**
 * An operation's attempts, retried after a transient failure by the schedule: `first` is the first
 * attempt, `again` each later one. An idempotent operation retries every transient failure; one
 * that is not (repeating it could repeat its action) only a failure of a request that provably
 * never reached the server ({@link neverSent}), or that the server answered 429 or
 * `x-should-retry: true` ({@link isSafeToRepeat}) — never after a time-out, a 5xx or a connection
 * lost once the request may have been written. Within `KernelRetry.retryNonIdempotent` (the
 * caller's opt-in, per call), every transient failure is. `onTransient` sees each transient
 * failure of the first attempt (`again` reports its own). The schedule (and its driver) is only
 * made once a retryable failure happened: success at the first attempt allocates nothing for retries.
 *
 * @internal
 */
export const retry = <A, E extends KernelError.KernelError, R>(
  first: Effect.Effect<A, E, R>,
  again: () => Effect.Effect<A, E, R>,
  options: {
    readonly idempotent: boolean
    readonly schedule: (
      override: Option.Option<Schedule.Schedule<unknown, KernelError.KernelError>>
    ) => Schedule.Schedule<unknown, KernelError.KernelError>
    readonly onTransient: (error: E) => Effect.Effect<void>
  }
): Effect.Effect<A, E, R> =>
  Effect.catchIf(first, KernelError.isTransient, (error) =>
    Effect.zipRight(
      options.onTransient(error),
      Effect.flatMap(FiberRef.get(KernelRetry.currentPolicy), (override) => {
        const schedule = () => options.schedule(override)
        return options.idempotent
          ? retryFrom(again(), schedule(), KernelError.isTransient, error)
          : Effect.flatMap(FiberRef.get(KernelRetry.currentRetryNonIdempotent), (optIn) => {
            const retryable = optIn ? KernelError.isTransient : isSafeToRepeat
            return retryable(error) ? retryFrom(again(), schedule(), retryable, error) : Effect.fail(error)
          })
      })
    ))

const retryFrom = <A, E extends KernelError.KernelError, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, KernelError.KernelError>,
  retryable: (error: KernelError.KernelError) => boolean,
  first: E
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.zip(Schedule.driver(schedule), FiberRef.get(currentRetryStop)), ([driver, stop]) => {
    // the wait before each attempt, ended by the retry stop (see `currentRetryStop`): no attempt then
    const wait = (error: E): Effect.Effect<boolean, unknown> =>
      Option.isNone(stop)
        ? Effect.as(driver.next(error), true)
        : Effect.raceFirst(Effect.as(driver.next(error), true), Effect.as(Deferred.await(stop.value), false))
    const loop = (error: E): Effect.Effect<A, E, R> =>
      Effect.matchEffect(wait(error), {
        onFailure: () => Effect.fail(error),
        onSuccess: (again) => again ? Effect.catchIf(effect, retryable, loop) : Effect.fail(error)
      })
    return loop(first)
  })

/**
 * Whether a transient failure of a non-idempotent request may be retried without the risk of
 * doing its action twice: the server refused it unprocessed (429), said so (`x-should-retry:
 * true`), or the request was never sent ({@link neverSent}; a `Timeout` of an attempt that was
 * still waiting for a connection, {@link timedOutUnsent}).
 *
 * @internal
 */
export const isSafeToRepeat = (error: KernelError.KernelError): boolean => {
  if (!KernelError.isTransient(error)) return false
  switch (error._tag) {
    case "TransportError":
      return neverSent(error) || unsentFailures.has(error)
    case "Timeout":
      return unsentTimeouts.has(error)
    case "DecodeError":
    case "InvalidInput":
    case "ReplayNotReady":
      return false
    default:
      return error.shouldRetry === true || error.status === 429
  }
}

/** The time-outs of attempts whose request was never sent ({@link timedOutUnsent}). */
const unsentTimeouts = new WeakSet<KernelError.Timeout>()

/**
 * A `Timeout` of an attempt whose request the transport never sent (`KernelTransport`: it waited
 * for a free connection at the `connections` cap until its deadline): {@link isSafeToRepeat}.
 *
 * @internal
 */
export const timedOutUnsent = (error: KernelError.Timeout): KernelError.Timeout => {
  unsentTimeouts.add(error)
  return error
}

/** The transport failures of attempts whose request was never sent ({@link failedUnsent}). */
const unsentFailures = new WeakSet<object>()

/**
 * A failure of an attempt whose request the transport never began to write (`KernelTransport`:
 * undici never took it, its `onConnect`, which comes before the first byte is written, was not
 * called: its connection failed however it failed, a TLS handshake reset included). A
 * `TransportError` so marked is safe to repeat ({@link isSafeToRepeat}).
 *
 * @internal
 */
export const failedUnsent = <E>(error: E): E => {
  if (typeof error === "object" && error !== null) unsentFailures.add(error)
  return error
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

const policies = new WeakMap<KernelConfig.Service, Schedule.Schedule<unknown, KernelError.KernelError>>()

/**
 * The configurations of calls whose body is a one-shot `Stream`, with whether it was read from: a
 * retry only while it was not ({@link retryUntilStarted}).
 */
const unrepeatable = new WeakMap<KernelConfig.Service, () => boolean>()

/** `schedule`, stopped for good once the one-shot body was read from (`started`). */
const untilStarted = (
  schedule: Schedule.Schedule<unknown, KernelError.KernelError>,
  started: () => boolean
): Schedule.Schedule<unknown, KernelError.KernelError> => Schedule.whileInput(schedule, () => !started())

/**
 * The configuration of a call whose body is a one-shot `Stream`, which must not be sent twice: it
 * is retried (by its policy, which failures of its kind) only while not a byte of the stream was
 * read (`started`: a connection refused, a time-out in the queue), never once it was, whatever
 * `KernelRetry.withPolicy` says.
 *
 * @internal
 */
export const retryUntilStarted = (config: KernelConfig.Service, started: () => boolean): KernelConfig.Service => {
  const once: KernelConfig.Service = {
    ...config,
    retrySchedule: Option.some(untilStarted(policyFor(config), started))
  }
  unrepeatable.set(once, started)
  return once
}

/**
 * The retry schedule of a call: the caller's (`KernelRetry.withPolicy`, `override`), else its
 * configuration's ({@link policyFor}); for a call whose body is a one-shot `Stream`, either one
 * only while the stream was not read from ({@link retryUntilStarted}).
 *
 * @internal
 */
export const scheduleOf = (
  config: KernelConfig.Service,
  override: Option.Option<Schedule.Schedule<unknown, KernelError.KernelError>>
): Schedule.Schedule<unknown, KernelError.KernelError> => {
  if (Option.isNone(override)) return policyFor(config)
  const started = unrepeatable.get(config)
  return started === undefined ? override.value : untilStarted(override.value, started)
}

/**
 * The retry schedule of a configuration: its own, or `KernelRetry.policy` of its options (made
 * once per configuration: a schedule keeps no state of its own, its driver does).
 *
 * @internal
 */
export const policyFor = (config: KernelConfig.Service): Schedule.Schedule<unknown, KernelError.KernelError> => {
  let policy = policies.get(config)
  if (policy === undefined) {
    policy = Option.getOrElse(
      config.retrySchedule,
      (): Schedule.Schedule<unknown, KernelError.KernelError> => KernelRetry.policy(config)
    )
    policies.set(config, policy)
  }
  return policy
}
