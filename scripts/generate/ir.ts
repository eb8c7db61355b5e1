/**
 * The intermediate representation: the API as plain data, independent of the emitted language —
 * operations (method, path, parameters, body, answers, errors, idempotency, docs) and the schemas
 * they use as a small JSON-schema model.
 */
import * as Runtime from "../../src/internal/limits.js"
import { violation } from "../../src/internal/limits.js"
import * as Config from "./config.js"
import type * as OpenApi from "./openapi.js"
import { methods, refName } from "./openapi.js"

/** A schema: what the emitter turns into a `Schema` (or a type). */
export type Schema =
  | { readonly kind: "ref"; readonly name: string }
  | { readonly kind: "string"; readonly limits?: Limits }
  | { readonly kind: "timestamp" }
  | { readonly kind: "binary" }
  | { readonly kind: "redacted" }
  | { readonly kind: "number"; readonly limits?: Limits }
  | { readonly kind: "integer"; readonly limits?: Limits }
  | { readonly kind: "boolean" }
  | { readonly kind: "null" }
  | { readonly kind: "unknown" }
  | { readonly kind: "literal"; readonly values: ReadonlyArray<string | number | boolean> }
  | { readonly kind: "array"; readonly items: Schema; readonly limits?: Limits }
  | {
    readonly kind: "object"
    /** Named object schemas whose fields this one has too (an `allOf` of them), before its own. */
    readonly bases?: ReadonlyArray<string>
    readonly properties: ReadonlyArray<Property>
    readonly additional: Schema | undefined
    /** `additionalProperties: false`: a value with another field breaks it. */
    readonly closed?: true
  }
  | {
    readonly kind: "union"
    readonly members: ReadonlyArray<Schema>
    readonly discriminator: string | undefined
    /**
     * Members that differ only in the fields they require (a `oneOf` of `required` lists): each
     * member's list. A value is sent only when exactly one list is complete, as `oneOf` says.
     */
    readonly exactlyOne?: ReadonlyArray<ReadonlyArray<string>>
  }
  | { readonly kind: "nullable"; readonly schema: Schema }

/**
 * The document's value limits of a string, a number or an array (JSON Schema's validation keywords,
 * as they are spelled there; the runtime's type). The emitter checks them on what the SDK sends, not
 * on answers.
 */
export type Limits = Runtime.Limits

/** The limit keywords of each kind, in the order they are emitted. */
export const limitKeywords = {
  string: ["minLength", "maxLength", "pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  array: ["minItems", "maxItems", "uniqueItems"]
} as const satisfies Record<string, ReadonlyArray<keyof Limits>>

/**
 * The limits a schema of the document states for a kind (`undefined`: none). As in JSON Schema, a
 * keyword of another kind (`minimum` on a string) does not apply.
 */
export const limitsOf = (
  source: OpenApi.JsonSchema,
  kind: keyof typeof limitKeywords,
  at: string
): Limits | undefined => {
  const limits: Record<string, unknown> = {}
  for (const keyword of limitKeywords[kind]) {
    const value = source[keyword]
    if (value === undefined) continue
    // a format the SDK checks (`uuid`); the others are types of their own (date-time, binary,
    // password) or not checked (int64, email and uri: see src/internal/limits.ts)
    if (keyword === "format") {
      if (Runtime.isFormat(value)) limits[keyword] = value
      continue
    }
    const type = keyword === "pattern" ? "string" : keyword === "uniqueItems" ? "boolean" : "number"
    if (typeof value !== type) throw new Error(`${at}: ${keyword} is ${JSON.stringify(value)}, not a ${type}`)
    limits[keyword] = value
  }
  return Object.keys(limits).length === 0 ? undefined : limits
}

const stringCandidates = ["text", "/text", "0644", "a", "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"]

/**
 * A value of a scalar kind within its limits, for the examples: `preferred` when it fits, else the
 * nearest bound (numbers) or the first candidate that fits (strings); none is an error (add one).
 */
export const within = (schema: Schema, preferred: string | number): string | number => {
  const limits = "limits" in schema ? schema.limits : undefined
  if (limits === undefined || violation(limits, preferred) === undefined) return preferred
  if (typeof preferred === "number") {
    const low = limits.minimum ?? (limits.exclusiveMinimum === undefined ? undefined : limits.exclusiveMinimum + 1)
    const high = limits.maximum ?? (limits.exclusiveMaximum === undefined ? undefined : limits.exclusiveMaximum - 1)
    const value = low !== undefined && preferred < low ? low : high !== undefined && preferred > high ? high : preferred
    if (violation(limits, value) === undefined) return value
  }
  const fits = stringCandidates.find((candidate) => violation(limits, candidate) === undefined)
  if (fits === undefined) throw new Error(`no example value within ${JSON.stringify(limits)}: add one to within()`)
  return fits
}

const withLimits = <S extends Schema>(schema: S, limits: Limits | undefined): S =>
  limits === undefined ? schema : { ...schema, limits }

export interface Property {
  readonly name: string
  readonly required: boolean
  readonly schema: Schema
  readonly description: string | undefined
  /** The document's example of the field. */
  readonly example: unknown
}

/** A named schema: a component of the document, or an operation's inline body / answer. */
export interface Named {
  readonly name: string
  readonly description: string | undefined
  readonly schema: Schema
  /** The examples the document gives for it (its own `example`, and the examples of the answers it is). */
  readonly examples: ReadonlyArray<unknown>
}

export interface Parameter {
  readonly field: string
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: Schema
  readonly description: string | undefined
  /**
   * A condition the document states in prose only ("only required if source is path"): the
   * parameter is required when the query parameter `field` has the value `value`.
   */
  readonly requiredWhen: RequiredWhen | undefined
}

export interface RequiredWhen {
  readonly field: string
  readonly value: string
}

export type Body =
  | { readonly kind: "json"; readonly schema: Schema; readonly required: boolean }
  | { readonly kind: "multipart"; readonly schema: Schema }
  | { readonly kind: "bytes"; readonly field: string; readonly contentType: string }

export type Answer =
  | { readonly status: number; readonly kind: "json" | "page" | "sse"; readonly schema: Schema }
  | { readonly status: number; readonly kind: "none" }
  | { readonly status: number; readonly kind: "bytes"; readonly contentType: string }

export interface Operation extends Config.OperationName {
  readonly operationId: string
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** With camelCase path fields: `/browsers/{id}/replays/{replayId}`. */
  readonly path: string
  readonly summary: string | undefined
  readonly description: string | undefined
  readonly parameters: ReadonlyArray<Parameter>
  readonly body: Body | undefined
  readonly answers: ReadonlyArray<Answer>
  /** The documented error statuses, ascending. */
  readonly errors: ReadonlyArray<number>
  readonly idempotent: boolean
  /** The request body's example, if the document gives one. */
  readonly example: unknown
}

export interface Api {
  readonly operations: ReadonlyArray<Operation>
  /** The named schemas the operations use (components and hoisted inline schemas), by name. */
  readonly schemas: ReadonlyMap<string, Named>
  /** The operationIds left out as deprecated. */
  readonly deprecated: ReadonlyArray<string>
}

/**
 * A query parameter's prose requirement ("only required if source is path"), checked against the
 * operation: the named parameter must be a query parameter that can have that value.
 */
const requiredWhenOf = (
  operationId: string,
  parameter: Parameter,
  parameters: ReadonlyArray<Parameter>
): RequiredWhen | undefined => {
  const match = /^only required if (\w+) is (\w+)$/i.exec(parameter.description?.trim() ?? "")
  if (match === null) return undefined
  const [, field, value] = match
  const on = parameters.find((other) => other.in === "query" && other.name === field)
  if (
    parameter.in !== "query" || parameter.required || on === undefined || field === undefined || value === undefined
  ) {
    throw new Error(`${operationId}: "${parameter.description}" of ${parameter.name}: no such optional query condition`)
  }
  if (on.schema.kind === "literal" && !on.schema.values.includes(value)) {
    throw new Error(`${operationId}: ${parameter.name} is required if ${field} is ${value}, not one of its values`)
  }
  return { field, value }
}

export const camelCase = (name: string): string => name.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase())
export const pascalCase = (name: string): string => name.charAt(0).toUpperCase() + camelCase(name).slice(1)

const simple = <K extends Schema["kind"]>(kind: K) => ({ kind }) as Extract<Schema, { kind: K }>

/** Converts the document's JSON schemas; `owner` names the schema whose properties are converted (for redaction). */
export class Converter {
  private readonly components = new Map<string, Schema>()
  /** The entries of `Config.redactedFields` that named a field. */
  readonly redacted = new Set<string>()

  private redacts(field: string): boolean {
    if (!Config.redactedFields.has(field)) return false
    this.redacted.add(field)
    return true
  }

  constructor(private readonly document: OpenApi.Document) {}

  component(name: string): Schema {
    const made = this.components.get(name)
    if (made !== undefined) return made
    const source = this.document.components.schemas[name]
    if (source === undefined) throw new Error(`no schema ${name}`)
    this.components.set(name, { kind: "unknown" }) // a cycle through allOf reads this
    const schema = this.convert(source, name)
    this.components.set(name, schema)
    return schema
  }

  convert(source: OpenApi.JsonSchema, owner: string): Schema {
    if (source.$ref !== undefined) {
      const name = refName(source.$ref)
      if (!(name in this.document.components.schemas)) throw new Error(`${owner}: $ref to missing ${name}`)
      return { kind: "ref", name }
    }
    if (source.allOf !== undefined) return this.merge(source.allOf, owner)
    const branches = source.oneOf ?? source.anyOf
    // an object whose oneOf only says which of its fields are required: one object per branch
    if (branches !== undefined && source.properties !== undefined && branches.every(isRequiredOnly)) {
      const { anyOf: _anyOf, oneOf: _oneOf, ...base } = source
      const members = branches.map((branch) =>
        this.convert({ ...base, required: [...(source.required ?? []), ...(branch.required ?? [])] }, owner)
      )
      // `anyOf`: one list or more; `oneOf`: exactly one (a value with both `id` and `name` is refused)
      return source.oneOf === undefined
        ? union(members, undefined)
        : { kind: "union", members, discriminator: undefined, exactlyOne: branches.map((b) => b.required ?? []) }
    }
    if (branches !== undefined) {
      const discriminator = source.discriminator
      for (const [value, target] of Object.entries(discriminator?.mapping ?? {})) {
        if (!(refName(target) in this.document.components.schemas)) {
          throw new Error(`${owner}: discriminator maps ${value} to missing ${refName(target)}`)
        }
      }
      const members = branches.map((branch) => this.convert(branch, owner))
      return union(members, discriminator?.propertyName)
    }
    if (source.const !== undefined) return literal([source.const])
    if (source.enum !== undefined) return literal(source.enum)
    const types = source.type === undefined ? [] : typeof source.type === "string" ? [source.type] : source.type
    const nonNull = types.filter((type) => type !== "null")
    if (types.length > 0 && nonNull.length === 0) return simple("null")
    if (types.length > nonNull.length) {
      return {
        kind: "nullable",
        schema: this.convert({ ...source, type: nonNull.length === 1 ? nonNull[0] : nonNull }, owner)
      }
    }
    if (nonNull.length > 1) return union(nonNull.map((type) => this.convert({ ...source, type }, owner)), undefined)
    const type = nonNull[0] ?? (source.properties !== undefined ? "object" : undefined)
    switch (type) {
      case "string":
        return source.format === "date-time"
          ? simple("timestamp")
          : source.format === "binary"
          ? simple("binary")
          : source.format === Config.redactedFormat
          ? redact(withLimits(simple("string"), limitsOf(source, "string", owner)), owner)
          : withLimits(simple("string"), limitsOf(source, "string", owner))
      case "integer":
        return withLimits(simple("integer"), limitsOf(source, "integer", owner))
      case "number":
        return withLimits(simple("number"), limitsOf(source, "number", owner))
      case "boolean":
        return simple("boolean")
      case "array":
        return withLimits({
          kind: "array",
          items: source.items === undefined ? simple("unknown") : this.convert(source.items, owner)
        }, limitsOf(source, "array", owner))
      case "object": {
        const required = new Set(source.required ?? [])
        const properties = Object.entries(source.properties ?? {}).map(([name, property]): Property => {
          const schema = this.convert(property, `${owner}.${name}`)
          return {
            name,
            required: required.has(name),
            schema: this.redacts(`${owner}.${name}`) ? redact(schema, `${owner}.${name}`) : schema,
            description: property.description,
            example: property.example
          }
        })
        const extra = source.additionalProperties
        const additional = extra === undefined || extra === false
          ? undefined
          : extra === true
          ? simple("unknown")
          : this.convert(extra, `${owner}.*`)
        return { kind: "object", properties, additional, ...(extra === false ? { closed: true as const } : {}) }
      }
      default:
        return simple("unknown")
    }
  }

  // allOf: the members' fields merged (a later member's field wins), required where any member
  // requires it; a named member none of whose fields another member has again stays a reference
  // (a base: its fields are spread)
  private merge(members: ReadonlyArray<OpenApi.JsonSchema>, owner: string): Schema {
    const converted = members
      .filter((member) => Object.keys(member).length > 0)
      .map((member) => this.convert(member, owner))
    if (converted.length === 1) return converted[0]!
    const objects = converted.map((schema) => {
      const object = schema.kind === "ref" ? this.component(schema.name) : schema
      if (object.kind !== "object") throw new Error(`${owner}: allOf of a non-object`)
      return { ref: schema.kind === "ref" ? schema.name : undefined, object }
    })
    const names = (object: Extract<Schema, { kind: "object" }>): Array<string> => [
      ...(object.bases ?? []).flatMap((base) => {
        const schema = this.component(base)
        return schema.kind === "object" ? names(schema) : []
      }),
      ...object.properties.map((property) => property.name)
    ]
    const bases: Array<string> = []
    const fields = new Map<string, Property>()
    let additional: Schema | undefined
    // a member that allows no other field closes the whole (over the members' fields): read as JSON Schema,
    // it would refuse the other members' fields too (`ProcessSpawnRequest`'s `allocate_tty`), which the
    // document surely means to allow
    const closed = objects.some(({ object }) => object.closed === true)
    objects.forEach(({ object, ref }, i) => {
      const others = new Set(objects.flatMap((other, j) => j === i ? [] : names(other.object)))
      if (ref !== undefined && !names(object).some((name) => others.has(name))) {
        bases.push(ref)
      } else {
        for (const base of object.bases ?? []) bases.push(base)
        for (const property of object.properties) {
          const before = fields.get(property.name)
          fields.set(property.name, before?.required ? { ...property, required: true } : property)
        }
      }
      additional ??= object.additional
    })
    return {
      kind: "object",
      ...(bases.length > 0 ? { bases } : {}),
      properties: [...fields.values()],
      additional,
      ...(closed ? { closed: true as const } : {})
    }
  }
}

/** Every field of an object schema: its bases' and its own. */
export const propertiesOf = (
  schemas: (name: string) => Schema | undefined,
  object: Extract<Schema, { kind: "object" }>
): Array<Property> => [
  ...(object.bases ?? []).flatMap((base) => {
    const schema = schemas(base)
    return schema?.kind === "object" ? propertiesOf(schemas, schema) : []
  }),
  ...object.properties
]

const isRequiredOnly = (branch: OpenApi.JsonSchema): boolean =>
  Object.keys(branch).every((key) => key === "required" || key === "description")

const literal = (values: ReadonlyArray<string | number | boolean | null>): Schema => {
  const nonNull = values.filter((value): value is string | number | boolean => value !== null)
  const schema: Schema = { kind: "literal", values: nonNull }
  return nonNull.length < values.length ? { kind: "nullable", schema } : schema
}

// a `null` branch makes the union nullable
const union = (members: ReadonlyArray<Schema>, discriminator: string | undefined): Schema => {
  const nonNull = members.filter((member) => member.kind !== "null")
  const rest: Schema = nonNull.length === 1 ? nonNull[0]! : { kind: "union", members: nonNull, discriminator }
  return nonNull.length < members.length ? { kind: "nullable", schema: rest } : rest
}

const redact = (schema: Schema, at: string): Schema => {
  switch (schema.kind) {
    case "string": {
      if (schema.limits !== undefined) throw new Error(`redacted field ${at} has limits (not supported)`)
      return simple("redacted")
    }
    case "nullable":
      return { kind: "nullable", schema: redact(schema.schema, at) }
    case "object":
      if (schema.properties.length === 0 && schema.additional !== undefined) {
        return { ...schema, additional: redact(schema.additional, at) }
      }
  }
  throw new Error(`redacted field ${at} is not a string or a map of strings`)
}

/** The names of the named schemas a schema refers to directly (`bases`: only its objects' bases). */
export const references = (schema: Schema, into: Set<string> = new Set(), bases = false): Set<string> => {
  if (schema.kind === "ref" && !bases) into.add(schema.name)
  if (schema.kind === "object") { for (const base of schema.bases ?? []) into.add(base) }
  for (const child of children(schema)) references(child, into, bases)
  return into
}

/**
 * The schemas a schema holds directly: an array's items, a nullable's schema, a union's members, an
 * object's properties' schemas and its additional properties' (not the named schemas it refers to).
 */
export const children = (schema: Schema): ReadonlyArray<Schema> => {
  switch (schema.kind) {
    case "array":
      return [schema.items]
    case "nullable":
      return [schema.schema]
    case "union":
      return schema.members
    case "object":
      return [
        ...schema.properties.map((property) => property.schema),
        ...(schema.additional === undefined ? [] : [schema.additional])
      ]
    default:
      return []
  }
}

const isPage = (response: OpenApi.Response): boolean =>
  response.headers !== undefined && ("X-Has-More" in response.headers || "X-Next-Offset" in response.headers)

const binaryTypes = ["video/mp4", "application/zip", "image/png", "application/octet-stream"]

const examplesOf = (media: OpenApi.MediaType | undefined): Array<unknown> => [
  ...(media?.example === undefined ? [] : [media.example]),
  ...Object.values(media?.examples ?? {}).flatMap((example) => example.value === undefined ? [] : [example.value])
]

/** Builds the IR of the (patched) document: the non-deprecated operations and the schemas they use. */
export const build = (document: OpenApi.Document): Api => {
  const converter = new Converter(document)
  const inline = new Map<string, Named>()
  const examples = new Map<string, Array<unknown>>()
  const addExamples = (name: string, values: ReadonlyArray<unknown>) =>
    examples.set(name, [...(examples.get(name) ?? []), ...values])
  // a body or answer schema: a component as is, anything else but a scalar hoisted as `<Name><suffix>`
  const named = (source: OpenApi.JsonSchema, name: string, values: ReadonlyArray<unknown>): Schema => {
    const schema = converter.convert(source, pascalCase(name))
    if (schema.kind === "ref") {
      addExamples(schema.name, values)
      return schema
    }
    const hoisted = pascalCase(name)
    inline.set(hoisted, { name: hoisted, description: source.description, schema, examples: values })
    return { kind: "ref", name: hoisted }
  }
  const operations: Array<Operation> = []
  const deprecated: Array<string> = []
  const names = new Set<string>()
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const source = item[method]
      if (source === undefined) continue
      if (source.deprecated === true) {
        deprecated.push(source.operationId)
        continue
      }
      const naming = Config.operationNames[source.operationId]
      if (naming === undefined) throw new Error(`operation ${source.operationId} has no entry in config.operationNames`)
      if (names.has(naming.name)) throw new Error(`operation name ${naming.name} is used twice`)
      names.add(naming.name)
      const parameters = (source.parameters ?? []).map((parameter): Parameter => {
        if (parameter.in === "cookie") throw new Error(`${source.operationId}: cookie parameter ${parameter.name}`)
        // a path parameter is one non-empty segment (src/internal/path.ts), a string with the
        // document's limits where it has some (a `format: uuid`)
        const schema = parameter.in === "path"
          ? withLimits(simple("string"), limitsOf(parameter.schema ?? {}, "string", parameter.name))
          : converter.convert(parameter.schema ?? {}, `${naming.name}.${parameter.name}`)
        return {
          field: parameter.in === "path" ? camelCase(parameter.name) : parameter.name,
          name: parameter.name,
          in: parameter.in,
          required: parameter.required === true,
          // a parameter's value is what is sent: dates as their text
          schema: schema.kind === "timestamp" ? simple("string") : schema,
          description: parameter.description,
          requiredWhen: undefined
        }
      })
      for (const [index, parameter] of parameters.entries()) {
        const requiredWhen = requiredWhenOf(source.operationId, parameter, parameters)
        if (requiredWhen !== undefined) parameters[index] = { ...parameter, requiredWhen }
      }
      const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => `{${camelCase(name)}}`)
      let body: Body | undefined
      let example: unknown
      const content = source.requestBody?.content ?? {}
      const [contentType, media] = Object.entries(content)[0] ?? []
      if (contentType !== undefined && media !== undefined) {
        example = examplesOf(media)[0]
        if (contentType === "application/json") {
          body = {
            kind: "json",
            schema: named(media.schema ?? {}, `${naming.name}Body`, examplesOf(media)),
            required: source.requestBody?.required === true
          }
        } else if (contentType === "multipart/form-data") {
          body = { kind: "multipart", schema: named(media.schema ?? {}, `${naming.name}Body`, []) }
        } else {
          body = { kind: "bytes", field: Config.bytesBodyField, contentType }
        }
      }
      const answers: Array<Answer> = []
      const errors: Array<number> = []
      for (const [code, declared] of Object.entries(source.responses)) {
        const status = Number(code)
        const response = declared.$ref === undefined
          ? declared
          : document.components.responses?.[refName(declared.$ref)]
        if (response === undefined) throw new Error(`${source.operationId}: missing response ${declared.$ref}`)
        if (status < 200 || status >= 300) {
          errors.push(status)
          continue
        }
        const [type, answer] = Object.entries(response.content ?? {})[0] ?? []
        if (type === undefined || answer === undefined || status === 204) {
          answers.push({ status, kind: "none" })
        } else if (type === "text/event-stream") {
          answers.push({ status, kind: "sse", schema: named(answer.schema ?? {}, `${naming.name}Event`, []) })
        } else if (binaryTypes.includes(type)) {
          answers.push({ status, kind: "bytes", contentType: type })
        } else if (isPage(response)) {
          const items = answer.schema?.items
          if (answer.schema?.type !== "array" || items === undefined) {
            throw new Error(`${source.operationId}: a paged answer that is not an array`)
          }
          const values = examplesOf(answer).flatMap((value) => Array.isArray(value) ? value : [])
          answers.push({ status, kind: "page", schema: named(items, `${naming.name}Item`, values) })
        } else {
          const suffix = answers.length === 0 ? "Response" : `Response${status}`
          answers.push({
            status,
            kind: "json",
            schema: named(answer.schema ?? {}, `${naming.name}${suffix}`, examplesOf(answer))
          })
        }
      }
      const httpMethod = method.toUpperCase() as Operation["method"]
      operations.push({
        ...naming,
        operationId: source.operationId,
        method: httpMethod,
        path,
        summary: source.summary,
        description: source.description,
        parameters,
        body,
        answers,
        errors: errors.sort((a, b) => a - b),
        idempotent: httpMethod === "GET" || (httpMethod === "PUT" && !Config.nonIdempotentPuts.has(naming.name)) ||
          httpMethod === "DELETE" ||
          (httpMethod === "POST" && Config.idempotentPosts.has(naming.name)),
        example
      })
    }
  }
  for (const id of Object.keys(Config.operationNames)) {
    if (!operations.some((operation) => operation.operationId === id)) {
      throw new Error(`config.operationNames names ${id}, which is not a non-deprecated operation of the document`)
    }
  }
  // every named schema the operations reach
  const schemas = new Map<string, Named>()
  const visit = (name: string) => {
    if (schemas.has(name)) return
    const hoisted = inline.get(name)
    const source = document.components.schemas[name]
    const entry: Named = hoisted ?? {
      name,
      description: source?.description,
      schema: converter.component(name),
      examples: [...(source?.example === undefined ? [] : [source.example]), ...(examples.get(name) ?? [])]
    }
    schemas.set(name, entry)
    for (const reference of references(entry.schema)) visit(reference)
  }
  for (const operation of operations) {
    for (const reference of operationReferences(operation)) visit(reference)
  }
  for (const field of Config.redactedFields) {
    if (!converter.redacted.has(field)) throw new Error(`config.redactedFields: ${field} names no field`)
  }
  return { operations, schemas, deprecated }
}

/** The named schemas an operation refers to directly (parameters, body, answers). */
export const operationReferences = (operation: Operation): Set<string> => {
  const into = new Set<string>()
  for (const parameter of operation.parameters) references(parameter.schema, into)
  if (operation.body !== undefined && operation.body.kind !== "bytes") references(operation.body.schema, into)
  for (const answer of operation.answers) if ("schema" in answer) references(answer.schema, into)
  return into
}
