import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

/** The clock every Effect program runs on unless a test (`TestClock`) or the user replaced it. */
const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

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
    return Effect.uninterruptibleMask((restore) =>
      // the fiber succeeds with self's exit: a failure it ended with is ours, not an unhandled one
      Effect.flatMap(Effect.forkDaemon(Effect.exit(restore(self))), (fiber) =>
        restore(Effect.async<A, E | E1>((resume) => {
          let settled = false
          const timer = setTimeout(() => {
            if (settled) return
            settled = true
            resume(Effect.zipRight(Fiber.interrupt(fiber), Effect.fail(onTimeout())))
          }, millis)
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
  })
