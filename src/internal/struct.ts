/**
 * The helpers the generated schemas (scripts/generate) are written with: each named schema is
 * built on first use, not when its module is imported.
 *
 * Constructing a schema costs: its AST, one class per `Schema.Struct` / `annotations`, its fields'
 * property signatures, its filters. The SDK has 167 named schemas and importing the whole package
 * built every one of them (a profile put ~35 ms of the package's cold start there), when a program
 * uses a few. Here a named schema is a small class whose members (`ast`, `fields`, `members`,
 * `annotations`, `make`, `pipe`, ...) build the real schema the first time one of them is read, and
 * answer from it after: it is a schema for every `Schema` function (they read `ast`), and it has the
 * type and the members of the schema it stands for (`Schema.Struct<Fields>`, `Schema.Union<Members>`,
 * `Schema.Array$<Value>`).
 *
 * @internal
 */
import { NodeInspectSymbol } from "effect/Inspectable"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"

/**
 * `make()` the first time, then the same value. For the generated schemas' shared field values and
 * field groups (`optionalString()`), built when the first schema that uses one is.
 *
 * @internal
 */
export const once = /* @__NO_SIDE_EFFECTS__ */ <A>(make: () => A): () => A => {
  let built: { readonly value: A } | undefined
  return () => (built ??= { value: make() }).value
}

const variance = {
  _A: <A>(a: A): A => a,
  _I: <I>(i: I): I => i,
  _R: (r: never): never => r
}

/** The members every schema has, answered by the schema `schema()` builds on first use. */
const lazySchema = <S extends Schema.Schema.All>(schema: () => S) =>
  class {
    static get [Schema.TypeId]() {
      return variance
    }
    static get ast(): AST.AST {
      const ast = schema().ast
      // from now on a plain property of the class that was asked (a getter call per read showed in
      // the simulator's profile under load: its checks read `ast` on every request)
      Object.defineProperty(this, "ast", { value: ast, configurable: true })
      return ast
    }
    static pipe(...fns: ReadonlyArray<(a: unknown) => unknown>): unknown {
      return fns.reduce<unknown>((a, f) => f(a), this)
    }
    static toString() {
      return String(schema())
    }
    /** `util.inspect` / `console.log` show the schema it stands for (its class and members). */
    static [NodeInspectSymbol]() {
      return schema()
    }
    declare static readonly Type: Schema.Schema.Type<S>
    declare static readonly Encoded: Schema.Schema.Encoded<S>
    declare static readonly Context: Schema.Schema.Context<S>
    declare readonly [Schema.TypeId]: Schema.Schema.Variance<
      Schema.Schema.Type<S>,
      Schema.Schema.Encoded<S>,
      Schema.Schema.Context<S>
    >[Schema.TypeId]
  }

/**
 * A named struct, built on first use: `Schema.Struct(fields()).annotations({ identifier })` (parse
 * errors and docs say `Browser`, not the whole struct). The same type and members as that struct.
 *
 * @internal
 */
export const struct = /* @__NO_SIDE_EFFECTS__ */ <Fields extends Schema.Struct.Fields>(
  identifier: string,
  fields: () => Fields
): Schema.Struct<Fields> => {
  const schema = once(() => Schema.Struct(fields()).annotations({ identifier }))
  return class extends lazySchema(schema) {
    static get fields() {
      return schema().fields
    }
    static get records() {
      return schema().records
    }
    static annotations(annotations: Schema.Annotations.Schema<Schema.Simplify<Schema.Struct.Type<Fields>>>) {
      return schema().annotations(annotations)
    }
    static make(...args: Parameters<Schema.Struct<Fields>["make"]>) {
      return schema().make(...args)
    }
    static pick<Keys extends ReadonlyArray<keyof Fields>>(...keys: Keys) {
      return schema().pick(...keys)
    }
    static omit<Keys extends ReadonlyArray<keyof Fields>>(...keys: Keys) {
      return schema().omit(...keys)
    }
  }
}

/**
 * A named union, built on first use (`union(() => Schema.Union(...).annotations(...))`). The same
 * type and members as that union.
 *
 * @internal
 */
export const union = /* @__NO_SIDE_EFFECTS__ */ <Members extends ReadonlyArray<Schema.Schema.All>>(
  make: () => Schema.Union<Members>
): Schema.Union<Members> => {
  const schema = once(make)
  return class extends lazySchema(schema) {
    static get members() {
      return schema().members
    }
    static annotations(annotations: Schema.Annotations.Schema<Schema.Schema.Type<Members[number]>>) {
      return schema().annotations(annotations)
    }
  }
}

/**
 * A named union of objects that differ only in the fields they require (the document's `oneOf` of
 * `required` lists: "provide either `id` or `name`"), built on first use. Decoded as the union, so an
 * answer is read as it comes. Encoded only when exactly one member's required fields are all given,
 * as `oneOf` says: a value with both `id` and `name` fits both members, and the service refuses it, so
 * it is refused before it is sent (the union alone takes its first member and sends both). Its
 * type is effect's (`Schema.transformOrFail`), so that a program's declarations can name it.
 *
 * @internal
 */
export const exactlyOne = /* @__NO_SIDE_EFFECTS__ */ <Members extends ReadonlyArray<Schema.Schema.AnyNoContext>>(
  required: ReadonlyArray<ReadonlyArray<string>>,
  make: () => Schema.Union<Members>
): Schema.transformOrFail<Schema.Union<Members>, Schema.SchemaClass<Schema.Schema.Type<Members[number]>>> => {
  const message = `exactly one of ${required.map((fields) => fields.join(" with ")).join(" or ")}`
  const given = (value: unknown) =>
    required.filter((fields) =>
      fields.every((field) => typeof value === "object" && value !== null && Reflect.get(value, field) !== undefined)
    ).length
  const schema = once(() => {
    const union = make()
    const type: Schema.SchemaClass<Schema.Schema.Type<Members[number]>> = Schema.typeSchema(union)
    return Schema.transformOrFail<typeof type, Schema.Union<Members>, never, never>(union, type, {
      strict: true,
      decode: ParseResult.succeed,
      encode: (value, _, ast) =>
        given(value) === 1 ? ParseResult.succeed(value) : ParseResult.fail(new ParseResult.Type(ast, value, message))
    }).annotations(union.ast.annotations)
  })
  return class extends lazySchema(schema) {
    static get from() {
      return schema().from
    }
    static get to() {
      return schema().to
    }
    static annotations(annotations: Schema.Annotations.Schema<Schema.Schema.Type<Members[number]>>) {
      return schema().annotations(annotations)
    }
  }
}

/**
 * A named array, built on first use (`array(() => Schema.Array(...).annotations(...))`). The same
 * type and members as that array.
 *
 * @internal
 */
export const array = /* @__NO_SIDE_EFFECTS__ */ <Value extends Schema.Schema.Any>(
  make: () => Schema.Array$<Value>
): Schema.Array$<Value> => {
  const schema = once(make)
  return class extends lazySchema(schema) {
    static get value() {
      return schema().value
    }
    static get elements() {
      return schema().elements
    }
    static get rest() {
      return schema().rest
    }
    static annotations(annotations: Schema.Annotations.Schema<ReadonlyArray<Schema.Schema.Type<Value>>>) {
      return schema().annotations(annotations)
    }
  }
}
