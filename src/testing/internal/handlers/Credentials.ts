/**
 * The simulator's credentials: a TOTP secret gives real TOTP codes on the simulator's clock.
 *
 * @internal
 */
import * as engine from "../engine.js"
import { base32Secret } from "../schema.js"
import * as values from "../values.js"
import type { Handler, Handlers } from "./shared.js"
import { error, lastOf, ok } from "./shared.js"

const expiry = (now: number): string => new Date((Math.floor(now / 30_000) + 1) * 30_000).toISOString()

const save: Handler = ({ body, call, op, store }) => {
  const secret = body["totp_secret"]
  // the seed's rule: a secret the simulator could not make codes of is refused, not stored ("": removed)
  if (typeof secret === "string" && secret !== "" && !base32Secret.test(secret)) {
    return error(400, "bad_request", "invalid input: totp_secret: must be a base32 secret (A-Z, 2-7)")
  }
  // an update's credential found before it: addressed by its name, the path names it no more once renamed
  const updated = op.name === "createCredential"
    ? undefined
    : engine.find(store, "/credentials", call.segments[1]!, call.project)
  const reply = engine.generic(store, call, () => "cred")
  if (reply._tag !== "Json") return reply
  const resource = op.name === "createCredential" ? lastOf(store, "/credentials") : updated
  if (resource === undefined) return reply
  if (secret === "") {
    const { totp_secret: _removed, ...rest } = resource.fields
    resource.fields = rest
  }
  // "Set to empty string or null to remove" (the document): the credential reads back no provider
  if (body["sso_provider"] === "") resource.fields = { ...resource.fields, sso_provider: null }
  // what it holds, as the answers say it (`has_values`, `has_totp_secret`): never its values nor its secret
  const stored = resource.fields["values"]
  const kept = resource.fields["totp_secret"]
  resource.fields = {
    ...resource.fields,
    has_values: values.isObject(stored) && Object.keys(stored).length > 0,
    has_totp_secret: typeof kept === "string" && kept !== ""
  }
  if (typeof secret === "string" && secret !== "") {
    return ok(op, {
      ...resource.fields,
      totp_code: values.totp(secret, call.now),
      totp_code_expires_at: expiry(call.now)
    })
  }
  return ok(op, resource.fields)
}

export const handlers: Handlers = {
  createCredential: save,
  updateCredential: save,
  getCredentialTotpCode: ({ call, op, store }) => {
    const resource = engine.find(store, "/credentials", call.segments[1]!, call.project)
    const secret = resource?.fields["totp_secret"]
    // the document's one 404 for both
    if (typeof secret !== "string" || secret === "") {
      return error(404, "not_found", "Credential not found or has no TOTP secret configured")
    }
    return ok(op, { code: values.totp(secret, call.now), expires_at: expiry(call.now) })
  }
}
