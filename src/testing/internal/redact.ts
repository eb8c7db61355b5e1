/**
 * The simulator's request log keeps request bodies as text: the secrets a body carries (the
 * fields its schema types as `Redacted`: a credential's values and TOTP secret, a provider's
 * token, the fields of a login) are replaced by `"<redacted>"` there, and only there (the
 * simulator's behaviour sees them as sent).
 *
 * @internal
 */
import type * as Schema from "effect/Schema"
import { isSecretKey, redactJson, withoutSecretFieldsJson } from "../../internal/secrets.js"
import * as values from "./values.js"

export { holdsSecrets, isSecretKey, mayNameSecret } from "../../internal/secrets.js"

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
  // a field the schema lists is kept as it says (Playwright's `code`); where it lists none (an open
  // object, a record, any JSON) a key named as a secret field of the API is hidden, however deep
  return JSON.stringify(redactJson(schema.ast, json))
}

/**
 * The text of a body an operation does not take (a `DELETE` with a JSON body) that may name a secret field,
 * as the log keeps it: a JSON text with every key named as a secret field hidden, however deep; another
 * text not at all.
 *
 * @internal
 */
export const loggedUntyped = (text: string): string => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return "<not shown: not JSON, and it may name a secret field>"
  }
  try {
    return JSON.stringify(withoutSecretFieldsJson(json))
  } catch {
    return "<not shown: nested too deep to redact, and it may carry secrets>"
  }
}

/**
 * The text of a `multipart/form-data` body whose schema {@link holdsSecrets} (a deployment's `source`,
 * with its repository token), as the log keeps it: its fields as JSON, each file as its size
 * (`"<file: N bytes>"`), the secrets replaced. A body that is not a valid form of this schema is not shown:
 * a secret in a part that is not the JSON its schema reads (cut short, or with a trailing comma) stays
 * text, where no field of the schema says it is a secret.
 *
 * @internal
 */
export const loggedForm = (schema: Schema.Schema.AnyNoContext, contentType: string, bytes: Uint8Array): string => {
  const parts = values.parseMultipart(contentType, bytes)
  const form = parts === undefined ? undefined : values.formValue(schema.ast, parts)
  if (form === undefined || typeof form === "string" || values.bodyIssue(schema, form.value) !== undefined) {
    return "<not shown: not a valid form of this operation, and its body may carry secrets>"
  }
  return JSON.stringify(redactJson(schema.ast, values.mapFiles(form.value, (file) => `<file: ${file.length} bytes>`)))
}

/** A JSON text naming a credential header as a key (`"Authorization": ...`, any case). */
const namesCredentialHeader = /"(?:authorization|proxy-authorization|cookie|x-api-key|x-auth-token)"\s*:/i

/**
 * The headers that carry credentials (a token, one sent as a cookie, a proxy's, an API key's header), by
 * lower-case name: the request log keeps their names only, in a request's headers and in a JSON body's.
 *
 * @internal
 */
export const credentialHeaderNames: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "x-api-key",
  "x-auth-token"
])

/**
 * A URL's password (`scheme://user:password@host`, its slashes maybe JSON-escaped, `http:\/\/`): up to the
 * authority's last `@` (a password may hold one).
 */
const urlPassword = /(\b[a-z][a-z0-9+.-]*:(?:\\?\/){2}[^\s/@"'<>\\]*?:)[^\s/"'<>\\]+(@)/gi

/**
 * A URL's user name without a password (`scheme://user@host`): a token given as one (`https://ghp_…@github.com`).
 */
const urlUser = /(\b[a-z][a-z0-9+.-]*:(?:\\?\/){2})([^\s/@"'<>\\:?#]+)(@)/gi

/** A parameter of a URL's query or fragment (`?token=`, `&password=`, `#access_token=`); a value ends at the next one. */
const urlParameter = /([?&#])([^=&?#\s"'<>\\]+)=([^&?#\s"'<>\\]*)/g

/** Query parameters named as credentials, as the request's own query is read (`key`, `token`, `auth`...). */
export const credentialName = /key|token|secret|password|auth|sig/i

/**
 * A logged body's text with the credentials that URLs in it carry replaced by `<redacted>`, wherever
 * they are (a browser's `start_url`, a proxy setting in a pool's Chrome policy, an `HTTPS_PROXY` in a
 * process's environment, a curl's `url`, a URL inside another's query): a URL's password (or its user name
 * when it has no password: a token given as one), and the
 * value of a query or fragment parameter named as a credential (`access_token`, `password`, `api_key`,
 * `auth`...). A text without `@`, `?`, `&` or `#` is kept as it is.
 *
 * @internal
 */
export const withoutUrlCredentials = (text: string): string => {
  if (!text.includes("@") && !text.includes("?") && !text.includes("&") && !text.includes("#")) return text
  return text.replace(urlPassword, "$1<redacted>$2").replace(urlUser, "$1<redacted>$3").replace(
    urlParameter,
    (match, sign: string, name: string) => {
      const decoded = decodedName(name)
      return credentialName.test(decoded) || isSecretKey(decoded) ? `${sign}${name}=<redacted>` : match
    }
  )
}

/**
 * A query parameter's name as it is read (`tok%65n` is `token`, `+` a space), or as written when it is
 * not valid percent-encoding.
 *
 * @internal
 */
export const decodedName = (name: string): string => {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "))
  } catch {
    return name
  }
}

/**
 * The text of a JSON request body as the log keeps it when it carries headers for another server (`curl`'s
 * `headers`): the values of credential headers (`Authorization`, `Cookie`...) at any depth replaced by
 * `"<redacted>"`. A text that names none is kept as it is.
 *
 * @internal
 */
export const withoutCredentialHeaders = (text: string): string => {
  if (!namesCredentialHeader.test(text)) return text
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return "<not shown: not JSON, and it names a credential header>"
  }
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > 64 || typeof value !== "object" || value === null) return value
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1))
    // `fromEntries` defines each key (a `__proto__` one stays a key, as `JSON.parse` made it)
    return Object.fromEntries(
      Object.entries(value).map((
        [key, item]
      ) => [key, credentialHeaderNames.has(key.toLowerCase()) ? "<redacted>" : walk(item, depth + 1)])
    )
  }
  return JSON.stringify(walk(json, 0))
}
