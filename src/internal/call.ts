/**
 * PLACEHOLDER (replaced by the runtime branch): the call pipeline's signatures, so that the
 * generated modules type-check before the runtime exists. `make` throws.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as KernelClient from "../KernelClient.js"
import type * as KernelError from "../KernelError.js"
import type { Answer, Operation, Parameter } from "./definition.js"

/** @internal */
export interface Page<Item> {
  readonly items: ReadonlyArray<Item>
  readonly hasMore: boolean
  readonly nextOffset: number | undefined
}

type Simplify<A> = { [K in keyof A]: A[K] } & {}

type ParametersOf<P extends ReadonlyArray<Parameter>> =
  & { readonly [X in P[number] as X["required"] extends true ? X["field"] : never]: Schema.Schema.Type<X["schema"]> }
  & { readonly [X in P[number] as X["required"] extends true ? never : X["field"]]?: Schema.Schema.Type<X["schema"]> }

type BodyOf<B> = B extends
  { readonly kind: "json" | "multipart"; readonly schema: infer S extends Schema.Schema.AnyNoContext }
  ? Schema.Schema.Type<S>
  : B extends { readonly kind: "bytes"; readonly field: infer F extends string } ? { readonly [K in F]: Uint8Array }
  : unknown

type Fields<D extends Operation> = ParametersOf<D["parameters"]> & BodyOf<D["body"]>

/** The input of an operation: `void` when it has none. @internal */
export type Params<D extends Operation> = keyof Fields<D> extends never ? void : Simplify<Fields<D>>

type ValueOf<A extends Answer> = A extends
  { readonly kind: "json"; readonly schema: infer S extends Schema.Schema.AnyNoContext } ? Schema.Schema.Type<S>
  : A extends { readonly kind: "page"; readonly schema: infer S extends Schema.Schema.AnyNoContext } ?
    Page<Schema.Schema.Type<S>>
  : A extends { readonly kind: "sse"; readonly schema: infer S extends Schema.Schema.AnyNoContext }
    ? Stream.Stream<Schema.Schema.Type<S>, KernelError.KernelError>
  : A extends { readonly kind: "bytes" } ? Stream.Stream<Uint8Array, KernelError.KernelError>
  : void

interface Reasons {
  readonly 200: "Ok"
  readonly 201: "Created"
  readonly 202: "Accepted"
  readonly 204: "NoContent"
}

type IsUnion<A, B = A> = A extends unknown ? ([B] extends [A] ? false : true) : never

type Statuses<D extends Operation> = keyof D["answers"] & number

/** What an operation succeeds with. @internal */
export type Success<D extends Operation> = true extends IsUnion<Statuses<D>> ? {
    [K in Statuses<D>]: {
      readonly _tag: K extends keyof Reasons ? Reasons[K] : "Ok"
      readonly value: ValueOf<D["answers"][K]>
    }
  }[Statuses<D>]
  : ValueOf<D["answers"][Statuses<D>]>

/** What an operation fails with. @internal */
export type Failure<D extends Operation> =
  | InstanceType<D["errors"][number]>
  | KernelError.CommonError
  | KernelError.DecodeError
  | KernelError.InvalidInput

/** @internal */
export const make = <const D extends Operation>(
  _definition: D
): (client: KernelClient.Service) => (params: Params<D>) => Effect.Effect<Success<D>, Failure<D>> => {
  throw new Error("not implemented")
}
