/**
 * The values of the event streams (`Deployments.follow`, `Invocations.follow`,
 * `AuthConnections.follow`, `Logs.stream`, `FilesystemWatch.events`, `Processes.stdoutStream`,
 * `Telemetry.stream`): each stream yields the document's events, decoded by their schemas, and
 * {@link UnknownEvent} for an event type the document does not know yet (forward compatible:
 * a newer server never breaks an older client). Heartbeats (`sse_heartbeat` events, comment
 * keep-alives) are consumed by the stream and never reach the caller.
 *
 * A process's output (`Processes.stdoutStream`) is {@link ProcessOutput}: its bytes (`data_b64`
 * decoded) with their stream, then its exit code as the last event; like every stream it may also
 * yield an {@link UnknownEvent} (an event the document does not know yet), so a `switch` on `_tag`
 * has three cases: `"Output"`, `"Exit"` and `"UnknownEvent"`.
 *
 * A connection that drops (`TransportError`, the body ending before the stream's terminal event)
 * or goes quiet (`Timeout`) fails the stream with that typed error, never a silent end, except
 * telemetry (`Telemetry.stream`), whose events carry a `seq`: it is opened again, by the
 * {@link ResumeSchedule} (default {@link defaultResumeSchedule}), from the last event received
 * (`Last-Event-ID`), with no duplicate and no gap; once the schedule gives up, the stream fails with
 * the last drop's error.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Inspectable from "effect/Inspectable"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Secrets from "./internal/secrets.js"
import type { Timeout, TransportError } from "./KernelError.js"

/**
 * An event whose type (its `event` or `type` field) the document does not describe: its type, its
 * data as parsed JSON and the stream's last event id.
 *
 * Its `data` is as sent, but it prints without the API's secrets: `String(event)`,
 * `JSON.stringify(event)`, `inspect` and `Effect.log(event)` show the value of every field named as
 * a secret field of the API (`hosted_url`, `live_view_url`, `cdp_ws_url`, `key`, `code`...), wherever
 * the data holds it, as `<redacted>` (a newer event may carry a live-view URL's token).
 *
 * @since 0.2.0
 * @category Models
 */
export class UnknownEvent extends Data.TaggedClass("UnknownEvent")<{
  /** The event's type, as sent (its `event` or `type` field). */
  readonly event: string
  /** The event's data, parsed as JSON (not checked). */
  readonly data: unknown
  /** The stream's last event id (`id:`), `""` when none was sent. */
  readonly id: string
}> {
  /**
   * The event as it prints: its data with the value of every secret field of the API replaced by
   * `<redacted>` (data nested too deep to rewrite is not shown).
   *
   * @since 0.2.0
   */
  toJSON(): unknown {
    let data: unknown
    try {
      data = Secrets.withoutSecretFieldsJson(this.data)
    } catch {
      data = "<not shown: nested too deep to redact>"
    }
    return { _tag: this._tag, event: this.event, data, id: this.id }
  }

  /**
   * The event as `JSON.stringify` writes it, without the API's secrets.
   *
   * @since 0.2.0
   */
  override toString(): string {
    return Inspectable.format(this.toJSON())
  }

  /**
   * What `util.inspect` (and so `console.log`) shows: {@link UnknownEvent.toJSON}.
   *
   * @since 0.2.0
   */
  [Inspectable.NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
}

/**
 * Whether a value of an event stream is an {@link UnknownEvent}.
 *
 * @since 0.2.0
 * @category Guards
 */
export const isUnknownEvent = (u: unknown): u is UnknownEvent => u instanceof UnknownEvent

/**
 * Whether a value of an event stream is one the document describes (not an {@link UnknownEvent}).
 *
 * @since 0.2.0
 * @category Guards
 */
export const isKnownEvent = <A>(u: A): u is Exclude<A, UnknownEvent> => !(u instanceof UnknownEvent)

/**
 * A chunk of a process's output: its bytes and the stream they were written to.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ProcessOutputChunk {
  readonly _tag: "Output"
  readonly stream: "stdout" | "stderr"
  readonly data: Uint8Array
}

/**
 * The end of a process: its exit code (the last event of the stream), `undefined` when the service
 * sent none (the document marks `exit_code` optional; the SDK does not make one up).
 *
 * @since 0.2.0
 * @category Models
 */
export interface ProcessExit {
  readonly _tag: "Exit"
  readonly exitCode: number | undefined
}

/**
 * A process's output and its exit: what `Processes.stdoutStream` yields, with an
 * {@link UnknownEvent} for an event the document does not know yet (its stream's elements are
 * `ProcessOutput | UnknownEvent`).
 *
 * @since 0.2.0
 * @category Models
 */
export type ProcessOutput = ProcessOutputChunk | ProcessExit

/**
 * Whether a value is a {@link ProcessOutputChunk}.
 *
 * @since 0.2.0
 * @category Guards
 */
export const isProcessOutputChunk = (u: unknown): u is ProcessOutputChunk =>
  Predicate.hasProperty(u, "_tag") && u._tag === "Output"

/**
 * What an event stream whose events are `A` (the document's union) yields: `A` without its
 * heartbeats, or an {@link UnknownEvent}; for a process's output, {@link ProcessOutput}.
 *
 * @since 0.2.0
 * @category Models
 */
export type Event<A> = "data_b64" extends keyof A ? ProcessOutput | UnknownEvent
  : Exclude<A, { readonly event: "sse_heartbeat" }> | UnknownEvent

/**
 * What a telemetry resumption schedule is given: the error that ended the connection (a
 * `TransportError` when it dropped, a `Timeout` when it went quiet for `idleTimeout`).
 *
 * @since 0.2.0
 * @category Models
 */
export type Drop = TransportError | Timeout

/**
 * The default resumption schedule of `Telemetry.stream`: 250 ms doubling, at most 5 s, between
 * attempts, 10 attempts in a row at most (started over by each event received with a new `seq`).
 * Each opening is a call retried by the retry policy first (`maxRetries`): against a server that
 * refuses every connection, a stream makes up to `(10 + 1) × (maxRetries + 1)` requests before it
 * fails.
 *
 * @since 0.2.0
 * @category Resumption
 */
export const defaultResumeSchedule: Schedule.Schedule<unknown, Drop> = Schedule.exponential("250 millis").pipe(
  Schedule.union(Schedule.spaced("5 seconds")),
  Schedule.intersect(Schedule.recurs(10))
)

/**
 * The schedule that resumes a dropped `Telemetry.stream` (opened again with `Last-Event-ID` set to
 * the last `seq` received): its input is the {@link Drop}; the stream fails with that error once it
 * is done; it starts over once an event with a new `seq` came through (an event without one is no
 * progress). Read when the stream runs; default {@link defaultResumeSchedule}. Provide another one
 * around the stream (`Stream.provideService`), around the program (`Effect.provideService`) or as a
 * layer (`Layer.succeed`).
 *
 * @since 0.2.0
 * @category Resumption
 * @example
 * ```ts
 * import { Effect, Schedule, Stream } from "effect"
 * import { KernelEvents, Telemetry } from "effect-kernel"
 *
 * // resumed 3 times at most, 1 s apart, then the stream fails with the drop's error
 * const program = Telemetry.stream({ id: "browser-id" }).pipe(
 *   Effect.flatMap((events) =>
 *     events.pipe(
 *       Stream.provideService(
 *         KernelEvents.ResumeSchedule,
 *         Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(3)))
 *       ),
 *       Stream.runForEach((event) => Effect.log(event))
 *     )
 *   )
 * )
 * ```
 */
export class ResumeSchedule extends Context.Reference<ResumeSchedule>()(
  "effect-kernel/KernelEvents/ResumeSchedule",
  { defaultValue: (): Schedule.Schedule<unknown, Drop> => defaultResumeSchedule }
) {}

/**
 * The idle time-out of the event streams run under it: how long a stream may receive no byte (no event,
 * no heartbeat) before it fails with `Timeout`. `undefined` (the default): the `KernelConfig`'s
 * `idleTimeout`. Read when the stream runs; provide it around the stream (`Stream.provideService`), the
 * program or as a layer. `Duration.infinity` turns the time-out off; `Duration.zero` fails every stream
 * before its first byte.
 *
 * For the streams the browser's server sends no keep-alive on (`FilesystemWatch.events`,
 * `Processes.stdoutStream`, `Logs.stream`: a quiet directory, process or log sends nothing), without
 * building a second layer with another `idleTimeout` (docs/events-and-files.md).
 *
 * @since 0.2.0
 * @category Time-outs
 * @example
 * ```ts
 * import { Duration, Effect, Stream } from "effect"
 * import { FilesystemWatch, KernelEvents } from "effect-kernel"
 *
 * // a watch on a directory that may stay quiet for hours: no idle time-out
 * const program = FilesystemWatch.events({ id: "browser-id", watchId: "watch-id" }).pipe(
 *   Effect.flatMap((events) =>
 *     events.pipe(
 *       Stream.provideService(KernelEvents.IdleTimeout, Duration.infinity),
 *       Stream.runForEach((event) => Effect.log(event))
 *     )
 *   )
 * )
 * ```
 */
export class IdleTimeout extends Context.Reference<IdleTimeout>()(
  "effect-kernel/KernelEvents/IdleTimeout",
  { defaultValue: (): Duration.Duration | undefined => undefined }
) {}
