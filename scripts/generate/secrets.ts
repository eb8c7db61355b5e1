/**
 * The names of the fields that hold a secret somewhere in the API (a `Redacted` field of any schema):
 * an error body the SDK quotes (a status it does not expect a JSON error for, a proxy's page) has
 * the values of such fields taken out, whichever resource the server put there.
 */
import * as Ir from "./ir.js"
import { header } from "./schemas.js"

/** Whether a field of this schema is itself a secret: a `Redacted`, nullable or not, or a map of them. */
const isSecret = (schema: Ir.Schema): boolean =>
  schema.kind === "redacted" ||
  (schema.kind === "nullable" && isSecret(schema.schema)) ||
  (schema.kind === "object" && schema.properties.length === 0 && schema.additional !== undefined &&
    isSecret(schema.additional))

/** The names of the secret fields of every schema of the API (named or inline), sorted. */
export const secretFieldNames = (api: Ir.Api): ReadonlyArray<string> => {
  const names = new Set<string>()
  const visit = (schema: Ir.Schema): void => {
    if (schema.kind === "object") {
      for (const property of schema.properties) if (isSecret(property.schema)) names.add(property.name)
    }
    Ir.children(schema).forEach(visit)
  }
  for (const named of api.schemas.values()) visit(named.schema)
  for (const operation of api.operations) {
    for (const parameter of operation.parameters) if (isSecret(parameter.schema)) names.add(parameter.name)
  }
  return [...names].sort()
}

/** `src/internal/generated/secretFields.ts`. */
export const secretFieldsFile = (api: Ir.Api): string =>
  `${header}
/**
 * The names of the fields that hold a secret in some schema of the API (decoded as \`Redacted\`):
 * their values are taken out of the error bodies the SDK quotes.
 *
 * @internal
 */
export const secretFieldNames: ReadonlySet<string> = new Set(${JSON.stringify(secretFieldNames(api))})
`

/**
 * The named schemas that allow no other field (`additionalProperties: false`), sorted: the simulator
 * refuses a request body with another field where the document says so, and only there (an object
 * the document leaves open takes fields it does not list, as the service does).
 */
export const closedSchemaNames = (api: Ir.Api): ReadonlyArray<string> =>
  [...api.schemas].filter(([, named]) => named.schema.kind === "object" && named.schema.closed === true)
    .map(([name]) => name).sort()

/** `src/internal/generated/closedSchemas.ts`. */
export const closedSchemasFile = (api: Ir.Api): string =>
  `${header}
/**
 * The identifiers of the schemas the document closes (\`additionalProperties: false\`): a value with
 * a field they do not list breaks them. The simulator checks request bodies by it.
 *
 * @internal
 */
export const closedSchemaNames: ReadonlySet<string> = new Set(${JSON.stringify(closedSchemaNames(api))})
`
