/**
 * The parts of an OpenAPI 3.1 document the generator reads, and its loading.
 */
import * as yaml from "js-yaml"
import * as fs from "node:fs"
import type { Limits } from "../../src/internal/limits.js"

/**
 * A JSON Schema object of the document (OpenAPI 3.1), with the 3.0 `nullable` it still uses, and
 * its validation keywords (`minLength`, `maximum`, ...: the runtime's `Limits`).
 */
export interface JsonSchema extends Omit<Limits, "format"> {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly format?: string
  readonly description?: string
  readonly enum?: ReadonlyArray<string | number | boolean | null>
  readonly const?: string | number | boolean | null
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: boolean | JsonSchema
  readonly items?: JsonSchema
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly discriminator?: { readonly propertyName: string; readonly mapping?: Readonly<Record<string, string>> }
  readonly nullable?: boolean
  readonly deprecated?: boolean
  readonly example?: unknown
  readonly examples?: unknown
}

export interface MediaType {
  readonly schema?: JsonSchema
  readonly example?: unknown
  readonly examples?: Readonly<Record<string, { readonly value?: unknown }>>
}

export interface Response {
  readonly $ref?: string
  readonly description?: string
  readonly headers?: Readonly<Record<string, unknown>>
  readonly content?: Readonly<Record<string, MediaType>>
}

export interface ParameterObject {
  readonly $ref?: string
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required?: boolean
  readonly description?: string
  readonly schema?: JsonSchema
}

export interface OperationObject {
  readonly operationId: string
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly deprecated?: boolean
  readonly parameters?: ReadonlyArray<ParameterObject>
  readonly requestBody?: {
    readonly required?: boolean
    readonly content: Readonly<Record<string, MediaType>>
  }
  readonly responses: Readonly<Record<string, Response>>
}

export interface Document {
  readonly openapi: string
  readonly tags?: ReadonlyArray<{ readonly name: string; readonly description?: string }>
  readonly paths: Readonly<Record<string, Readonly<Record<string, OperationObject>>>>
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>
    readonly responses?: Readonly<Record<string, Response>>
  }
}

/** The HTTP methods of a path item (anything else there, such as `parameters`, is not an operation). */
export const methods = ["get", "post", "put", "patch", "delete"] as const

/** Reads the document (YAML or JSON) as data: YAML 1.2's core schema, so a date stays its text. */
export const load = (file: string): Document =>
  yaml.load(fs.readFileSync(file, "utf8"), { schema: yaml.CORE_SCHEMA }) as Document

/** The name of a component a `$ref` points to (`#/components/schemas/Name` → `Name`). */
export const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)
