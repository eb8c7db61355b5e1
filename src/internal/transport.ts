/**
 * The SDK's own undici transport: an `HttpClient` on undici's dispatcher, with a dispatch handler
 * whose back-pressure can never leave undici's HTTP/1.1 parser paused when the peer closes.
 *
 * Why the handler is built this way: undici 7 asserts `!parser.paused` in `Parser.finish`, which
 * it calls when the socket ends ('end') or is reset (ECONNRESET on a response without keep-alive),
 * and a parser is paused exactly when a handler's `onData` returned `false` (back-pressure). If
 * the peer closes while a body is paused, the assertion throws from a socket event handler and
 * the process dies (nodejs/undici#5360, fixed in undici 8 only). Here:
 * - the agent is built with our own client factory, so every socket this transport owns is known
 *   to the client (the "track") that runs the request currently receiving its response;
 * - a handler pauses only through its track, and the track resumes it *before* undici sees the
 *   socket end (a listener prepended to 'end') or be destroyed (every destroy, including
 *   ECONNRESET, goes through the socket's `destroy` method, which is wrapped): once resumed for
 *   that reason, the handler never pauses again (the rest of the body is what the kernel has
 *   already received, bounded by the socket's buffers);
 * - a handler dispatched on any other dispatcher (a user's own) never pauses at all.
 *
 * @internal
 */
import * as Cookies from "@effect/platform/Cookies"
import * as Headers from "@effect/platform/Headers"
import type * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as TraceContext from "@effect/platform/HttpTraceContext"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import { globalValue } from "effect/GlobalValue"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Net from "node:net"
import { Readable } from "node:stream"
import { ReadableStream as WebReadableStream } from "node:stream/web"
import type * as Tls from "node:tls"
import type * as Undici from "undici"
import type * as KernelTransport from "../KernelTransport.js"
import { GrowableBytes } from "./bounded.js"
import * as Download from "./download.js"
import { emptyArray } from "./perCall.js"
import { headersShown, scrubCauses, sentAuthorization } from "./redact.js"
import type * as Timeout from "./timeout.js"
import { isTracing } from "./tracing.js"

/**
 * The agent's and the bodies' options: `KernelTransport.Options`, defined (and documented) once there.
 *
 * @internal
 */
export type AgentOptions = KernelTransport.Options

/** @internal */
export const defaultBodyBufferSize = 1024 * 1024
/** @internal */
export const defaultAbandonedBodyTimeout = Duration.seconds(10)

/**
 * A waiting reader is handed the buffered chunks at once from this many bytes (two socket reads' worth)
 * rather than at the end of the I/O phase. Batches of up to a whole I/O phase (2 MiB on loopback) were
 * alive when the young collections the read buffers trigger ran, and some were promoted: a 256 MiB
 * download then cost up to 1.3 mark-compacts (against 0.1 for undici's own `request`) and 10-20 % of
 * its throughput; 64 KiB (a wake per read) spent as much on the wake-ups (docs/performance.md, "A
 * download's batches and the collector").
 */
const wakeBytes = 128 * 1024

/**
 * Connections per origin when `connections` is not set: a large fan-out queues in undici instead of
 * opening a socket (a file descriptor) per call in flight. See docs/transports.md.
 *
 * @internal
 */
export const defaultConnections = 128

/** The longest delay a Node timer (hence undici's keep-alive timer) holds: about 24.8 days. */
const maxTimerMillis = 2_147_483_647

/** The agent's options, checked and in undici's terms (milliseconds; `null`: no limit). */
interface AgentSettings {
  readonly connections: number | null
  readonly keepAliveTimeout: number | undefined
  readonly keepAliveMaxTimeout: number | undefined
  readonly connectTimeout: number | undefined
}

const invalid = (option: string, message: string) => ConfigError.InvalidData([option], message)

/**
 * A duration option in milliseconds: `undefined` when not set, `"infinite"` for
 * `Duration.infinity`, or a `ConfigError` naming the option for anything that is not a duration
 * of at least `min` milliseconds (a negative or NaN number, an unparsable string).
 */
const durationOption = (
  option: string,
  input: Duration.DurationInput | undefined,
  min: number
): Either.Either<number | "infinite" | undefined, ConfigError.ConfigError> => {
  if (input === undefined) return Either.right(undefined)
  const expected = `${option} must be a duration of at least ${min} ms (Duration.infinity: no limit)`
  // Duration.decode turns a negative or NaN number (or "-1 seconds") into zero: refused here
  if (typeof input === "number" && !(input >= 0)) return Either.left(invalid(option, `${expected}, got ${input}`))
  if (typeof input === "bigint" && input < BigInt(0)) return Either.left(invalid(option, `${expected}, got ${input}`))
  if (typeof input === "string" && /^\s*-/.test(input)) return Either.left(invalid(option, `${expected}, got ${input}`))
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left(invalid(option, `${expected}, got ${String(input)}`))
  if (!Duration.isFinite(decoded.value)) return Either.right("infinite")
  const ms = Math.round(Duration.toMillis(decoded.value))
  return ms < min ? Either.left(invalid(option, `${expected}, got ${ms} ms`)) : Either.right(ms)
}

/**
 * Checks the options when the transport is built, not when a call fails: a value undici would
 * refuse (a negative, NaN or non-integer `connections`, a zero keep-alive) is a `ConfigError`
 * naming the option; `Duration.infinity` is mapped to what it means for undici (keep-alive: the
 * longest timer; `connectTimeout`: none; `connections: Infinity`: no limit).
 *
 * @internal
 */
export const checkOptions = (options: AgentOptions): Either.Either<AgentSettings, ConfigError.ConfigError> =>
  Either.gen(function*() {
    const input = options.connections
    if (input !== undefined && !(input === Infinity || (Number.isSafeInteger(input) && input >= 1))) {
      return yield* Either.left(
        invalid("connections", `connections must be a whole number of at least 1 (Infinity: no limit), got ${input}`)
      )
    }
    const connections = input === undefined ? defaultConnections : input === Infinity ? null : input
    const keepAlive = yield* durationOption("keepAliveTimeout", options.keepAliveTimeout, 1)
    const keepAliveMax = yield* durationOption("keepAliveMaxTimeout", options.keepAliveMaxTimeout, 1)
    const connect = yield* durationOption("connectTimeout", options.connectTimeout, 0)
    const bodyBufferSize = options.bodyBufferSize
    if (bodyBufferSize !== undefined && !(Number.isFinite(bodyBufferSize) && bodyBufferSize >= 1)) {
      return yield* Either.left(
        invalid("bodyBufferSize", `bodyBufferSize must be a finite number of bytes, at least 1, got ${bodyBufferSize}`)
      )
    }
    yield* durationOption("abandonedBodyTimeout", options.abandonedBodyTimeout, 0)
    const capped = (ms: number | "infinite" | undefined) => ms === "infinite" ? maxTimerMillis : ms
    return {
      connections,
      keepAliveTimeout: capped(keepAlive),
      keepAliveMaxTimeout: capped(keepAliveMax),
      // undici: 0 is no connect time-out
      connectTimeout: connect === "infinite" ? 0 : connect
    }
  })

// ---------------------------------------------------------------------------------------------
// the socket track
// ---------------------------------------------------------------------------------------------

/**
 * One per undici `Client` (one socket at a time): the exchange whose body is paused on it, if any.
 */
class Track {
  paused: Exchange | undefined = undefined
  socket: Net.Socket | undefined = undefined
  /**
   * A request was just written on the socket and no byte of its response was handed to undici's
   * parser yet: an interim `100 Continue` may come first (see `skipContinue`).
   */
  fresh = false
  /** The start of a response held back while it may still be a `100 Continue` not fully received. */
  pending: Buffer | undefined = undefined

  /** The socket ends or is destroyed: the paused exchange (if any) resumes, for good. */
  release(socket: Net.Socket): void {
    if (socket !== this.socket) return
    const exchange = this.paused
    if (exchange !== undefined) {
      this.paused = undefined
      exchange.resumeForGood()
    }
  }

  /**
   * An unasked-for `100 Continue` (RFC 9110 requires a client to accept any 1xx before the final
   * response) is dropped before undici 7's parser sees it: that parser destroys the connection on a
   * `100` ("bad response"), while it skips other 1xx itself. Only the first bytes of a response
   * are looked at (`fresh`); the SDK never sends `Expect: 100-continue` (undici refuses it).
   */
  skipContinue(socket: Net.Socket, chunk: Buffer, read: (size?: number) => unknown): Buffer | null {
    let data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    this.pending = undefined
    while (true) {
      const head = data.subarray(0, continuePrefix.length).toString("latin1")
      if (head.length < continuePrefix.length) {
        // too short to tell: held back while it may still be a 100
        if (continuePrefix.startsWith(head.replace(/^HTTP\/1\.0/, "HTTP/1.1"))) {
          this.pending = data
          return null
        }
        this.fresh = false
        return data
      }
      if (!/^HTTP\/1\.[01] 100[ \r]/.test(head)) {
        this.fresh = false
        return data
      }
      const end = data.indexOf("\r\n\r\n")
      if (end < 0) {
        // bounded like a header block: a "100" that never ends is not held forever
        if (data.length > 16 * 1024) {
          this.fresh = false
          return data
        }
        this.pending = data
        return null
      }
      data = data.subarray(end + 4)
      if (data.length === 0) {
        const next = read.call(socket)
        if (!Buffer.isBuffer(next)) return null
        data = next
      }
    }
  }

  arm(socket: Net.Socket): void {
    this.socket = socket
    this.fresh = false
    this.pending = undefined
    const read = socket.read
    const filter = (self: Net.Socket, chunk: unknown): unknown =>
      !this.fresh || this.socket !== self || !Buffer.isBuffer(chunk) ? chunk : this.skipContinue(self, chunk, read)
    socket.read = function(this: Net.Socket, size?: number) {
      return filter(this, read.call(this, size))
    }
    socket.prependListener("end", () => this.release(socket))
    const destroy = socket.destroy
    const release = () => this.release(socket)
    socket.destroy = function(this: Net.Socket, error?: Error) {
      release()
      return destroy.call(this, error)
    }
  }
}

/** The longest start of a status line that tells a `100` from any other status. */
const continuePrefix = "HTTP/1.1 100 "

const tracks = new WeakMap<Undici.Dispatcher, Track>()

type UndiciModule = typeof Undici
type Connector = (options: Undici.buildConnector.Options, callback: Undici.buildConnector.Callback) => void

/**
 * undici is loaded when the first agent is built, not when effect-kernel is imported: it is an
 * optional peer, and importing it costs start-up time a user of another transport should not pay.
 */
let undiciModule: Promise<UndiciModule> | undefined
/** @internal */
// pure: a program that never builds a KernelTransport agent bundles none of undici
export const loadUndici: Effect.Effect<UndiciModule> = /*#__PURE__*/ Effect.orDieWith(
  /*#__PURE__*/ Effect.suspend(() => Effect.tryPromise(() => undiciModule ??= import("undici"))),
  (cause) =>
    new Error(
      "KernelTransport needs the `undici` package (an optional peer dependency of effect-kernel): npm install undici",
      { cause }
    )
)

const trackedClientFactories = new WeakMap<
  UndiciModule,
  (origin: URL | string, options: Undici.Client.Options) => Undici.Dispatcher
>()

const trackedClientFactory = (undici: UndiciModule) => {
  const cached = trackedClientFactories.get(undici)
  if (cached !== undefined) return cached
  class TrackedClient extends undici.Client {
    override dispatch(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
      if (handler instanceof Exchange) handler.track = tracks.get(this)
      return super.dispatch(options, handler)
    }
  }
  const factory = (origin: URL | string, options: Undici.Client.Options): Undici.Dispatcher => {
    const track = new Track()
    const base: Connector = typeof options.connect === "function" ?
      options.connect :
      undici.buildConnector({ ...options.connect })
    const connect: Connector = (connectOptions, callback) =>
      base(connectOptions, (...args) => {
        const [error, socket] = args
        if (error === null && socket !== null) {
          track.arm(socket)
        }
        callback(...args)
      })
    const client = new TrackedClient(origin, { ...options, connect })
    tracks.set(client, track)
    return client
  }
  trackedClientFactories.set(undici, factory)
  return factory
}

/** @internal */
export const makeAgent = (undici: UndiciModule, options: AgentOptions, settings: AgentSettings): Undici.Agent => {
  const { connectTimeout, connections, keepAliveMaxTimeout, keepAliveTimeout } = settings
  const factory = trackedClientFactory(undici)
  return new undici.Agent({
    // time-outs are the SDK's (Effect's) business; undici's own would race them
    headersTimeout: 0,
    bodyTimeout: 0,
    ...(connectTimeout !== undefined ? { connectTimeout } : {}),
    ...(keepAliveTimeout !== undefined ? { keepAliveTimeout } : {}),
    ...(keepAliveMaxTimeout !== undefined ? { keepAliveMaxTimeout } : {}),
    ...(options.tls !== undefined ? { connect: { ...options.tls } } : {}),
    factory: (origin, agentOptions) =>
      new undici.Pool(origin, {
        ...agentOptions,
        connections,
        factory
      })
  })
}

// ---------------------------------------------------------------------------------------------
// the exchange: one request, its dispatch handler and its body buffer
// ---------------------------------------------------------------------------------------------

const enum State {
  Waiting,
  Body,
  Done,
  Failed
}

const aborted = () => new Error("the response body was released before it was read")

/** The end of a body, as {@link Exchange.pull} and {@link Exchange.next} say it. */
const pullEnd = Effect.fail(Option.none())
const nextEnd = Effect.succeed(undefined)

/** Why a whole-body read within a limit failed: the body has more bytes than the limit. */
const bodyTooLarge = new Error("the response body is larger than the read allows")

/**
 * What a call is sent with: undici's `dispatch` (an owned `Agent`, or any undici `Dispatcher` given
 * to `KernelTransport.fromDispatcher`).
 */
interface Sender {
  dispatch(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean
}

/**
 * How many chunks a whole-body read keeps as they came before it gathers them in one buffer: a small
 * answer (one or two socket reads) is handed over without a copy, a body dripped in many reads costs
 * its bytes, not an object per read.
 */
const chunksKept = 16

/** @internal */
export class Exchange implements Undici.Dispatcher.DispatchHandler {
  track: Track | undefined = undefined
  state = State.Waiting
  status = 0
  rawHeaders: Array<Buffer> = emptyArray()
  error: unknown = undefined
  chunks: Array<Buffer> = emptyArray()
  buffered = 0
  /**
   * The body of a whole-body read ({@link collect}) past {@link chunksKept} chunks, gathered in one
   * buffer that doubles rather than a chunk kept per read (a body dripped a byte per read would cost
   * an object per byte). A body of a few chunks (every small answer) is kept as its chunks: no copy.
   */
  whole: GrowableBytes | undefined = undefined
  /** A whole-body read ({@link collect}) has started. */
  collecting = false
  /** Read to the end: no bound (text, json, arrayBuffer, or the socket has ended). */
  unbounded = false
  paused = false
  /** A reader is attached (a stream pulls or a whole-body read waits). */
  reading = false
  inCallback = false
  abortFn: ((error?: Error) => void) | undefined = undefined
  resumeFn: (() => void) | undefined = undefined
  onHead: ((ok: boolean, error: unknown) => void) | undefined = undefined
  waiter: (() => void) | undefined = undefined
  idleTimer: ReturnType<typeof setTimeout> | undefined = undefined
  cancelled = false
  /** The request's body when it is a stream (undici reads it): ended if the request is refused. */
  body: Readable | undefined = undefined
  /** The most a whole-body read (`readAll`) may hold; past it the body is released. */
  limit = Infinity
  overLimit = false

  constructor(readonly highWaterMark: number, public abandonAfter: number) {}

  /**
   * The SDK watches the body itself (its `idleTimeout`, see `Download.watchedBody`): an unread body is
   * its to release, no longer {@link abandonAfter}'s.
   */
  watched(): void {
    this.abandonAfter = 0
    this.clearIdleTimer()
  }

  // undici's callbacks (the legacy handler API: no controller wrapper per request)

  onConnect(abort: (error?: Error) => void): void {
    // cancelled while it waited for a connection (a time-out in the queue at the `connections`
    // cap): never sent. undici fails a request whose `onConnect` throws and keeps the connection,
    // where `abort` would destroy it, one healthy socket per abandoned call
    if (this.cancelled) {
      // undici read the body first (`read(0)`, for its length), which started a stream body's run:
      // the refused request never destroys it, so it is ended here (no error: an error on it would
      // make undici abort, destroying the connection)
      this.body?.destroy()
      throw aborted()
    }
    this.abortFn = abort
    // undici writes this request now (HTTP/1.1, one request at a time): its response starts next
    if (this.track !== undefined) {
      this.track.fresh = true
      this.track.pending = undefined
    }
  }

  onHeaders(statusCode: number, rawHeaders: Array<Buffer>, resume: () => void): boolean {
    if (statusCode < 200) return true
    this.status = statusCode
    this.rawHeaders = rawHeaders
    this.resumeFn = resume
    this.state = State.Body
    const onHead = this.onHead
    this.onHead = undefined
    onHead?.(true, undefined)
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.cancelled || this.overLimit) return true
    this.buffered += chunk.length
    if (this.buffered > this.limit) {
      // more than a whole-body read may hold: dropped, the waiting read fails, and the request is
      // released outside undici's callback
      this.overLimit = true
      this.chunks = emptyArray()
      this.whole = undefined
      this.buffered = 0
      this.wake()
      queueMicrotask(() => this.cancel())
      return true
    }
    if (this.whole !== undefined) this.whole.append(chunk)
    else {
      this.chunks.push(chunk)
      if (this.collecting && this.chunks.length > chunksKept) this.gather()
    }
    // A waiting reader gets the chunks in batches: at once when two socket reads' worth is buffered
    // ({@link wakeBytes}, or the whole buffer when it is smaller), else after the event loop's I/O
    // phase (every small chunk the sockets delivered in it), so a body dripped in small reads costs
    // one pull per batch rather than one per read.
    if (this.waiter !== undefined) {
      if (this.buffered >= wakeBytes || this.buffered >= this.highWaterMark) this.wake()
      else this.scheduleFlush()
    }
    if (this.unbounded || this.buffered < this.highWaterMark || this.track === undefined) return true
    this.paused = true
    this.track.paused = this
    if (!this.reading) this.startIdleTimer()
    return false
  }

  onComplete(): void {
    this.state = State.Done
    this.settle()
  }

  onError(error: Error): void {
    if (this.state === State.Done) return
    this.error = error
    this.state = State.Failed
    this.chunks = emptyArray()
    this.whole = undefined
    this.buffered = 0
    const onHead = this.onHead
    this.onHead = undefined
    onHead?.(false, error)
    this.settle()
  }

  private settle(): void {
    this.paused = false
    if (this.track !== undefined && this.track.paused === this) this.track.paused = undefined
    this.clearIdleTimer()
    this.wake()
  }

  private flushScheduled = false
  private readonly flush = (): void => {
    this.flushScheduled = false
    if (this.buffered > 0 || this.state !== State.Body) this.wake()
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(this.flush)
  }

  private wake(): void {
    const waiter = this.waiter
    if (waiter !== undefined) {
      this.waiter = undefined
      this.inCallback = true
      try {
        waiter()
      } finally {
        this.inCallback = false
      }
    }
  }

  // the socket ends or is destroyed while this body is paused (see Track)
  resumeForGood(): void {
    this.unbounded = true
    this.clearIdleTimer()
    if (this.paused) {
      this.paused = false
      this.resumeFn?.()
    }
  }

  // the reader's side

  /** Lets the parser go on after a reader took the buffered chunks. */
  private resumeIfPaused(): void {
    if (!this.paused || (!this.unbounded && this.buffered >= this.highWaterMark)) return
    if (this.track !== undefined && this.track.paused === this) this.track.paused = undefined
    this.paused = false
    // never re-enter undici's parser from inside one of its own callbacks
    if (this.inCallback) queueMicrotask(() => this.resumeFn?.())
    else this.resumeFn?.()
  }

  private startIdleTimer(): void {
    if (this.idleTimer !== undefined || this.abandonAfter <= 0) return
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined
      if (!this.reading && (this.state === State.Body)) this.cancel()
    }, this.abandonAfter)
    this.idleTimer.unref?.()
  }

  private clearIdleTimer(): void {
    if (this.idleTimer !== undefined) {
      clearTimeout(this.idleTimer)
      this.idleTimer = undefined
    }
  }

  /** Aborts the exchange unless it is over: undici destroys the socket (our track resumes first). */
  cancel(): void {
    if (this.state === State.Done || this.state === State.Failed) return
    this.cancelled = true
    this.unbounded = true
    const abort = this.abortFn
    if (abort !== undefined) abort(aborted())
    // not connected yet (a connect that hangs): the waiting side fails now; undici aborts the
    // request when it gets its connection (`onConnect` sees `cancelled`)
    else if (this.state === State.Waiting) this.onError(aborted())
  }

  /** Everything: waits for the end, without a bound on what is buffered. */
  readAll(): Effect.Effect<Buffer, unknown> {
    return Effect.async<Buffer, unknown>((resume) => {
      this.collect((error, buffer) => resume(buffer === undefined ? Effect.fail(error) : Effect.succeed(buffer)))
      return Effect.sync(() => this.stopCollecting())
    })
  }

  /**
   * Calls `done` once, with the whole body or why it could not be read (`bodyTooLarge` past the
   * `limit`); at once if the body is already over. {@link stopCollecting} cancels it.
   */
  collect(done: (error: unknown, buffer: Buffer | undefined) => void): void {
    this.collecting = true
    if (this.whole === undefined && this.state === State.Body && this.chunks.length > chunksKept) this.gather()
    this.unbounded = true
    this.reading = true
    this.clearIdleTimer()
    const check = (): void => {
      if (this.overLimit) {
        done(bodyTooLarge, undefined)
      } else if (this.state === State.Done) {
        done(undefined, this.takeAll())
      } else if (this.state === State.Failed) {
        done(this.error, undefined)
      } else {
        this.waiter = check
      }
    }
    check()
    this.resumeIfPaused()
  }

  /** The chunks of a whole-body read moved into one buffer ({@link whole}), which takes the next ones. */
  private gather(): void {
    const whole = new GrowableBytes()
    for (const chunk of this.chunks) whole.append(chunk)
    this.chunks = emptyArray()
    this.whole = whole
  }

  /** The reader of {@link collect} is gone (interrupted): the exchange is cancelled. */
  stopCollecting(): void {
    this.waiter = undefined
    this.cancel()
  }

  private takeAll(): Buffer {
    const whole = this.whole
    if (whole !== undefined) {
      this.whole = undefined
      this.buffered = 0
      const bytes = whole.view()
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
    }
    const chunks = this.chunks
    this.chunks = emptyArray()
    const size = this.buffered
    this.buffered = 0
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
  }

  /** The chunks buffered so far (waiting for one if there is none), or `None` at the end. */
  pull(): Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<unknown>> {
    return this.take(Effect.succeed, pullEnd, (error) => Effect.fail(Option.some(error)))
  }

  /**
   * The chunks buffered so far (waiting for one if there is none), or `undefined` at the end: what a
   * body read pull by pull takes ({@link Download.PullBody}).
   */
  next(): Effect.Effect<Chunk.Chunk<Uint8Array> | undefined, unknown> {
    return this.take<Chunk.Chunk<Uint8Array> | undefined, unknown>(Effect.succeed, nextEnd, Effect.fail)
  }

  /**
   * What {@link pull} and {@link next} share: the buffered chunks, the end or the failure, as each
   * says. The reader's fiber takes the chunks itself, after a wait if there are none yet: the wait
   * registers no canceler, so that a pull costs no `Effect.onInterrupt` (whose options object V8
   * pretenures under a download's young collections, and which held each pull's chunks until the
   * next full collection: see perCall.ts). A wait interrupted leaves its waiter, whose call then
   * resumes nothing and takes nothing.
   */
  private take<A, E>(
    chunks: (chunks: Chunk.Chunk<Uint8Array>) => Effect.Effect<A, E>,
    end: Effect.Effect<A, E>,
    failed: (error: unknown) => Effect.Effect<A, E>
  ): Effect.Effect<A, E> {
    const step: Effect.Effect<A, E> = Effect.suspend(() => {
      this.reading = true
      this.clearIdleTimer()
      if (this.buffered > 0) {
        const taken = this.chunks
        this.chunks = emptyArray()
        this.buffered = 0
        this.resumeIfPaused()
        return chunks(Chunk.unsafeFromArray(taken))
      }
      if (this.state === State.Done) return end
      if (this.state === State.Failed) return failed(this.error)
      return Effect.flatMap(this.awaitData, () => step)
    })
    return step
  }

  /** Resumed when chunks arrive, the body ends or fails (see {@link take}); made at the first wait. */
  private get awaitData(): Effect.Effect<void> {
    return this.awaitDataEffect ??= Effect.async<void>((resume) => {
      this.waiter = () => resume(Effect.void)
      this.resumeIfPaused()
    })
  }
  private awaitDataEffect: Effect.Effect<void> | undefined = undefined

  get complete(): boolean {
    return this.state === State.Done
  }
}

// ---------------------------------------------------------------------------------------------
// the response
// ---------------------------------------------------------------------------------------------

const headersOf = (raw: Array<Buffer>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString("latin1").toLowerCase()
    const value = raw[i + 1]!.toString("latin1")
    const previous = out[name]
    out[name] = previous === undefined
      ? value
      : name === "set-cookie"
      ? `${previous}\n${value}`
      : `${previous}, ${value}`
  }
  return out
}

const setCookiesOf = (raw: Array<Buffer>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toString("latin1").toLowerCase() === "set-cookie") out.push(raw[i + 1]!.toString("latin1"))
  }
  return out
}

const decoder = new TextDecoder()

/** @internal */
export class ResponseImpl extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId

  constructor(
    readonly original: HttpClientRequest.HttpClientRequest,
    readonly exchange: Exchange,
    readonly redactedNames: RedactedNames
  ) {
    super()
  }

  private safeRequest: HttpClientRequest.HttpClientRequest | undefined
  /**
   * The request, with its sensitive headers (the fiber's `Headers.currentRedactedNames`) replaced
   * by `<redacted>`: every error made from this response carries it, and renders no token even
   * when printed outside a fiber.
   */
  get request(): HttpClientRequest.HttpClientRequest {
    return this.safeRequest ??= redactRequest(this.original, this.redactedNames)
  }

  /** The SDK watches this body itself (`Download.watchedBody`): no `abandonedBodyTimeout` for it. */
  [Download.watchedBody](): void {
    this.exchange.watched()
  }

  /** The `Authorization` value it was sent with (for the token's redaction where a server echoes it). */
  get [sentAuthorization](): string | undefined {
    return this.original.headers["authorization"]
  }

  get status(): number {
    return this.exchange.status
  }

  private cachedHeaders: Headers.Headers | undefined
  get headers(): Headers.Headers {
    return this.cachedHeaders ??= Headers.unsafeFromRecord(headersOf(this.exchange.rawHeaders))
  }

  /**
   * One header's value as {@link headers} has it (repeated ones joined), without building the
   * record of every header: what the SDK's JSON read looks at (its length and content coding).
   */
  header(name: string): string | undefined {
    if (this.cachedHeaders !== undefined) return this.cachedHeaders[name]
    const raw = this.exchange.rawHeaders
    let out: string | undefined
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i]!
      if (key.length !== name.length || key.toString("latin1").toLowerCase() !== name) continue
      const value = raw[i + 1]!.toString("latin1")
      out = out === undefined ? value : `${out}, ${value}`
    }
    return out
  }

  private cachedCookies: Cookies.Cookies | undefined
  get cookies(): Cookies.Cookies {
    return this.cachedCookies ??= Cookies.fromSetCookie(setCookiesOf(this.exchange.rawHeaders))
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  private decodeError(cause: unknown, reason: "Decode" | "EmptyBody" = "Decode"): HttpClientError.ResponseError {
    // a body undici could not parse (a bad chunk) keeps its bytes, which may echo the token
    scrubCauses(cause, this.original.headers["authorization"])
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason, cause })
  }

  private bodyCache: Effect.Effect<Buffer, HttpClientError.ResponseError> | undefined
  /** The whole body, read once (text, json, arrayBuffer, formData and urlParamsBody share it). */
  get body(): Effect.Effect<Buffer, HttpClientError.ResponseError> {
    if (this.bodyCache !== undefined) return this.bodyCache
    let result: Exit.Exit<Buffer, HttpClientError.ResponseError> | undefined
    let running: Effect.Effect<Buffer, HttpClientError.ResponseError> | undefined
    const read = Effect.suspend(() => {
      if (result !== undefined) return result
      return running ??= Effect.onExit(
        Effect.mapError(this.exchange.readAll(), (cause) => this.decodeError(cause)),
        (exit) =>
          Effect.sync(() => {
            running = undefined
            // an interrupted read released the body: later reads fail with that
            result = Exit.isInterrupted(exit) ? Exit.fail(this.decodeError(aborted())) : exit
          })
      )
    })
    return this.bodyCache = read
  }

  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return Effect.map(this.body, (buffer) => decoder.decode(buffer))
  }

  /**
   * The body as text, or `undefined` when it has more than `limit` bytes: it is then dropped as
   * it comes (never held) and the request released. For the SDK's bounded JSON reads: one effect,
   * whose outcome later reads of the body share (as they share {@link body}'s).
   */
  textWithin(limit: number): Effect.Effect<string | undefined, HttpClientError.ResponseError> {
    if (this.within !== undefined && this.withinLimit === limit) return this.within
    if (this.bodyCache !== undefined) {
      return Effect.catchIf(this.text, (error) => error.cause === bodyTooLarge, () => Effect.succeed(undefined))
    }
    this.exchange.limit = limit
    return Effect.async<string | undefined, HttpClientError.ResponseError>((resume) => {
      this.exchange.collect((error, buffer) => resume(this.settleWithin(error, buffer)))
      return Effect.sync(() => {
        // an interrupted read released the body: later reads fail with that
        this.bodyCache = Effect.fail(this.decodeError(aborted()))
        this.exchange.stopCollecting()
      })
    })
  }

  /** What {@link readWithin} read, as {@link textWithin} with its limit answers it. */
  private within: Effect.Effect<string | undefined, HttpClientError.ResponseError> | undefined
  private withinLimit = 0

  /**
   * Reads the body whole within `limit` (dropped as it comes past it, as {@link textWithin}
   * does), then calls `done`: the transport's own read of an answer the SDK reads whole (see
   * `Owner.prefetch`), before it hands the response over. `textWithin(limit)` then answers at once;
   * every other read shares the body.
   */
  readWithin(limit: number, done: () => void): void {
    this.exchange.limit = limit
    this.exchange.collect((error, buffer) => {
      this.within = this.settleWithin(error, buffer)
      this.withinLimit = limit
      done()
    })
  }

  /** The end of a read within a limit: the body kept for every later read, and the read's answer. */
  private settleWithin(
    error: unknown,
    buffer: Buffer | undefined
  ): Effect.Effect<string | undefined, HttpClientError.ResponseError> {
    if (buffer !== undefined) {
      this.bodyCache = Effect.succeed(buffer)
      return Effect.succeed(decoder.decode(buffer))
    }
    const failure = this.decodeError(error)
    this.bodyCache = Effect.fail(failure)
    return error === bodyTooLarge ? Effect.succeed(undefined) : Effect.fail(failure)
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: (): unknown => text === "" ? null : JSON.parse(text),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return Effect.map(this.body, (buffer) => {
      const copy = new ArrayBuffer(buffer.length)
      new Uint8Array(copy).set(buffer)
      return copy
    })
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => UrlParams.fromInput(new URLSearchParams(text)),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return Effect.flatMap(this.arrayBuffer, (buffer) =>
      Effect.tryPromise({
        try: () => {
          const contentType = this.headers["content-type"]
          return new Response(buffer, contentType === undefined ? {} : { headers: { "content-type": contentType } })
            .formData()
        },
        catch: (cause) => this.decodeError(cause)
      }))
  }

  /**
   * The body pull by pull (no `Stream` stage in between): a download's body reads it this way on
   * this transport (`Download.streamBody`).
   */
  [Download.PullBody](): Download.PullBody {
    const exchange = this.exchange
    return {
      next: Effect.mapError(exchange.next(), (cause) => this.decodeError(cause)),
      cancel: () => exchange.cancel()
    }
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    const exchange = this.exchange
    return Stream.repeatEffectChunkOption(
      Effect.mapError(exchange.pull(), Option.map((cause) => this.decodeError(cause)))
    ).pipe(Stream.ensuring(Effect.sync(() => exchange.cancel())))
  }

  override toJSON(): unknown {
    return {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status,
      headers: headersShown(Inspectable.redact(this.headers), this.original.headers["authorization"]),
      remoteAddress: this.remoteAddress.toJSON()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the request
// ---------------------------------------------------------------------------------------------

type DispatchBody = string | Uint8Array | Readable | null

const convertBody = (
  request: HttpClientRequest.HttpClientRequest,
  names: RedactedNames,
  body: HttpBody.HttpBody,
  owner: Owner | undefined
): Effect.Effect<readonly [DispatchBody, string | undefined], HttpClientError.RequestError> => {
  switch (body._tag) {
    case "Empty":
      return Effect.succeed([null, undefined])
    case "Uint8Array":
      return Effect.succeed([body.body, undefined])
    case "Raw": {
      const raw = body.body
      if (typeof raw === "string" || raw instanceof Uint8Array || raw instanceof Readable) {
        return Effect.succeed([raw, undefined])
      }
      if (raw instanceof WebReadableStream) return Effect.succeed([Readable.fromWeb(raw), undefined])
      return Effect.fail(
        new HttpClientError.RequestError({
          request: redactRequest(request, names),
          reason: "Encode",
          description: "a raw body must be a string, a Uint8Array, a Node Readable or a ReadableStream"
        })
      )
    }
    case "FormData": {
      // the multipart encoding (and its boundary) is the platform's fetch implementation's
      const encoded = new Response(body.formData)
      return Effect.promise(() =>
        encoded.arrayBuffer().then((bytes) =>
          [new Uint8Array(bytes), encoded.headers.get("content-type") ?? undefined] as const
        )
      )
    }
    case "Stream":
      return Effect.map(
        Effect.runtime<never>(),
        (runtime) => [readableOf(body.stream, runtime, owner), undefined] as const
      )
  }
}

/**
 * What a stream body holds ahead of the socket, at most (plus the chunk that fills it): one 64 KiB
 * chunk. A deeper buffer keeps each chunk alive longer, past young collections: a 1 MiB buffer held
 * the peak JS heap + buffers of a 1 GiB `Stream` upload at 45.8-57.2 MiB, this one at 36.6-44.3
 * (alternated in one session, the same speed within the noise; docs/performance.md).
 */
const streamBodyBuffer = 64 * 1024

/**
 * A stream body as the `Readable` undici sends: one fiber runs the stream and pushes its bytes as
 * they come, and waits whenever the readable's buffer is full until undici reads again (undici stops
 * reading while the socket cannot take more), so no more than {@link streamBodyBuffer} is held ahead of
 * the socket. A chunk costs one push, not an async-iterator round trip (`Stream.toAsyncIterable` and
 * `Readable.from`: a promise and a fiber wake-up per chunk; measured 1.2-1.4× slower for 64 KiB chunks).
 * The buffer holds a chunk (Node's default for a byte stream, 16 KiB, is less than one): while the
 * socket is full the fiber fills it and then waits.
 * The fiber pulls the stream itself (its channel's `Channel.toPull`) rather than running it into a sink
 * (`Stream.runForEachChunk`: a sink channel piped to the stream's, each chunk a round trip through
 * the executor): issue 19, 64 MiB of fresh 64 KiB chunks from `Stream.fromIteratorSucceed(…, 1)`, JS
 * heap allocated per upload 12.7 MB with the sink, 10.4 MB pulled (the stream alone drained: 8.3 MB;
 * raw undici with a `Readable.from` the same generator: 1.9 MB).
 * Destroying the readable (the request aborted) interrupts the fiber; the stream failing destroys
 * the readable with its error.
 * Each read undici makes (it took what the buffer held), and the readable's end (undici took the
 * whole body), move the attempt's deadline on (`progress`, an SDK attempt's: see `Owner.progress`):
 * a clock read per read, nothing allocated.
 */
const readableOf = <E>(
  stream: Stream.Stream<Uint8Array, E>,
  runtime: Runtime.Runtime<never>,
  owner: Owner | undefined
): Readable => {
  const progress = owner?.progress
  let fiber: Fiber.RuntimeFiber<void, E> | undefined
  let started = false
  /** undici asked for more since the last push that filled the buffer. */
  let demand = false
  /** The fiber waiting for {@link demand}, resumed by the next read. */
  let waiting: ((effect: Effect.Effect<void>) => void) | undefined
  // no canceler (a chunk would cost an `Effect.onInterrupt`: see perCall.ts): a wait interrupted
  // leaves `waiting`, whose call then resumes nothing
  const awaitDemand = Effect.async<void>((resume) => {
    if (demand) resume(Effect.void)
    else waiting = resume
  })
  // a chunk's byte arrays pushed one at a time, each past a full buffer waiting for undici's next read:
  // a chunk of many (`Stream.fromIterable(buffers)`, `Stream.make(a, b)`) would otherwise sit in the
  // buffer whole, and undici's reads, which move the deadline on, stop until it drained (a steady
  // upload cut by `timeout`)
  const push = (chunk: Chunk.Chunk<Uint8Array>) => {
    let i = 0
    const rest: Effect.Effect<void> = Effect.suspend(() => {
      while (i < chunk.length) {
        if (!readable.push(Chunk.unsafeGet(chunk, i++))) {
          demand = false
          if (i < chunk.length) return Effect.flatMap(awaitDemand, () => rest)
        }
      }
      return demand ? Effect.void : awaitDemand
    })
    return rest
  }
  // a pull, its push, the next pull, until the stream's end (`Left`); the stream's channel pulled
  // directly (`Stream.toPull` wraps each pull: 1.17 against 0.95 µs, 5.0 against 4.4 KB allocated,
  // a pull of `Stream.fromIteratorSucceed(…, 1)`)
  const pump = Effect.scoped(Effect.flatMap(Channel.toPull(Stream.toChannel(stream)), (pull) => {
    const loop: Effect.Effect<void, E> = Effect.flatMap(
      pull,
      (next) => Either.isLeft(next) ? Effect.void : Effect.flatMap(push(next.right), () => loop)
    )
    return loop
  }))
  const readable: Readable = new Readable({
    highWaterMark: streamBodyBuffer,
    read() {
      demand = true
      progress?.took()
      if (!started) {
        started = true
        // started on the scheduler, not in this call: undici's first read (`read(0)`, to learn the
        // length of a body that has already ended) must not see a short stream pulled whole, or it
        // would declare a length where a stream is sent chunked
        const running = Runtime.runFork(runtime)(pump, { immediate: false })
        fiber = running
        // the attempt's end waits for it (see `Owner.bodyEnd`)
        if (owner !== undefined) owner.bodyFiber = running
        running.addObserver((exit) => {
          fiber = undefined
          if (Exit.isSuccess(exit)) readable.push(null)
          else if (!readable.destroyed) {
            const cause = Cause.squash(exit.cause)
            readable.destroy(cause instanceof Error ? cause : new Error(String(cause)))
          }
        })
        return
      }
      const resume = waiting
      waiting = undefined
      resume?.(Effect.void)
    },
    destroy(error, callback) {
      fiber?.unsafeInterruptAsFork(FiberId.none)
      callback(error)
    }
  })
  if (progress !== undefined) readable.once("end", () => progress.took())
  return readable
}

type RedactedNames = ReadonlyArray<string | RegExp>

/**
 * What an SDK attempt holds of the request it sends on this transport, instead of an
 * `AbortController` and a scope (`HttpClient.withScope`): the exchange, to cancel when the
 * attempt ends (a no-op once its body was read to the end) or when its deadline passes.
 *
 * @internal
 */
export class Owner {
  constructor(
    /** The fiber running the attempt: an effect run by several fibers at once sends one request value. */
    readonly fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly request: HttpClientRequest.HttpClientRequest
  ) {
    owners.set(fiber, this)
  }
  exchange: Exchange | undefined = undefined
  /**
   * The bound within which the body of a response is read whole before the response is handed
   * over (`undefined`: handed over at its head), as the SDK reads its JSON answers: the head and the
   * body then resume the attempt once, not twice.
   */
  prefetch: ((response: ResponseImpl) => number | undefined) | undefined = undefined
  /**
   * The attempt's progress through a streamed request body (`undefined`: a body in memory, or none):
   * each chunk undici takes of the body, and its end, move the attempt's deadline on.
   */
  progress: Timeout.Progress | undefined = undefined
  /**
   * The fiber running the request's `Stream` body (a file on disk, a caller's `Stream`), once undici
   * started reading it: it outlives the exchange when the server answered before the body was
   * read whole (a 413), and the attempt's end waits for it ({@link bodyEnd}).
   */
  bodyFiber: Fiber.RuntimeFiber<void, unknown> | undefined = undefined
  cancelled = false
  /** Whether the deadline cancelled the exchange before it was over. */
  timedOut = false
  /**
   * Whether undici took the request to write it (the exchange's `onConnect`, called as it writes):
   * an attempt that ended before that (waiting for a free connection at the `connections` cap, or
   * for its connection to be made) never sent a byte of it.
   */
  get sent(): boolean {
    return this.exchange?.abortFn !== undefined
  }
  /**
   * The run of the request's `Stream` body ended: interrupted if it still runs (the server answered
   * before reading it whole), and waited for, so that its file is closed and its finalizers have run
   * when the attempt returns. Run after {@link release}.
   */
  get bodyEnd(): Effect.Effect<void> {
    const fiber = this.bodyFiber
    return fiber === undefined ? Effect.void : Effect.asVoid(Fiber.interrupt(fiber))
  }
  /** The attempt ended: the exchange ends unless it is over (its body read to the end, or failed). */
  release(): void {
    this.cancelled = true
    this.detach()
    this.exchange?.cancel()
  }
  /**
   * The attempt ended with a response its caller keeps (a body streamed after the attempt): the
   * fiber no longer sends this request; the exchange is the caller's to {@link release}.
   */
  detach(): void {
    if (owners.get(this.fiber) === this) owners.delete(this.fiber)
  }
  /**
   * The deadline passed: the exchange fails now, unless it was already over. The owner stays
   * registered until the attempt ends, so a request not sent yet is refused when it is.
   */
  expire(): void {
    const exchange = this.exchange
    if (exchange !== undefined && (exchange.state === State.Done || exchange.state === State.Failed)) return
    this.timedOut = true
    this.cancelled = true
    exchange?.cancel()
  }
}

/**
 * The owner of the request an SDK attempt is sending, by the fiber running the attempt (set before
 * `execute`, taken by `send`, removed when the attempt ends). Not by request: the same effect value
 * (the same request) may be run by several fibers at once, each attempt owning its own exchange.
 */
const owners = new WeakMap<Fiber.RuntimeFiber<unknown, unknown>, Owner>()

/** The owner of this request on this fiber, if it has no exchange yet. */
const ownerOf = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  request: HttpClientRequest.HttpClientRequest
): Owner | undefined => {
  const owner = owners.get(fiber)
  return owner !== undefined && owner.request === request && owner.exchange === undefined ? owner : undefined
}

/** The clients this module made (they honour `owners`), with what they do with a request. */
const ownClients = new WeakMap<
  HttpClient.HttpClient,
  (
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>
>()

/** Whether the client is a `KernelTransport` (it honours `owners`). @internal */
export const isOwnable = (client: HttpClient.HttpClient): boolean => ownClients.has(client)

/**
 * The controllers `HttpClient.withScope` registers per request (the platform keeps them in this
 * global value; its own `HttpClient.make` reads them the same way): closing the scope aborts.
 */
const scopedRequests = globalValue(
  "@effect/platform/HttpClient/scopedRequests",
  () => new WeakMap<HttpClientRequest.HttpClientRequest, AbortController>()
)

/** A copy of the request whose sensitive headers read `<redacted>` (the request itself if none). */
const redactRequest = (
  request: HttpClientRequest.HttpClientRequest,
  names: RedactedNames
): HttpClientRequest.HttpClientRequest => {
  const redacted = Headers.redact(request.headers, names)
  let overrides: Record<string, string> | undefined
  for (const name in redacted) {
    if (Redacted.isRedacted(redacted[name])) (overrides ??= {})[name] = "<redacted>"
  }
  return overrides === undefined ? request : HttpClientRequest.setHeaders(request, overrides)
}

const transportError = (request: HttpClientRequest.HttpClientRequest, names: RedactedNames, cause: unknown) => {
  scrubCauses(cause, request.headers["authorization"])
  return new HttpClientError.RequestError({ request: redactRequest(request, names), reason: "Transport", cause })
}

const send = (
  dispatcher: Sender,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  headers: Headers.Headers,
  names: RedactedNames,
  options: Options,
  fiber: Fiber.RuntimeFiber<unknown, unknown>
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
  const dispatch = (body: DispatchBody, contentType: string | undefined) =>
    Effect.async<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((resume) => {
      const exchange = new Exchange(options.highWaterMark, options.abandonAfter)
      if (body instanceof Readable) exchange.body = body
      const finalHeaders = contentType === undefined ? headers : { ...headers, "content-type": contentType }
      // an SDK attempt that owns the request (see `Owner`), or `HttpClient.withScope`: the
      // request's scope closing aborts it (and its body)
      const owner = ownerOf(fiber, request)
      exchange.onHead = (ok, error) => {
        if (!ok) return resume(Effect.fail(transportError(request, names, error)))
        const response = new ResponseImpl(request, exchange, names)
        const limit = owner?.prefetch?.(response)
        if (limit === undefined) resume(Effect.succeed(response))
        else response.readWithin(limit, () => resume(Effect.succeed(response)))
      }
      const scoped = owner === undefined ? scopedRequests.get(request) : undefined
      if (owner !== undefined) {
        // its deadline passed before it could be sent: never sent
        if (owner.cancelled) {
          resume(Effect.fail(transportError(request, names, new Error("the deadline passed before it was sent"))))
          return
        }
        owner.exchange = exchange
      } else if (scoped !== undefined) {
        if (scoped.signal.aborted) exchange.cancelled = true
        else scoped.signal.addEventListener("abort", () => exchange.cancel(), { once: true })
      }
      try {
        dispatcher.dispatch({
          origin: url.origin,
          path: url.pathname + url.search,
          method: request.method,
          headers: finalHeaders,
          body
        }, exchange)
      } catch (cause) {
        exchange.onHead = undefined
        resume(Effect.fail(transportError(request, names, cause)))
      }
      if (owner !== undefined) {
        // released or expired while it was being dispatched
        if (owner.cancelled) exchange.cancel()
        // no canceler: the owner's release ends the exchange however the attempt ends, interrupted
        // included, and a head that comes after resumes nothing. (A canceler would cost an
        // `Effect.onInterrupt` per call, whose options object V8 may pretenure: see perCall.ts.)
        return
      }
      // interrupted before the headers (or the body it reads first): abort, the socket is destroyed
      // and freed
      return Effect.sync(() => {
        exchange.onHead = undefined
        exchange.stopCollecting()
      })
    })
  // no body, or bytes (the SDK's JSON): sent as they are, without converting them in an effect first
  const body = request.body
  return body._tag === "Empty"
    ? dispatch(null, undefined)
    : body._tag === "Uint8Array"
    ? dispatch(body.body, undefined)
    : Effect.flatMap(
      convertBody(request, names, body, ownerOf(fiber, request)),
      ([converted, contentType]) => dispatch(converted, contentType)
    )
}

/** @internal */
export interface Options {
  readonly highWaterMark: number
  readonly abandonAfter: number
}

const ATTR_HTTP_REQUEST_METHOD = "http.request.method"
const ATTR_HTTP_RESPONSE_STATUS_CODE = "http.response.status_code"
const ATTR_SERVER_ADDRESS = "server.address"
const ATTR_SERVER_PORT = "server.port"
const ATTR_URL_FULL = "url.full"
const ATTR_URL_PATH = "url.path"
const ATTR_URL_SCHEME = "url.scheme"
const ATTR_URL_QUERY = "url.query"

const redactedUrl = (url: URL): string => {
  if (url.username === "" && url.password === "") return url.toString()
  const copy = new URL(url.toString())
  copy.username = "REDACTED"
  copy.password = ""
  return copy.toString()
}

const traced = (
  dispatcher: Sender,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  redactedNames: RedactedNames,
  options: Options
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
  const nameGenerator = Context.get(fiber.currentContext, HttpClient.SpanNameGenerator)
  return Effect.useSpan(nameGenerator(request), { kind: "client", captureStackTrace: false }, (span) => {
    span.attribute(ATTR_HTTP_REQUEST_METHOD, request.method)
    span.attribute(ATTR_SERVER_ADDRESS, url.origin)
    if (url.port !== "") span.attribute(ATTR_SERVER_PORT, +url.port)
    span.attribute(ATTR_URL_FULL, redactedUrl(url))
    span.attribute(ATTR_URL_PATH, url.pathname)
    span.attribute(ATTR_URL_SCHEME, url.protocol.slice(0, -1))
    const query = url.search.slice(1)
    if (query !== "") span.attribute(ATTR_URL_QUERY, query)
    const redacted = Headers.redact(request.headers, redactedNames)
    for (const name in redacted) span.attribute(`http.request.header.${name}`, String(redacted[name]))
    const headers = fiber.getFiberRef(HttpClient.currentTracerPropagation)
      ? Headers.merge(request.headers, TraceContext.toHeaders(span))
      : request.headers
    return send(dispatcher, request, url, headers, redactedNames, options, fiber).pipe(
      Effect.withParentSpan(span),
      Effect.tap((response) => {
        span.attribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.status)
        const shown = headersShown(Headers.redact(response.headers, redactedNames), request.headers["authorization"])
        if (typeof shown === "object" && shown !== null) {
          for (const [name, value] of Object.entries(shown)) {
            span.attribute(`http.response.header.${name}`, String(value))
          }
        }
      })
    )
  })
}

/** @internal */
export const make = (dispatcher: Sender, options: Options): HttpClient.HttpClient => {
  const execute = executor(dispatcher, options)
  const client = HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
    (effect) => Effect.flatMap(effect, execute),
    Effect.succeed
  )
  ownClients.set(client, execute)
  return client
}

/**
 * What the client of {@link make} does with a request, taken directly by the SDK's attempts (no
 * `preprocess` / `postprocess` effects around it, which this client does not use).
 *
 * @internal
 */
export const executeOf = (
  client: HttpClient.HttpClient
): (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<
  HttpClientResponse.HttpClientResponse,
  HttpClientError.HttpClientError
> => ownClients.get(client) ?? client.execute

const executor = (dispatcher: Sender, options: Options) =>
(
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  Effect.withFiberRuntime<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((fiber) => {
    const names = fiber.getFiberRef(Headers.currentRedactedNames)
    const urlResult = UrlParams.makeUrl(request.url, request.urlParams, request.hash)
    if (urlResult._tag === "Left") {
      return Effect.fail(
        new HttpClientError.RequestError({
          request: redactRequest(request, names),
          reason: "InvalidUrl",
          cause: urlResult.left
        })
      )
    }
    const url = urlResult.right
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return Effect.fail(
        new HttpClientError.RequestError({
          request: redactRequest(request, names),
          reason: "InvalidUrl",
          description: `unsupported protocol ${url.protocol}`
        })
      )
    }
    const tracing = isTracing(fiber) &&
      !fiber.getFiberRef(HttpClient.currentTracerDisabledWhen)(request)
    return tracing
      ? traced(dispatcher, request, url, fiber, names, options)
      : send(dispatcher, request, url, request.headers, names, options, fiber)
  })

/** @internal */
export const optionsOf = (options: AgentOptions): Options => ({
  highWaterMark: Math.max(1, Math.floor(options.bodyBufferSize ?? defaultBodyBufferSize)),
  abandonAfter: options.abandonedBodyTimeout === undefined
    ? Duration.toMillis(defaultAbandonedBodyTimeout)
    : Duration.isFinite(Duration.decode(options.abandonedBodyTimeout))
    // within a Node timer's range: past it, the timer fires after 1 ms and releases every body
    ? Math.min(maxTimerMillis, Math.max(1, Duration.toMillis(options.abandonedBodyTimeout)))
    : 0
})

/**
 * TLS options every connection would fail with (a certificate or key that is not PEM, a key that
 * does not match its certificate, an unknown protocol version): a `ConfigError` naming `tls` when
 * the layer is built, instead of every call failing (and being retried) at connect. The message is
 * OpenSSL's, which never repeats the key.
 */
const checkTls = (tls: AgentOptions["tls"]): Effect.Effect<void, ConfigError.ConfigError> =>
  tls === undefined ? Effect.void : Effect.flatMap(
    Effect.promise(() => import("node:tls")),
    (nodeTls) =>
      Effect.try({
        try: () => {
          // the connector's options are TLS options or plain TCP ones (which it ignores here)
          const secure: Tls.SecureContextOptions = {}
          nodeTls.createSecureContext(Object.assign(secure, tls))
        },
        catch: (cause) =>
          invalid(
            "tls",
            `tls must be options a TLS connection can be made with; node:tls refused them: ${
              cause instanceof Error ? cause.message : String(cause)
            }`
          )
      })
  )

/** @internal */
export const scoped = (
  options: AgentOptions = {}
): Effect.Effect<HttpClient.HttpClient, ConfigError.ConfigError, Scope.Scope> =>
  Effect.flatMap(Effect.zipLeft(checkOptions(options), checkTls(options.tls)), (settings) =>
    Effect.map(
      Effect.acquireRelease(
        Effect.map(loadUndici, (undici) => makeAgent(undici, options, settings)),
        (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
      ),
      (agent) => make(agent, optionsOf(options))
    ))
