/**
 * The helper the generated schemas (scripts/generate) write their named structs with.
 *
 * @internal
 */
import * as Schema from "effect/Schema"

/**
 * A named struct: `Schema.Struct(fields)` carrying its identifier (parse errors and docs say
 * `Browser`, not the whole struct). The same schema and type as the two written out.
 *
 * @internal
 */
export const struct = /* @__NO_SIDE_EFFECTS__ */ <Fields extends Schema.Struct.Fields>(
  identifier: string,
  fields: Fields
): Schema.Struct<Fields> => Schema.Struct(fields).annotations({ identifier })
