/**
 * Every item of a paged operation (an answer of kind `page`) as a stream, built from ANY function
 * that asks for one page: the one-page call of `Call.make`, or the one-page method of the
 * operation's service (what the generated `<accessor>All` accessors use, so a service swapped in
 * with `Layer.succeed` is paged the same way). The paging rules live here, once.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as KernelError from "../KernelError.js"
import type { Page } from "./call.js"
import type { Operation } from "./definition.js"
import { located } from "./execute.js"
import { encodeSegment } from "./path.js"

/** The status of the operation's paged answer (200 when it documents none). */
const pageStatus = (definition: Operation): number => {
  for (const [code, answer] of Object.entries(definition.answers)) {
    if (answer.kind === "page") return Number(code)
  }
  return 200
}

/** The path of the request the params make (each `{field}` as its percent-encoded value). */
const pathOf = (definition: Operation, params: object): string =>
  definition.path.replace(/\{([^}]+)\}/g, (whole, field: string) => {
    const encoded = encodeSegment(field, Reflect.get(params, field))
    return typeof encoded === "string" ? encoded : whole
  })

/**
 * The items of every page, in order: the first page is asked with the params as given (their
 * `offset`, or none); each next one with the definition's `offset` query parameter set to the
 * previous page's `nextOffset` (`X-Next-Offset`), as given, until a page says `hasMore: false`
 * (`X-Has-More: false`). A page's items are emitted before the next page is asked for, and each
 * run of the stream starts over from the params.
 *
 * A page that says more follow but gives no next offset, or a next offset that does not move past
 * the offset of the page it answers (the pages would repeat, or be skipped back to) or past its
 * items (`offset + items.length`: some of them would come twice), or an empty page that says more
 * follow (empty pages could follow forever), fails the
 * stream with `DecodeError` (the operation's method and path, the page's status) after that page's
 * items: never an endless stream, never an item twice.
 *
 * @internal
 */
export function follow<P, A, E, R>(
  definition: Operation,
  page: (params: P) => Effect.Effect<Page<A>, E, R>,
  params: P
): Stream.Stream<A, E | KernelError.DecodeError, R>
// the next page's params are the caller's with the offset set: a value of the params' type that
// only run time knows, hence an overload over the untyped implementation rather than a cast
export function follow<E, R>(
  definition: Operation,
  page: (params: unknown) => Effect.Effect<Page<unknown>, E, R>,
  params: unknown
): Stream.Stream<unknown, E | KernelError.DecodeError, R> {
  return Stream.suspend(() => {
    const offset = definition.parameters.find((p) => p.in === "query" && p.name === "offset")
    const base: object = typeof params === "object" && params !== null ? params : {}
    const given: unknown = offset === undefined ? undefined : Reflect.get(base, offset.field)
    type State =
      | { readonly _tag: "Next"; readonly params: unknown; readonly offset: number }
      | { readonly _tag: "Fail"; readonly error: KernelError.DecodeError }
    const refuse = (message: string): State => ({
      _tag: "Fail",
      // named by its call, as every error of an operation is
      error: located(
        new KernelError.DecodeError({
          method: definition.method,
          path: pathOf(definition, base),
          status: pageStatus(definition),
          message: `${definition.name}: ${message}`
        }),
        definition.name
      )
    })
    const step = (
      state: State
    ): Effect.Effect<readonly [Chunk.Chunk<unknown>, Option.Option<State>], E | KernelError.DecodeError, R> => {
      if (state._tag === "Fail") return Effect.fail(state.error)
      return Effect.map(page(state.params), (value) => {
        const items = Chunk.fromIterable(value.items)
        if (!value.hasMore) return [items, Option.none()] as const
        const next = value.nextOffset
        const nextState: State = offset === undefined
          ? refuse("X-Has-More: true, but the operation has no offset parameter to ask for the next page")
          : next === undefined
          ? refuse("X-Has-More: true without an X-Next-Offset")
          // an empty page gives no progress to check: more empty pages could follow forever
          : items.length === 0
          ? refuse("X-Has-More: true on an empty page (the pages would never end)")
          : next <= state.offset
          ? refuse(`X-Next-Offset ${next} does not move past the offset ${state.offset} (the pages would repeat)`)
          : next < state.offset + items.length
          ? refuse(
            `X-Next-Offset ${next} falls inside the page just answered (offset ${state.offset}, ${items.length} items): its items would repeat`
          )
          // the params are the caller's object: the next page's are a copy with the offset set
          : { _tag: "Next", params: { ...base, [offset.field]: next }, offset: next }
        return [items, Option.some(nextState)] as const
      })
    }
    return Stream.paginateChunkEffect<State, unknown, E | KernelError.DecodeError, R>(
      { _tag: "Next", params, offset: typeof given === "number" ? given : 0 },
      step
    )
  })
}
