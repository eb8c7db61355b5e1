import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

/**
 * The clock every Effect program runs on unless a test (`TestClock`) or the user replaced it.
 *
 * @internal
 */
export const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/** The longest delay `setTimeout` honours; a longer one would fire at once. */
const maxTimerMillis = 2_147_483_647

/**
 * The delay, in milliseconds, for a deadline the live clock's own timer can hold; `undefined` on
 * any other clock (`TestClock`, a user's clock) or for a duration no timer can hold.
 *
 * @internal
 */
export const timerMillis = (clock: Clock.Clock, duration: Duration.Duration): number | undefined => {
  const millis = Duration.toMillis(duration)
  return clock === liveClock && millis <= maxTimerMillis ? millis : undefined
}

/**
 * The progress of an attempt's streamed request body (a file on disk, a `Stream`, a multipart form
 * holding either): when the transport last took a chunk of it, on the attempt's clock. Its deadline
 * ({@link timeoutFailFlowing}) is that moment plus the attempt's `timeout`, so an upload that keeps
 * flowing is never cut; once the whole body is taken, the last chunk's moment starts the wait for the
 * answer. A chunk costs one read of the clock (`Date.now()` on the live clock), nothing allocated.
 *
 * @internal
 */
export class Progress {
  /** When the transport last took a chunk of the body (at first: when the attempt started), in milliseconds. */
  at: number
  constructor(readonly clock: Clock.Clock) {
    this.at = clock.unsafeCurrentTimeMillis()
  }
  /** The transport took a chunk of the body (or the end of it): the deadline is pushed back. */
  took(): void {
    this.at = this.clock.unsafeCurrentTimeMillis()
  }
  /** How long is left, in milliseconds, before a deadline of `millis` after the last chunk taken. */
  left(millis: number): number {
    return this.at + millis - this.clock.unsafeCurrentTimeMillis()
  }
}

/**
 * `Effect.timeoutFail(self, { duration, onTimeout })`, at a third of its cost on the live clock.
 *
 * `Effect.timeoutFail` races two forked fibers, `self` and a sleeping one, and merges the
 * winner's fiber refs back. Here `self` runs in one forked fiber and the deadline is the live
 * clock's own timer (`setTimeout`, which is what `Clock.sleep` schedules on it): when it fires,
 * the fiber is interrupted (its finalizers run, the request is aborted) and the attempt fails
 * with `onTimeout()`. The caller being interrupted interrupts the fiber too, so nothing is left
 * running. On any other clock (`TestClock`, a user's clock) or for a duration no timer can hold,
 * this is `Effect.timeoutFail` itself, so time-outs still follow `TestClock.adjust`. Unlike
 * `Effect.timeoutFail`, fiber refs that `self` sets are not merged back into the caller; an
 * attempt (send the request, read the body) sets none the caller reads.
 *
 * @internal
 */
export const timeoutFail = <A, E, R, E1>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  onTimeout: () => E1
): Effect.Effect<A, E | E1, R> =>
  Effect.clockWith((clock) => {
    const millis = timerMillis(clock, duration)
    if (millis === undefined) return Effect.timeoutFail(self, { duration, onTimeout })
    return timed(self, millis, onTimeout, undefined)
  })

/**
 * {@link timeoutFail} for an attempt whose request body is streamed: `self` is given the attempt's
 * {@link Progress}, which its body's run moves on at each chunk the transport takes. The deadline is
 * `duration` after the last chunk taken (at first: after the attempt's start), so `duration` bounds
 * a silence of the upload, and, once the whole body is taken, the wait for the answer. On the live
 * clock the timer, when it fires early because chunks were taken meanwhile, is set again for what is
 * left; on another clock (`TestClock`) the deadline sleeps on that clock the same way.
 *
 * @internal
 */
export const timeoutFailFlowing = <A, E, R, E1>(
  self: (progress: Progress) => Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  onTimeout: () => E1
): Effect.Effect<A, E | E1, R> =>
  Effect.clockWith((clock) => {
    const progress = new Progress(clock)
    const millis = timerMillis(clock, duration)
    if (millis !== undefined) return timed(self(progress), millis, onTimeout, progress)
    if (!Duration.isFinite(duration)) return self(progress)
    const total = Duration.toMillis(duration)
    const deadline: Effect.Effect<never, E1> = Effect.suspend(() => {
      const left = progress.left(total)
      return left > 0 ? Effect.zipRight(Clock.sleep(Duration.millis(left)), deadline) : Effect.failSync(onTimeout)
    })
    return Effect.raceFirst(self(progress), deadline)
  })

/**
 * `self` in a forked fiber, within `millis` on the live clock's timer (after the last chunk of
 * `progress` taken, when there is one): see {@link timeoutFail}.
 */
const timed = <A, E, R, E1>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => E1,
  progress: Progress | undefined
): Effect.Effect<A, E | E1, R> =>
  Effect.uninterruptibleMask((restore) =>
    // the fiber succeeds with self's exit: a failure it ended with is ours, not an unhandled one
    Effect.flatMap(Effect.forkDaemon(Effect.exit(restore(self))), (fiber) =>
      restore(Effect.async<A, E | E1>((resume) => {
        let settled = false
        const expire = () => {
          if (settled) return
          // chunks of the body were taken meanwhile: the deadline moved
          const left = progress === undefined ? 0 : progress.left(millis)
          if (left > 0) {
            timer = setTimeout(expire, left)
            return
          }
          settled = true
          resume(Effect.zipRight(Fiber.interrupt(fiber), Effect.fail(onTimeout())))
        }
        let timer = setTimeout(expire, millis)
        // called at once if the fiber is already done
        fiber.addObserver((exit) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(Exit.flatten(exit))
        })
        return Effect.sync(() => {
          settled = true
          clearTimeout(timer)
        })
      })).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber))))
  )
