/**
 * The simulator's credentials: a TOTP secret gives real TOTP codes on the simulator's clock.
 *
 * @internal
 */
import * as engine from "../engine.js"
import * as values from "../values.js"
import type { Handler, Handlers } from "./shared.js"
import { error, lastOf, ok } from "./shared.js"

const expiry = (now: number): string => new Date((Math.floor(now / 30_000) + 1) * 30_000).toISOString()

const save: Handler = ({ body, call, op, store }) => {
  const reply = engine.generic(store, call, () => "cred")
  if (reply._tag !== "Json") return reply
  const resource = op.name === "createCredential"
    ? lastOf(store, "/credentials")
    : engine.find(store, "/credentials", call.segments[1]!, call.project)
  if (resource === undefined) return reply
  const secret = body["totp_secret"]
  if (typeof secret === "string" && secret !== "") {
    resource.fields = { ...resource.fields, has_totp_secret: true }
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
    if (resource === undefined) return error(404, "not_found", "credential not found")
    const secret = resource.fields["totp_secret"]
    if (typeof secret !== "string") return error(400, "bad_request", "this credential has no TOTP secret")
    return ok(op, { code: values.totp(secret, call.now), expires_at: expiry(call.now) })
  }
}
