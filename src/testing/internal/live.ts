/**
 * What happens in the simulator, as it happens: a hub per source (a browser's events, a process's
 * output) that open-ended event streams subscribe to, and the `text/event-stream` frames of such a
 * stream with keep-alives on the simulator's clock. Every subscription ends with its stream (the
 * client gone, or the source ended) and leaves nothing behind; every buffer is bounded.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as SchemaAST from "effect/SchemaAST"
import * as Stream from "effect/Stream"
import * as values from "./values.js"

type Item<A> = { readonly _tag: "Event"; readonly value: A } | { readonly _tag: "End" }

/** A subscriber of a hub: how many events it holds not yet sent, and how it is told one (or the end). */
export interface Subscriber<A> {
  readonly held: () => number
  readonly tell: (item: Item<A>) => void
}

/** A source of events: its recent past (bounded), its live subscribers, and whether it has ended. */
export interface Hub<A> {
  /** How many events were ever published: the position of the next one. */
  published: number
  readonly backlog: Array<A>
  readonly subscribers: Set<Subscriber<A>>
  ended: boolean
  /** The bytes its backlog keeps, when it is weighed (a process's output: counted in the byte budget). */
  bytes: number
  /** How an event is weighed, and the tally (shared by a browser's processes) its backlog's bytes go into. */
  readonly weigh?: { readonly of: (value: A) => number; readonly tally: { bytes: number } } | undefined
}

/** How many past events a hub keeps for a stream that starts late. */
export const backlogLimit = 256

/**
 * How many events a slow subscriber may fall behind: one more, and its stream ends after those it
 * holds (a client resumes from there: telemetry with `Last-Event-ID`, from the backlog).
 */
export const subscriberBuffer = 1024

/**
 * How many streams may be open on one source at once: one more, and the oldest ends (as a dropped
 * connection would: cleanly, after what it holds), so that the newest is always served.
 */
export const subscriberLimit = 100

/** Subscribes to a hub: its oldest subscribers end first when it has {@link subscriberLimit} already. */
const join = <A>(hub: Hub<A>, subscriber: Subscriber<A>): void => {
  for (const oldest of hub.subscribers) {
    if (hub.subscribers.size < subscriberLimit) break
    hub.subscribers.delete(oldest)
    oldest.tell({ _tag: "End" })
  }
  hub.subscribers.add(subscriber)
}

/** How often an open stream says it is alive when nothing happens. */
export const keepAliveInterval: Duration.Duration = Duration.seconds(15)

export const make = <A>(weigh?: Hub<A>["weigh"]): Hub<A> => ({
  published: 0,
  backlog: [],
  subscribers: new Set(),
  ended: false,
  bytes: 0,
  weigh
})

/** What publishing `value` would free of a weighed hub's bytes: the event its full backlog drops. */
export const freedBy = <A>(hub: Hub<A>): number =>
  hub.weigh !== undefined && hub.backlog.length >= backlogLimit ? hub.weigh.of(hub.backlog[0]!) : 0

/** A weighed hub's source is gone for good: its bytes leave its tally. */
export const release = <A>(hub: Hub<A>): void => {
  if (hub.weigh !== undefined) hub.weigh.tally.bytes -= hub.bytes
  hub.bytes = 0
  hub.backlog.length = 0
}

/**
 * Tells every subscriber; kept in the (bounded) backlog. A subscriber already `subscriberBuffer`
 * events behind is not told: its stream ends after what it holds, rather than going on with a hole
 * in it (nothing would say so until its next event).
 */
export const publish = <A>(hub: Hub<A>, value: A): void => {
  if (hub.ended) return
  hub.published++
  hub.backlog.push(value)
  const weigh = hub.weigh
  if (weigh !== undefined) {
    const added = weigh.of(value)
    hub.bytes += added
    weigh.tally.bytes += added
  }
  if (hub.backlog.length > backlogLimit) {
    const dropped = hub.backlog.splice(0, hub.backlog.length - backlogLimit)
    if (weigh !== undefined) {
      for (const old of dropped) {
        const freed = weigh.of(old)
        hub.bytes -= freed
        weigh.tally.bytes -= freed
      }
    }
  }
  for (const subscriber of hub.subscribers) {
    if (subscriber.held() >= subscriberBuffer) {
      hub.subscribers.delete(subscriber)
      subscriber.tell({ _tag: "End" })
    } else subscriber.tell({ _tag: "Event", value })
  }
}

/** The source is gone: every stream on it ends, and new ones end after the backlog. */
export const end = <A>(hub: Hub<A>): void => {
  if (hub.ended) return
  hub.ended = true
  for (const subscriber of hub.subscribers) subscriber.tell({ _tag: "End" })
}

/**
 * The hub's events from position `from` (what the backlog still holds of them: a stream answered
 * now and read later misses nothing in between), then what happens, until the hub ends or the
 * stream is stopped; `follow: false` is the past alone.
 */
export const subscribe = <A>(
  hub: Hub<A>,
  options: { readonly from: number; readonly follow: boolean }
): Stream.Stream<A> =>
  Stream.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        // room for the events a subscriber may fall behind, and its end
        Effect.flatMap(Queue.bounded<Item<A>>(subscriberBuffer + 1), (queue) =>
          Effect.sync(() => {
            const subscriber: Subscriber<A> = {
              held: () => Option.getOrElse(queue.unsafeSize(), () => 0),
              tell: (item) => Queue.unsafeOffer(queue, item)
            }
            // the past and the subscription are taken at once: nothing is lost or told twice
            const following = options.follow && !hub.ended
            if (following) join(hub, subscriber)
            return { queue, subscriber, following, past: pastOf(hub, options.from) }
          })),
        ({ queue, subscriber }) =>
          Effect.zipRight(
            Effect.sync(() => hub.subscribers.delete(subscriber)),
            Queue.shutdown(queue)
          )
      ),
      ({ following, past, queue }) =>
        following
          ? Stream.concat(
            Stream.fromIterable(past),
            Stream.fromQueue(queue).pipe(
              Stream.takeWhile((item) => item._tag === "Event"),
              Stream.filterMap((item) => item._tag === "Event" ? Option.some(item.value) : Option.none())
            )
          )
          : Stream.fromIterable(past)
    )
  )

/** What the backlog still holds of the hub's events from position `from`. */
const pastOf = <A>(hub: Hub<A>, from: number): Array<A> =>
  hub.backlog.slice(Math.max(0, from - (hub.published - hub.backlog.length)))

/** Several events told for one of the hub's (a log file's lines, appended by one write). */
export class Several<B> {
  constructor(readonly values: ReadonlyArray<B>) {}
}

/** What a followed source's event is to a stream: an event of it, several, none, or its end (`"stop"`). */
export type Selected<B> = Option.Option<B> | Several<B> | "stop"

/**
 * A stream following a hub from position `from`: each event selected (told, skipped, or the end
 * of the stream), until the hub ends. Sent over HTTP by {@link follow} with the same events, ends and
 * limits, without a `Stream` (whose machinery an open stream kept, about 60 KiB of it, cost more
 * than all else the simulator does for the mixed load).
 */
export interface Following<S, B> {
  readonly hub: Hub<S>
  readonly from: number
  readonly select: (event: S) => Selected<B>
  /** Told before the hub's events (a log stream's opening lines). */
  readonly first?: ReadonlyArray<B> | undefined
  /** What happens at a time while the stream is open (a `sleep` that exits, a login flow that expires). */
  readonly deadline?: Deadline | undefined
  /** Called once when the stream is over, however it ends (a log file's follower counted out). */
  readonly onEnd?: (() => void) | undefined
}

/**
 * At `at` (epoch milliseconds, on the simulator's clock) `run` is done (with the time it runs at): it publishes
 * to the followed hub (or ends it), which the stream then tells. Run by the stream that waits for it, and
 * stopped with it. `next`, when given, says when it is due again after a run (a browser's idle time-out, moved
 * on by its activity), `undefined` when no more.
 */
export interface Deadline {
  readonly at: number
  readonly run: (now: number) => void
  readonly next?: (() => number | undefined) | undefined
}

/** Waits for a deadline on the simulator's clock (the `TestClock` in tests), then runs it, again while it is due again. */
export const awaitDeadline = (deadline: Deadline): Effect.Effect<void> => {
  const at = (when: number): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.zipRight(
        Effect.sleep(Math.max(0, when - now)),
        Effect.flatMap(Clock.currentTimeMillis, (ran) => {
          deadline.run(ran)
          const again = deadline.next?.()
          return again === undefined ? Effect.void : at(again)
        })
      ))
  return at(deadline.at)
}

/** The two deadlines (either may be none) as one: each run when it is due, the earliest first. */
export const earliest = (a: Deadline | undefined, b: Deadline | undefined): Deadline | undefined => {
  if (a === undefined || b === undefined) return a ?? b
  let atA: number | undefined = a.at
  let atB: number | undefined = b.at
  const first = (): number | undefined => atA === undefined ? atB : atB === undefined ? atA : Math.min(atA, atB)
  return {
    at: Math.min(a.at, b.at),
    run: (now) => {
      if (atA !== undefined && atA <= now) {
        a.run(now)
        atA = a.next?.()
      }
      if (atB !== undefined && atB <= now) {
        b.run(now)
        atB = b.next?.()
      }
    },
    next: first
  }
}

/** The events of a {@link Following} as a stream (the in-memory transport's). */
export const following = <S, B>(source: Following<S, B>): Stream.Stream<B> => {
  const followed = subscribe(source.hub, { from: source.from, follow: true }).pipe(
    Stream.map(source.select),
    Stream.takeWhile((selected): selected is Option.Option<B> | Several<B> => selected !== "stop"),
    Stream.mapConcat((selected) => selected instanceof Several ? selected.values : Option.toArray(selected))
  )
  const events = source.first === undefined ? followed : Stream.concat(Stream.fromIterable(source.first), followed)
  const timed = source.deadline === undefined
    ? events
    : Stream.merge(events, Stream.drain(Stream.fromEffect(awaitDeadline(source.deadline))), { haltStrategy: "left" })
  const onEnd = source.onEnd
  return onEnd === undefined ? timed : Stream.ensuring(timed, Effect.sync(onEnd))
}

/**
 * Follows a source as {@link following} does, telling `send` each selected event (with its index
 * among them) and `done` once the stream ends. `send` answers whether more may be sent now; when it
 * answers no, the events wait (they count as held: a subscriber too far behind is ended, as a queue's
 * would be) until `resume` is called. Returns how to stop following.
 */
export const follow = <S, B>(
  source: Following<S, B>,
  send: (event: B, index: number) => boolean,
  done: () => void
): { readonly resume: () => void; readonly stop: () => void } => {
  const { hub } = source
  const waiting: Array<Item<S>> = []
  let index = 0
  let ready = true
  let over = false
  const end = () => {
    if (over) return
    over = true
    hub.subscribers.delete(subscriber)
    source.onEnd?.()
  }
  const finish = () => {
    end()
    done()
  }
  // what is left of a `Several` when `send` answered no: sent first once it may go on (held meanwhile)
  let pending: ReadonlyArray<B> = []
  let pendingAt = 0
  const sendPending = () => {
    while (!over && ready && pendingAt < pending.length) ready = send(pending[pendingAt++]!, index++)
  }
  const take = (item: Item<S>): void => {
    if (item._tag === "End") return finish()
    const selected = source.select(item.value)
    if (selected === "stop") return finish()
    if (selected instanceof Several) {
      pending = selected.values
      pendingAt = 0
      sendPending()
    } else if (Option.isSome(selected)) ready = send(selected.value, index++)
  }
  // the first events, the past (not held: a queue's subscriber does not hold it either), then what was told since
  const first = source.first ?? []
  let firstAt = 0
  let past: ReadonlyArray<S> = []
  let pastAt = 0
  const drain = () => {
    while (!over && ready && firstAt < first.length) ready = send(first[firstAt++]!, index++)
    sendPending()
    while (!over && ready && pastAt < past.length) take({ _tag: "Event", value: past[pastAt++]! })
    while (!over && ready && waiting.length > 0) take(waiting.shift()!)
  }
  const subscriber: Subscriber<S> = {
    held: () => waiting.length + pending.length - pendingAt,
    tell: (item) => {
      if (over) return
      waiting.push(item)
      drain()
    }
  }
  const followed = !hub.ended
  if (followed) join(hub, subscriber)
  past = pastOf(hub, source.from)
  if (!followed) waiting.push({ _tag: "End" })
  drain()
  return {
    resume: () => {
      ready = true
      drain()
    },
    stop: end
  }
}

/** Frames told as {@link follow} tells events (each frame text). */
export type FollowFrames = (
  send: (frame: string) => boolean,
  done: () => void
) => { readonly resume: () => void; readonly stop: () => void }

/** The frames of a {@link Following}, with the ids {@link frames} gives them, told by {@link follow}. */
export const followFrames = <S, B>(
  ast: SchemaAST.AST,
  source: Following<S, B>,
  idOf: (event: B, index: number) => string = (_, index) => String(index + 1)
): FollowFrames =>
(send, done) => follow(source, (event, index) => send(frameOf(ast, event, idOf(event, index))), done)

/** From now on: the position a stream answered now starts at. */
export const now = <A>(hub: Hub<A>): number => hub.published

/** The `text/event-stream` frame of an event: its id, and its data filled to the schema. */
export const frameOf = (ast: SchemaAST.AST, event: unknown, id: string): string =>
  `id: ${id}\ndata: ${JSON.stringify(values.fill(ast, event))}\n\n`

/** The frames of events all known at once, as one text, with the ids {@link frames} gives them. */
export const framesText = <A>(
  ast: SchemaAST.AST,
  events: ReadonlyArray<A>,
  idOf: (event: A, index: number) => string = (_, index) => String(index + 1)
): string => events.map((event, index) => frameOf(ast, event, idOf(event, index))).join("")

/**
 * The keep-alive frame of an event stream of the schema at `now` (epoch milliseconds): an
 * `sse_heartbeat` event where the schema has one, or else an SSE comment.
 */
export const keepAlive = (ast: SchemaAST.AST): (now: number) => string => {
  const heartbeat = values.heartbeatOf(ast)
  return (now) =>
    heartbeat === undefined
      ? ": keep-alive\n\n"
      : `data: ${
        JSON.stringify(values.fill(ast, { ...Object(heartbeat), timestamp: new Date(now).toISOString() }))
      }\n\n`
}

/**
 * The frames of an open-ended event stream: each event (filled to the schema) with its id. The
 * keep-alives are the transport's: {@link withKeepAlives} in memory, a timer of the connection over
 * HTTP (a `Stream.merge` with a `Stream.tick` per stream cost about a millisecond of CPU each).
 */
export const frames = <A>(
  ast: SchemaAST.AST,
  events: Stream.Stream<A>,
  idOf: (event: A, index: number) => string = (_, index) => String(index + 1)
): Stream.Stream<string> =>
  Stream.map(Stream.zipWithIndex(events), ([event, index]) => frameOf(ast, event, idOf(event, index)))

/**
 * The frames with, while nothing happens, a keep-alive every {@link keepAliveInterval} on the
 * simulator's clock (the `TestClock` in tests).
 */
export const withKeepAlives = (frames: Stream.Stream<string>, keepAlive: (now: number) => string) =>
  Stream.merge(
    frames,
    Stream.tick(keepAliveInterval).pipe(
      Stream.drop(1),
      Stream.mapEffect(() => Clock.currentTimeMillis),
      Stream.map(keepAlive)
    ),
    { haltStrategy: "left" }
  )
