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
  // the host as `URL` writes it (an IPv4 address in any form dotted: `0x7f000001` as `127.0.0.1`), without
  // an IPv6 address's brackets or a name's last dot
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase()
  if (host === "") return "has no host"
  const local = host === "localhost" || host.endsWith(".localhost")
  return local || (host.includes(":") ? !publicV6(host) : /^[\d.]+$/.test(host) && !publicV4(host))
    ? `${host} is not a public address`
    : undefined
}

/** Whether a dotted IPv4 address is public: not loopback, private, link-local, shared or unspecified. */
const publicV4 = (host: string): boolean => {
  const [a = 0, b = 0] = host.split(".").map(Number)
  return !(a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
}

/**
 * Whether an IPv6 address (as `URL` writes it) is public: not loopback, unspecified, unique-local or
 * link-local, nor an IPv4-mapped address that is not (`::ffff:7f00:1`, `127.0.0.1`).
 */
const publicV6 = (host: string): boolean => {
  if (host === "::" || host === "::1" || /^f[cd]/.test(host) || /^fe[89ab]/.test(host)) return false
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host)
  if (mapped === null) return true
  const high = parseInt(mapped[1]!, 16)
  const low = parseInt(mapped[2]!, 16)
  return publicV4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`)
}

/** The `config` of a JSON body as sent, or `undefined`. */
const sentConfig = (raw: Uint8Array): unknown => {
  try {
    const sent: unknown = JSON.parse(new TextDecoder().decode(raw))
    return values.isObject(sent) ? sent["config"] : undefined
  } catch {
    return undefined
  }
}
