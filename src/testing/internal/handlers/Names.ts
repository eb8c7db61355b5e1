/**
 * The simulator's unique names: where the document says a name is unique (a pool's, a profile's, an
 * extension's and a credential's within the project; a credential provider's and a project's within the
 * organization) and documents a 409, a create, or an update renaming, onto a name in use is that 409;
 * so is a second auth connection for the same profile and domain, with the `existing_id` the document
 * gives it. Proxies' names are not unique: their create documents no 409.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import type { Context } from "./shared.js"
import { error } from "./shared.js"

/** The operations whose `name` is unique, with their collection and whether it is unique in the whole organization. */
const named: ReadonlyMap<string, { readonly collection: string; readonly what: string; readonly perOrg: boolean }> =
  new Map([
    ["createBrowserPool", { collection: "/browser_pools", what: "browser pool", perOrg: false }],
    ["updateBrowserPool", { collection: "/browser_pools", what: "browser pool", perOrg: false }],
    ["createProfile", { collection: "/profiles", what: "profile", perOrg: false }],
    ["uploadExtension", { collection: "/extensions", what: "extension", perOrg: false }],
    ["createCredential", { collection: "/credentials", what: "credential", perOrg: false }],
    ["updateCredential", { collection: "/credentials", what: "credential", perOrg: false }],
    ["createCredentialProvider", {
      collection: "/org/credential_providers",
      what: "credential provider",
      perOrg: true
    }],
    ["updateCredentialProvider", {
      collection: "/org/credential_providers",
      what: "credential provider",
      perOrg: true
    }],
    ["createProject", { collection: "/org/projects", what: "project", perOrg: true }],
    ["updateProject", { collection: "/org/projects", what: "project", perOrg: true }]
  ])

/**
 * The 409 of a create or an update whose name (or, for an auth connection, profile and domain) is taken, or
 * `undefined`. A name is taken in a project by a resource of that project or of none (a caller naming no
 * project sees them all: every one of them), so that a name always finds one resource.
 */
export const conflict = ({ body, call, store }: Context): Reply | undefined => {
  if (call.operation.name === "createAuthConnection") {
    for (const existing of store.collections.get("/auth/connections")?.values() ?? []) {
      if (
        !existing.deleted && engine.visible(existing, call.project) &&
        existing.fields["profile_name"] === body["profile_name"] && existing.fields["domain"] === body["domain"]
      ) {
        return {
          _tag: "Json",
          status: 409,
          value: {
            code: "already_exists",
            message: "Auth connection already exists for this profile and domain",
            existing_id: existing.id
          }
        }
      }
    }
    return undefined
  }
  const rule = named.get(call.operation.name)
  const name = body["name"]
  if (rule === undefined || typeof name !== "string") return undefined
  // an update may keep its own name
  const self = engine.kindOf(call.operation) === "update"
    ? engine.find(store, rule.collection, call.segments[call.segments.length - 1]!, call.project)?.id
    : undefined
  for (const existing of store.collections.get(rule.collection)?.values() ?? []) {
    if (
      existing.fields["name"] === name && !existing.deleted && existing.id !== self &&
      (rule.perOrg || engine.visible(existing, call.project))
    ) {
      return error(
        409,
        "conflict",
        `${/^[aeiou]/.test(rule.what) ? "an" : "a"} ${rule.what} named ${
          JSON.stringify(name.slice(0, 100))
        } already exists`
      )
    }
  }
  return undefined
}
