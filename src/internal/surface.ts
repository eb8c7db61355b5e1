/**
 * The pattern every generated operation follows, written once (scripts/generate emits one line of
 * each per operation): the service type of an operation's Tag, its accessors, and the service a
 * layer provides for it. The service's call is built on its first call, so building a layer of
 * many operations (`Kernel.layer`: all of them) does not prepare the operations a program never
 * calls.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as KernelClient from "../KernelClient.js"
import type * as KernelError from "../KernelError.js"
import * as Call from "./call.js"
import type { Operation } from "./definition.js"
import * as Download from "./download.js"
import * as Pages from "./pages.js"

/**
 * The service of an operation that takes params: its one method, `Name`.
 *
 * @internal
 */
export type Service<Name extends string, P, A, E> = {
  readonly [K in Name]: (params: P) => Effect.Effect<A, E>
}

/**
 * The service of an operation that takes no input: its one method, `Name`.
 *
 * @internal
 */
export type ServiceNoInput<Name extends string, A, E> = {
  readonly [K in Name]: () => Effect.Effect<A, E>
}

/**
 * The accessor of an operation with params: the call of the service behind `tag`.
 *
 * @internal
 */
export const accessor = <I, const Name extends string, P, A, E>(
  tag: Context.Tag<I, Service<Name, P, A, E>>,
  name: Name
) =>
(params: P): Effect.Effect<A, E, I> => Effect.flatMap(tag, (service) => service[name](params))

/**
 * The accessor of an operation whose params are all optional: called without them, it sends `empty`.
 *
 * @internal
 */
export const accessorOptional = <I, const Name extends string, P, A, E>(
  tag: Context.Tag<I, Service<Name, P, A, E>>,
  name: Name,
  empty: NoInfer<P>
) =>
(params: P = empty): Effect.Effect<A, E, I> => Effect.flatMap(tag, (service) => service[name](params))

/**
 * The accessor of an operation that takes no input.
 *
 * @internal
 */
export const accessorNoInput = <I, const Name extends string, A, E>(
  tag: Context.Tag<I, ServiceNoInput<Name, A, E>>,
  name: Name
) =>
(): Effect.Effect<A, E, I> => Effect.flatMap(tag, (service) => service[name]())

/**
 * Every item of a paged operation, page after page, through the service behind `tag` (a service
 * swapped in with `Layer.succeed` is paged the same way): the paging rules are `Pages.follow`'s.
 *
 * @internal
 */
export const pagedAll = <I, const Name extends string, P, Item, E>(
  tag: Context.Tag<I, Service<Name, P, Call.Page<Item>, E>>,
  name: Name,
  definition: Operation
) =>
(params: P): Stream.Stream<Item, E | KernelError.DecodeError, I> =>
  Stream.unwrap(Effect.map(tag, (service) => Pages.follow(definition, (page: P) => service[name](page), params)))

/**
 * {@link pagedAll} of an operation whose params are all optional: called without them, from `empty`.
 *
 * @internal
 */
export const pagedAllOptional = <I, const Name extends string, P, Item, E>(
  tag: Context.Tag<I, Service<Name, P, Call.Page<Item>, E>>,
  name: Name,
  definition: Operation,
  empty: NoInfer<P>
) => {
  const all = pagedAll(tag, name, definition)
  return (params: P = empty): Stream.Stream<Item, E | KernelError.DecodeError, I> => all(params)
}

/**
 * The call of an operation on the client, prepared on its first call (not when the layer is built).
 *
 * @internal
 */
export const lazyCall = <const D extends Operation>(
  definition: D,
  client: KernelClient.Service
): (params: Call.Params<D>) => Effect.Effect<Call.Success<D>, Call.Failure<D>> =>
  onFirstCall(() => Call.make(definition), client)

/**
 * A call on the client whose preparation (`prepare`: its request builder, decoder and the client's
 * part of it) runs on its first call, not when the layer is built: building `Kernel.layer` then runs
 * no operation's code.
 *
 * @internal
 */
export const onFirstCall = <P, A>(
  prepare: () => (client: KernelClient.Service) => (params: P) => A,
  client: KernelClient.Service
): (params: P) => A => {
  let call: ((params: P) => A) | undefined
  return (params) => (call ??= prepare()(client))(params)
}

/**
 * A value made on its first use and kept: what a module would otherwise prepare when it is
 * imported (decoders, request builders), for programs that may never need it.
 *
 * @internal
 */
export const lazy = <A>(make: () => A): () => A => {
  let cell: { readonly value: A } | undefined
  return () => (cell ??= { value: make() }).value
}

/**
 * The `Stream` form of a download accessor (one whose success is the body as a `Stream`): the
 * request is sent when the stream is run, and a failure before the body (a status, the transport)
 * fails the stream, as `Replays.download` does.
 *
 * @internal
 */
export const streamed = <Args extends ReadonlyArray<unknown>, A, E1, E2, R>(
  accessor: (...args: Args) => Effect.Effect<Stream.Stream<A, E1>, E2, R>
) =>
(...args: Args): Stream.Stream<A, E1 | E2, R> => Download.unwrap(accessor(...args))

/**
 * The Tag key of an operation's service: `effect-kernel/<Name>`, its name with a capital (the
 * generator names each Tag so, and checks it).
 *
 * @internal
 */
export const tagKey = (name: string): string => `effect-kernel/${name.charAt(0).toUpperCase()}${name.slice(1)}`

/** The operation name of a service's Tag: its key's `<Name>`, without the capital. */
type TagName<S> = S extends { readonly Id: `effect-kernel/${infer Name}` } ? Uncapitalize<Name> : never

/** The service {@link make} builds for the operation `D`: its one method, the operation's call. */
type Built<D extends Operation> = {
  readonly [K in D["name"]]: (params: Call.Params<D>) => Effect.Effect<Call.Success<D>, Call.CallFailure<D>>
}

/** The services of `I` that none of the operations `D` implements with its own call. */
type Missing<I, D extends Operation> = I extends { readonly Type: infer Shape } ?
  Built<Extract<D, { readonly name: TagName<I> }>> extends Shape ? never : I :
  I

/**
 * An area's `make`: one context of a service per operation of `operations` but those named in
 * `handWritten` (whose services their area writes by hand), keyed by {@link tagKey}, each call
 * prepared on its first call ({@link lazyCall} on the shared client). The services `I` it is
 * declared to build are checked: each one's Tag must be an operation's, and that operation's call
 * its method (a Tag with no such operation is a type error naming it).
 *
 * @internal
 */
export const make = <I, const Ds extends ReadonlyArray<Operation>, const H extends string = never>(
  operations:
    & Ds
    & NoInfer<
      [Missing<I, Exclude<Ds[number], { readonly name: H }>>] extends [never] ? unknown : {
        readonly missing: Missing<I, Exclude<Ds[number], { readonly name: H }>>
      }
    >,
  handWritten: ReadonlyArray<H> = []
): Effect.Effect<Context.Context<I>, never, KernelClient.KernelClient> => {
  const built = operations.filter((definition) => !handWritten.some((name) => name === definition.name))
  return Effect.map(KernelClient.KernelClient, (client) =>
    Context.unsafeMake<I>(
      new Map(built.map((definition) => [tagKey(definition.name), { [definition.name]: lazyCall(definition, client) }]))
    ))
}
