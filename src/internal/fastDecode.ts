/**
 * A compiled decoder for the answers' schemas: what `Schema.decodeUnknownEither(schema,
 * { onExcessProperty: "ignore" })` gives, at a fraction of its cost on a valid body (a list of 10,000
 * browser pools, every event of a stream).
 *
 * Built once per schema, on first use, from the schema's AST. Each node it knows (structs and their
 * index signatures, arrays, unions, refinements, transformations, declarations, literals and
 * keywords) is a plain function that does what effect's `ParseResult` does for that node — same
 * checks, same output (a new object with the fields in the schema's order, excess keys dropped; a
 * new array; a union's value from the first candidate that fits, candidates chosen as effect does by
 * their literal fields) — without building any issue on the way. A node it does not know (or one
 * with its own parse options or a decoding fallback) is decoded by `ParseResult` itself.
 *
 * When the input does not fit anywhere, the fast path stops and the schema decodes the input again
 * from the start: a failure is always the schema's own `ParseError`, the same message and path.
 * test/fastDecode.test.ts checks the equivalence on every answer schema of the operations' table.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { isRedactedAst } from "./secrets.js"
import { parseTimestamp, Timestamp } from "./timestamp.js"

/**
 * What the fast path returns when its input does not fit (the schema then decodes it again).
 *
 * @internal
 */
export const Fail: unique symbol = Symbol("effect-kernel/fastDecode/Fail")

/** A node's decoder: its decoded value, or {@link Fail}. */
type Node = (input: unknown) => unknown

/** The options the answers are decoded with (what a transformation or a filter is given). */
const options: AST.ParseOptions = { onExcessProperty: "ignore" }

const compiled = new WeakMap<AST.AST, Node>()

/** The decoder of a node, built once per AST node (shared by the schemas that hold it). */
const nodeOf = (ast: AST.AST): Node => {
  let node = compiled.get(ast)
  if (node === undefined) {
    node = make(ast)
    compiled.set(ast, node)
  }
  return node
}

/** A node decoded by `ParseResult` itself: what the fast path does not know. */
const bySchema = (ast: AST.AST): Node => {
  const decode = ParseResult.decodeUnknownEither(Schema.make<unknown, unknown, never>(ast), options)
  return (input) => {
    const result = decode(input)
    return Either.isRight(result) ? result.right : Fail
  }
}

const is = (predicate: (input: unknown) => boolean): Node => (input) => predicate(input) ? input : Fail

const make = (ast: AST.AST): Node => {
  // a node's own parse options or decoding fallback: left to ParseResult, which applies them
  if (Option.isSome(AST.getParseOptionsAnnotation(ast)) || Option.isSome(AST.getDecodingFallbackAnnotation(ast))) {
    return bySchema(ast)
  }
  if (ast === Timestamp.ast) {
    return (input) => typeof input === "string" ? parseTimestamp(input) ?? Fail : Fail
  }
  switch (ast._tag) {
    case "StringKeyword":
      return is((input) => typeof input === "string")
    case "NumberKeyword":
      return is((input) => typeof input === "number")
    case "BooleanKeyword":
      return is((input) => typeof input === "boolean")
    case "UndefinedKeyword":
      return is((input) => input === undefined)
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return (input) => input
    case "Refinement":
      return refinement(ast)
    case "Transformation":
      return transformation(ast)
    case "Literal": {
      const literal = ast.literal
      return is((input) => input === literal)
    }
    case "Declaration":
      return declaration(ast)
    case "TupleType":
      return tuple(ast)
    case "Enums": {
      const values = ast.enums.map(([, value]) => value)
      return is((input) => values.some((value) => value === input))
    }
    case "TypeLiteral":
      return typeLiteral(ast)
    case "Union":
      return union(ast)
    case "Suspend": {
      let inner: Node | undefined
      return (input) => (inner ??= nodeOf(ast.f()))(input)
    }
    default:
      return bySchema(ast)
  }
}

const refinement = (ast: AST.Refinement): Node => {
  const from = nodeOf(ast.from)
  return (input) => {
    const value = from(input)
    return value === Fail || Option.isSome(ast.filter(value, options, ast)) ? Fail : value
  }
}

/**
 * A transformation: its `from` side, its decode step (when that answers synchronously, as an
 * `Either`: otherwise the node is decoded by the schema), its `to` side.
 */
const transformation = (ast: AST.Transformation): Node => {
  const step = ast.transformation
  if (step._tag === "TypeLiteralTransformation") return bySchema(ast)
  const from = nodeOf(ast.from)
  const to = nodeOf(ast.to)
  if (step._tag === "ComposeTransformation") {
    return (input) => {
      const value = from(input)
      return value === Fail ? Fail : to(value)
    }
  }
  let slow: Node | undefined
  return (input) => {
    const value = from(input)
    if (value === Fail) return Fail
    const result = step.decode(value, options, ast, input)
    if (!Either.isEither(result)) return (slow ??= bySchema(ast))(input)
    return Either.isLeft(result) ? Fail : to(result.right)
  }
}

/** A declaration (`Redacted`, `DateTimeUtcFromSelf`, a `Schema.declare`): its own decode, when synchronous. */
const declaration = (ast: AST.Declaration): Node => {
  if (isRedactedOf(ast)) return redacted(nodeOf(ast.typeParameters[0]!))
  const decode = ast.decodeUnknown(...ast.typeParameters)
  let slow: Node | undefined
  return (input) => {
    const result = decode(input, options, ast)
    if (!Either.isEither(result)) return (slow ??= bySchema(ast))(input)
    return Either.isLeft(result) ? Fail : result.right
  }
}

/** `Schema.RedactedFromSelf(value)`: the declaration `Schema.Redacted` decodes into. */
const isRedactedOf = (ast: AST.Declaration): boolean => ast.typeParameters.length === 1 && isRedactedAst(ast)

/**
 * A `Redacted` whose value decodes: the value decoded, in a new `Redacted` when decoding changed it,
 * else the input itself. `ParseResult` wraps the value again either way: a `Schema.Redacted` field
 * (its decode has just made the `Redacted`) would cost two, each an entry of effect's `WeakMap`.
 */
const redacted = (value: Node): Node => (input) => {
  if (!Redacted.isRedacted(input)) return Fail
  const inner = Redacted.value(input)
  const decoded = value(inner)
  return decoded === Fail ? Fail : decoded === inner ? input : Redacted.make(decoded)
}

/** An array (`Schema.Array`: one rest element and no other); any other tuple is the schema's. */
const tuple = (ast: AST.TupleType): Node => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return bySchema(ast)
  const item = nodeOf(ast.rest[0]!.type)
  return (input) => {
    if (!Array.isArray(input)) return Fail
    const out: Array<unknown> = []
    for (let i = 0; i < input.length; i++) {
      const value = item(input[i])
      if (value === Fail) return Fail
      out.push(value)
    }
    return out
  }
}

/**
 * A struct, as `ParseResult` decodes one with `onExcessProperty: "ignore"`: the input an object (not
 * an array); each property in the schema's order (an absent optional one skipped, an absent required
 * one decoded as `undefined`); then the index signatures (string keys only) over the input's own
 * keys, each value decoded, the keys of the properties not written twice.
 */
const typeLiteral = (ast: AST.TypeLiteral): Node => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return is((input) => input !== null && input !== undefined)
  }
  if (
    ast.indexSignatures.some((signature) => signature.parameter._tag !== "StringKeyword") ||
    ast.propertySignatures.some((property) => property.name === "__proto__")
  ) return bySchema(ast)
  const properties = ast.propertySignatures.map((property) => ({
    name: property.name,
    optional: property.isOptional,
    decode: nodeOf(property.type)
  }))
  const names = new Set<PropertyKey>(properties.map((property) => property.name))
  const values = ast.indexSignatures.map((signature) => nodeOf(signature.type))
  const count = properties.length
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return Fail
    const out: Record<PropertyKey, unknown> = {}
    for (let i = 0; i < count; i++) {
      const property = properties[i]!
      const name = property.name
      if (property.optional && !Object.prototype.hasOwnProperty.call(input, name)) continue
      // an absent required property is decoded as what reading it gives (`undefined`, or a value the
      // input inherits), as `ParseResult` does
      const value = property.decode(Reflect.get(input, name))
      if (value === Fail) return Fail
      out[name] = value
    }
    for (const decode of values) {
      for (const key of Object.keys(input)) {
        const value = decode(Reflect.get(input, key))
        if (value === Fail) return Fail
        if (!names.has(key)) out[key] = value
      }
    }
    return out
  }
}

/**
 * The literal fields of a union member, as `ParseResult` finds them to choose the candidates of an
 * input (a required field whose encoded side is a literal; through refinements, transformations'
 * encoded side and suspensions).
 */
const literalsOf = (ast: AST.AST): ReadonlyArray<readonly [PropertyKey, AST.Literal]> => {
  switch (ast._tag) {
    case "Declaration": {
      const surrogate = AST.getSurrogateAnnotation(ast)
      return Option.isSome(surrogate) ? literalsOf(surrogate.value) : []
    }
    case "TypeLiteral": {
      const out: Array<readonly [PropertyKey, AST.Literal]> = []
      for (const property of ast.propertySignatures) {
        const type = AST.encodedAST(property.type)
        if (AST.isLiteral(type) && !property.isOptional) out.push([property.name, type])
      }
      return out
    }
    case "TupleType": {
      const out: Array<readonly [PropertyKey, AST.Literal]> = []
      ast.elements.forEach((element, i) => {
        const type = AST.encodedAST(element.type)
        if (AST.isLiteral(type) && !element.isOptional) out.push([i, type])
      })
      return out
    }
    case "Refinement":
      return literalsOf(ast.from)
    case "Suspend":
      return literalsOf(ast.f())
    case "Transformation":
      return literalsOf(ast.from)
    default:
      return []
  }
}

interface Candidates {
  /** Per literal field: the members by the literal's text. */
  readonly keys: Record<PropertyKey, Record<string, Array<AST.AST>>>
  /** The members without a literal field: tried after the others, for every input. */
  readonly otherwise: Array<AST.AST>
}

/** The candidates of a union's members, grouped as `ParseResult` groups them. */
const candidatesOf = (members: ReadonlyArray<AST.AST>): Candidates => {
  const keys: Record<PropertyKey, Record<string, Array<AST.AST>>> = {}
  const otherwise: Array<AST.AST> = []
  for (const member of members) {
    const tags = literalsOf(member)
    if (tags.length === 0) {
      otherwise.push(member)
      continue
    }
    for (let j = 0; j < tags.length; j++) {
      const [key, literal] = tags[j]!
      const hash = String(literal.literal)
      const buckets = keys[key] ??= {}
      if (Object.prototype.hasOwnProperty.call(buckets, hash)) {
        if (j < tags.length - 1) continue
        buckets[hash]!.push(member)
      } else {
        buckets[hash] = [member]
        break
      }
    }
  }
  return { keys, otherwise }
}

/**
 * A union: the candidates of the input (the members whose literal fields it has, then the members
 * without one), each tried in turn; the first that fits gives the value.
 */
const union = (ast: AST.Union): Node => {
  const { keys, otherwise } = candidatesOf(ast.types)
  const names = Reflect.ownKeys(keys)
  const decoders = new Map<AST.AST, Node>(ast.types.map((member) => [member, nodeOf(member)]))
  const rest = otherwise.map((member) => decoders.get(member)!)
  // most unions (`X | undefined`, `X | null`) have no literal field: the members in order
  if (names.length === 0) {
    return (input) => {
      for (const decode of rest) {
        const value = decode(input)
        if (value !== Fail) return value
      }
      return Fail
    }
  }
  return (input) => {
    if (typeof input === "object" && input !== null) {
      for (const name of names) {
        if (!Object.prototype.hasOwnProperty.call(input, name)) continue
        const buckets = keys[name]!
        const literal = String(Reflect.get(input, name))
        if (!Object.prototype.hasOwnProperty.call(buckets, literal)) continue
        for (const member of buckets[literal]!) {
          const value = decoders.get(member)!(input)
          if (value !== Fail) return value
        }
      }
    }
    for (const decode of rest) {
      const value = decode(input)
      if (value !== Fail) return value
    }
    return Fail
  }
}

/**
 * A schema's fast path alone, built on first use: the decoded value, or {@link Fail} when the input
 * does not fit (the schema then decodes it, for its error). The event streams use it without an
 * `Either` per event.
 *
 * @internal
 */
export const compile = (schema: Schema.Schema.AnyNoContext): (input: unknown) => unknown => {
  let node: Node | undefined
  return (input) => (node ??= nodeOf(schema.ast))(input)
}

/**
 * The value of a schema's fast path for an input, or `undefined` when the input does not fit (the
 * schema then decodes it, for its error). Tests compare it with the schema's own decoding.
 *
 * @internal
 */
export const fastPath = (schema: Schema.Schema.AnyNoContext) => {
  const fast = compile(schema)
  return (input: unknown): { readonly value: unknown } | undefined => {
    const value = fast(input)
    return value === Fail ? undefined : { value }
  }
}

/**
 * `Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })`, through the fast path: the
 * same value where the schema decodes, the schema's own error where it does not. Both are built on
 * first use.
 *
 * The fast path's value is typed as the schema's type by this signature (the implementation below
 * cannot say it: the fast path walks the AST, which is untyped); test/fastDecode.test.ts checks
 * that it is the value the schema gives.
 *
 * @internal
 */
export function decoder<A, I>(
  schema: Schema.Schema<A, I, never>
): (input: unknown) => Either.Either<A, ParseResult.ParseError>
export function decoder(
  schema: Schema.Schema.AnyNoContext
): (input: unknown) => Either.Either<unknown, ParseResult.ParseError> {
  const fast = compile(schema)
  let slow: ((input: unknown) => Either.Either<unknown, ParseResult.ParseError>) | undefined
  return (input) => {
    const value = fast(input)
    return value !== Fail
      ? Either.right(value)
      : (slow ??= Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" }))(input)
  }
}
