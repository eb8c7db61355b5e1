/**
 * The document's known defects, each one corrected here on a copy of the parsed document
 * (`spec/kernel-openapi.yml` stays the service's verbatim). Each patch names what it fixes; the
 * generator fails if a patch no longer applies (the defect is gone: remove the patch).
 */
import type { Document } from "./openapi.js"

type Mutable = Record<string, unknown>

export interface Patch {
  readonly id: string
  readonly description: string
  /** Changes the (copied) document; returns how many places it changed. */
  readonly apply: (document: Mutable) => number
}

const isObject = (u: unknown): u is Mutable => typeof u === "object" && u !== null && !Array.isArray(u)

const at = (root: Mutable, path: ReadonlyArray<string>): Mutable => {
  let node: unknown = root
  for (const key of path) node = isObject(node) ? node[key] : undefined
  if (!isObject(node)) throw new Error(`patch: no object at ${path.join(".")}`)
  return node
}

const remap = (schema: string, value: string, from: string, to: string): Patch["apply"] => (document) => {
  const schemas = at(document, ["components", "schemas"])
  if (!(to in schemas)) throw new Error(`patch: ${to} is not a schema`)
  const mapping = at(schemas, [schema, "discriminator", "mapping"])
  if (mapping[value] !== `#/components/schemas/${from}`) return 0
  mapping[value] = `#/components/schemas/${to}`
  return 1
}

// `nullable: true` (OpenAPI 3.0) in a 3.1 document: as 3.1 says it, `type: [t, "null"]`, or for a
// `$ref` / composition, `anyOf: [that, { type: "null" }]`
const rewriteNullable = (node: unknown): number => {
  if (Array.isArray(node)) return node.reduce((n: number, item) => n + rewriteNullable(item), 0)
  if (!isObject(node)) return 0
  let count = 0
  for (const [key, value] of Object.entries(node)) {
    if (key !== "example" && key !== "examples") count += rewriteNullable(value)
  }
  if (node["nullable"] === true) {
    delete node["nullable"]
    count++
    // an enum restricts the type too: `null` (the field's "null when ...") joins its values
    const values = node["enum"]
    if (Array.isArray(values) && !values.includes(null)) node["enum"] = [...values, null]
    if (typeof node["type"] === "string") {
      node["type"] = [node["type"], "null"]
    } else {
      const inner: Mutable = {}
      for (const key of ["$ref", "oneOf", "anyOf", "allOf", "type", "enum", "const"]) {
        if (key in node) {
          inner[key] = node[key]
          delete node[key]
        }
      }
      node["anyOf"] = [inner, { type: "null" }]
    }
  } else if (node["nullable"] === false) {
    delete node["nullable"]
  }
  return count
}

/** Marks as `nullable` (rewritten by the `nullable` patch, after) each property `where` selects. */
const nullableWhere = (
  where: (name: string, property: Mutable, properties: Mutable) => boolean
): Patch["apply"] =>
(document) => {
  let count = 0
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (!isObject(node)) return
    const properties = node["properties"]
    if (isObject(properties)) {
      for (const [name, property] of Object.entries(properties)) {
        if (isObject(property) && property["nullable"] !== true && where(name, property, properties)) {
          property["nullable"] = true
          count++
        }
      }
    }
    for (const value of Object.values(node)) walk(value)
  }
  walk(at(document, ["components", "schemas"]))
  return count
}

/**
 * The list: each entry one defect of the document, or a place where the service sends what the
 * document does not say (read in the browser's server, `kernel/kernel-images`).
 */
export const patches: ReadonlyArray<Patch> = [
  {
    id: "telemetry-stack-trace-null",
    description: "a console or exception event's `stack_trace` is `null` when Chrome sent none (kernel-images, " +
      "cdpmonitor handleConsole / handleExceptionThrown: a nil `json.RawMessage`)",
    apply: nullableWhere((name, property) =>
      name === "stack_trace" && property["$ref"] === "#/components/schemas/BrowserCallStack"
    )
  },
  {
    id: "telemetry-truncated-data-null",
    description: "a telemetry event's `data` is `null` when it was truncated (kernel-images, events " +
      "truncateIfNeeded: `Data = \"null\"`, `Truncated = true`)",
    apply: nullableWhere((name, _property, properties) => name === "data" && "truncated" in properties)
  },
  {
    id: "browser-target-type-open",
    description: "BrowserTargetType lists five of CDP's target types; the browser's telemetry passes any CDP " +
      "target type through (`iframe`, `worker`: kernel-images' cdpmonitor and its tests; `worklet`, `app`...): " +
      "a string, its known values in its description",
    apply: (document) => {
      const schema = at(document, ["components", "schemas", "BrowserTargetType"])
      const values = schema["enum"]
      if (!Array.isArray(values)) return 0
      delete schema["enum"]
      schema["description"] = `${String(schema["description"] ?? "")} Known values include ${
        values.map((value) => `\`${String(value)}\``).join(", ")
      }, \`worker\` and \`iframe\`; any other CDP target type may come.`
      return 1
    }
  },
  {
    id: "deployment-event-error",
    description: "DeploymentEvent's discriminator maps `error` to InternalError, a response, not a schema: ErrorEvent",
    apply: remap("DeploymentEvent", "error", "InternalError", "ErrorEvent")
  },
  {
    id: "deployment-event-app-version-summary",
    description:
      "DeploymentEvent's discriminator maps `app_version_summary` to AppVersionSummary: AppVersionSummaryEvent",
    apply: remap("DeploymentEvent", "app_version_summary", "AppVersionSummary", "AppVersionSummaryEvent")
  },
  {
    id: "auth-connections-tag",
    description: "the tag `Auth Connections` (of the deprecated /agents/auth operations) is used but not declared",
    apply: (document) => {
      const tags = document["tags"]
      if (!Array.isArray(tags)) throw new Error("patch: no tags")
      if (tags.some((tag) => isObject(tag) && tag["name"] === "Auth Connections")) return 0
      tags.push({ name: "Auth Connections", description: "Deprecated: use Managed Auth (/auth/connections)." })
      return 1
    }
  },
  {
    id: "nullable",
    description: "`nullable: true` (OpenAPI 3.0) in a 3.1 document: rewritten as `type: [t, \"null\"]` or `anyOf`",
    apply: (document) => rewriteNullable(document["paths"]) + rewriteNullable(document["components"])
  }
]

/** How many places each patch changed. */
export type Applied = Readonly<Record<string, number>>

/** A patched deep copy of the document, and how many places each patch changed (none is a failure). */
export const applyPatches = (document: Document): { readonly document: Document; readonly applied: Applied } => {
  const copy: Mutable = structuredClone(document) as unknown as Mutable
  const applied: Record<string, number> = {}
  for (const patch of patches) {
    const count = patch.apply(copy)
    if (count === 0) throw new Error(`patch ${patch.id} no longer applies: ${patch.description}`)
    applied[patch.id] = count
  }
  return { document: copy as unknown as Document, applied }
}
