/**
 * The simulator's proxies: a create's `config` checked as the member its `type` names; a check
 * marks the proxy available.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as SchemaAST from "effect/SchemaAST"
import * as engine from "../engine.js"
import * as values from "../values.js"
import type { Handlers } from "./shared.js"
import { error, ok } from "./shared.js"

/**
 * The config schema each proxy `type` takes (the document's discriminator on `type`; for `custom` a
 * create takes `CreateCustomProxyConfig`, the document's mapping names the answer's `CustomProxyConfig`).
 */
const configOf: Readonly<Record<string, string>> = {
  datacenter: "DatacenterProxyConfig",
  isp: "IspProxyConfig",
  residential: "ResidentialProxyConfig",
  mobile: "MobileProxyConfig",
  custom: "CreateCustomProxyConfig"
}

/** The member of the body's `config` union named `identifier`, found once per body schema. */
const memberNamed = (body: SchemaAST.AST, identifier: string): SchemaAST.AST | undefined => {
  let found = members.get(body)
  if (found === undefined) {
    const config = values.fieldAt(body, ["config"])
    found = new Map()
    for (const member of config === undefined ? [] : flatMembers(config)) {
      const name = SchemaAST.getIdentifierAnnotation(member)
      if (Option.isSome(name) && !found.has(name.value)) found.set(name.value, member)
    }
    members.set(body, found)
  }
  return found.get(identifier)
}

/** The members of a union, the unions among them flattened (`Schema.optional` of a union is a union of it). */
const flatMembers = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  ast._tag === "Union" ? ast.types.flatMap(flatMembers) : [ast]

const members = new WeakMap<SchemaAST.AST, Map<string, SchemaAST.AST>>()

export const handlers: Handlers = {
  createProxy: ({ body, call, op, store }) => {
    // the body's union is told apart by `type`, not by the first member that fits: a custom proxy's
    // config needs its host and port, a datacenter's takes no city. The config as sent (the checked
    // body keeps the fields of the first member it fits: `{ host }` alone fits a datacenter's, as `{}`)
    const type = body["type"]
    const config = sentConfig(call.raw) ?? body["config"]
    const identifier = typeof type === "string" ? configOf[type] : undefined
    const member = identifier === undefined || op.body?.kind !== "json"
      ? undefined
      : memberNamed(op.body.schema.ast, identifier)
    if (config !== undefined && member !== undefined) {
      // exactly the fields of its type's config (the document's configs are open, and a oneOf of them
      // would fit several: a datacenter's with a city fits a residential's too)
      const issue = values.firstIssue(values.schemaOf(member), config, { closed: true })
      if (issue !== undefined) {
        const where = issue.startsWith("body") ? `config${issue.slice("body".length)}` : `config.${issue}`
        return error(400, "bad_request", `invalid input: ${where} (a ${type} proxy's config)`)
      }
    }
    // a custom proxy's answer says whether it has a password (`has_password`), never the password
    const stored = type === "custom" && values.isObject(config)
      ? { ...call, body: { ...body, config: { ...config, has_password: typeof config["password"] === "string" } } }
      : call
    return engine.generic(store, stored, () => "proxy")
  },
  checkProxy: ({ body, call, op, stamp, store }) => {
    const resource = engine.findById(store, "/proxies", call.segments[1]!, call.project)
    if (resource === undefined) return error(404, "not_found", "proxy not found")
    // the document: "Only HTTP and HTTPS schemes are allowed"; "When provided, the check result does not
    // update the proxy's health status"
    const url = body["url"]
    if (typeof url === "string") {
      const refused = checkedUrlIssue(url)
      if (refused !== undefined) return error(400, "bad_request", `invalid input: url: ${refused}`)
      return ok(op, { ...resource.fields, status: "available", last_checked: stamp })
    }
    resource.fields = { ...resource.fields, status: "available", last_checked: stamp }
    return ok(op, resource.fields)
  }
}

/**
 * Why a proxy check's `url` is refused (the document: "Only HTTP and HTTPS schemes are allowed, and the URL
 * must resolve to a public IP address"): not a URL, another scheme, no host, or a host that is not public
 * (`localhost`, a loopback, private or link-local address); `undefined` when it may be checked.
 */
const checkedUrlIssue = (text: string): string | undefined => {
  if (!URL.canParse(text) || /\s/.test(text)) return "is not a URL"
  const url = new URL(text)
  if (url.protocol !== "http:" && url.protocol !== "https:") return "only an http or https URL is allowed"
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
  if (host === "") return "has no host"
  if (host === "localhost" || host.endsWith(".localhost") || notPublic.test(host)) {
    return `${host} is not a public address`
  }
  return undefined
}

/** The IPv4 and IPv6 literals of addresses that are not public: loopback, private, link-local, unspecified. */
const notPublic =
  /^(?:127\.|10\.|192\.168\.|169\.254\.|172\.(?:1[6-9]|2\d|3[01])\.|0\.|::1?$|f[cd][0-9a-f]{0,2}:|fe[89ab][0-9a-f]?:|::ffff:(?:127|10)\.)/

/** The `config` of a JSON body as sent, or `undefined`. */
const sentConfig = (raw: Uint8Array): unknown => {
  try {
    const sent: unknown = JSON.parse(new TextDecoder().decode(raw))
    return values.isObject(sent) ? sent["config"] : undefined
  } catch {
    return undefined
  }
}
