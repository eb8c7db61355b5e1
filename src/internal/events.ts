/**
 * The event streams of the API (`text/event-stream` answers): the body parsed by `sse.ts`, each
 * event's data parsed as JSON and decoded by the answer's schema, then:
 * - heartbeats (`sse_heartbeat` events, on every stream; comment lines) are dropped: they only show
 *   the connection is alive (the idle time-out watches bytes, so they keep the stream open);
 * - an event whose type (its `event` / `type` field, found in the schema) the document does not
 *   know is a `KernelEvents.UnknownEvent`; an event that is not JSON, or a known type that does not
 *   fit its schema, is a `DecodeError` with a bounded excerpt;
 * - per operation (by name, {@link policies}): the events after which the stream ends (a
 *   deployment or an invocation reaching a terminal state, a login flow finishing, a process
 *   exiting), whether a body ending before it is a drop (`TransportError`), a mapping of the
 *   events (a process's `data_b64` decoded), and a resumption (telemetry: `Last-Event-ID` and
 *   `seq`).
 *
 * @internal
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import type * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Stream from "effect/Stream"
import * as KernelError from "../KernelError.js"
import * as KernelEvents from "../KernelEvents.js"
import { bound, formatParseError, jsonSyntaxMessage } from "./bounded.js"
import * as Client from "./client.js"
import * as Download from "./download.js"
import * as FastDecode from "./fastDecode.js"
import * as Secrets from "./secrets.js"
import * as Sse from "./sse.js"

/** How an operation's events end, map and resume. @internal */
export interface Policy {
  /** The event after which the stream ends (emitted, then the connection is closed). */
  readonly terminal?: ((event: unknown) => boolean) | undefined
  /** Whether a body ending (without a terminal event) is the normal end for these params. */
  readonly endIsNormal?: ((params: unknown) => boolean) | undefined
  /** A mapping of each decoded event (to several values: {@link Several}). */
  readonly map?: ((event: unknown) => Either.Either<unknown, string>) | undefined
  /** Telemetry: the events carry a `seq`; a dropped connection is resumed with `Last-Event-ID`. */
  readonly resume?: boolean | undefined
  /**
   * What a body that ended before the terminal event may still learn of the end, from another GET of
   * the same resource (its path: the stream's with `stream` replaced by `with`): `read` takes its JSON
   * answer to the terminal event it stands for, or to what it says instead (the end stays a drop).
   */
  readonly settle?: {
    /** The operation of that GET (its span's name). */
    readonly operation: string
    /** What that GET asks, as a drop's message names it (`the process's status`). */
    readonly what: string
    readonly stream: RegExp
    readonly with: string
    readonly read: (answer: unknown) => Either.Either<unknown, string>
  } | undefined
}

/** What a process's output stream asks once it ended without the exit (`settle.what`). */
const processStatus = "the process's status"

const deploymentDone = new Set(["running", "failed", "stopped"])
const invocationDone = new Set(["succeeded", "failed"])
const authDone = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"])

const tagAt = (json: unknown, path: ReadonlyArray<string>): unknown => {
  let value = json
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined
    value = Reflect.get(value, key)
  }
  return value
}

const text = (value: unknown): string | undefined => typeof value === "string" ? value : undefined

/** What one event of the server is to the stream's reader when it is more than one value, in order. */
class Several {
  constructor(readonly values: ReadonlyArray<unknown>) {}
}

const processOutput = (event: unknown): Either.Either<KernelEvents.ProcessOutput | Several, string> => {
  const data = text(tagAt(event, ["data_b64"]))
  const decoded = Encoding.decodeBase64(data ?? "")
  if (Either.isLeft(decoded)) return Either.left("data_b64 is not base64")
  const output: KernelEvents.ProcessOutput = {
    _tag: "Output",
    stream: tagAt(event, ["stream"]) === "stderr" ? "stderr" : "stdout",
    data: decoded.right
  }
  if (tagAt(event, ["event"]) !== "exit") return Either.right(output)
  const code = tagAt(event, ["exit_code"])
  const exit: KernelEvents.ProcessOutput = { _tag: "Exit", exitCode: typeof code === "number" ? code : undefined }
  // the last bytes may come with the exit (the document's event has both): told first, never dropped
  return Either.right(data === undefined || data === "" ? exit : new Several([output, exit]))
}

const isIn = (set: ReadonlySet<string>, value: unknown) => typeof value === "string" && set.has(value)

/**
 * The operations' policies, by operation name (an operation not listed: the stream ends when the
 * body does, which is a drop).
 *
 * @internal
 */
export const policies: Readonly<Record<string, Policy>> = {
  followDeployment: {
    terminal: (e) =>
      tagAt(e, ["event"]) === "error" ||
      (tagAt(e, ["event"]) === "deployment_state" && isIn(deploymentDone, tagAt(e, ["deployment", "status"])))
  },
  followInvocation: {
    terminal: (e) =>
      tagAt(e, ["event"]) === "error" ||
      (tagAt(e, ["event"]) === "invocation_state" && isIn(invocationDone, tagAt(e, ["invocation", "status"])))
  },
  followAuthConnection: {
    terminal: (e) =>
      tagAt(e, ["event"]) === "error" ||
      (tagAt(e, ["event"]) === "managed_auth_state" && isIn(authDone, tagAt(e, ["flow_status"])))
  },
  streamProcessStdout: {
    terminal: (e) => tagAt(e, ["_tag"]) === "Exit",
    map: processOutput,
    // the service's stream may end with the process without sending its `exit` event (its writer stops
    // when the process is done, whatever it had still to send): the process's status tells its exit
    settle: {
      operation: "getProcessStatus",
      what: processStatus,
      stream: /\/stdout\/stream$/,
      with: "/status",
      read: (status) => {
        const state = tagAt(status, ["state"])
        if (state !== "exited") {
          return Either.left(`${processStatus} says ${bound(JSON.stringify(state) ?? "nothing", 40)}`)
        }
        // an exit code as the `exit` event's schema has it (an integer), or none (absent, null)
        const code = tagAt(status, ["exit_code"])
        if (code !== undefined && code !== null && !Number.isSafeInteger(code)) {
          return Either.left(
            `${processStatus} says exit code ${
              bound(typeof code === "number" ? String(code) : JSON.stringify(code) ?? "?", 40)
            }, not an integer`
          )
        }
        const exit: KernelEvents.ProcessOutput = { _tag: "Exit", exitCode: typeof code === "number" ? code : undefined }
        return Either.right(exit)
      }
    }
  },
  // `follow: false`: the logs so far, then the end
  streamLogs: { endIsNormal: (params) => tagAt(params, ["follow"]) === false },
  streamTelemetry: { resume: true }
}

// ---------------------------------------------------------------------------------------------
// the event type of a schema
// ---------------------------------------------------------------------------------------------

/** Where a schema's events say their type (`["event"]`, `["event", "type"]`) and the known ones. */
interface Tags {
  readonly path: ReadonlyArray<string>
  readonly values: ReadonlySet<string>
}

const literalsOf = (ast: AST.AST): Array<string> | undefined => {
  switch (ast._tag) {
    case "Literal":
      return typeof ast.literal === "string" ? [ast.literal] : undefined
    case "Union": {
      const out: Array<string> = []
      for (const member of ast.types) {
        if (member._tag === "UndefinedKeyword") continue
        const values = literalsOf(member)
        if (values === undefined) return undefined
        out.push(...values)
      }
      return out
    }
    case "Refinement":
      return literalsOf(ast.from)
    default:
      return undefined
  }
}

const tagsOf = (ast: AST.AST, depth = 0): Tags | undefined => {
  if (depth > 8) return undefined
  switch (ast._tag) {
    case "Refinement":
      return tagsOf(ast.from, depth + 1)
    case "Transformation":
      return tagsOf(ast.to, depth + 1)
    case "Suspend":
      return tagsOf(ast.f(), depth + 1)
    case "Union": {
      let path: ReadonlyArray<string> | undefined
      const values = new Set<string>()
      for (const member of ast.types) {
        const tags = tagsOf(member, depth + 1)
        if (tags === undefined) return undefined
        if (path !== undefined && path.join(".") !== tags.path.join(".")) return undefined
        path = tags.path
        for (const value of tags.values) values.add(value)
      }
      return path === undefined ? undefined : { path, values }
    }
    case "TypeLiteral": {
      for (const key of ["event", "type"]) {
        const property = ast.propertySignatures.find((p) => p.name === key)
        if (property === undefined) continue
        const literals = literalsOf(property.type)
        if (literals !== undefined) return { path: [key], values: new Set(literals) }
        const nested = tagsOf(property.type, depth + 1)
        if (nested !== undefined) return { path: [key, ...nested.path], values: nested.values }
      }
      return undefined
    }
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// the stream
// ---------------------------------------------------------------------------------------------

/**
 * The most events one chunk of an event stream holds. A read of the body (up to the transport's
 * buffer: 1 MiB on `KernelTransport`) can hold tens of thousands of small events, and some of
 * effect's sinks walk a chunk recursively, one stack frame per element (`Stream.runFold`'s
 * `foldChunkSplit`): a chunk of about 10,000 overflows the stack.
 *
 * @internal
 */
export const maxEventsPerChunk = 1024

/**
 * Each chunk mapped by `f` to its values and maybe an error: the values are emitted in order, in
 * chunks of at most {@link maxEventsPerChunk} (none when there are none), then the stream fails with
 * the error (the events before a bad one are not lost with it). One channel reading the chunks in
 * turn: no stream made per chunk.
 */
const mapChunksThenFail = <A, B, E2>(
  f: (chunk: Chunk.Chunk<A>) => readonly [Array<B>, E2 | undefined]
) =>
<E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<B, E | E2, R> => {
  type Loop = Channel.Channel<Chunk.Chunk<B>, Chunk.Chunk<A>, E | E2, E, unknown, unknown>
  /** `out` from `from` on, a bounded chunk at a time, then `next`. */
  const write = (out: Array<B>, from: number, next: Loop): Loop => {
    if (out.length - from <= maxEventsPerChunk) {
      const rest = from === 0 ? out : out.slice(from)
      return Channel.zipRight(Channel.write(Chunk.unsafeFromArray(rest)), next)
    }
    const part = Chunk.unsafeFromArray(out.slice(from, from + maxEventsPerChunk))
    return Channel.flatMap(Channel.write(part), () => write(out, from + maxEventsPerChunk, next))
  }
  const loop: Loop = Channel.readWithCause({
    onInput: (chunk: Chunk.Chunk<A>) => {
      const [out, error] = f(chunk)
      const next = error === undefined ? loop : Channel.fail(error)
      return out.length === 0 ? next : write(out, 0, next)
    },
    onFailure: Channel.failCause,
    onDone: () => Channel.void
  })
  return Stream.fromChannel(Channel.pipeTo(Stream.toChannel(self), loop))
}

/** The bound of a line and of an event (1 MiB). @internal */
export const maxLine = Sse.defaultMaxLine

/**
 * A decoder of an operation's events: `(request, status, params, bytes) => events`.
 *
 * @internal
 */
export const decoder = (name: string, schema: Schema.Schema.AnyNoContext) => {
  const policy: Policy = policies[name] ?? {}
  // the compiled decoder (src/internal/fastDecode.ts), built on the first event; the schema's own
  // for an event it leaves (for the error, or an unknown event)
  const fast = FastDecode.compile(schema)
  const slow = FastDecode.decoder(schema)
  let tags: Tags | undefined | null = null
  const tagsNow = () => tags === null ? (tags = tagsOf(schema.ast) ?? undefined) : tags
  /**
   * What an error quotes of a frame's data: its first 200 characters, the values the schema types as
   * `Redacted` replaced first (an event that does not decode may still carry a live-view URL's token),
   * and so the value of every field named as a secret field of the API, wherever the data holds it
   * (an event that does not decode need not have the schema's shape: a list of events, an event
   * inside another object), on every stream; data that is not JSON, of events that may carry
   * secrets, is not shown (of other events: cut before the first secret field's name).
   */
  const excerpt = (data: string, json?: unknown): string => {
    // a stream whose events hold no secret may still be sent one (another resource, quoted): its
    // data is quoted as an error body is, every field named as a secret field of the API replaced;
    // cut with a mark (`bound`), so that the start of a credential the cut leaves is found and redacted
    if (!Secrets.holdsSecrets(schema)) return JSON.stringify(bound(Secrets.withoutSecretFields(data), 200))
    if (json === undefined) return "<not shown: this stream's events may carry secrets>"
    // the redacted copy is written out whole before it is cut: data nested deeper than the stack
    // throws a RangeError there, which must not turn the stream's DecodeError into a defect
    try {
      const redacted = Secrets.withoutSecretFieldsJson(Secrets.redactJson(schema.ast, json))
      return JSON.stringify(bound(JSON.stringify(redacted), 200))
    } catch {
      return "<not shown: this stream's events may carry secrets, and this one is nested too deep to redact>"
    }
  }
  return <E>(
    request: HttpClientRequest.HttpClientRequest,
    status: number,
    params: unknown,
    bytes: Stream.Stream<Uint8Array, E>,
    secret?: Redacted.Redacted<string>,
    /** The terminal event a body that ended before one still stands for (`policy.settle`), or what was said instead. */
    settled?: Effect.Effect<Either.Either<unknown, string>>
  ): Stream.Stream<unknown, E | KernelError.DecodeError | KernelError.TransportError> =>
    Stream.suspend(() => {
      const info = Client.describe(request)
      // an excerpt of what the server sent may quote the request's credentials: never kept
      const failed = (message: string) =>
        new KernelError.DecodeError({ ...info, status, message: bound(Client.scrub(message, request, secret), 512) })
      const parser = new Sse.Parser(maxLine, maxLine)
      const raw: Array<Sse.ServerSentEvent> = []
      let ended = false
      let terminal: unknown = undefined
      // each decoded event through the policy's mapping, if it has one
      const map = policy.map
      const mapped = (event: unknown): unknown | KernelError.DecodeError => {
        if (map === undefined) return event
        const result = map(event)
        return Either.isLeft(result) ? failed(`event: ${result.left}`) : result.right
      }
      const handle = (frame: Sse.ServerSentEvent): unknown | KernelError.DecodeError | undefined => {
        // a heartbeat named by the frame's `event:` field (its data empty or not JSON): a keep-alive too
        if (frame.event === "sse_heartbeat") return undefined
        let json: unknown
        try {
          json = JSON.parse(frame.data)
        } catch (cause) {
          return failed(
            `event data is not JSON (${jsonSyntaxMessage(cause)}): ${excerpt(frame.data)}`
          )
        }
        const known = tagsNow()
        const tag = known === undefined ? undefined : tagAt(json, known.path)
        // a heartbeat, on every stream: also where the document's union has none (the file system
        // watch's events say their type in `type`, telemetry's in `event.type`), never a DecodeError
        if (tag === "sse_heartbeat" || tagAt(json, ["event"]) === "sse_heartbeat") return undefined
        // decoding (and the text of its error) walks the data: an event nested deeper than the stack
        // (a recursive schema such as a call stack's `parent`) throws a RangeError, which must be the
        // stream's typed failure, not a defect
        try {
          const quick = fast(json)
          if (quick !== FastDecode.Fail) return mapped(quick)
          const decoded = slow(json)
          if (Either.isLeft(decoded)) {
            if (known !== undefined && typeof tag === "string" && !known.values.has(tag)) {
              return new KernelEvents.UnknownEvent({ event: tag, data: json, id: frame.id })
            }
            return failed(`event: ${formatParseError(decoded.left)}; data: ${excerpt(frame.data, json)}`)
          }
          return mapped(decoded.right)
        } catch (cause) {
          return failed(
            `event could not be decoded (${cause instanceof Error ? cause.message : String(cause)}): ${
              excerpt(frame.data, json)
            }`
          )
        }
      }
      const events = bytes.pipe(
        mapChunksThenFail((chunks) => {
          const out: Array<unknown> = []
          if (ended) return [out, undefined]
          for (const chunk of chunks) {
            const refused = parser.push(chunk, raw)
            for (let i = 0; i < raw.length; i++) {
              const value = handle(raw[i]!)
              if (value === undefined) continue
              if (value instanceof KernelError.DecodeError) {
                raw.length = 0
                return [out, value]
              }
              // the last of several values is the one that may end the stream
              const last = value instanceof Several ? value.values[value.values.length - 1] : value
              if (value instanceof Several) out.push(...value.values)
              else out.push(value)
              if (policy.terminal !== undefined && !KernelEvents.isUnknownEvent(last) && policy.terminal(last)) {
                ended = true
                terminal = last
                break
              }
            }
            raw.length = 0
            if (ended) break
            if (refused !== undefined) return [out, failed(refused)]
          }
          return [out, undefined]
        }),
        // the terminal event ends the stream (and releases the connection)
        Stream.takeUntil((value) => value === terminal)
      )
      if (policy.endIsNormal?.(params) === true) return events
      const dropped = (said?: string) =>
        new KernelError.TransportError({
          ...info,
          message: policy.terminal === undefined
            ? "the event stream ended (the connection was closed by the server)"
            : `the event stream ended before its terminal event (the connection was closed by the server${
              said === undefined ? "" : `; ${said}`
            })`
        })
      const end = Download.unwrap(Effect.suspend(() =>
        ended
          ? Effect.succeed(Stream.empty)
          : settled === undefined
          ? Effect.fail(dropped())
          : Effect.map(settled, Either.match({ onLeft: (said) => Stream.fail(dropped(said)), onRight: Stream.make }))
      ))
      return Stream.concat(events, end)
    })
}

/** Marks where an error that is not a drop ended a resumed stream (carried through the retry). */
const fatalMark: unique symbol = Symbol("effect-kernel/events/fatal")

const isDrop = (error: KernelError.KernelError): error is KernelEvents.Drop =>
  error._tag === "TransportError" || error._tag === "Timeout"

/**
 * Telemetry's resumption: `open(lastEventId)` is one connection (its events carry a `seq`); a
 * connection that drops (`TransportError`, the body ending) or goes quiet (`Timeout`) is opened
 * again by the schedule (`KernelEvents.ResumeSchedule`, read when the stream runs) with
 * `Last-Event-ID` set to the last `seq` received. Events already received (a `seq` not past the
 * last one, or not past the caller's own `Last-Event-ID`) are dropped; a `seq` that skips one, or one
 * that goes back (or repeats) on the same connection, is a
 * `DecodeError` (a gap, or a count that restarted: never hidden). The schedule starts over once an
 * event with a new seq came through (an event without one is no progress); once it is done, the
 * stream fails with the drop's error. Any other error (a status error, a `DecodeError`) is never resumed.
 *
 * @internal
 */
export const resumable = <E extends KernelError.KernelError>(
  info: { readonly method: string; readonly path: string },
  open: (lastEventId: string | undefined) => Stream.Stream<unknown, E>,
  /**
   * The caller's own `Last-Event-ID` (a seq saved by an earlier run): sent on the first connection as
   * given, and, when it is a seq, where the duplicate and gap checks start (an event up to it is dropped).
   */
  from?: string | undefined
): Stream.Stream<unknown, E | KernelError.DecodeError> =>
  Stream.suspend(() => {
    const given = from !== undefined && /^[0-9]{1,16}$/.test(from) ? Number(from) : undefined
    const start = given !== undefined && Number.isSafeInteger(given) && given >= 1 ? given : undefined
    let last: number | undefined = start
    let fatal: E | KernelError.DecodeError | undefined
    // a seq as the envelope's schema has it (a safe integer, at least 1): an unknown event's data is
    // not checked, and a seq of 1e300 there would otherwise make every later event "already received"
    const seqOf = (value: unknown): number | undefined => {
      const seq = KernelEvents.isUnknownEvent(value) ? tagAt(value.data, ["seq"]) : tagAt(value, ["seq"])
      return Number.isSafeInteger(seq) && typeof seq === "number" && seq >= 1 ? seq : undefined
    }
    // the last seq of the connection running: on one connection the seqs only go up (a resumed one may
    // start with events already received, in order); going back on it is a server whose count restarted
    let onConnection: number | undefined
    const connection = Stream.suspend(() => {
      onConnection = undefined
      // until an event past the caller's own seq came, its `Last-Event-ID` as given (`"007"` stays `"007"`)
      return open(last === undefined || last === start ? undefined : String(last))
    }).pipe(
      mapChunksThenFail((chunk): readonly [Array<unknown>, KernelError.DecodeError | undefined] => {
        const out: Array<unknown> = []
        for (const value of chunk) {
          const seq = seqOf(value)
          if (seq === undefined) {
            // a known envelope whose seq breaks the document's bound (`minimum: 1`): not a sequence number,
            // and, counted as none, it would be delivered again on every resumed connection
            const raw = KernelEvents.isUnknownEvent(value) ? undefined : tagAt(value, ["seq"])
            if (raw !== undefined) {
              return [
                out,
                new KernelError.DecodeError({
                  ...info,
                  status: 200,
                  message: `telemetry seq ${String(raw).slice(0, 40)} is not a sequence number (an integer, at least 1)`
                })
              ]
            }
            out.push(value)
            continue
          }
          if (onConnection !== undefined && seq <= onConnection) {
            return [
              out,
              new KernelError.DecodeError({
                ...info,
                status: 200,
                message: seq === onConnection
                  ? `telemetry seq ${seq} sent twice on one connection`
                  : `telemetry seq went back from ${onConnection} to ${seq} on one connection`
              })
            ]
          }
          onConnection = seq
          if (last !== undefined && seq <= last) continue
          if (last !== undefined && seq !== last + 1) {
            return [
              out,
              new KernelError.DecodeError({
                ...info,
                status: 200,
                message: `telemetry gap: expected seq ${last + 1}, got ${seq} (${seq - last - 1} events lost)`
              })
            ]
          }
          last = seq
          out.push(value)
        }
        return [out, undefined]
      }),
      // a drop is retried by the schedule; any other error is carried through, as the last value
      Stream.catchAll((error) => {
        if (isDrop(error)) return Stream.fail(error)
        fatal = error
        return Stream.succeed(fatalMark)
      })
    )
    // the schedule's retries: it starts over after a connection that brought an event with a new seq
    // (not `Stream.retry`'s any value: an event without a seq, sent again on every connection, would
    // make a connection that drops each time it opens a loop without end)
    const resumed = (
      driver: Schedule.ScheduleDriver<unknown, KernelEvents.Drop>
    ): Stream.Stream<unknown, E | KernelError.DecodeError> =>
      Stream.suspend(() => {
        const before = last
        return Stream.catchAll(connection, (drop) =>
          !isDrop(drop) ? Stream.fail(drop) : Download.unwrap(
            Effect.zipRight(
              last === before ? Effect.void : driver.reset,
              Effect.match(driver.next(drop), {
                onFailure: () => Stream.fail(drop),
                onSuccess: () => resumed(driver)
              })
            )
          ))
      })
    return Download.unwrap(Effect.map(Effect.flatMap(KernelEvents.ResumeSchedule, Schedule.driver), resumed))
      .pipe(
        mapChunksThenFail((chunk): readonly [Array<unknown>, E | KernelError.DecodeError | undefined] => {
          const out: Array<unknown> = []
          for (const value of chunk) {
            if (value === fatalMark) return [out, fatal]
            out.push(value)
          }
          return [out, undefined]
        })
      )
  })
