/**
 * The Effect 3 emitter of the operation tables: one `Operation` definition per operation
 * (`src/internal/generated/operations/<Area>.ts`), built with the shared helpers of
 * `src/internal/defineOperation.ts`.
 */
import * as Config from "./config.js"
import type * as Ir from "./ir.js"
import { header, ident, jsdoc, newUses, schemaExpression } from "./schemas.js"

/** The error class names of an operation's documented statuses (the common ones left out). */
export const errorClasses = (operation: Ir.Operation): Array<string> =>
  operation.errors.flatMap((status) => {
    if (Config.commonStatuses.has(status)) return []
    const known = Config.statusErrors[status]
    if (known === undefined) throw new Error(`${operation.operationId}: no error class for status ${status}`)
    return [known]
  })

const str = (text: string): string => JSON.stringify(text)

/**
 * An operation's span attributes: each path parameter as `kernel.<resource>.id` (or `.id_or_name`),
 * the resource named by the path's segment before it (`Config.spanResources`), as `field: "name"`.
 */
export const spanAttributes = (operation: Ir.Operation): Array<string> => {
  const segments = operation.path.split("/")
  return operation.parameters.flatMap((parameter) => {
    if (parameter.in !== "path") return []
    const before = segments[segments.indexOf(`{${parameter.field}}`) - 1] ?? ""
    const resource = Config.spanResources[before]
    if (resource === undefined) throw new Error(`${operation.name}: no span resource for the path segment "${before}"`)
    const key = parameter.name === "id_or_name" ? "id_or_name" : "id"
    return [`${parameter.field}: ${str(`kernel.${resource}.${key}`)}`]
  })
}

/** The operations file of an area. */
export const operationsFile = (
  area: string,
  operations: ReadonlyArray<Ir.Operation>,
  placement: ReadonlyMap<string, string>
): string => {
  // the schemas by their file's namespace (`Common.Browser`, `Browsers.BrowserRequest`)
  const fileOf = (name: string): string => {
    const file = placement.get(name)
    if (file === undefined) throw new Error(`${area}: ${name} is not placed`)
    return file
  }
  const uses = newUses((name) => `${fileOf(name)}.${ident(name)}`)
  const helpers = new Set<string>(["define"])
  const use = (helper: string) => {
    helpers.add(helper)
    return helper
  }
  const blocks = operations.map((operation) => {
    const parameters = operation.parameters.map((parameter) =>
      parameter.in === "path"
        ? `${use("path")}(${str(parameter.field)}, ${str(parameter.name)}${
          "limits" in parameter.schema && parameter.schema.limits !== undefined
            ? `, ${schemaExpression(parameter.schema, uses)}`
            : ""
        })`
        : `${use(parameter.in)}(${str(parameter.name)}, ${
          schemaExpression(parameter.schema, uses)
        }, ${parameter.required}${
          parameter.requiredWhen === undefined
            ? ""
            : `, { field: ${str(parameter.requiredWhen.field)}, value: ${str(parameter.requiredWhen.value)} }`
        })`
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
    const attributes = spanAttributes(operation)
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
      errors: [${errors.join(", ")}],${
      attributes.length === 0 ? "" : `\n      attributes: { ${attributes.join(", ")} },`
    }
      idempotent: ${operation.idempotent}
    })\n`
  })
  const imports: Array<string> = []
  if (uses.timestamp) throw new Error(`${area}: a parameter is a date-time`)
  if (blocks.some((block) => block.includes("Schema."))) imports.push(`import * as Schema from "effect/Schema"`)
  if (blocks.some((block) => block.includes("KernelError."))) {
    imports.push(`import * as KernelError from "../../../KernelError.js"`)
  }
  imports.push(`import { ${[...helpers].sort().join(", ")} } from "../../defineOperation.js"`)
  if (uses.limited) imports.push(`import { limited } from "../../limits.js"`)
  for (const file of new Set([...uses.refs].map(fileOf))) {
    imports.push(`import * as ${file} from "../schemas/${file}.js"`)
  }
  const table = jsdoc(["Every operation of the area, in the document's order.", "", "@internal"]) +
    `export const operations = [${operations.map((operation) => operation.name).join(", ")}] as const\n`
  return `${header}\n${jsdoc([`The definitions of the ${area} operations.`, "", "@internal"])}${
    imports.join("\n")
  }\n\n${blocks.join("\n")}\n${table}`
}
