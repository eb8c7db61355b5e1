/**
 * A compiled decoder for the answers' schemas: what `Schema.decodeUnknownEither(schema,
 * { onExcessProperty: "ignore" })` gives, at a fraction of its cost on a valid body (a list of 10,000
 * browser pools, every event of a stream); and its mirror for the request bodies, a compiled
 * `Schema.encodeUnknownEither(schema, { onExcessProperty: "error" })` (a drag's path of points, a
 * batch of actions: encoded by `ParseResult`, a body cost more than the rest of the call).
 *
 * Built once per schema, on first use, from the schema's AST. Each node it knows (structs and their
 * index signatures, arrays, unions, refinements, transformations, declarations, literals and
 * keywords) is a plain function that does what effect's `ParseResult` does for that node in that
 * direction — same checks, same output (a new object with the fields in the schema's order, excess
 * keys dropped when decoding and refused when encoding; a new array; a union's value from the first
 * candidate that fits, candidates chosen as effect does by their literal fields) — without building
 * any issue on the way. A node it does not know (or one with its own parse options or a decoding
 * fallback) is run by `ParseResult` itself.
 *
 * When the input does not fit anywhere, the fast path stops and the schema runs on the input again
 * from the start: a failure is always the schema's own `ParseError`, the same message and path.
 * test/fastDecode.test.ts checks the equivalence on every answer schema and every body schema of the
 * operations' table.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { isRedactedAst, setOwn } from "./secrets.js"
import { parseTimestamp, Timestamp } from "./timestamp.js"

/**
 * What the fast path returns when its input does not fit (the schema then decodes it again).
 *
 * @internal
 */
export const Fail: unique symbol = Symbol("effect-kernel/fastDecode/Fail")

/** A node's decoder (or encoder): its value, or {@link Fail}. */
type Node = (input: unknown) => unknown

/**
 * A direction: decoding the answers (excess keys ignored) or encoding the request bodies (excess keys
 * refused), with its options (what a transformation or a filter is given) and its compiled nodes.
 */
interface Direction {
  readonly decoding: boolean
  readonly options: AST.ParseOptions
  readonly compiled: WeakMap<AST.AST, Node>
}

const decoding: Direction = { decoding: true, options: { onExcessProperty: "ignore" }, compiled: new WeakMap() }
const encoding: Direction = { decoding: false, options: { onExcessProperty: "error" }, compiled: new WeakMap() }

/** The node of an AST in a direction, built once per AST node (shared by the schemas that hold it). */
const nodeOf = (ast: AST.AST, direction: Direction): Node => {
  let node = direction.compiled.get(ast)
  if (node === undefined) {
    node = make(ast, direction)
    direction.compiled.set(ast, node)
  }
  return node
}

/** A node run by `ParseResult` itself: what the fast path does not know. */
const bySchema = (ast: AST.AST, direction: Direction): Node => {
  const schema = Schema.make<unknown, unknown, never>(ast)
  const run = direction.decoding
    ? ParseResult.decodeUnknownEither(schema, direction.options)
    : ParseResult.encodeUnknownEither(schema, direction.options)
  return (input) => {
    const result = run(input)
    return Either.isRight(result) ? result.right : Fail
  }
}

const is = (predicate: (input: unknown) => boolean): Node => (input) => predicate(input) ? input : Fail

const make = (ast: AST.AST, direction: Direction): Node => {
  // a node's own parse options or decoding fallback: left to ParseResult, which applies them
  if (Option.isSome(AST.getParseOptionsAnnotation(ast)) || Option.isSome(AST.getDecodingFallbackAnnotation(ast))) {
    return bySchema(ast, direction)
  }
  if (direction.decoding && ast === Timestamp.ast) {
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
      return refinement(ast, direction)
    case "Transformation":
      return transformation(ast, direction)
    case "Literal": {
      const literal = ast.literal
      return is((input) => input === literal)
    }
    case "Declaration":
      return declaration(ast, direction)
    case "TupleType":
      return tuple(ast, direction)
    case "Enums": {
      const values = ast.enums.map(([, value]) => value)
      return is((input) => values.some((value) => value === input))
    }
    case "TypeLiteral":
      return typeLiteral(ast, direction)
    case "Union":
      return union(ast, direction)
    case "Suspend": {
      let inner: Node | undefined
      return (input) => (inner ??= nodeOf(ast.f(), direction))(input)
    }
    default:
      return bySchema(ast, direction)
  }
}

/**
 * A refinement. Decoding: its `from` side, then the filter on the value. Encoding a refinement of a
 * primitive (a number's range, a string's pattern: every filter of the request bodies): the filter on
 * the input, which its `from` side has just checked, and the value that side encodes. Encoding any
 * other is the schema's: `ParseResult` decodes the type side first and filters what that gives (a
 * class's instance required, a struct's plain copy), which the input itself is not.
 */
const refinement = (ast: AST.Refinement, direction: Direction): Node => {
  if (!direction.decoding && !ofPrimitive(ast.from)) return bySchema(ast, direction)
  // (a primitive's `from` gives back its input: encoding, the filter sees the input, as it should)
  const from = nodeOf(ast.from, direction)
  const { options } = direction
  return (input) => {
    const value = from(input)
    return value === Fail || Option.isSome(ast.filter(value, options, ast)) ? Fail : value
  }
}

/** Whether an AST is a primitive (under refinements): what a value of it is, it is as given. */
const ofPrimitive = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "Refinement":
      return ofPrimitive(ast.from)
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "Literal":
    case "Enums":
    case "TemplateLiteral":
      return true
    default:
      return false
  }
}

/**
 * A transformation: its `from` side, its decode step (when that answers synchronously, as an
 * `Either`: otherwise the node is run by the schema), its `to` side; encoding, the other way round:
 * its `to` side, its encode step, its `from` side.
 */
const transformation = (ast: AST.Transformation, direction: Direction): Node => {
  const step = ast.transformation
  if (step._tag === "TypeLiteralTransformation") return bySchema(ast, direction)
  const from = nodeOf(direction.decoding ? ast.from : ast.to, direction)
  const to = nodeOf(direction.decoding ? ast.to : ast.from, direction)
  const { options } = direction
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
    const result = direction.decoding
      ? step.decode(value, options, ast, input)
      : step.encode(value, options, ast, input)
    if (!Either.isEither(result)) return (slow ??= bySchema(ast, direction))(input)
    return Either.isLeft(result) ? Fail : to(result.right)
  }
}

/**
 * A declaration (`Redacted`, `DateTimeUtcFromSelf`, a `Schema.declare`): its own decode (or encode),
 * when synchronous.
 */
const declaration = (ast: AST.Declaration, direction: Direction): Node => {
  if (isRedactedOf(ast)) return redacted(nodeOf(ast.typeParameters[0]!, direction))
  const run = direction.decoding
    ? ast.decodeUnknown(...ast.typeParameters)
    : ast.encodeUnknown(...ast.typeParameters)
  const { options } = direction
  let slow: Node | undefined
  return (input) => {
    const result = run(input, options, ast)
    if (!Either.isEither(result)) return (slow ??= bySchema(ast, direction))(input)
    return Either.isLeft(result) ? Fail : result.right
  }
}

/** `Schema.RedactedFromSelf(value)`: the declaration `Schema.Redacted` decodes into. */
const isRedactedOf = (ast: AST.Declaration): boolean => ast.typeParameters.length === 1 && isRedactedAst(ast)

/**
 * A `Redacted` whose value decodes (or encodes): the value decoded, in a new `Redacted` when decoding
 * changed it, else the input itself. `ParseResult` wraps the value again either way: a
 * `Schema.Redacted` field (its decode has just made the `Redacted`) would cost two, each an entry of
 * effect's `WeakMap`.
 */
const redacted = (value: Node): Node => (input) => {
  if (!Redacted.isRedacted(input)) return Fail
  const inner = Redacted.value(input)
  const decoded = value(inner)
  return decoded === Fail ? Fail : decoded === inner ? input : Redacted.make(decoded)
}

/** An array (`Schema.Array`: one rest element and no other); any other tuple is the schema's. */
const tuple = (ast: AST.TupleType, direction: Direction): Node => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return bySchema(ast, direction)
  const item = nodeOf(ast.rest[0]!.type, direction)
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
 * keys, each value decoded, the keys of the properties not written twice. Encoding (with
 * `onExcessProperty: "error"`), an input with a key the struct does not have (a symbol, or a string
 * no property or index signature takes) does not fit.
 */
const typeLiteral = (ast: AST.TypeLiteral, direction: Direction): Node => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return is((input) => input !== null && input !== undefined)
  }
  if (
    ast.indexSignatures.some((signature) => signature.parameter._tag !== "StringKeyword") ||
    ast.propertySignatures.some((property) => property.name === "__proto__")
  ) return bySchema(ast, direction)
  const properties = ast.propertySignatures.map((property) => ({
    name: property.name,
    optional: property.isOptional,
    decode: nodeOf(property.type, direction)
  }))
  const names = new Set<PropertyKey>(properties.map((property) => property.name))
  const values = ast.indexSignatures.map((signature) => nodeOf(signature.type, direction))
  const count = properties.length
  const strict = !direction.decoding
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return Fail
    if (strict) {
      for (const key of Reflect.ownKeys(input)) {
        // a key the struct does not have: a symbol one, or a string one no index signature takes
        if (!names.has(key) && (typeof key === "symbol" || values.length === 0)) return Fail
      }
    }
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
        if (!names.has(key)) setOwn(out, key, value)
      }
    }
    return out
  }
}

/**
 * The literal fields of a union member, as `ParseResult` finds them to choose the candidates of an
 * input (a required field whose input side is a literal: its encoded side when decoding, its type
 * side when encoding; through refinements, transformations and suspensions).
 */
const literalsOf = (ast: AST.AST, decoding: boolean): ReadonlyArray<readonly [PropertyKey, AST.Literal]> => {
  const sideOf = decoding ? AST.encodedAST : AST.typeAST
  switch (ast._tag) {
    case "Declaration": {
      const surrogate = AST.getSurrogateAnnotation(ast)
      return Option.isSome(surrogate) ? literalsOf(surrogate.value, decoding) : []
    }
    case "TypeLiteral": {
      const out: Array<readonly [PropertyKey, AST.Literal]> = []
      for (const property of ast.propertySignatures) {
        const type = sideOf(property.type)
        if (AST.isLiteral(type) && !property.isOptional) out.push([property.name, type])
      }
      return out
    }
    case "TupleType": {
      const out: Array<readonly [PropertyKey, AST.Literal]> = []
      ast.elements.forEach((element, i) => {
        const type = sideOf(element.type)
        if (AST.isLiteral(type) && !element.isOptional) out.push([i, type])
      })
      return out
    }
    case "Refinement":
      return literalsOf(ast.from, decoding)
    case "Suspend":
      return literalsOf(ast.f(), decoding)
    case "Transformation":
      return literalsOf(decoding ? ast.from : ast.to, decoding)
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
const candidatesOf = (members: ReadonlyArray<AST.AST>, decoding: boolean): Candidates => {
  const keys: Record<PropertyKey, Record<string, Array<AST.AST>>> = {}
  const otherwise: Array<AST.AST> = []
  for (const member of members) {
    const tags = literalsOf(member, decoding)
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
const union = (ast: AST.Union, direction: Direction): Node => {
  const { keys, otherwise } = candidatesOf(ast.types, direction.decoding)
  const names = Reflect.ownKeys(keys)
  const decoders = new Map<AST.AST, Node>(ast.types.map((member) => [member, nodeOf(member, direction)]))
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
export const compile = (schema: Schema.Schema.AnyNoContext): (input: unknown) => unknown => compiled(schema, decoding)

/** A schema's fast path in a direction, built on first use. */
const compiled = (schema: Schema.Schema.AnyNoContext, direction: Direction): (input: unknown) => unknown => {
  let node: Node | undefined
  return (input) => (node ??= nodeOf(schema.ast, direction))(input)
}

/**
 * The value of a schema's fast path for an input, or `undefined` when the input does not fit (the
 * schema then runs, for its error). Tests compare it with the schema's own decoding (or encoding).
 *
 * @internal
 */
export const fastPath = (schema: Schema.Schema.AnyNoContext, direction: "decode" | "encode" = "decode") => {
  const fast = compiled(schema, direction === "decode" ? decoding : encoding)
  return (input: unknown): { readonly value: unknown } | undefined => {
    const value = fast(input)
    return value === Fail ? undefined : { value }
  }
}

/** The fast path, and where the input does not fit, the schema itself (built on first use): its error. */
const throughFastPath = (
  schema: Schema.Schema.AnyNoContext,
  direction: Direction,
  bySchema: () => (input: unknown) => Either.Either<unknown, ParseResult.ParseError>
): (input: unknown) => Either.Either<unknown, ParseResult.ParseError> => {
  const fast = compiled(schema, direction)
  let slow: ((input: unknown) => Either.Either<unknown, ParseResult.ParseError>) | undefined
  return (input) => {
    const value = fast(input)
    return value !== Fail ? Either.right(value) : (slow ??= bySchema())(input)
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
  return throughFastPath(schema, decoding, () => Schema.decodeUnknownEither(schema, decoding.options))
}

/**
 * `Schema.encodeUnknownEither(schema, { onExcessProperty: "error" })`, through the fast path: the
 * same value where the schema encodes, the schema's own error where it does not. Both are built on
 * first use. test/fastDecode.test.ts checks that it gives what the schema gives, on every body schema
 * of the table.
 *
 * @internal
 */
export const encoder = (
  schema: Schema.Schema.AnyNoContext
): (input: unknown) => Either.Either<unknown, ParseResult.ParseError> =>
  throughFastPath(schema, encoding, () => Schema.encodeUnknownEither(schema, encoding.options))
