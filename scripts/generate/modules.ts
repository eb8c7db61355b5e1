/**
 * The Effect 3 emitter of the public modules: per operation its tag, service, params, error union
 * and accessor; per area `make` and `layer`, and the area's schemas re-exported.
 */
import * as Config from "./config.js"
import * as Ir from "./ir.js"
import { pascalCase, propertiesOf } from "./ir.js"
import { errorClasses } from "./operations.js"
import { commonArea, header, ident, jsdoc, newUses, since, typeExpression, type Uses } from "./schemas.js"

const str = (text: string): string => JSON.stringify(text)

const reserved = new Set(["delete", "new", "in", "import", "export", "default", "function", "class", "return"])

const reasons: Readonly<Record<number, string>> = { 200: "Ok", 201: "Created", 202: "Accepted", 204: "NoContent" }

/** Where a module's imports point: a public module (`src/`) or a companion (`src/internal/generated/modules/`). */
interface Paths {
  readonly root: string
  readonly generated: string
}

const resolve = (api: Ir.Api, schema: Ir.Schema): Ir.Schema =>
  schema.kind === "ref" ? resolve(api, api.schemas.get(schema.name)!.schema) : schema

const hasRequired = (api: Ir.Api, schema: Ir.Schema): boolean => {
  const resolved = resolve(api, schema)
  return resolved.kind === "object"
    ? propertiesOf((name) => api.schemas.get(name)?.schema, resolved).some((property) => property.required)
    : resolved.kind !== "unknown"
}

/** An empty ZIP archive (its end record alone): what a field the document describes as a ZIP file takes. */
const emptyZip = "Uint8Array.of(0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)"

/** Whether a binary field holds a ZIP archive, by its name or the document's description of it. */
const isZip = (property: Ir.Property | undefined): boolean =>
  property !== undefined && (/zip/i.test(property.name) || /\bzip\b/i.test(property.description ?? ""))

// A value of the schema's type, for the examples: the required fields only.
const sample = (
  api: Ir.Api,
  schema: Ir.Schema,
  uses: Set<string>,
  depth = 0,
  example?: unknown,
  property?: Ir.Property
): string => {
  const resolved = resolve(api, schema)
  switch (resolved.kind) {
    case "string":
      return JSON.stringify(Ir.within(resolved, typeof example === "string" ? example : "text"))
    case "timestamp":
      uses.add("DateTime")
      return `DateTime.unsafeMake("2025-01-01T00:00:00Z")`
    case "binary":
      // a service that checks an archive refuses no bytes at all
      return isZip(property) ? emptyZip : "new Uint8Array()"
    case "redacted":
      uses.add("Redacted")
      return `Redacted.make("secret")`
    case "number":
      return String(Ir.within(resolved, typeof example === "number" ? example : 1))
    case "integer":
      return String(Ir.within(resolved, typeof example === "number" && Number.isInteger(example) ? example : 1))
    case "boolean":
      return typeof example === "boolean" ? String(example) : "true"
    case "null":
      return "null"
    case "literal":
      return JSON.stringify(resolved.values[0])
    case "array":
      // as many items as the document requires, one at least (an empty array of a required field is a
      // request the service refuses: a multipart form sends no part for it)
      return `[${
        Array.from(
          { length: Math.max(1, resolved.limits?.minItems ?? 0) },
          () => sample(api, resolved.items, uses, depth + 1)
        ).join(", ")
      }]`
    case "nullable":
      return sample(api, resolved.schema, uses, depth, example)
    case "union":
      return sample(api, resolved.members[0]!, uses, depth)
    case "object": {
      if (depth > 4) return "{}"
      const properties = propertiesOf((name) => api.schemas.get(name)?.schema, resolved)
      // the required fields, and the optional one a required field's value names (a batch's action of `type`
      // `click_mouse` carries its `click_mouse`)
      const named = new Set(properties.flatMap((property) => {
        const value = property.required ? resolve(api, property.schema) : undefined
        return value?.kind === "literal" && typeof value.values[0] === "string" ? [value.values[0]] : []
      }))
      const fields = properties.filter((property) => property.required || named.has(property.name))
      return `{ ${
        fields.map((property) =>
          `${key(property.name)}: ${sample(api, property.schema, uses, depth + 1, property.example, property)}`
        ).join(", ")
      } }`
    }
    default:
      return `"value"`
  }
}

const key = (name: string): string => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name)

interface Emitted {
  /** A paged operation's accessors: one page, every item. */
  readonly paged: readonly [string, string] | undefined
  readonly declarations: string
  readonly tag: string
}

/**
 * The lines of an accessor's example that use its answer: a byte stream is read (its size logged),
 * an event stream's first events are logged (a follow may never end), an answer with no content
 * (`undefined`: the call is the whole example), any other answer is logged.
 */
const exampleUse = (operation: Ir.Operation, uses: Set<string>): ReadonlyArray<string> | undefined => {
  const only = operation.answers.length === 1 ? operation.answers[0]! : undefined
  if (only?.kind === "none") return undefined
  if (only?.kind === "bytes") {
    uses.add("Stream")
    return [
      "  // the body arrives as a stream of bytes, read as it comes",
      "  const size = yield* Stream.runFold(result, 0, (n, chunk) => n + chunk.length)",
      "  yield* Effect.log(`${size} bytes`)"
    ]
  }
  if (only?.kind === "sse") {
    uses.add("Stream")
    return [
      "  // the events arrive as a stream: here the first ten",
      "  yield* result.pipe(Stream.take(10), Stream.runForEach((event) => Effect.log(event)))"
    ]
  }
  return ["  yield* Effect.log(result)"]
}

const operationBlock = (
  api: Ir.Api,
  operation: Ir.Operation,
  area: string,
  uses: Uses,
  typeUses: Set<string>
): Emitted => {
  const Name = pascalCase(operation.name)
  // Surface.make finds each service's Tag by this rule (Surface.tagKey)
  if (Name !== operation.name.charAt(0).toUpperCase() + operation.name.slice(1)) {
    throw new Error(`${operation.name}: its Tag ${Name} is not its name with a capital (Surface.tagKey)`)
  }
  const fields: Array<string> = []
  for (const parameter of operation.parameters) {
    const doc = parameter.description === undefined ? "" : jsdoc([parameter.description])
    const type = typeExpression(parameter.schema, "Type", uses, new Set())
    // an optional one takes `undefined` too, as the body's fields do (`exactOptionalPropertyTypes`)
    fields.push(
      `${doc}readonly ${key(parameter.field)}${parameter.required ? "" : "?"}: ${type}${
        parameter.required ? "" : " | undefined"
      }`
    )
  }
  let extendsName: string | undefined
  let required = operation.parameters.some((parameter) => parameter.required)
  const body = operation.body
  if (body !== undefined) {
    if (body.kind === "bytes") {
      uses.upload = true
      fields.push(
        `${
          jsdoc([
            "The file's contents: a `Uint8Array`, a file on disk (`KernelFiles.file(path)`) or a `Stream` of bytes."
          ])
        }readonly ${body.field}: Upload`
      )
      required = true
    } else {
      extendsName = typeExpression(body.schema, "Type", uses, new Set())
      required ||= hasRequired(api, body.schema)
    }
  }
  const noInput = fields.length === 0 && extendsName === undefined
  const paramsName = `${Name}Params`
  const bodyIsObject = body !== undefined && body.kind !== "bytes" && resolve(api, body.schema).kind === "object"
  const paramsDoc = jsdoc([
    `The input of {@link ${accessorIdent(operation)}}.`,
    "",
    `@since ${since}`,
    "@category Models"
  ])
  const params = noInput
    ? ""
    : extendsName !== undefined && bodyIsObject
    ? `${paramsDoc}export interface ${paramsName} extends ${extendsName} {${
      fields.length === 0 ? "" : `\n${fields.join("\n")}\n`
    }}\n\n`
    : extendsName !== undefined && fields.length === 0
    ? `${paramsDoc}export type ${paramsName} = ${extendsName}\n\n`
    : extendsName !== undefined
    ? `${paramsDoc}export type ${paramsName} = ${extendsName} & {\n${fields.join("\n")}\n}\n\n`
    : `${paramsDoc}export interface ${paramsName} {\n${fields.join("\n")}\n}\n\n`
  // the success (a streamed answer fails with the operation's own errors)
  const errorName = `${Name}Error`
  const valueOf = (answer: Ir.Answer): string => {
    switch (answer.kind) {
      case "none":
        return "void"
      case "json":
        return typeExpression(answer.schema, "Type", uses, new Set())
      case "page":
        return `Call.Page<${typeExpression(answer.schema, "Type", uses, new Set())}>`
      case "sse":
        typeUses.add("Stream")
        typeUses.add("KernelEvents")
        // heartbeats dropped, unknown event types as `KernelEvents.UnknownEvent` (src/internal/events.ts)
        return `Stream.Stream<KernelEvents.Event<${
          typeExpression(answer.schema, "Type", uses, new Set())
        }>, ${errorName}>`
      case "bytes":
        typeUses.add("Stream")
        return `Stream.Stream<Uint8Array, ${errorName}>`
    }
  }
  const success = operation.answers.length === 1
    ? valueOf(operation.answers[0]!)
    : operation.answers.map((answer) => {
      const reason = reasons[answer.status]
      if (reason === undefined) throw new Error(`${operation.operationId}: no reason phrase for ${answer.status}`)
      // a case with no content has no value
      return answer.kind === "none"
        ? `{ readonly _tag: "${reason}" }`
        : `{ readonly _tag: "${reason}"; readonly value: ${valueOf(answer)} }`
    }).join(" | ")
  const successName = `${Name}Success`
  const statusErrors = errorClasses(operation).map((name) => `KernelError.${name}`)
  const accessor = accessorIdent(operation)
  const title = sentence(operation.summary ?? operation.name)
  const exampleUses = new Set<string>()
  const input = noInput || !required ? "" : sampleInput(api, operation, exampleUses)
  const use = exampleUse(operation, exampleUses)
  const example = [
    "```ts",
    `import { ${[...exampleUses, "Effect"].sort().join(", ")} } from "effect"`,
    `import { ${area} } from "effect-kernel"`,
    "",
    "const program = Effect.gen(function*() {",
    use === undefined
      ? `  yield* ${area}.${operation.accessor}(${input})`
      : `  const result = yield* ${area}.${operation.accessor}(${input})`,
    ...(use ?? []),
    "})",
    "```"
  ]
  const docLines = [
    title,
    ...(operation.description !== undefined && sentence(operation.description) !== title
      ? ["", sentence(operation.description)]
      : []),
    "",
    `\`${operation.method} ${operation.path}\``,
    "",
    operation.idempotent
      ? "Retried on a transient failure (a 5xx, a time-out, a lost connection): repeating it is harmless." +
        (operation.body?.kind === "bytes" || operation.body?.kind === "multipart"
          ? " A body given as a `Stream` is read once: that call is not retried."
          : "")
      : "Not retried once sent (a 5xx or a time-out may come after the work is done): only after a 429 or when " +
        "the request never reached the server. `KernelRetry.retryNonIdempotent` opts in.",
    "",
    `@since ${since}`,
    "@category Accessors",
    "@example",
    ...example
  ]
  // the accessor: one line over the shared constructors of src/internal/surface.ts
  const optional = !noInput && !required
  const accessorCode = noInput
    ? `Surface.accessorNoInput(${Name}, ${str(operation.name)})`
    : optional
    ? `Surface.accessorOptional(${Name}, ${str(operation.name)}, {})`
    : `Surface.accessor(${Name}, ${str(operation.name)})`
  const accessorDecl = reserved.has(operation.accessor)
    ? `const ${accessor} = ${accessorCode}\n\nexport {\n${jsdoc(docLines)}${accessor} as ${operation.accessor}\n}\n`
    : `${jsdoc(docLines)}export const ${accessor} = ${accessorCode}\n`
  // the official client's name, where it differs: the same accessor under it
  const officialAlias = Config.officialAliases[operation.operationId]
  const aliasDecl = officialAlias === undefined ? "" : `\n${
    jsdoc([
      `{@link ${accessor}} under the official client's name (\`client.${
        operation.module.charAt(0).toLowerCase() + operation.module.slice(1)
      }.${officialAlias}\`),`,
      "so that a call migrated from `@onkernel/sdk` keeps its name.",
      "",
      `@since ${since}`,
      "@category Accessors",
      "@example",
      "```ts",
      `import { Effect } from "effect"`,
      `import { ${area} } from "effect-kernel"`,
      "",
      "const program = Effect.gen(function*() {",
      `  yield* ${area}.${officialAlias}(${input})`,
      "})",
      "```"
    ])
  }export const ${officialAlias} = ${accessor}\n`
  // a paged operation: every item, page after page, from the service's one-page method
  const paged = isPaged(operation)
  const allDecl = !paged ? "" : `\n${
    jsdoc([
      `Every item of {@link ${accessor}}, page after page, as one stream (each page asked when the stream`,
      `needs its items, through the service of {@link ${Name}}). A page that says more follow without a`,
      "next offset past its own fails the stream with `DecodeError` after its items. The offsets are the",
      "service's: deleting items while the stream runs shifts the pages after them (collect the ids, then delete).",
      "",
      `@since ${since}`,
      "@category Accessors",
      "@example",
      "```ts",
      `import { Effect, Stream } from "effect"`,
      `import { ${area} } from "effect-kernel"`,
      "",
      `const program = Stream.runCollect(${area}.${
        allName(operation)
      }(${input})).pipe(Effect.map((all) => all.length))`,
      "```"
    ])
  }export const ${allName(operation)} = ${
    optional
      ? `Surface.pagedAllOptional(${Name}, ${str(operation.name)}, Operations.${operation.name}, {})`
      : `Surface.pagedAll(${Name}, ${str(operation.name)}, Operations.${operation.name})`
  }\n`
  // a download (its one answer is bytes): also the body as a `Stream`, the shape of `Replays.download`
  const streamDecl = !isDownload(operation) ? "" : `\n${
    jsdoc([
      `{@link ${accessor}} as one \`Stream\` of the body's bytes: the request is sent when the stream runs, and`,
      "its failure (a status, the transport) fails the stream, as `Replays.download` does.",
      "",
      `@since ${since}`,
      "@category Accessors",
      "@example",
      "```ts",
      `import { Stream } from "effect"`,
      `import { ${area} } from "effect-kernel"`,
      "",
      `const size = ${area}.${streamName(operation)}(${input}).pipe(Stream.runFold(0, (n, chunk) => n + chunk.length))`,
      "```"
    ])
  }export const ${streamName(operation)} = Surface.streamed(${accessor})\n`
  // an answer that is only a stream (an event stream, a download): the request is sent when the stream runs, and
  // its failures fail the stream; the accessor itself fails only with the input refused
  const opens = operation.answers.length === 1 &&
    (operation.answers[0]!.kind === "sse" || operation.answers[0]!.kind === "bytes")
  const outerError = opens ? "KernelError.InvalidInput" : errorName
  const serviceType = noInput
    ? `Surface.ServiceNoInput<${str(operation.name)}, ${successName}, ${outerError}>`
    : `Surface.Service<${str(operation.name)}, ${paramsName}, ${successName}, ${outerError}>`
  const declarations = [
    params,
    jsdoc([`What {@link ${accessor}} succeeds with.`, "", `@since ${since}`, "@category Models"]) +
    `export type ${successName} = ${success}\n\n`,
    jsdoc([
      opens
        ? `What the stream of {@link ${accessor}} fails with (the accessor itself fails only with \`InvalidInput\`).`
        : `What {@link ${accessor}} fails with.`,
      "",
      `@since ${since}`,
      "@category Errors"
    ]) +
    `export type ${errorName} = ${
      operation.answers.every((answer) => answer.kind === "none") ? "OperationErrorNoContent" : "OperationError"
    }<${statusErrors.length === 0 ? "never" : statusErrors.join(" | ")}>\n\n`,
    jsdoc([
      `The service of {@link ${accessor}}: its method \`${operation.name}\`.`,
      "",
      `@since ${since}`,
      "@category Models"
    ]) +
    `export interface ${Name}Service extends ${serviceType} {}\n\n`,
    jsdoc([`The Tag of {@link ${accessor}}'s service.`, "", `@since ${since}`, "@category Tags"]) +
    // `Id` restated: a Tag class that adds no member is read by tsc as its base type, which then
    // finds it in a union of Tags (`Kernel.Services`, the `R` that a layer removes) only by
    // comparing it with every member, about 60 type instantiations each (docs/performance.md)
    `export class ${Name} extends Context.Tag("effect-kernel/${Name}")<${Name}, ${Name}Service>() {\n` +
    `  /**\n   * Type-level only, no run-time property (the key at run time is \`key\`): the base's\n   * \`Id\`, restated so that tsc reads this class as itself, not as its base.\n   *\n   * @since ${since}\n   */\n` +
    `  declare readonly Id: "effect-kernel/${Name}"\n}\n\n`,
    accessorDecl + aliasDecl + allDecl + streamDecl + "\n"
  ].join("")
  return {
    paged: paged ? [operation.accessor, allName(operation)] : undefined,
    declarations,
    tag: Name
  }
}

const sentence = (text: string): string => {
  const trimmed = text.trim()
  return /[.!?:)]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/**
 * The name of a paged operation's stream of every item: its accessor's, with `All` (`list` →
 * `listAll`, `listBrowsers` → `listBrowsersAll`).
 */
export const allName = (operation: Ir.Operation): string => `${operation.accessor}All`

/**
 * The name of a download's `Stream` form: its accessor's, with `Stream` (`readFile` →
 * `readFileStream`).
 */
export const streamName = (operation: Ir.Operation): string => `${operation.accessor}Stream`

const isDownload = (operation: Ir.Operation): boolean =>
  operation.answers.length === 1 && operation.answers[0]!.kind === "bytes"

const isPaged = (operation: Ir.Operation): boolean =>
  operation.answers.length === 1 && operation.answers[0]!.kind === "page"

const accessorIdent = (operation: Ir.Operation): string =>
  reserved.has(operation.accessor) ? `${operation.accessor}_` : operation.accessor

const sampleInput = (api: Ir.Api, operation: Ir.Operation, uses: Set<string>): string => {
  const parts: Array<string> = []
  const given = new Map<string, string>()
  for (const parameter of operation.parameters) {
    // a parameter required in prose under a condition is given when the example meets it
    const when = parameter.requiredWhen
    if (!parameter.required && (when === undefined || given.get(when.field) !== JSON.stringify(when.value))) continue
    // a path parameter's example is its name, or a value within its limits (a process's UUID)
    const value = parameter.in === "path"
      ? JSON.stringify(Ir.within(parameter.schema, parameter.field))
      : sample(api, parameter.schema, uses, 0, Config.parameterExamples[`${operation.name}.${parameter.name}`])
    given.set(parameter.field, value)
    parts.push(`${key(parameter.field)}: ${value}`)
  }
  const body = operation.body
  if (body?.kind === "bytes") parts.push(`${body.field}: new TextEncoder().encode("hello")`)
  else if (body !== undefined) {
    const value = sample(api, body.schema, uses)
    if (value.startsWith("{")) {
      const inner = value.slice(1, -1).trim()
      if (inner !== "") parts.push(inner)
    }
  }
  return parts.length === 0 ? "{}" : `{ ${parts.join(", ")} }`
}

/** The public module of an area (`src/<Area>.ts`), or the companion of a hand-written one. */
export const moduleFile = (
  api: Ir.Api,
  area: string,
  description: string,
  operations: ReadonlyArray<Ir.Operation>,
  placement: ReadonlyMap<string, string>,
  companion: boolean
): string => {
  const paths: Paths = companion
    ? { root: "../../../", generated: "../" }
    : { root: "./", generated: "./internal/generated/" }
  const uses = newUses()
  const typeUses = new Set<string>()
  const handWritten = operations.filter((operation) => Config.handWrittenOperations.has(operation.name))
  const emitted = operations
    .filter((operation) => !Config.handWrittenOperations.has(operation.name))
    .map((operation) => operationBlock(api, operation, area, uses, typeUses))
  const tags = emitted.map((block) => block.tag)
  const servicesType = tags.join(" | ")
  const makeBlock = tags.length === 0 ?
    "" :
    `${
      jsdoc([
        `Builds every ${area} operation${companion ? " generated here" : ""} on the shared client.`,
        "",
        `@since ${since}`,
        "@category Constructors"
      ])
    }export const make: Effect.Effect<Context.Context<${servicesType}>, never, KernelClient> = /*#__PURE__*/ Surface.make(Operations.operations${
      handWritten.length === 0 ? "" : `, [${handWritten.map((operation) => str(operation.name)).join(", ")}]`
    })

${
      jsdoc([
        `Every ${area} operation${companion ? " generated here" : ""} as one layer over the shared client.`,
        "",
        `@since ${since}`,
        "@category Layers"
      ])
    }export const layer: Layer.Layer<${servicesType}, never, KernelClient> = /*#__PURE__*/ Layer.effectContext(
  make
)
`
  const hasSchemas = [...placement.values()].includes(area)
  const common = [...placement]
    .filter(([name, file]) => file === commonArea && areaUses(api, operations, name))
    .map(([name]) => name)
    .sort()
  // a module's own export would silently hide a re-exported schema of the same name
  const schemaNames = new Set(
    [...placement].filter(([name, file]) => file === area || common.includes(name)).map(([name]) => ident(name))
  )
  const own = [
    "make",
    "layer",
    ...emitted.flatMap((
      block
    ) => [block.tag, ...["Service", "Params", "Success", "Error"].map((s) => `${block.tag}${s}`)]),
    ...operations.map((operation) => operation.accessor),
    ...operations.filter(isPaged).map(allName),
    ...operations.filter(isDownload).map(streamName)
  ]
  const twice = own.find((name, index) => own.indexOf(name) !== index)
  if (twice !== undefined) throw new Error(`${area}: ${twice} is exported twice`)
  const clash = own.find((name) => schemaNames.has(name))
  if (clash !== undefined) throw new Error(`${area}: ${clash} is both a schema and an export (config.schemaRenames)`)
  const imports = [
    `import * as Context from "effect/Context"`,
    `import * as Effect from "effect/Effect"`,
    `import * as Layer from "effect/Layer"`,
    ...(typeUses.has("Stream") ? [`import type * as Stream from "effect/Stream"`] : []),
    ...(uses.redacted ? [`import type * as Redacted from "effect/Redacted"`] : []),
    ...(uses.dateTime ? [`import type * as DateTime from "effect/DateTime"`] : []),
    ...(emitted.some((block) => block.declarations.includes("Call.Page<"))
      ? [`import type * as Call from "${paths.root}internal/call.js"`]
      : []),
    ...(uses.upload === true ? [`import type { Upload } from "${paths.root}internal/upload.js"`] : []),
    `import type { ${
      ["OperationError", "OperationErrorNoContent"].filter((name) =>
        emitted.some((block) => block.declarations.includes(` = ${name}<`))
      ).join(", ")
    } } from "${paths.root}internal/defineOperation.js"`,
    `import * as Surface from "${paths.root}internal/surface.js"`,
    `import * as Operations from "${paths.generated}operations/${area}.js"`
  ]
  const byFile = new Map<string, Array<string>>()
  for (const name of [...uses.refs].sort()) {
    const file = placement.get(name)!
    byFile.set(file, [...(byFile.get(file) ?? []), ident(name)])
  }
  for (const [file, names] of byFile) {
    imports.push(`import type { ${names.join(", ")} } from "${paths.generated}schemas/${file}.js"`)
  }
  if (emitted.some((block) => block.declarations.includes("KernelError."))) {
    imports.push(`import type * as KernelError from "${paths.root}KernelError.js"`)
  }
  imports.push(`import { KernelClient } from "${paths.root}KernelClient.js"`)
  if (typeUses.has("KernelEvents")) imports.push(`import type * as KernelEvents from "${paths.root}KernelEvents.js"`)
  const reexports = [
    ...(!companion && Config.handWrittenCompanions.has(area)
      ? [
        jsdoc([
          `The hand-written part of the ${area} module (\`src/internal/handwritten/${area}.ts\`).`,
          "",
          `@since ${since}`
        ]) +
        `export * from "./internal/handwritten/${area}.js"\n`
      ]
      : []),
    ...(hasSchemas
      ? [
        jsdoc([`The schemas of the ${area} operations.`, "", `@since ${since}`]) +
        `export * from "${paths.generated}schemas/${area}.js"\n`
      ]
      : []),
    ...(common.length > 0
      ? [
        `// the schemas the ${area} operations share with other areas\nexport {\n${
          common.map((name) =>
            jsdoc([
              api.schemas.get(name)?.description ?? `The \`${name}\` schema of the API.`,
              "",
              `@since ${since}`,
              "@category Schemas"
            ]) + ident(name)
          ).join(",\n")
        }\n} from "${paths.generated}schemas/${commonArea}.js"\n`
      ]
      : [])
  ]
  const moduleDoc = jsdoc(
    companion
      ? [`The generated part of the ${area} module (\`src/${area}.ts\` re-exports it).`, "", "@internal"]
      : [
        description,
        ...(emitted.some((block) => block.paged !== undefined)
          ? [
            "",
            `A paged list has two accessors: one page (${
              emitted.flatMap((block) => block.paged === undefined ? [] : [`\`${block.paged[0]}\``]).join(", ")
            }: a \`Kernel.Page\`, \`{ items, hasMore, nextOffset }\`) and`,
            `every item as a \`Stream\` that follows the pages (${
              emitted.flatMap((block) => block.paged === undefined ? [] : [`\`${block.paged[1]}\``]).join(", ")
            }).`
          ]
          : []),
        "",
        `@since ${since}`
      ]
  )
  return `${header}\n${moduleDoc}${tags.length === 0 ? "" : `${imports.join("\n")}\n\n`}${reexports.join("\n")}\n${
    emitted.map((block) => block.declarations).join("")
  }\n${makeBlock}`
}

const areaUses = (api: Ir.Api, operations: ReadonlyArray<Ir.Operation>, name: string): boolean => {
  const seen = new Set<string>()
  const visit = (schema: Ir.Schema): boolean => {
    if (schema.kind === "ref") {
      if (schema.name === name) return true
      if (seen.has(schema.name)) return false
      seen.add(schema.name)
      return visit(api.schemas.get(schema.name)!.schema)
    }
    return (schema.kind === "object" && (schema.bases ?? []).some((base) => visit({ kind: "ref", name: base }))) ||
      Ir.children(schema).some(visit)
  }
  return operations.some((operation) =>
    operation.parameters.some((parameter) => visit(parameter.schema)) ||
    (operation.body !== undefined && operation.body.kind !== "bytes" && visit(operation.body.schema)) ||
    operation.answers.some((answer) => "schema" in answer && visit(answer.schema))
  )
}

/**
 * `test/generated/examples.ts`: per operation a minimal params object (its required path
 * parameters as their field's name, its required query / header parameters and body fields from
 * the document's examples, as in the accessors' examples), with its module, accessor and answer
 * kinds: what the contract test against Prism calls every operation with.
 */
export const examplesFile = (api: Ir.Api): string => {
  const uses = new Set<string>()
  const entries = api.operations.map((operation) => {
    const noInput = operation.parameters.length === 0 && operation.body === undefined
    const params = noInput ? "undefined" : sampleInput(api, operation, uses)
    return `  {
    name: ${JSON.stringify(operation.name)},
    module: ${JSON.stringify(operation.module)},
    accessor: ${JSON.stringify(operation.accessor)},
    method: ${JSON.stringify(operation.method)},
    path: ${JSON.stringify(operation.path)},
    answers: [${operation.answers.map((answer) => JSON.stringify(answer.kind)).join(", ")}],
    body: ${operation.body === undefined ? "undefined" : JSON.stringify(operation.body.kind)},
    params: ${params}
  }`
  })
  return `${header}
/**
 * A minimal params object per operation of the document (required path parameters as their
 * field's name or a value within their limits, required query / header parameters and body fields
 * from the document's examples),
 * with its module, accessor and answer kinds: the contract test against Prism calls every
 * operation's accessor with it.
 */
${uses.size === 0 ? "" : `import { ${[...uses].sort().join(", ")} } from "effect"\n`}
/** One operation and its params. */
export interface Example {
  readonly name: string
  readonly module: string
  readonly accessor: string
  readonly method: string
  readonly path: string
  readonly answers: ReadonlyArray<"json" | "page" | "none" | "bytes" | "sse">
  readonly body: "json" | "multipart" | "bytes" | undefined
  readonly params: unknown
}

export const examples: ReadonlyArray<Example> = [
${entries.join(",\n")}
]
`
}
