/**
 * The simulator's projects: one that still holds resources cannot be deleted (the document: "The
 * project must be empty (no active resources)", 409).
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error } from "./shared.js"

/**
 * A project's caller (its API key, or the project header) changes its own project only: renaming,
 * re-limiting or deleting another is 404, as making a key of another is (`ApiKeys.ts`). Every caller
 * still reads every project (the organization's: they belong to none).
 */
const another = (call: engine.Call, project: engine.Resource | undefined) =>
  call.project !== undefined && project !== undefined && !project.deleted && project.id !== call.project
    ? error(404, "not_found", "project not found")
    : undefined

/** The caps of a project's limits: 0 removes one (the document), so it reads back `null`. */
const caps = ["max_concurrent_sessions", "max_concurrent_invocations", "max_pooled_sessions"]

export const handlers: Handlers = {
  updateProjectLimits: ({ body, call, store }) =>
    another(call, engine.find(store, "/org/projects", call.segments[2]!, call.project)) ?? engine.generic(store, {
      ...call,
      body: Object.fromEntries(
        Object.entries(body).map(([name, value]) => [name, caps.includes(name) && value === 0 ? null : value])
      )
    }, () => "limits"),
  // an API key tells its project's name (`project_name`): renaming the project renames it there too (it was
  // copied once, when the key was made)
  updateProject: ({ body, call, store }) => {
    // found before the update: addressed by its name, the path names it no more once renamed
    const project = engine.find(store, "/org/projects", call.segments[2]!, call.project)
    const refused = another(call, project)
    if (refused !== undefined) return refused
    const reply = engine.generic(store, call, () => "project")
    if (reply._tag !== "Json" || reply.status >= 300 || typeof body["name"] !== "string") return reply
    if (project === undefined) return reply
    for (const key of store.collections.get("/org/api_keys")?.values() ?? []) {
      if (key.fields["project_id"] === project.id) key.fields = { ...key.fields, project_name: project.fields["name"] }
    }
    return reply
  },
  deleteProject: ({ call, store }) => {
    const project = engine.find(store, "/org/projects", call.segments[2]!, call.project)
    const refused = another(call, project)
    if (refused !== undefined) return refused
    if (project !== undefined && !project.deleted) {
      // the top-level collections only (`engine.projectCollections`), through the store's index of them
      const held = engine.projectHolding(store, project.id, (r) => !r.deleted && r.retired !== true)
      if (held !== undefined) {
        return error(409, "conflict", `the project still holds resources (${held.collection}/${held.resource.id})`)
      }
    }
    return engine.generic(store, call, () => "project")
  }
}
