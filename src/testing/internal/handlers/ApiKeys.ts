/**
 * The simulator's API keys: a created key has its own plaintext value, given once (the stored key
 * keeps only its masked form), and expires `days_to_expire` days after its creation (never without).
 *
 * @internal
 */
import * as Crypto from "node:crypto"
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { lastOf, ok } from "./shared.js"

const day = 24 * 60 * 60 * 1000

export const handlers: Handlers = {
  createApiKey: ({ body, call, op, store }) => {
    const reply = engine.generic(store, call, () => "api_key")
    if (reply._tag !== "Json") return reply
    const resource = lastOf(store, "/org/api_keys")
    if (resource === undefined) return reply
    // deterministic per key (the simulator's answers repeat from run to run), distinct between keys
    const key = `sk_sim_${Crypto.createHash("sha256").update(resource.id).digest("hex").slice(0, 32)}`
    const days = body["days_to_expire"]
    const { key: _, ...fields } = resource.fields
    resource.fields = {
      ...fields,
      expires_at: typeof days === "number" ? engine.isoAt(call.now + days * day) : null,
      masked_key: `${key.slice(0, 7)}...${key.slice(-4)}`
    }
    return ok(op, { ...resource.fields, key })
  }
}
