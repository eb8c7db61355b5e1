/**
 * `n` runs of an effect, `inFlight` at a time, the way the raw clients' `pooled` runs its promises:
 * `inFlight` fibers, each running the effect again as soon as its last run ended, its value dropped.
 *
 * Not `Effect.forEach(items, f, { concurrency, discard: true })`: in effect 3 that keeps the `Exit` of
 * every run (its value included) until the last run ends (`forEachConcurrentDiscard`'s `results`), so a
 * round kept every answer it decoded alive to its end (5,000 calls a round here), promoted by the young collector,
 * and the `Redacted` registry (a `WeakMap`) grew with their secrets: measured on `Browsers.list` (a page
 * of 5 browsers, 15 `Redacted`), 6.7 KiB promoted per call against 0.9 KiB for raw undici, and 12,900
 * calls/s against 16,900 with this loop. The raw clients never kept their answers; neither does this.
 */
import { Effect } from "effect"

export const inFlight = <A, E, R>(
  call: Effect.Effect<A, E, R>,
  n: number,
  inFlight: number
): Effect.Effect<void, E, R> =>
  Effect.suspend(() => {
    let next = 0
    const worker = Effect.whileLoop({ while: () => next++ < n, body: () => call, step: () => {} })
    return Effect.forEach(Array.from({ length: Math.min(n, inFlight) }), () => worker, {
      concurrency: "unbounded",
      discard: true
    })
  })
