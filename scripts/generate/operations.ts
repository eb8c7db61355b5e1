/**
 * The Effect 3 emitter of the operation tables: one `Operation` definition per operation
 * (`src/internal/generated/operations/<Area>.ts`), built with the shared helpers of
 * `src/internal/generated/define.ts`.
 */
import * as Config from "./config.js"
import type * as Ir from "./ir.js"
import { commonArea, header, ident, jsdoc, newUses, schemaExpression } from "./schemas.js"

/** The error class names of an operation's documented statuses (the common ones left out). */
export const errorClasses = (operation: Ir.Operation): Array<string> =>
  operation.errors.flatMap((status) => {
    if (Config.commonStatuses.has(status)) return []
    const known = Config.statusErrors[status]
    if (known !== undefined) return [known]
    const pending = Config.pendingStatusErrors[status]
    if (pending === undefined) throw new Error(`${operation.operationId}: no error class for status ${status}`)
    return Config.emitPendingErrors ? [pending] : []
  })

/** The helpers every definition is written with. */
export const defineFile = `${header}
/**
 * The helpers the generated operation definitions are written with: \`define\` checks a definition
 * against \`Operation\` and keeps its literal types; the others write its parts.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type { Operation } from "../definition.js"

/** @internal */
export const define = /* @__NO_SIDE_EFFECTS__ */ <const D extends Operation>(definition: D): D => definition

/** A path parameter: the input field \`field\`, the segment \`{name}\`. @internal */
export const path = /* @__NO_SIDE_EFFECTS__ */ <const Field extends string, const Name extends string>(
  field: Field,
  name: Name
) => ({ field, name, in: "path", required: true, schema: Schema.String }) as const

/** A query parameter (the input field is its name). @internal */
export const query = /* @__NO_SIDE_EFFECTS__ */ <
  const Name extends string,
  S extends Schema.Schema.AnyNoContext,
  const Required extends boolean
>(name: Name, schema: S, required: Required) => ({ field: name, name, in: "query", required, schema }) as const

/** A header parameter (the input field is its name). @internal */
export const header = /* @__NO_SIDE_EFFECTS__ */ <
  const Name extends string,
  S extends Schema.Schema.AnyNoContext,
  const Required extends boolean
>(name: Name, schema: S, required: Required) => ({ field: name, name, in: "header", required, schema }) as const

/** A JSON request body. @internal */
export const jsonBody = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext, const Required extends boolean>(
  schema: S,
  required: Required
) => ({ kind: "json", schema, required }) as const

/** A \`multipart/form-data\` request body. @internal */
export const multipartBody = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "multipart", schema }) as const

/** A raw request body, the input field \`field\`. @internal */
export const bytesBody = /* @__NO_SIDE_EFFECTS__ */ <const Field extends string, const ContentType extends string>(
  field: Field,
  contentType: ContentType
) => ({ kind: "bytes", field, contentType }) as const

/** A JSON answer. @internal */
export const json = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "json", schema }) as const

/** A paged JSON answer: the schema is the item's. @internal */
export const page = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "page", schema }) as const

/** A \`text/event-stream\` answer: the schema is the event's. @internal */
export const sse = /* @__NO_SIDE_EFFECTS__ */ <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  ({ kind: "sse", schema }) as const

/** A binary answer. @internal */
export const bytes = /* @__NO_SIDE_EFFECTS__ */ <const ContentType extends string>(contentType: ContentType) =>
  ({ kind: "bytes", contentType }) as const

/** An answer without content. @internal */
export const none = { kind: "none" } as const
`

const str = (text: string): string => JSON.stringify(text)

/** The operations file of an area. */
export const operationsFile = (
  area: string,
  operations: ReadonlyArray<Ir.Operation>,
  placement: ReadonlyMap<string, string>
): string => {
  const uses = newUses()
  const helpers = new Set<string>(["define"])
  const use = (helper: string) => {
    helpers.add(helper)
    return helper
  }
  const blocks = operations.map((operation) => {
    const parameters = operation.parameters.map((parameter) =>
      parameter.in === "path"
        ? `${use("path")}(${str(parameter.field)}, ${str(parameter.name)})`
        : `${use(parameter.in)}(${str(parameter.name)}, ${
          schemaExpression(parameter.schema, uses)
        }, ${parameter.required})`
    )
    const body = operation.body === undefined
      ? "undefined"
      : operation.body.kind === "json"
      ? `${use("jsonBody")}(${schemaExpression(operation.body.schema, uses)}, ${operation.body.required})`
      : operation.body.kind === "multipart"
      ? `${use("multipartBody")}(${schemaExpression(operation.body.schema, uses)})`
      : `${use("bytesBody")}(${str(operation.body.field)}, ${str(operation.body.contentType)})`
    const answers = operation.answers.map((answer) => {
      const value = answer.kind === "none"
        ? use("none")
        : answer.kind === "bytes"
        ? `${use("bytes")}(${str(answer.contentType)})`
        : `${use(answer.kind)}(${schemaExpression(answer.schema, uses)})`
      return `${answer.status}: ${value}`
    })
    const errors = errorClasses(operation).map((name) => `KernelError.${name}`)
    const doc = jsdoc([
      `\`${operation.method} ${operation.path}\`${operation.summary === undefined ? "" : `: ${operation.summary}`}`,
      "",
      "@internal"
    ])
    return `${doc}export const ${operation.name} = /*#__PURE__*/ define({
      name: ${str(operation.name)},
      operationId: ${str(operation.operationId)},
      module: ${str(operation.module)},
      accessor: ${str(operation.accessor)},
      method: ${str(operation.method)},
      path: ${str(operation.path)},
      parameters: [${parameters.join(", ")}],
      body: ${body},
      answers: { ${answers.join(", ")} },
      errors: [${errors.join(", ")}],
      idempotent: ${operation.idempotent}
    })\n`
  })
  const imports: Array<string> = []
  if (uses.timestamp) throw new Error(`${area}: a parameter is a date-time`)
  if (blocks.some((block) => block.includes("Schema."))) imports.push(`import * as Schema from "effect/Schema"`)
  if (blocks.some((block) => block.includes("KernelError."))) {
    imports.push(`import * as KernelError from "../../../KernelError.js"`)
  }
  imports.push(`import { ${[...helpers].sort().join(", ")} } from "../define.js"`)
  const byFile = new Map<string, Array<string>>()
  for (const name of [...uses.refs].sort()) {
    const file = placement.get(name)
    if (file === undefined) throw new Error(`${area}: ${name} is not placed`)
    byFile.set(file, [...(byFile.get(file) ?? []), ident(name)])
  }
  for (const [file, names] of [...byFile].sort(([a], [b]) => a === commonArea ? -1 : b === commonArea ? 1 : 0)) {
    imports.push(`import { ${names.join(", ")} } from "../schemas/${file}.js"`)
  }
  const table = jsdoc(["Every operation of the area, in the document's order.", "", "@internal"]) +
    `export const operations = [${operations.map((operation) => operation.name).join(", ")}] as const\n`
  return `${header}\n${jsdoc([`The definitions of the ${area} operations.`, "", "@internal"])}${
    imports.join("\n")
  }\n\n${blocks.join("\n")}\n${table}`
}
