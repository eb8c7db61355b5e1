/**
 * Objects made once per call on the hot path, as class instances rather than object literals.
 *
 * V8 decides per object or array literal (its "allocation site") whether the objects it makes are
 * born in the old generation ("pretenuring"): a literal most of whose objects outlived a young
 * collection is tenured from then on. An object born old that points to young ones keeps them
 * alive through every young collection until the next full one, so their literals' objects outlive
 * young collections too, and are tenured in turn: with the call path's literals tenured, a process
 * spent about 50 µs of CPU per call against about 36 µs without pretenuring (docs/performance.md,
 * "The slow mode's allocation sites"). Objects made by `new` of a class, or by a builtin such as `Array.of()`, have no
 * allocation site and are never pretenured, so the per-call options of the pipeline's combinators
 * are made here.
 *
 * @internal
 */
import * as Effect from "effect/Effect"

class Handlers<F, S> {
  constructor(readonly onFailure: F, readonly onSuccess: S) {}
}

/** `Effect.matchEffect` with its two handlers (a per-call options object that V8 never pretenures). */
export const matchEffect = <A, E, R, A2, E2, R2, A3, E3, R3>(
  self: Effect.Effect<A, E, R>,
  onFailure: (error: E) => Effect.Effect<A2, E2, R2>,
  onSuccess: (value: A) => Effect.Effect<A3, E3, R3>
): Effect.Effect<A2 | A3, E2 | E3, R | R2 | R3> => Effect.matchEffect(self, new Handlers(onFailure, onSuccess))

/** An empty array for a per-call buffer (`[]` would be an allocation site V8 may pretenure). */
export const emptyArray = <A>(): Array<A> => Array.of<A>()
