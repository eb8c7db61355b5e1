/**
 * Values built from the generated schemas: the simulator's answers are the encoded side of the
 * answer schema, made from what it stores (fields it knows) and, for the rest, the smallest value
 * each schema accepts (checked by decoding it), so every answer decodes with the SDK.
 *
 * And the routes of every operation of the generated table (a method map per path template), a
 * tiny PNG encoder, RFC 6238 TOTP and a minimal `multipart/form-data` reader.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Crypto from "node:crypto"
import * as Zlib from "node:zlib"
import type { Operation } from "../../internal/definition.js"
import { closedSchemaNames } from "../../internal/generated/closedSchemas.js"
import { operations } from "../../internal/generated/table.js"

// ---------------------------------------------------------------------------------------------
// routes

/** The name of an operation of the generated table. */
export type Name = (typeof operations)[number]["name"]

/** Every operation name, in the order of the docs. */
export const names: ReadonlyArray<Name> = operations.map((o) => o.name)

const nameSet: ReadonlySet<string> = new Set(names)

/** Whether a string is the name of an operation. */
export const isName = (name: string): name is Name => nameSet.has(name)

/**
 * The operations by the document's `operationId` where it is not the table's name (`getBrowsers` for
 * `listBrowsers`): a fault may name an operation either way.
 */
export const nameByOperationId: ReadonlyMap<string, Name> = new Map(
  operations.filter((o) => o.operationId !== o.name).map((o) => [o.operationId, o.name])
)

/** The document's `operationId` of each operation. */
export const operationIdOf: ReadonlyMap<Name, string> = new Map(operations.map((o) => [o.name, o.operationId]))

/** A JSON object (not an array, not null). */
export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

type Segment = { readonly literal: string } | { readonly param: string }

interface Template {
  readonly path: string
  readonly segments: ReadonlyArray<Segment>
  readonly literals: number
  readonly methods: Map<string, Operation>
}

const segmentsOf = (path: string): ReadonlyArray<Segment> =>
  path.split("/").slice(1).map((part) =>
    part.startsWith("{") && part.endsWith("}") ? { param: part.slice(1, -1) } : { literal: part }
  )

let templatesMade: ReadonlyArray<Template> | undefined
const templates = (): ReadonlyArray<Template> => {
  if (templatesMade !== undefined) return templatesMade
  const byPath = new Map<string, Template>()
  const all: ReadonlyArray<Operation> = operations
  for (const operation of all) {
    let template = byPath.get(operation.path)
    if (template === undefined) {
      const segments = segmentsOf(operation.path)
      template = {
        path: operation.path,
        segments,
        literals: segments.filter((s) => "literal" in s).length,
        methods: new Map()
      }
      byPath.set(operation.path, template)
    }
    template.methods.set(operation.method, operation)
  }
  // the most literal template first: `/extensions/from_chrome_store` before `/extensions/{idOrName}`
  templatesMade = [...byPath.values()].sort((a, b) => b.literals - a.literals)
  return templatesMade
}

/** The path templates that carry several methods. */
export const multiMethodPaths = (): ReadonlyArray<string> =>
  templates().filter((t) => t.methods.size > 1).map((t) => t.path)

/** A request's operation and its path parameters (by the template's names). */
export interface Matched {
  readonly _tag: "Matched"
  readonly operation: Operation
  readonly template: string
  readonly params: Readonly<Record<string, string>>
}

/** The route of a request: its operation, a known path asked with another method, or none. */
export const routeOf = (
  method: string,
  segments: ReadonlyArray<string>
): Matched | { readonly _tag: "WrongMethod"; readonly allow: string } | undefined => {
  for (const template of templates()) {
    if (template.segments.length !== segments.length) continue
    let matches = true
    for (let i = 0; i < segments.length; i++) {
      const expected = template.segments[i]!
      if ("literal" in expected ? expected.literal !== segments[i] : segments[i] === "") {
        matches = false
        break
      }
    }
    if (!matches) continue
    // the parameters, once the template is known (not for each template tried)
    const params: Record<string, string> = {}
    for (let i = 0; i < segments.length; i++) {
      const expected = template.segments[i]!
      if (!("literal" in expected)) params[expected.param] = segments[i]!
    }
    const operation = template.methods.get(method)
    if (operation === undefined) return { _tag: "WrongMethod", allow: [...template.methods.keys()].join(", ") }
    return { _tag: "Matched", operation, template: template.path, params }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// values

const decoders = new WeakMap<SchemaAST.AST, (u: unknown) => boolean>()

/**
 * The check of a schema that is only a type (a string, a number, a literal... a union of them, or a
 * refinement of one; no transformation): its type guard and filters, the same answer as decoding it (and encoding it
 * back, which changes nothing) without a parser run and its allocations. `undefined` for any other.
 */
const typeGuard = (ast: SchemaAST.AST): ((u: unknown) => boolean) | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union":
      return unionGuard(ast, typeGuard)
    case "Refinement":
      // a filter on such a type (`minLength`, `int`, a pattern...): what the parser does, decoding
      // or encoding (the type checked, then its filter), without its run
      return refinementGuard(ast, typeGuard)
    default:
      return undefined
  }
}

const filterOptions: SchemaAST.ParseOptions = {}

type Guard = (u: unknown) => boolean

/** A union's guard: one of its members' (each made by `of`); `undefined` if a member has none. */
const unionGuard = (ast: SchemaAST.Union, of: (ast: SchemaAST.AST) => Guard | undefined): Guard | undefined => {
  const guards: Array<Guard> = []
  for (const member of ast.types) {
    const guard = of(member)
    if (guard === undefined) return undefined
    guards.push(guard)
  }
  return (u) => guards.some((guard) => guard(u))
}

/**
 * A record of strings to a type's guard (no property besides its one string index signature): a
 * record whose every own value passes the type's guard (made by `of`); `undefined` for any other.
 */
const recordGuard = (ast: SchemaAST.TypeLiteral, of: (ast: SchemaAST.AST) => Guard | undefined): Guard | undefined => {
  const signature = ast.indexSignatures[0]
  if (
    ast.propertySignatures.length > 0 || ast.indexSignatures.length !== 1 || signature === undefined ||
    signature.parameter._tag !== "StringKeyword"
  ) return undefined
  const guard = of(signature.type)
  return guard === undefined ? undefined : (u) => isRecord(u) && Object.values(u).every(guard)
}

/** A refinement's guard: its type's (made by `of`), then its filter. */
const refinementGuard = (
  ast: SchemaAST.Refinement,
  of: (ast: SchemaAST.AST) => Guard | undefined
): Guard | undefined => {
  const guard = of(ast.from)
  return guard === undefined ? undefined : (u) => guard(u) && Option.isNone(ast.filter(u, filterOptions, ast))
}

/**
 * Whether a value decodes with the schema of `ast`, as the parser answers it (default options) without
 * its run and its allocations, where that can be told exactly: {@link typeGuard}'s schemas; a schema with
 * the document's limits (`limited`: decoded as its type, the limits checked on encoding); a
 * transformation of a type-only value whose decoding answers at once (a timestamp's text, a `Redacted`):
 * its decode function run directly, then its type side's check of what it made; a declaration
 * (`DateTimeUtcFromSelf`...) by its own check; structs (no index signature), records of strings,
 * arrays and unions of those, and a suspended schema's. `undefined` for any other, or one with parse
 * options of its own (the parser's run).
 */
const decodeGuard = (ast: SchemaAST.AST): Guard | undefined => {
  // parse options of its own (`onExcessProperty: "error"`), which hold for all it contains: the parser's
  if (Option.isSome(SchemaAST.getParseOptionsAnnotation(ast))) return undefined
  switch (ast._tag) {
    case "Transformation": {
      if (ast.transformation._tag !== "FinalTransformation") return undefined
      const decode = ast.transformation.decode
      if (decode === ParseResult.succeed) {
        // decoded: its `from`, then nothing done to the value, then its `to`
        const from = decodeGuard(ast.from)
        const to = decodeGuard(ast.to)
        return from === undefined || to === undefined ? undefined : (u) => from(u) && to(u)
      }
      // a type-only `from` decodes a value to itself: the decode function is given the value as the parser gives it
      const from = typeGuard(ast.from)
      const to = decodeGuard(ast.to)
      if (from === undefined || to === undefined) return undefined
      const parser = lazyParser(ast)
      return (u) => {
        if (!from(u)) return false
        const made = decode(u, SchemaAST.defaultParseOption, ast, u)
        // an effect that is not an answer at once: the parser's run decides
        return Either.isEither(made) ? Either.isRight(made) && to(made.right) : parser(u)
      }
    }
    case "Declaration": {
      const parse = ast.decodeUnknown(...ast.typeParameters)
      const parser = lazyParser(ast)
      return (u) => {
        const made = parse(u, SchemaAST.defaultParseOption, ast)
        return Either.isEither(made) ? Either.isRight(made) : parser(u)
      }
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 0) return recordGuard(ast, decodeGuard)
      // `{}`: anything but null and undefined
      if (ast.propertySignatures.length === 0) return (u) => u !== null && u !== undefined
      const fields: Array<readonly [string, boolean, Guard]> = []
      for (const ps of ast.propertySignatures) {
        if (typeof ps.name !== "string") return undefined
        const guard = decodeGuard(ps.type)
        if (guard === undefined) return undefined
        fields.push([ps.name, ps.isOptional, guard])
      }
      // extra properties are ignored; an absent optional one is skipped, an absent required one is
      // decoded as the value read (undefined, unless inherited), as the parser does
      return (u) => {
        if (!isRecord(u)) return false
        for (const [name, optional, guard] of fields) {
          if (optional && !Object.prototype.hasOwnProperty.call(u, name)) continue
          if (!guard(u[name])) return false
        }
        return true
      }
    }
    case "TupleType": {
      const rest = ast.rest[0]
      if (ast.elements.length > 0 || ast.rest.length !== 1 || rest === undefined) return undefined
      const guard = decodeGuard(rest.type)
      return guard === undefined ? undefined : (u) => {
        if (!Array.isArray(u)) return false
        for (let i = 0; i < u.length; i++) if (!guard(u[i])) return false
        return true
      }
    }
    case "Union":
      return unionGuard(ast, decodeGuard)
    case "Suspend": {
      // made when first used (a recursive schema is made of itself)
      let guard: Guard | undefined
      return (u) => {
        if (guard === undefined) {
          const inner = ast.f()
          guard = decodeGuard(inner) ?? decoderOf(inner)
        }
        return guard(u)
      }
    }
    default:
      return typeGuard(ast)
  }
}

/** The parser's decoding check of `ast`, made when first needed. */
const lazyParser = (ast: SchemaAST.AST): Guard => {
  let parser: Guard | undefined
  return (u) => (parser ??= decoderOf(ast))(u)
}

/**
 * Whether a value a client sends is valid: it decodes, and encodes back within the document's limits
 * (the generated schemas check those when a value is encoded).
 */
export const accepts = (ast: SchemaAST.AST, value: unknown): boolean => {
  let check = acceptors.get(ast)
  if (check === undefined) {
    check = typeGuard(ast) ?? acceptor(ast)
    acceptors.set(ast, check)
  }
  return check(value)
}

const acceptor = (ast: SchemaAST.AST): (u: unknown) => boolean => {
  const schema = Schema.make(ast)
  const decode = ParseResult.decodeUnknownEither(schema)
  const encode = ParseResult.encodeEither(schema)
  return (u) => Either.isRight(Either.flatMap(decode(u), encode))
}

const acceptors = new WeakMap<SchemaAST.AST, (u: unknown) => boolean>()

/** Whether an encoded value decodes with the schema of `ast`. */
export const decodes = (ast: SchemaAST.AST, value: unknown): boolean => {
  let decoder = decoders.get(ast)
  if (decoder === undefined) {
    decoder = decodeGuard(ast) ?? decoderOf(ast)
    decoders.set(ast, decoder)
  }
  return decoder(value)
}

const decoderOf = (ast: SchemaAST.AST): (u: unknown) => boolean => {
  const decode = ParseResult.decodeUnknownEither(Schema.make(ast))
  return (u) => Either.isRight(decode(u))
}

const iso = "2026-01-01T00:00:00Z"

const stringCandidates = (key: string): ReadonlyArray<string> => {
  const k = key.toLowerCase()
  const first = k.endsWith("_at") || k.includes("time") || k.includes("date") || k === "since"
    ? iso
    : k.includes("url") || k.includes("uri") || k === "domain"
    ? k === "domain" ? "example.com" : "https://sim.kernel.local/"
    : k.includes("email")
    ? "sim@example.com"
    : k.includes("b64")
    ? ""
    : k === "id" || k.endsWith("_id")
    ? "sim_1"
    : k === "mode"
    ? "0644"
    : k === "version"
    ? "1.0.0"
    : k === "name" || k.endsWith("_name")
    ? "sim"
    : "sim"
  return [
    first,
    "sim",
    iso,
    "https://sim.kernel.local/",
    "sim@example.com",
    "00000000-0000-4000-8000-000000000000",
    "1",
    ""
  ]
}

const numberCandidates = (key: string): ReadonlyArray<number> => {
  const k = key.toLowerCase()
  const first = k === "width" ? 1920 : k === "height" ? 1080 : k.includes("count") || k === "x" || k === "y" ? 0 : 1
  return [first, 0, 1, 10, 60, 100, 1000, 0.5]
}

/** The AST under its refinements and transformations (a parameter's enum, a field's struct). */
export const unwrap = (ast: SchemaAST.AST): SchemaAST.AST =>
  ast._tag === "Refinement" || ast._tag === "Transformation" ? unwrap(ast.from) : ast

const candidatesOf = (ast: SchemaAST.AST, key: string, depth: number): ReadonlyArray<unknown> => {
  const base = unwrap(ast)
  switch (base._tag) {
    case "StringKeyword":
      return stringCandidates(key)
    case "NumberKeyword":
      return numberCandidates(key)
    case "TupleType": {
      const one = base.rest.length > 0 ? [sample(base.rest[0]!.type, key, depth + 1)] : []
      const fixed = base.elements.filter((e) => !e.isOptional).map((e, i) => sample(e.type, `${key}${i}`, depth + 1))
      return [[...fixed], [...fixed, ...one]]
    }
    default:
      return [sampleBase(base, key, depth)]
  }
}

/** The smallest encoded value of `ast` (required fields only) that decodes with it, as far as can be found. */
export const sample = (ast: SchemaAST.AST, key = "", depth = 0): unknown => {
  if (depth > 12) return undefined
  const candidates = candidatesOf(ast, key, depth)
  for (const candidate of candidates) if (decodes(ast, candidate)) return candidate
  return candidates[0]
}

const isNullish = (ast: SchemaAST.AST): boolean =>
  (ast._tag === "Literal" && ast.literal === null) || ast._tag === "UndefinedKeyword" || ast._tag === "VoidKeyword"

const sampleBase = (ast: SchemaAST.AST, key: string, depth: number): unknown => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal
    case "BooleanKeyword":
      return false
    case "Enums":
      return ast.enums[0]?.[1]
    case "UnknownKeyword":
    case "AnyKeyword":
    case "ObjectKeyword":
      return {}
    case "TemplateLiteral":
      return ast.head
    case "TypeLiteral": {
      const out: Record<string, unknown> = {}
      for (const ps of ast.propertySignatures) {
        if (ps.isOptional || typeof ps.name !== "string") continue
        out[ps.name] = sample(ps.type, ps.name, depth + 1)
      }
      return out
    }
    case "Union": {
      const members = [...ast.types].sort((a, b) => Number(isNullish(a)) - Number(isNullish(b)))
      for (const member of members) {
        const value = sample(member, key, depth + 1)
        if (decodes(member, value)) return value
      }
      return sample(members[0]!, key, depth + 1)
    }
    case "Suspend":
      return sample(ast.f(), key, depth + 1)
    case "Declaration":
      // bytes (`Uint8ArrayFromSelf`): one byte
      return decodes(ast, new Uint8Array(1)) ? new Uint8Array(1) : undefined
    default:
      return undefined
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The encoded value of `ast` made of `value` where it fits (field by field for structs), the rest
 * sampled: it decodes with the schema whenever a value can be found.
 */
export const fill = (ast: SchemaAST.AST, value: unknown, key = "", depth = 0): unknown =>
  filled(ast, value, key, depth).value

/**
 * {@link fill} of a stored resource's fields: made once per fields object and schema, then reused (a
 * resource read or listed a hundred times is filled once). Only for objects never changed in place: a
 * stored resource's fields are replaced by a new object on every change, never mutated.
 */
export const fillStored = (ast: SchemaAST.AST, value: unknown): unknown => {
  if (!isRecord(value)) return fill(ast, value)
  const known = storedFills.get(value)
  if (known !== undefined && known.ast === ast) return known.value
  const made = fill(ast, value)
  storedFills.set(value, { ast, value: made })
  return made
}

const storedFills = new WeakMap<object, { readonly ast: SchemaAST.AST; readonly value: unknown }>()

/**
 * The fields a created resource is stored with: what the request gave, what {@link fill} made of it for
 * the answer schema over it, and its `id`. A struct's fill made valid is also the stored fields' fill (a
 * struct filled again from its own fill gives it again, field by field): it is remembered as their
 * {@link fillStored}, so a create fills once, not twice.
 */
export const fillForStore = (
  ast: SchemaAST.AST,
  fields: Record<string, unknown>,
  id: string
): Record<string, unknown> => {
  const made = filled(ast, fields, "", 0)
  if (!isRecord(made.value)) return fields
  const stored = { ...fields, ...made.value, id }
  if (made.valid && unwrap(ast)._tag === "TypeLiteral") storedFills.set(stored, { ast, value: made.value })
  return stored
}

/**
 * {@link fill}, telling whether the value is known to decode with `ast` (so that no caller decodes
 * it again: an answer used to be decoded once per level of nesting above each of its fields).
 */
const filled = (
  ast: SchemaAST.AST,
  value: unknown,
  key: string,
  depth: number
): { readonly value: unknown; readonly valid: boolean } => {
  if (value === undefined) return sampled(ast, key, depth)
  if (depth > 12) return { value, valid: false }
  // a record is rebuilt field by field (its extra fields dropped), whether or not it decodes as it is
  if (!isRecord(value) && decodes(ast, value)) return { value, valid: true }
  const base = unwrap(ast)
  if (base._tag === "TypeLiteral" && isRecord(value)) {
    if (base.propertySignatures.length === 0) {
      return decodes(ast, value)
        ? { value, valid: true }
        : sampled(ast, key, depth)
    }
    const out: Record<string, unknown> = {}
    // a plain struct (no refinement, no index signature) whose every field decodes decodes itself
    let fieldsValid = ast === base && base.indexSignatures.length === 0
    for (const ps of base.propertySignatures) {
      if (typeof ps.name !== "string") {
        fieldsValid = false
        continue
      }
      const given = value[ps.name]
      if (given !== undefined) {
        const field = filled(ps.type, given, ps.name, depth + 1)
        if (field.valid || decodes(ps.type, field.value)) {
          out[ps.name] = field.value
          continue
        }
      }
      if (!ps.isOptional) {
        const made = sample(ps.type, ps.name, depth + 1)
        out[ps.name] = made
        fieldsValid &&= decodes(ps.type, made)
      }
    }
    return fieldsValid || decodes(ast, out) ? { value: out, valid: true } : sampled(ast, key, depth)
  }
  if (base._tag === "Union") {
    // a record is rebuilt as a member it decodes with (its extra fields dropped), not kept as it is
    if (!isRecord(value) && decodes(ast, value)) return { value, valid: true }
    // the member the value names (its literal tags), then the one sharing most of its fields
    const ranked = base.types
      .map((member) => [member, isRecord(value) ? score(member, value) : 0] as const)
      .filter(([, s]) => s >= 0)
      .sort((a, b) => b[1] - a[1])
      .map(([member]) => member)
    const fitting = isRecord(value) ? ranked.find((member) => decodes(member, value)) : undefined
    if (fitting !== undefined) {
      const made = filled(fitting, value, key, depth + 1)
      if ((made.valid || decodes(fitting, made.value)) && decodes(ast, made.value)) {
        return { value: made.value, valid: true }
      }
    }
    for (const member of ranked.length > 0 ? ranked : base.types) {
      const made = filled(member, value, key, depth + 1)
      if ((made.valid || decodes(member, made.value)) && decodes(ast, made.value)) {
        return { value: made.value, valid: true }
      }
    }
    return sampled(ast, key, depth)
  }
  if (base._tag === "Suspend") return filled(base.f(), value, key, depth + 1)
  return decodes(ast, value) ? { value, valid: true } : sampled(ast, key, depth)
}

const sampled = (
  ast: SchemaAST.AST,
  key: string,
  depth: number
): { readonly value: unknown; readonly valid: boolean } => ({
  value: sample(ast, key, depth),
  valid: false
})

/** How well a record fits a struct member of a union: -1 when a literal tag differs. */
const score = (member: SchemaAST.AST, value: Record<string, unknown>): number => {
  const base = unwrap(member)
  if (base._tag !== "TypeLiteral") return 0
  let total = 0
  for (const ps of base.propertySignatures) {
    if (typeof ps.name !== "string" || value[ps.name] === undefined) continue
    const type = unwrap(ps.type)
    if (type._tag === "Literal") {
      if (type.literal !== value[ps.name]) return -1
      total += 100
    } else total += 1
  }
  return total
}

/** The property names of a struct-like schema (empty for others). */
export const propertyNames = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  const base = unwrap(ast)
  if (base._tag === "TypeLiteral") {
    return base.propertySignatures.flatMap((ps) => typeof ps.name === "string" ? [ps.name] : [])
  }
  if (base._tag === "Union") return [...new Set(base.types.flatMap(propertyNames))]
  return []
}

/** The members of a union schema (itself for others), each with what it samples to. */
export const members = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> => {
  const base = unwrap(ast)
  return base._tag === "Union" ? base.types.filter((t) => !isNullish(t)) : [ast]
}

const memberSampleCache = new WeakMap<SchemaAST.AST, ReadonlyArray<unknown>>()

/**
 * What each member of an event schema samples to (see {@link members}), worked out once per schema:
 * every event stream opened asks. Read-only: the values are shared.
 */
export const memberSamples = (ast: SchemaAST.AST): ReadonlyArray<unknown> => {
  let made = memberSampleCache.get(ast)
  if (made === undefined) {
    made = members(ast).map((kind) => sample(kind))
    memberSampleCache.set(ast, made)
  }
  return made
}

/** The `sse_heartbeat` event of an event schema that has one (read-only: it is shared). */
export const heartbeatOf = (ast: SchemaAST.AST): unknown =>
  memberSamples(ast).find((v) => isObject(v) && v["event"] === "sse_heartbeat")

/**
 * The schema of the field at `path` (a multipart part's name, `files[0][dest_path]`, split:
 * `["files", "0", "dest_path"]`) in a body schema, or `undefined` when there is none. A record's
 * entries (`env_vars[FOO]`) are its values'.
 */
export const fieldAt = (ast: SchemaAST.AST, path: ReadonlyArray<string>): SchemaAST.AST | undefined => {
  const [head, ...rest] = path
  if (head === undefined) return ast
  switch (ast._tag) {
    case "Transformation":
    case "Refinement":
      return fieldAt(ast.from, path)
    case "Suspend":
      return fieldAt(ast.f(), path)
    case "TypeLiteral": {
      const property = ast.propertySignatures.find((p) => p.name === head)
      if (property !== undefined) return fieldAt(property.type, rest)
      const signature = ast.indexSignatures.find((s) => s.parameter._tag === "StringKeyword")
      return signature === undefined ? undefined : fieldAt(signature.type, rest)
    }
    case "TupleType": {
      if (!/^\d+$/.test(head)) return undefined
      const item = ast.elements[Number(head)]?.type ?? ast.rest[0]?.type
      return item === undefined ? undefined : fieldAt(item, rest)
    }
    case "Union": {
      for (const member of ast.types) {
        const found = fieldAt(member, path)
        if (found !== undefined) return found
      }
      return undefined
    }
    default:
      return undefined
  }
}

/** Whether a field's schema is an array's (its members' when it is a union: `Schema.optional` of an array). */
const isArrayField = (ast: SchemaAST.AST | undefined): boolean => {
  if (ast === undefined) return false
  switch (ast._tag) {
    case "TupleType":
      return true
    case "Transformation":
    case "Refinement":
      return isArrayField(ast.from)
    case "Suspend":
      return isArrayField(ast.f())
    case "Union":
      return ast.types.some(isArrayField)
    default:
      return false
  }
}

const noBytes = new Uint8Array(0)

/** Whether a field takes a file (its bytes, not a text). */
const isFileField = (ast: SchemaAST.AST): boolean => !decodes(ast, "") && decodes(ast, noBytes)

/**
 * A text part as its field's value: the text when the field takes it, else the first of its readings
 * as a number, a boolean or JSON (`force=true`, `source={"type":"github",...}`) the field accepts;
 * when none does, the reading the field's check tells best why (JSON read as an object, else the text).
 */
const readText = (ast: SchemaAST.AST, text: string): unknown => {
  if (accepts(ast, text)) return text
  const readings: Array<unknown> = []
  if (text.trim() !== "" && Number.isFinite(Number(text))) readings.push(Number(text))
  if (text === "true" || text === "false") readings.push(text === "true")
  let json: unknown
  try {
    json = JSON.parse(text)
    readings.push(json)
  } catch {
    json = undefined
  }
  return readings.find((reading) => accepts(ast, reading)) ?? (isObject(json) || Array.isArray(json) ? json : text)
}

/** A form's value being assembled: a text or file part's value, or the entries under a name. */
type FormNode = { readonly leaf: unknown } | { readonly entries: Map<string, FormNode> }

/** The segments of a part's name: `files[0][dest_path]` → `files`, `0`, `dest_path` (a name of another shape is one segment). */
const segmentsOfName = (name: string): ReadonlyArray<string> => {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name)
  if (match === null) return [name]
  const rest = match[2]!
  return [match[1]!, ...(rest === "" ? [] : rest.slice(1, -1).split("]["))]
}

/**
 * The encoded value a `multipart/form-data` body stands for under its body schema, as the clients
 * send one (the official client's and this SDK's naming): each part under the path of its name
 * (`files[0][dest_path]`, `env_vars[FOO]`), an array's items by their index (`[]`: the next one), a
 * file field's part as its bytes, a text part as its field's type (see {@link readText}). Or why the
 * parts make no value (a name given twice, an index past the parts given).
 */
export const formValue = (
  ast: SchemaAST.AST,
  parts: ReadonlyArray<Part>
): { readonly value: Record<string, unknown> } | string => {
  const root = new Map<string, FormNode>()
  for (const part of parts) {
    const segments = segmentsOfName(part.name)
    if (segments.length > 8) return `${part.name.slice(0, 100)}: is nested too deep`
    let entries = root
    const path: Array<string> = []
    for (const [i, segment] of segments.entries()) {
      const array = isArrayField(fieldAt(ast, path))
      // an array's item: by its index (at most one per part), or the next one
      const key = array && segment === "" ? String(entries.size) : segment
      if (array && (!/^\d+$/.test(key) || Number(key) >= parts.length)) {
        return `${[...path, key].join(".").slice(0, 100)}: is not an index of the array's items`
      }
      path.push(key)
      const known = entries.get(key)
      if (i === segments.length - 1) {
        if (known !== undefined) return `${path.join(".").slice(0, 100)}: is given more than once`
        const field = fieldAt(ast, path)
        if (field !== undefined && isFileField(field)) {
          entries.set(key, { leaf: part.bytes })
          continue
        }
        // a text part is Unicode text, as a JSON body is: bytes that are not UTF-8 are refused, never stored
        const text = utf8Text(part.bytes)
        if (text === undefined) return `${path.join(".").slice(0, 100)}: is not UTF-8 text`
        entries.set(key, { leaf: field === undefined ? text : readText(field, text) })
      } else if (known === undefined) {
        const next = new Map<string, FormNode>()
        entries.set(key, { entries: next })
        entries = next
      } else if ("entries" in known) {
        entries = known.entries
      } else {
        return `${path.join(".").slice(0, 100)}: is given more than once`
      }
    }
  }
  const valueOf = (node: FormNode, path: ReadonlyArray<string>): unknown => {
    if ("leaf" in node) return node.leaf
    if (isArrayField(fieldAt(ast, path))) {
      // the items in index order; a missing index is an item missing
      const items: Array<unknown> = Array.from({ length: Math.max(-1, ...[...node.entries.keys()].map(Number)) + 1 })
      for (const [key, child] of node.entries) items[Number(key)] = valueOf(child, [...path, key])
      return items
    }
    return Object.fromEntries([...node.entries].map(([key, child]) => [key, valueOf(child, [...path, key])]))
  }
  return { value: Object.fromEntries([...root].map(([key, node]) => [key, valueOf(node, [key])])) }
}

/** The form's value without its files (what a resource keeps of it: the files are kept as bytes apart). */
export const withoutFiles = (value: unknown): unknown => mapFiles(value, () => undefined)

/**
 * A form's value with each file replaced by `f(file)`; a field whose replacement is `undefined` is
 * left out.
 */
export const mapFiles = (value: unknown, f: (file: Uint8Array) => unknown): unknown =>
  value instanceof Uint8Array
    ? f(value)
    : Array.isArray(value)
    ? value.map((item) => mapFiles(item, f))
    : isObject(value)
    ? Object.fromEntries(
      Object.entries(value).flatMap(([k, v]) => {
        const mapped = mapFiles(v, f)
        return mapped === undefined && v instanceof Uint8Array ? [] : [[k, mapped]]
      })
    )
    : value

/** The files of a form's value, in the order of its fields. */
export const filesOf = (value: unknown): ReadonlyArray<Uint8Array> =>
  value instanceof Uint8Array
    ? [value]
    : Array.isArray(value)
    ? value.flatMap(filesOf)
    : isObject(value)
    ? Object.values(value).flatMap(filesOf)
    : []

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true })

/** The bytes as UTF-8 text, or `undefined` when they are not. */
export const utf8Text = (bytes: Uint8Array): string | undefined => {
  try {
    return fatalUtf8.decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * Why a body breaks its schema ({@link firstIssue}); for a `oneOf` (the document has no `anyOf`: a
 * union of structs is one, `DeploymentRequest`'s `file` + `entrypoint_rel_path`, or `source`): the
 * issue of the branch the body comes closest to (the most of its required fields given), or that the
 * body fits more than one branch.
 */
export const bodyIssue = (schema: Schema.Schema.AnyNoContext, value: unknown): string | undefined => {
  const issue = firstIssue(schema, value)
  const base = unwrap(schema.ast)
  if (base._tag !== "Union" || base.types.length < 2) return issue
  if (issue !== undefined) {
    const given = (member: SchemaAST.AST): number => {
      const struct = unwrap(member)
      return struct._tag === "TypeLiteral" && isRecord(value)
        ? struct.propertySignatures.filter((ps) => !ps.isOptional && typeof ps.name === "string" && ps.name in value)
          .length
        : 0
    }
    const closest = base.types.reduce((best, member) => given(member) > given(best) ? member : best)
    return firstIssue(schemaOf(closest), value) ?? issue
  }
  const fitting = base.types.filter((member) => firstIssue(schemaOf(member), value) === undefined).length
  return fitting > 1 ? `body: must match exactly one of the document's oneOf branches, matches ${fitting}` : undefined
}

/** A schema of an AST, made once (not a schema per request). */
export const schemaOf = (ast: SchemaAST.AST): Schema.Schema.AnyNoContext => {
  let schema = schemas.get(ast)
  if (schema === undefined) {
    schema = Schema.make(ast)
    schemas.set(ast, schema)
  }
  return schema
}

const schemas = new WeakMap<SchemaAST.AST, Schema.Schema.AnyNoContext>()

/**
 * Whether a struct is closed: one of the document's schemas with `additionalProperties: false`
 * (its identifier). Any other object takes fields it does not list, as the service does (a client
 * newer than the document sends them).
 */
const isClosed = (ast: SchemaAST.TypeLiteral): boolean =>
  Option.exists(SchemaAST.getIdentifierAnnotation(ast), (identifier) => closedSchemaNames.has(identifier))

/** Each schema's strict check (decoded, then encoded), made once: a request's body is checked by it. */
const strictChecks = new WeakMap<SchemaAST.AST, (u: unknown) => Either.Either<unknown, ParseResult.ParseIssue>>()

const strictCheck = (schema: Schema.Schema.AnyNoContext) => {
  let check = strictChecks.get(schema.ast)
  if (check === undefined) {
    const decode = ParseResult.decodeUnknownEither(schema, { errors: "first" })
    const encode = ParseResult.encodeEither(schema, { errors: "first" })
    check = (u) => Either.flatMap(decode(u), encode)
    strictChecks.set(schema.ast, check)
  }
  return check
}

const join = (path: string, key: string): string => path === "" ? key : `${path}.${key}`

/** Where {@link listed} writes the first field a closed struct does not list (`path.field`). */
interface Unlisted {
  extra: string | undefined
}

/**
 * A value that passed its schema, with only the fields the schema lists, at every level (the same
 * value when it lists nothing else); the first field a closed struct does not list (the document's
 * `additionalProperties: false`, or every struct with `all`) goes to `found`. In a union, the value's
 * branch: the first it fits with no such field, else the first it fits.
 */
const listed = (ast: SchemaAST.AST, value: unknown, path: string, all: boolean, found: Unlisted): unknown => {
  switch (ast._tag) {
    case "Refinement":
    case "Transformation":
      return listed(ast.from, value, path, all, found)
    case "Suspend":
      return listed(ast.f(), value, path, all, found)
    case "TupleType": {
      if (!Array.isArray(value)) return value
      let out: Array<unknown> | undefined
      value.forEach((item: unknown, i) => {
        const element = ast.elements[i]?.type ?? ast.rest[0]?.type
        const kept = element === undefined ? item : listed(element, item, join(path, String(i)), all, found)
        if (kept !== item) (out ??= [...value])[i] = kept
      })
      return out ?? value
    }
    case "TypeLiteral": {
      if (!isRecord(value)) return value
      const index = ast.indexSignatures[0]?.type
      const closed = index === undefined && (all || isClosed(ast))
      const types = new Map<PropertyKey, SchemaAST.AST>()
      for (const ps of ast.propertySignatures) types.set(ps.name, ps.type)
      let out: Record<string, unknown> | undefined
      for (const [key, field] of Object.entries(value)) {
        const type = types.get(key) ?? index
        if (type === undefined) {
          if (closed) found.extra ??= join(path, key)
          out ??= { ...value }
          delete out[key]
          continue
        }
        const kept = field === undefined ? field : listed(type, field, join(path, key), all, found)
        if (kept !== field) (out ??= { ...value })[key] = kept
      }
      return out ?? value
    }
    case "Union": {
      let first: readonly [unknown, string | undefined] | undefined
      for (const member of ast.types) {
        if (Either.isLeft(strictCheck(schemaOf(member))(value))) continue
        const probe: Unlisted = { extra: undefined }
        const kept = listed(member, value, path, all, probe)
        if (probe.extra === undefined) return kept
        first ??= [kept, probe.extra]
      }
      if (first === undefined) return value
      found.extra ??= first[1]
      return first[0]
    }
    default:
      return value
  }
}

/**
 * A valid body with only the fields its schema lists, at every level: what an open object took and
 * ignored (a newer client's field) never reaches the stores or the answers (a field named as one of
 * the answer's, `id` or `created_at`, would overwrite it). The same value when it lists nothing else.
 */
export const listedOnly = (ast: SchemaAST.AST, value: unknown): unknown =>
  listed(ast, value, "", false, { extra: undefined })

/** The first field of a valid `value` that a closed struct of `ast` does not list (`all`: every struct closed). */
const extraField = (ast: SchemaAST.AST, value: unknown, all: boolean): string | undefined => {
  const found: Unlisted = { extra: undefined }
  listed(ast, value, "", all, found)
  return found.extra
}

/**
 * A body's strict check without a parser run, for the bodies it passes: `true` only where the strict
 * check (no extra property, the types, the filters, the document's limits on encoding) succeeds; a
 * `false` leaves the verdict and its message to the strict check. Made for plain structs (no renamed
 * key), records of strings, arrays, refinements, unions of those and the document's limits, over
 * type-only fields; `undefined` for any other schema (always the strict check).
 */
const strictGuard = (ast: SchemaAST.AST): ((u: unknown) => boolean) | undefined => {
  switch (ast._tag) {
    case "TypeLiteral": {
      // a record of strings to a type (`env`, `headers`...)
      if (ast.indexSignatures.length > 0) return recordGuard(ast, strictGuard)
      const fields: Array<readonly [string, boolean, (u: unknown) => boolean]> = []
      for (const ps of ast.propertySignatures) {
        if (typeof ps.name !== "string") return undefined
        const guard = strictGuard(ps.type)
        if (guard === undefined) return undefined
        fields.push([ps.name, ps.isOptional, guard])
      }
      const names = isClosed(ast) ? new Set(fields.map(([name]) => name)) : undefined
      return (u) => {
        if (!isRecord(u)) return false
        if (names !== undefined) { for (const key of Object.keys(u)) if (!names.has(key)) return false }
        for (const [name, optional, guard] of fields) {
          const given = u[name]
          if (given === undefined) {
            // absent and optional: fine; a key given as undefined is left to the strict check
            if (!optional || name in u) return false
          } else if (!guard(given)) {
            return false
          }
        }
        return true
      }
    }
    case "TupleType": {
      const rest = ast.rest[0]
      if (ast.elements.length > 0 || ast.rest.length !== 1 || rest === undefined) return undefined
      const guard = strictGuard(rest.type)
      return guard === undefined ? undefined : (u) => Array.isArray(u) && u.every(guard)
    }
    case "Refinement":
      return refinementGuard(ast, strictGuard)
    case "Union":
      return unionGuard(ast, strictGuard)
    case "Transformation": {
      // a secret (`Schema.Redacted` of a type-only value): decoded to a `Redacted` of the value and
      // encoded back to it, each side checking the value by its type: the value's type guard
      if (isRedactedOf(ast)) return typeGuard(ast.from)
      // the document's limits (`limited`): decoding is its type's, encoding checks the limits
      if (ast.transformation._tag !== "FinalTransformation" || ast.transformation.decode !== ParseResult.succeed) {
        return typeGuard(ast)
      }
      const guard = strictGuard(ast.from)
      const encode = ast.transformation.encode
      return guard === undefined ? undefined : (u) => {
        if (!guard(u)) return false
        const encoded = encode(u, filterOptions, ast, u)
        return Either.isEither(encoded) && Either.isRight(encoded)
      }
    }
    default:
      return typeGuard(ast)
  }
}

/** Whether a transformation is `Schema.Redacted(X)`: from `X` to a `Redacted` of the same `X`. */
const isRedactedOf = (ast: SchemaAST.Transformation): boolean =>
  ast.to._tag === "Declaration" && ast.to.typeParameters.length === 1 && ast.to.typeParameters[0] === ast.from &&
  Option.exists(SchemaAST.getTypeConstructorAnnotation(ast.to), (constructor) => constructor._tag === "effect/Redacted")

const strictGuards = new WeakMap<SchemaAST.AST, ((u: unknown) => boolean) | "none">()

/** Whether {@link strictGuard} passes `value` (a body the strict check then need not run on). */
export const passesStrictGuard = (ast: SchemaAST.AST, value: unknown): boolean => {
  let guard = strictGuards.get(ast)
  if (guard === undefined) {
    guard = strictGuard(ast) ?? "none"
    strictGuards.set(ast, guard)
  }
  return guard !== "none" && guard(value)
}

/**
 * The issue of an invalid value as `field: message`, the field its path in the value. An object
 * takes no field it does not list where the document closes it (`additionalProperties: false`),
 * or everywhere with `closed` (a check of the simulator's own, stricter than the document).
 */
export const firstIssue = (
  schema: Schema.Schema.AnyNoContext,
  value: unknown,
  options?: { readonly closed?: boolean }
): string | undefined => {
  const closed = options?.closed === true
  // the bodies the strict guard passes are valid: no parser run for them
  if (!closed && passesStrictGuard(schema.ast, value)) return undefined
  // decoded, then encoded again: the document's limits (minLength, maximum, pattern...) are checked
  // by the generated schemas when a value is encoded, that is on what a client sends
  const result = strictCheck(schema)(value)
  if (Either.isRight(result)) {
    // a field a closed struct does not list (`additionalProperties: false`)
    const extra = extraField(schema.ast, value, closed)
    return extra === undefined ? undefined : `${extra.slice(0, 100)}: is not allowed (additional property)`
  }
  const issues = ParseResult.ArrayFormatter.formatIssueSync(result.left)
  const issue = issues[0]
  if (issue === undefined) return "body: is not valid"
  const path = issue.path.map(String).join(".")
  const message = issue._tag === "Missing"
    ? "is required"
    : issue._tag === "Unexpected"
    ? "is not allowed (additional property)"
    : unionMessage(issues, path) ?? issue.message
  return `${path === "" ? "body" : path.slice(0, 100)}: ${message.slice(0, 200)}`
}

/**
 * The issues of every member of a union at the first issue's path, as one (`Expected "TERM" | "KILL" |
 * "INT" | "HUP", actual "term"`): each member's alone named only the first value an enum takes.
 */
const unionMessage = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>, path: string): string | undefined => {
  const expected: Array<string> = []
  let actual: string | undefined
  for (const other of issues) {
    if (other.path.map(String).join(".") !== path) continue
    // a member's refinement or limit (`must be >= 1, got 0`, `Expected an integer`) says why the value
    // is not that member, which the other members' `Expected null` does not
    if (other._tag === "Transformation" || other._tag === "Refinement") return other.message
    if (other._tag !== "Type") continue
    const parts = /^Expected (.*), actual (.*)$/s.exec(other.message)
    if (parts === null) return other.message
    if (actual !== undefined && parts[2] !== actual) return undefined
    actual = parts[2]
    expected.push(parts[1]!)
  }
  // each member once (a union of the same type under several names: a proxy's config, its country)
  const members = [...new Set(expected.flatMap((text) => text.split(" | ")))]
  return expected.length > 1 ? `Expected ${members.join(" | ")}, actual ${actual}` : undefined
}

// ---------------------------------------------------------------------------------------------
// PNG

const crcTable = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (ISO-HDLC), as PNG chunks use it. */
export const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff
  for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const chunk = (type: string, data: Uint8Array): Buffer => {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, "ascii")
  Buffer.from(data).copy(out, 8)
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}

/**
 * The last PNGs made, by size and colour: a screenshot of a 1920 × 1080 viewport deflates 6 MiB
 * of pixels, which under load was an eighth of the bin's CPU and most of its garbage. Bounded.
 */
const pngCache = new Map<string, Uint8Array>()
const pngCacheSize = 16

/**
 * A solid-colour RGB PNG of `width` × `height` pixels (the same bytes for the same arguments:
 * do not mutate them).
 */
export const png = (
  width: number,
  height: number,
  rgb: readonly [number, number, number] = [32, 96, 160]
): Uint8Array => {
  const w = Math.max(1, Math.min(8192, Math.floor(width)))
  const h = Math.max(1, Math.min(8192, Math.floor(height)))
  const key = `${w}x${h}:${rgb.join(",")}`
  const cached = pngCache.get(key)
  if (cached !== undefined) {
    // most recently used last
    pngCache.delete(key)
    pngCache.set(key, cached)
    return cached
  }
  const made = makePng(w, h, rgb)
  pngCache.set(key, made)
  if (pngCache.size > pngCacheSize) pngCache.delete(pngCache.keys().next().value!)
  return made
}

const makePng = (w: number, h: number, rgb: readonly [number, number, number]): Uint8Array => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(w, 0)
  header.writeUInt32BE(h, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // colour type: RGB
  const row = Buffer.alloc(1 + w * 3)
  for (let x = 0; x < w; x++) row.set(rgb, 1 + x * 3)
  const raw = Buffer.alloc(row.length * h)
  for (let y = 0; y < h; y++) row.copy(raw, y * row.length)
  return new Uint8Array(Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", Zlib.deflateSync(raw)),
    chunk("IEND", new Uint8Array(0))
  ]))
}

// ---------------------------------------------------------------------------------------------
// TOTP

const base32 = (secret: string): Buffer => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
  let bits = 0
  let value = 0
  const out: Array<number> = []
  for (const char of secret.toUpperCase().replace(/[\s=]/g, "")) {
    const index = alphabet.indexOf(char)
    if (index < 0) continue
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** RFC 6238 TOTP (HMAC-SHA1, 30-second steps, 6 digits) of a base32 secret at `millis`. */
export const totp = (secret: string, millis: number, digits = 6, step = 30): string => {
  const steps = Math.floor(millis / 1000 / step)
  // the same code for the whole step: an HMAC per secret and step, not per request
  const key = `${digits}:${steps}:${secret}`
  const known = totpCodes.get(key)
  if (known !== undefined) return known
  const counter = Buffer.alloc(8)
  counter.writeBigUInt64BE(BigInt(steps))
  const mac = Crypto.createHmac("sha1", base32(secret)).update(counter).digest()
  const offset = mac[mac.length - 1]! & 0x0f
  const code = String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, "0")
  totpCodes.set(key, code)
  if (totpCodes.size > totpCodesKept) totpCodes.delete(totpCodes.keys().next().value!)
  return code
}

/** The last TOTP codes made, by digits, step and secret (bounded, the oldest dropped first). */
const totpCodes = new Map<string, string>()
const totpCodesKept = 256

// ---------------------------------------------------------------------------------------------
// multipart

/** One part of a `multipart/form-data` body. */
export interface Part {
  readonly name: string
  readonly filename: string | undefined
  readonly bytes: Uint8Array
}

/** The parts of a `multipart/form-data` body, or `undefined` when it is not one (no boundary, no closing delimiter, a part without headers). */
export const parseMultipart = (contentType: string, body: Uint8Array): ReadonlyArray<Part> | undefined => {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const boundary = match?.[1] ?? match?.[2]
  if (boundary === undefined) return undefined
  // a view of the body, not a copy (each part's bytes are copied out of it)
  const buffer = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  // every delimiter but one at the very start of the body follows a line break (RFC 2046)
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const parts: Array<Part> = []
  let at = buffer.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? -2 : buffer.indexOf(delimiter)
  if (at === -1) return undefined
  for (;;) {
    const start = at + delimiter.length
    // the closing delimiter `--boundary--` ends the body; a body without it was cut short
    if (buffer.subarray(start, start + 2).toString() === "--") return parts
    const next = buffer.indexOf(delimiter, start)
    if (next < 0) return undefined
    // the delimiter's line ends (after any padding) before the part's headers
    const lineEnd = buffer.indexOf("\r\n", start)
    const part = buffer.subarray(lineEnd + 2, next)
    const split = part.indexOf("\r\n\r\n")
    if (lineEnd < 0 || lineEnd >= next || split < 0) return undefined
    const disposition = /^content-disposition:(.*)$/im.exec(part.subarray(0, split).toString("utf8"))?.[1] ?? ""
    // `name=` as a parameter of its own, not the end of `filename=`
    const name = /(?:^|;)\s*name="([^"]*)"/i.exec(disposition)?.[1] ?? ""
    const filename = /(?:^|;)\s*filename="([^"]*)"/i.exec(disposition)?.[1]
    parts.push({ name, filename, bytes: new Uint8Array(part.subarray(split + 4)) })
    at = next
  }
}

/** A file or directory of a ZIP archive: its name inside the archive (a directory's ends with `/`). */
export interface ZipEntry {
  readonly name: string
  readonly bytes: Uint8Array
  /** The CRC-32 of `bytes` when known already (computed when not). */
  readonly crc?: number | undefined
}

/** 1980-01-01, the earliest date a ZIP entry can have (0 would be month 0, which tools show as invalid). */
const dosDate = (1 << 5) | 1

/**
 * A ZIP archive (stored, no compression) of `entries`, in their order, as its pieces: each entry's
 * header then its bytes (the entry's own, not a copy), then the central directory. The bytes of the
 * archive are never copied whole: a server writes the pieces one after the other.
 */
export const zipChunks = (entries: ReadonlyArray<ZipEntry>): ReadonlyArray<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  const centrals: Array<Buffer> = []
  let offset = 0
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8")
    const crc = entry.crc ?? crc32(entry.bytes)
    const local = Buffer.alloc(30 + name.length)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x0800, 6) // UTF-8 names
    local.writeUInt16LE(dosDate, 12)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(entry.bytes.length, 18)
    local.writeUInt32LE(entry.bytes.length, 22)
    local.writeUInt16LE(name.length, 26)
    name.copy(local, 30)
    const central = Buffer.alloc(46 + name.length)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(0x0800, 8)
    central.writeUInt16LE(dosDate, 14)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(entry.bytes.length, 20)
    central.writeUInt32LE(entry.bytes.length, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(entry.name.endsWith("/") ? 0x10 : 0, 38)
    central.writeUInt32LE(offset, 42)
    name.copy(central, 46)
    chunks.push(local)
    if (entry.bytes.length > 0) chunks.push(entry.bytes)
    centrals.push(central)
    offset += local.length + entry.bytes.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  chunks.push(directory, end)
  return chunks
}

/** A ZIP archive (stored, no compression) of `entries`, in their order, in one piece. */
export const zip = (entries: ReadonlyArray<ZipEntry>): Uint8Array => Buffer.concat(zipChunks(entries))

/** Where a ZIP archive's end-of-central-directory record is (it may be followed by a comment), or -1. */
const endRecord = (bytes: Buffer): number => {
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) return i
  }
  return -1
}

/**
 * Why bytes are not a ZIP archive (no end record, or a central directory whose entries are not there), or
 * `undefined`: its structure only, nothing inflated, no limit on what it holds (a ZIP64 archive's own
 * records are taken as they are).
 */
export const zipIssue = (archive: Uint8Array): string | undefined => {
  const bytes = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength)
  const end = endRecord(bytes)
  if (end < 0) return "the file is not a ZIP archive"
  const count = bytes.readUInt16LE(end + 10)
  let at = bytes.readUInt32LE(end + 16)
  if (count === 0xffff || at === 0xffffffff) return undefined
  for (let n = 0; n < count; n++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) return "the archive's directory is damaged"
    at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32)
  }
  return undefined
}

/**
 * The entries of a ZIP archive (stored or deflated), read from its central directory; at most
 * `maxEntries` entries and `maxBytes` bytes once inflated, else (or when it is not a ZIP archive)
 * a message saying why.
 */
export const unzip = (
  archive: Uint8Array,
  maxEntries: number,
  maxBytes: number
): ReadonlyArray<ZipEntry> | string => {
  const bytes = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength)
  const end = endRecord(bytes)
  if (end < 0) return "the file is not a ZIP archive"
  const count = bytes.readUInt16LE(end + 10)
  if (count > maxEntries) return `the archive has more than ${maxEntries} entries`
  const entries: Array<ZipEntry> = []
  let total = 0
  let at = bytes.readUInt32LE(end + 16)
  try {
    for (let n = 0; n < count; n++) {
      if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) return "the archive's directory is damaged"
      const method = bytes.readUInt16LE(at + 10)
      const compressed = bytes.readUInt32LE(at + 20)
      const size = bytes.readUInt32LE(at + 24)
      const nameLength = bytes.readUInt16LE(at + 28)
      const extra = bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32)
      const local = bytes.readUInt32LE(at + 42)
      const name = bytes.subarray(at + 46, at + 46 + nameLength).toString("utf8")
      at += 46 + nameLength + extra
      if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== 0x04034b50) return "the archive is damaged"
      const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28)
      const stored = bytes.subarray(start, start + compressed)
      if (method !== 0 && method !== 8) return `${name}: compression method ${method} is not supported`
      total += size
      if (total > maxBytes) return `the archive holds more than ${maxBytes} bytes`
      const data = method === 0 ? stored : Zlib.inflateRawSync(stored, { maxOutputLength: Math.max(1, size) })
      entries.push({ name, bytes: new Uint8Array(data) })
    }
  } catch {
    return "the archive is damaged"
  }
  return entries
}
