/**
 * The simulator's request log keeps request bodies as text: the secrets a body carries (the
 * fields its schema types as `Redacted`: a credential's values and TOTP secret, a provider's
 * token, the fields of a login) are replaced by `"<redacted>"` there, and only there (the
 * simulator's behaviour sees them as sent).
 *
 * @internal
 */
import type * as Schema from "effect/Schema"
import { redactJson } from "../../internal/secrets.js"

export { holdsSecrets } from "../../internal/secrets.js"

/**
 * The text of a JSON request body whose schema {@link holdsSecrets}, as the log keeps it: parsed,
 * its secrets replaced, written again (a body that is not JSON is not shown).
 *
 * @internal
 */
export const loggedBody = (schema: Schema.Schema.AnyNoContext, text: string): string => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return "<not shown: not JSON, and this operation's body may carry secrets>"
  }
  return JSON.stringify(redactJson(schema.ast, json))
}
