/**
 * The secrets of the API's values: what a schema types as `Redacted` (a browser's CDP and live-view
 * URLs, an API key's value, credential values, TOTP codes...), found in the schema, and a JSON value
 * with them replaced, for the places that show a value the SDK did not decode (an event that does
 * not decode; the simulator's request log).
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { secretFieldNames } from "./generated/secretFields.js"

const hidden = "<redacted>"

/**
 * Whether the AST is effect's `Redacted` declaration (`Schema.RedactedFromSelf`, the type side of
 * `Schema.Redacted`).
 *
 * @internal
 */
export const isRedactedAst = (ast: SchemaAST.AST): boolean =>
  Option.exists(SchemaAST.getTypeConstructorAnnotation(ast), (constructor) => constructor._tag === "effect/Redacted")

/** Whether some value of the schema's AST is a `Redacted`. */
const holdsSecret = (ast: SchemaAST.AST, visited: Set<SchemaAST.AST>): boolean => {
  if (visited.has(ast)) return false
  visited.add(ast)
  switch (ast._tag) {
    case "Declaration":
      return isRedactedAst(ast) || ast.typeParameters.some((p) => holdsSecret(p, visited))
    case "Transformation":
      return holdsSecret(ast.to, visited) || holdsSecret(ast.from, visited)
    case "Refinement":
      return holdsSecret(ast.from, visited)
    case "Suspend":
      return holdsSecret(ast.f(), visited)
    case "Union":
      return ast.types.some((member) => holdsSecret(member, visited))
    case "TypeLiteral":
      return ast.propertySignatures.some((p) => holdsSecret(p.type, visited)) ||
        ast.indexSignatures.some((s) => holdsSecret(s.type, visited))
    case "TupleType":
      return ast.elements.some((e) => holdsSecret(e.type, visited)) ||
        ast.rest.some((r) => holdsSecret(r.type, visited))
    default:
      return false
  }
}

/**
 * The JSON value with what the schema types as `Redacted` replaced by `"<redacted>"` (a union: by each
 * member).
 *
 * @internal
 */
export const redactJson = (ast: SchemaAST.AST, value: unknown): unknown => redact(ast, value, 0)

const redact = (ast: SchemaAST.AST, value: unknown, depth: number): unknown => {
  if (depth > 64) return value
  switch (ast._tag) {
    case "Declaration":
      return isRedactedAst(ast) ? hidden : value
    case "Transformation":
      return isRedactedAst(ast.to) ? hidden : redact(ast.from, value, depth + 1)
    case "Refinement":
      return redact(ast.from, value, depth + 1)
    case "Suspend":
      return redact(ast.f(), value, depth + 1)
    case "Union":
      return ast.types.reduce((current: unknown, member) => redact(member, current, depth + 1), value)
    case "TypeLiteral": {
      // a value of another shape where a secret-holding object is expected (`values: ["hunter2"]`, a
      // request the service refuses): hidden whole, as the secrets it was meant to hold may be in it
      if (typeof value !== "object" || value === null || Array.isArray(value)) return misshapen(ast, value, depth)
      const out: Record<string, unknown> = { ...value }
      const named = new Set<PropertyKey>()
      for (const property of ast.propertySignatures) {
        named.add(property.name)
        if (typeof property.name === "string" && Object.hasOwn(out, property.name)) {
          setOwn(out, property.name, redact(property.type, out[property.name], depth + 1))
        }
      }
      // a key the schema does not list (a record's, `env`'s `API_KEY`; or one an open object takes), named as
      // a secret field is somewhere in the API, in any case or spelling (or ending with a credential's
      // word): hidden; what another holds is walked as its schema says, or as free JSON
      for (const key of Object.keys(out)) {
        if (named.has(key)) continue
        if (isSecretKey(key) && out[key] !== null) {
          setOwn(out, key, hidden)
          continue
        }
        setOwn(
          out,
          key,
          ast.indexSignatures.reduce(
            (current: unknown, signature) => redact(signature.type, current, depth + 1),
            ast.indexSignatures.length === 0 ? freeJson(out[key], depth + 1) : out[key]
          )
        )
      }
      return out
    }
    case "TupleType": {
      if (!Array.isArray(value)) return misshapen(ast, value, depth)
      return value.map((item: unknown, k) => {
        const type = ast.elements[k]?.type ?? ast.rest[0]?.type
        return type === undefined ? item : redact(type, item, depth + 1)
      })
    }
    case "UnknownKeyword":
    case "AnyKeyword":
    case "ObjectKeyword":
      // any JSON (a pool's `chrome_policy`): every key named as a secret field, however deep
      return freeJson(value, depth)
    default:
      // a value of another shape than a scalar's (`"url": { "password": ... }`, a request the service refuses):
      // walked as any JSON
      return typeof value === "object" && value !== null ? freeJson(value, depth) : value
  }
}

/** A value of any JSON with its secret fields' values hidden ({@link withoutFields}); hidden whole when too deep. */
const freeJson = (value: unknown, depth: number): unknown => {
  try {
    return withoutFields(value, depth)
  } catch {
    return hidden
  }
}

/**
 * A value of another shape than its AST's: hidden whole where the AST holds secrets (`values: ["..."]`), else
 * walked as any JSON; `null` kept.
 */
const misshapen = (ast: SchemaAST.AST, value: unknown, depth: number): unknown =>
  value !== null && value !== undefined && astHoldsSecret(ast) ? hidden : freeJson(value, depth)

const secretAsts = new WeakMap<SchemaAST.AST, boolean>()

/**
 * Whether some value of the AST is a `Redacted` (found once per AST).
 *
 * @internal
 */
export const astHoldsSecret = (ast: SchemaAST.AST): boolean => {
  let secret = secretAsts.get(ast)
  if (secret === undefined) {
    secret = holdsSecret(ast, new Set())
    secretAsts.set(ast, secret)
  }
  return secret
}

/**
 * Whether a body of the schema may carry a secret (found once per schema's AST).
 *
 * @internal
 */
export const holdsSecrets = (schema: Schema.Schema.AnyNoContext | undefined): schema is Schema.Schema.AnyNoContext =>
  schema !== undefined && astHoldsSecret(schema.ast)

const noSecrets: ReadonlyArray<string> = []

/** A `Redacted`'s value, or `undefined` once the caller wiped it (`Redacted.unsafeWipe`: `Redacted.value` throws). */
const readRedacted = (value: Redacted.Redacted<unknown>): unknown => {
  try {
    return Redacted.value(value)
  } catch {
    return undefined
  }
}

/**
 * The secrets a call's input sends: the value of every `Redacted` string in it (a credential's
 * values and TOTP secret, a login's fields, a proxy's password...), and each one as it is written
 * inside a JSON string when that differs, for the errors to take out of what the server echoes.
 * Walks plain objects and arrays only (never a byte array or a stream), to a bounded depth and
 * count.
 *
 * @internal
 */
export const sentSecrets = (input: unknown): ReadonlyArray<string> => {
  const found: Array<string> = []
  let visited = 0
  const walk = (value: unknown, depth: number): void => {
    if (typeof value !== "object" || value === null || depth > 8 || ++visited > 10_000) return
    if (Redacted.isRedacted(value)) {
      const secret = readRedacted(value)
      if (typeof secret === "string" && secret !== "") {
        found.push(secret)
        const escaped = JSON.stringify(secret).slice(1, -1)
        if (escaped !== secret) found.push(escaped)
      }
      return
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1)
      return
    }
    const prototype: unknown = Object.getPrototypeOf(value)
    if (prototype !== Object.prototype && prototype !== null) return
    for (const key of Object.keys(value)) walk(Reflect.get(value, key), depth + 1)
  }
  walk(input, 0)
  // the longest first: a secret that holds another is taken out whole
  return found.length === 0 ? noSecrets : found.sort((a, b) => b.length - a.length)
}

/**
 * The words of a secret field's name joined as a text may write them: `_`, `-`, `.` or nothing, an
 * underscore escaped (`\u005f`, `\x5f`, `%5f`, `&#95;`, `&lowbar;`).
 */
const joined = (name: string): string =>
  name.split("_").join(String.raw`(?:[_\-.]|\\u005f|\\x5f|%5f|&#0*95;|&#x0*5f;|&lowbar;)?`)

/** A quote around a key: `"`, `'`, or one escaped (`\"`, `\x22`, `\u0022`), HTML- or URL-encoded. */
const quote = String.raw`(?:\\?["']|\\x2[27]|\\u002[27]|%2[27]|&quot;|&#0*3[49];|&#x0*2[27];|&apos;)`

/**
 * The common words among the secret fields' names taken as an XML element (not `code` nor `key`: an
 * S3 error's `<Code>` and `<Key>`) or as a header's last word (`X-Api-Key:`).
 */
const elementWords = ["password", "token", "jwt"].filter((word) => secretFieldNames.has(word))
const headerWords = [...elementWords, "key"].filter((word) => secretFieldNames.has(word))

/**
 * A secret field's name in a text that is not JSON (a proxy's page, a log line, a dump), in any case,
 * not inside a longer word. A name of several words (`cdp_ws_url`,
 * `browser_live_view_url`, `totp_secret`), its words joined in any way (`CdpWsURL`, `X-Cdp-Ws-Url`,
 * `cdp\u005fws_url`): wherever it is (a key, an HTML table's header, an XML element, a CSV header). A
 * name that is a common word (`code`, `key`, `token`, `password`): only written as a key, quoted
 * (`"token":`, `&quot;token&quot;:`, `%22token%22%3A`, `'password' =>`), before `=` (`token=` of logfmt,
 * a form or a URL's query), right before a colon (`Token:abc` of Go's `%+v`) or before a quoted value
 * (`{ token: 'abc' }` of `util.inspect`); `password`, `token` and `jwt` as an XML element
 * (`<wsse:Password Type="...">`), and they and `key` as the last word of a header (`X-Api-Key: abc`). Never in prose
 * (`error code: 1020`, `password: must be at least 8 characters`, `<Code>AccessDenied</Code>`).
 */
const secretKeyInText = new RegExp(
  [
    String.raw`(?<![A-Za-z0-9])(?:${
      [...secretFieldNames].filter((name) => name.includes("_")).map(joined).join("|")
    })(?![A-Za-z0-9])`,
    ...[...secretFieldNames].filter((name) => !name.includes("_")).map((word) =>
      String
        .raw`${quote}${word}${quote}\s*(?:=>|[:=]|%3a|%3d|\\x3a)|(?<![A-Za-z0-9])${word}(?:\s*(?:=>|=|%3d)|:(?=\S)|\s*:\s*["'])`
    ),
    String.raw`<(?:[\w-]+:)?(?:${elementWords.join("|")})(?=[\s>/])`,
    String.raw`(?<![\w-])[A-Za-z][\w]*(?:-[\w]+)*-(?:${headerWords.join("|")})\s*:`
  ].join("|"),
  "i"
)

/** The secret fields' names as a key is compared to them: lower case, without `_`, `-` or `.`. */
const secretKeys: ReadonlySet<string> = new Set([...secretFieldNames].map((name) => name.replace(/_/g, "")))

/**
 * The credential words a key ending with is a secret too (`api_key`, `access_token`, `X-Api-Key`,
 * `req.body.password`, `PGPASS`, `passwd`).
 */
const credentialWords = ["password", "pass", "passwd", "token", "key", "jwt", "secret"]

/**
 * A text that may name a secret field as a JSON key does (any case, words joined in any way, a
 * credential's word, or a `\u` escape, which a parse may turn into one): what is not is kept as it is,
 * without a parse.
 */
const mayNameSecretKey = new RegExp([...secretKeys, ...credentialWords].join("|"), "i")

/**
 * Whether a text may name a secret field of the API as a key, however written (see `isSecretKey`), or
 * escape one (`pass\u0077ord`): a cheap test before a parse.
 *
 * @internal
 */
export const mayNameSecret = (text: string): boolean =>
  text.includes("\\u") || mayNameSecretKey.test(text.replace(/[_\-.[\]]/g, ""))

/**
 * Whether a name (a JSON key, a header's, a query parameter's) names a secret field, in any case and
 * however its words are joined (`cdpWsUrl`, `TOKEN`), or ends with a credential's word (`api_key`,
 * `access_token`, `X-Api-Key`, `credential[password]`).
 *
 * @internal
 */
export const isSecretKey = (key: string): boolean => {
  // the lower-case name without its separators: `X-Api-Key`, `cdpWsUrl`, `PASS_WORD`
  const normalized = key.toLowerCase().replace(/[_\-.[\]]/g, "")
  return secretKeys.has(normalized) || credentialWords.some((word) => normalized.endsWith(word))
}

/** The deepest an error body is walked for secret fields; a deeper one is cut where it holds one. */
const maxDepth = 64

/**
 * `value` with every secret field's value hidden, but for the string members named in `kept` of the
 * value itself and of its `details` and `inner_error` (an Error body's own `code`: a resource's `code` is
 * a secret, a TOTP code).
 */
const withoutFields = (value: unknown, depth: number, kept?: ReadonlySet<string>): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (depth > maxDepth) throw new RangeError("too deep")
  if (Array.isArray(value)) return value.map((item) => withoutFields(item, depth + 1, kept))
  const copy: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    const shown = field === null || (typeof field === "string" && kept !== undefined && kept.has(key))
    // an Error's own details and inner error keep their `code` too
    setOwn(
      copy,
      key,
      isSecretKey(key) && !shown
        ? hidden
        : withoutFields(field, depth + 1, kept !== undefined && errorParts.has(key) ? kept : undefined)
    )
  }
  return copy
}

/**
 * The strings under `value`'s secret fields (the field's value, or every string it holds), however deep (to
 * {@link maxDepth}): the secrets of a
 * JSON value the SDK did not decode, which therefore holds no `Redacted`.
 *
 * @internal
 */
export const secretFieldValues = (value: unknown): ReadonlyArray<string> => {
  const found: Array<string> = []
  // `secret`: under a secret field, where every string is one, whatever the shape (a value of the wrong
  // shape is what makes an answer not decode: `cdp_ws_url: ["wss://…"]`)
  const walk = (current: unknown, depth: number, secret: boolean): void => {
    if (depth > maxDepth) return
    if (typeof current === "string") {
      if (secret && current !== "") found.push(current)
      return
    }
    if (typeof current !== "object" || current === null) return
    for (const [key, field] of Object.entries(current)) walk(field, depth + 1, secret || isSecretKey(key))
  }
  walk(value, 0, false)
  return found
}

/**
 * Sets `key` of a record being made as its own data property: a `__proto__` key (what a server or a
 * caller's `JSON.parse` gives as an own key) stays data, never the record's prototype (`out[key] = v`
 * would replace it, and the value's fields would read through every key).
 *
 * @internal
 */
export const setOwn = (out: Record<PropertyKey, unknown>, key: string, value: unknown): void => {
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    out[key] = value
  }
}

/** The members of an Error body that are Errors' details themselves (their `code` is no secret either). */
const errorParts: ReadonlySet<string> = new Set(["details", "inner_error"])

/**
 * The JSON value with the value of every field named as a secret field of the API (a browser's
 * `cdp_ws_url`, an auth connection's `hosted_url`, an API key's `key`...) replaced by `"<redacted>"`,
 * wherever it is: for a value that did not decode, whose secrets may sit where no schema places them
 * (an event sent inside an array, a resource nested in another object). Throws a `RangeError` on a
 * value nested deeper than 64 levels.
 *
 * @internal
 */
export const withoutSecretFieldsJson = (value: unknown): unknown => withoutFields(value, 0)

/**
 * An error body's text as the SDK quotes it (a status's body that is not an error object, an
 * unexpected status's excerpt): the value of every field named as a secret field of the API (a
 * browser's `cdp_ws_url`, an API key's `key`, a credential's `values`...) replaced by `<redacted>`,
 * whichever resource the server put there. A JSON text is rewritten without them; a text that is not
 * JSON (cut short, or a page quoting JSON) is cut before the first such field. The string members of
 * the top-level object named in `kept` are kept (an Error body's own `code`).
 *
 * @internal
 */
export const withoutSecretFields = (text: string, kept?: ReadonlySet<string>): string => {
  const start = text.trimStart()[0]
  if (start === "{" || start === "[") {
    try {
      return JSON.stringify(withoutFields(JSON.parse(text), 0, kept))
    } catch {
      // not JSON, or too deep to rewrite: cut as text below
    }
  }
  const found = secretKeyInText.exec(text)
  return found === null ? text : `${text.slice(0, found.index)}… (the rest is not shown: it holds a secret field)`
}

/**
 * `text` with every occurrence of each secret (4 characters or longer: a shorter one would blank
 * ordinary text) replaced by `<redacted>`, in the order given; and the start of one that a cut
 * left at the end of an excerpt (4 characters of it or more, right before the `…` that marks the
 * cut: an excerpt bounded before it was searched), so that no part of a secret stays.
 *
 * @internal
 */
export const redactAll = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length < 4) continue
    // as sent, as an excerpt that squeezes whitespace shows it (`a\n\tb` as `a b`), and as a URL
    // or a form quotes it (`sk_a+b/c` as `sk_a%2Bb%2Fc`)
    const forms = new Set([secret, secret.replace(/\s+/g, " "), encoded(secret)])
    for (const form of forms) {
      out = out.split(form).join("<redacted>")
      if (out.includes(cutMark)) out = redactCut(out, form)
    }
  }
  return out
}

/** A secret percent-encoded (`encodeURIComponent`), or itself when it cannot be (a lone surrogate). */
const encoded = (secret: string): string => {
  try {
    return encodeURIComponent(secret)
  } catch {
    return secret
  }
}

/** What `bound` (and the other excerpts) put where they cut a text. */
const cutMark = "…"

/** `text` with the longest start of `secret` (4 characters or more) that ends at each cut mark redacted. */
const redactCut = (text: string, secret: string): string => {
  let out = ""
  let from = 0
  for (let at = text.indexOf(cutMark); at !== -1; at = text.indexOf(cutMark, at + 1)) {
    for (let length = Math.min(secret.length - 1, at - from); length >= 4; length--) {
      if (text.startsWith(secret.slice(0, length), at - length)) {
        out += `${text.slice(from, at - length)}<redacted>`
        from = at
        break
      }
    }
  }
  return out + text.slice(from)
}
