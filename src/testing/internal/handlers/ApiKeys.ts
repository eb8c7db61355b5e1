/**
 * The simulator's API keys: a created key has its own plaintext value, given once (the stored key
 * keeps only its masked form), and expires `days_to_expire` days after its creation (never without).
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error, keyDigest, lastOf, ok } from "./shared.js"

const day = 24 * 60 * 60 * 1000

export const handlers: Handlers = {
  createApiKey: ({ body, call, op, org, store }) => {
    // org-wide unless it names a project (or is made by a project's caller); a project named must exist
    const named = typeof body["project_id"] === "string" ? body["project_id"] : undefined
    const found = named === undefined ? undefined : engine.find(store, "/org/projects", named, undefined)
    // a project's caller (its API key, or the project header) makes keys of its own project only: a key of
    // another project would let it act in that project
    if (
      named !== undefined &&
      (found === undefined || found.deleted || (call.project !== undefined && found.id !== call.project))
    ) {
      return error(404, "not_found", `project ${named.slice(0, 64)} not found`)
    }
    const projectId = found?.id ?? call.project ?? null
    // the project's name also when the project is the caller's (`project_name` is null only for an org-wide key)
    const project = found ??
      (projectId === null ? undefined : engine.find(store, "/org/projects", projectId, undefined))
    const reply = engine.generic(store, { ...call, project: projectId ?? undefined }, () => "api_key")
    if (reply._tag !== "Json") return reply
    const resource = lastOf(store, "/org/api_keys")
    if (resource === undefined) return reply
    // deterministic per organization and key (the simulator's answers repeat from run to run), distinct
    // between keys and between organizations
    const key = `sk_sim_${keyDigest(`${org.id}/${resource.id}`).slice(0, 32)}`
    // it authenticates as the organization from now on (while it exists); the map is pruned of keys gone
    if (org.apiKeys.size >= 2 * engine.collectionLimit) {
      const kept = store.collections.get("/org/api_keys")
      for (const [digest, id] of org.apiKeys) if (kept?.get(id)?.deleted !== false) org.apiKeys.delete(digest)
    }
    org.apiKeys.set(keyDigest(key), resource.id)
    const days = body["days_to_expire"]
    const { key: _, ...fields } = resource.fields
    resource.fields = {
      ...fields,
      project_id: projectId,
      project_name: project === undefined || project.deleted ? null : project.fields["name"] ?? null,
      expires_at: typeof days === "number" ? engine.isoAt(call.now + days * day) : null,
      masked_key: `${key.slice(0, 7)}...${key.slice(-4)}`
    }
    return ok(op, { ...resource.fields, key })
  }
}
