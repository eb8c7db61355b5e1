/**
 * The declared types of the hand-written schema classes, written out: {@link ErrorClass} (the error
 * classes of `KernelError`, and `BrowserPools.NoBrowserAvailable`) and {@link ModelClass}
 * (`Computer.MousePosition`, `Computer.Ok`). `Schema.TaggedErrorClass` (the type `Schema.TaggedError` gives a
 * class) makes tsc resolve its `Struct.Type`, `Struct.Encoded` and constructor types once per class,
 * about 1,400 type instantiations each, in every program that names an operation's error union (a
 * `yield*`, a `catchTag`): 15,000 for one operation's. An `ErrorClass` has the same members: its
 * instance, encoded side and constructor argument are written out in types tsc reads once for all
 * classes, and the members a program rarely uses (`make`, `extend`, `transformOrFail`,
 * `transformOrFailFrom`) are `Schema.TaggedErrorClass`'s own, resolved only where they are used. Each
 * class's value is checked against its `ErrorClass` where it is made (`const XBase: ErrorClass<...> =
 * Schema.TaggedError...`), and test/error-classes.test.ts checks that each class is assignable to its
 * `Schema.TaggedErrorClass` and that its instance, encoded side and constructor argument are the ones
 * `Schema.TaggedError` gives. A user's declaration emit never names them: it reaches a class
 * through `typeof X` and writes out what it needs.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import type * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import type * as Types from "effect/Types"

type TaggedErrorClassOf<Self, Tag extends string, Fields extends Schema.Struct.Fields> = Schema.TaggedErrorClass<
  Self,
  Tag,
  { readonly _tag: Schema.tag<Tag> } & Fields
>

/**
 * A `Schema.TaggedErrorClass<Self, Tag, Fields>` whose instance is `YieldableError & { _tag } & Data`,
 * encoded side `{ _tag } & Encoded` (one object type) and constructor argument `Props`.
 *
 * @internal
 */
export interface ErrorClass<
  Self,
  Tag extends string,
  Fields extends Schema.Struct.Fields,
  Data,
  Encoded = Data,
  Props = Data
> extends Schema.Schema<Self, Types.Simplify<{ readonly _tag: Tag } & Encoded>> {
  new(props: Props, options?: Schema.MakeOptions): Cause.YieldableError & { readonly _tag: Tag } & Data
  readonly ast: AST.Transformation
  annotations(
    annotations: Schema.Annotations.Schema<Self>
  ): Schema.SchemaClass<Self, Types.Simplify<{ readonly _tag: Tag } & Encoded>>
  readonly _tag: Tag
  readonly identifier: string
  readonly fields: Readonly<Types.Simplify<{ readonly _tag: Schema.tag<Tag> } & Fields>>
  /** `X.make(props)` is `new X(props)` (`Schema.TaggedErrorClass`'s `make`). */
  readonly make: TaggedErrorClassOf<Self, Tag, Fields>["make"]
  /**
   * A class with this one's fields and more (`Schema.TaggedErrorClass`'s `extend`):
   * `class B extends A.extend<B>("B")({ more: Schema.String }) {}`.
   */
  readonly extend: TaggedErrorClassOf<Self, Tag, Fields>["extend"]
  /**
   * A class decoded from this one's type by a transformation that may fail
   * (`Schema.TaggedErrorClass`'s `transformOrFail`).
   */
  readonly transformOrFail: TaggedErrorClassOf<Self, Tag, Fields>["transformOrFail"]
  /**
   * A class decoded from this one's encoded side by a transformation that may fail
   * (`Schema.TaggedErrorClass`'s `transformOrFailFrom`).
   */
  readonly transformOrFailFrom: TaggedErrorClassOf<Self, Tag, Fields>["transformOrFailFrom"]
}

type ClassOf<Self, Fields extends Schema.Struct.Fields> = Schema.Class<
  Self,
  Fields,
  Schema.Struct.Encoded<Fields>,
  Schema.Struct.Context<Fields>,
  Schema.Struct.Constructor<Fields>,
  // what `Schema.Class<Self>(identifier)(fields)` gives: no inherited members, no prototype
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  {},
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  {}
>

/**
 * The declared type of a `Schema.Class` (a model such as `Computer.MousePosition`), written out as
 * {@link ErrorClass} is: instance `Data`, encoded side `Encoded`, constructor argument `Data`.
 *
 * @internal
 */
export interface ModelClass<Self, Fields extends Schema.Struct.Fields, Data, Encoded = Data>
  extends Schema.Schema<Self, Encoded>
{
  new(props: Data, options?: Schema.MakeOptions): Data
  readonly ast: AST.Transformation
  annotations(annotations: Schema.Annotations.Schema<Self>): Schema.SchemaClass<Self, Encoded>
  readonly identifier: string
  readonly fields: { readonly [K in keyof Fields]: Fields[K] }
  /** `X.make(props)` is `new X(props)` (`Schema.Class`'s `make`). */
  readonly make: ClassOf<Self, Fields>["make"]
  /**
   * A class with this one's fields and more (`Schema.Class`'s `extend`):
   * `class B extends A.extend<B>("B")({ more: Schema.String }) {}`.
   */
  readonly extend: ClassOf<Self, Fields>["extend"]
  /**
   * A class decoded from this one's type by a transformation that may fail
   * (`Schema.Class`'s `transformOrFail`).
   */
  readonly transformOrFail: ClassOf<Self, Fields>["transformOrFail"]
  /**
   * A class decoded from this one's encoded side by a transformation that may fail
   * (`Schema.Class`'s `transformOrFailFrom`).
   */
  readonly transformOrFailFrom: ClassOf<Self, Fields>["transformOrFailFrom"]
}

/**
 * The JSON of an error whose message is computed (a getter over its fields: `KernelError.Timeout`,
 * `KernelError.ReplayNotReady`, `BrowserPools.NoBrowserAvailable`): its fields' JSON, which effect's
 * `Data.Error#toJSON` makes of the constructor's fields alone, with the message added, so that an
 * error logged as JSON still says what went wrong.
 *
 * @internal
 */
export const withMessage = (json: unknown, message: string): unknown =>
  typeof json === "object" && json !== null ? { ...json, message } : json
