/**
 * An accessor of the SDK called by its module and name (as the generated examples name them), its
 * stream (a download's or an event stream's) run to its end: how the tests that go through every
 * operation call each one.
 */
import { Effect, type Layer, Stream } from "effect"
import * as Sdk from "effect-kernel"
import type { mockLayer } from "./mock.js"

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u && !Effect.isEffect(u)

/** What `Kernel.layer` provides (the services of every accessor). */
export type Provided = Layer.Layer.Success<ReturnType<typeof mockLayer>["layer"]>

/** The accessor's call, its stream (a download's or an event stream's) run to its end. */
export const callOf = (
  module: string,
  accessor: string,
  params: unknown,
  options?: unknown
): Effect.Effect<unknown, unknown, Provided> => {
  const area: unknown = Reflect.get(Sdk, module)
  const fn: unknown = typeof area === "object" && area !== null ? Reflect.get(area, accessor) : undefined
  if (typeof fn !== "function") throw new Error(`no accessor ${module}.${accessor}`)
  return Effect.suspend(() => {
    const result: unknown = options === undefined ? fn(params) : fn(params, options)
    if (isStream(result)) return Stream.runDrain(result)
    if (!Effect.isEffect(result)) return Effect.die(`${module}.${accessor}: neither an Effect nor a Stream`)
    // the accessors need the services of Kernel.layer
    return Effect.flatMap(
      result as Effect.Effect<unknown, unknown, Provided>,
      (value) => isStream(value) ? Stream.runDrain(value) : Effect.void
    )
  })
}
