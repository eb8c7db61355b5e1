/**
 * The simulator's apps: one per deployment, named by the deployment (or its entrypoint).
 *
 * @internal
 */
import * as engine from "../engine.js"
import { isObject } from "../values.js"
import type { Handlers } from "./shared.js"

/** An app's name from its entrypoint, `src/my-app.ts` → `my-app`. */
const appNameOf = (entrypoint: string): string => entrypoint.split("/").at(-1)!.replace(/\.[^.]*$/, "") || "app"

/**
 * The app a deployment serves: the service reads the app's name from its code, which the simulator
 * does not run, so a deployment that names no app serves one named by its entrypoint's base name (a
 * zip's `entrypoint_rel_path`, a GitHub source's `entrypoint`; `undefined`: it serves none).
 */
const appName = (d: engine.Resource): string | undefined => {
  const named = d.fields["app_name"]
  const source = d.fields["source"]
  const entrypoint = d.fields["entrypoint_rel_path"] ?? (isObject(source) ? source["entrypoint"] : undefined)
  return typeof named === "string" ? named : typeof entrypoint === "string" ? appNameOf(entrypoint) : undefined
}

/** The version of a deployment's app. */
const versionOf = (d: engine.Resource): unknown => d.fields["version"] ?? "latest"

/** Whether a deployment serves its app: not deleted, not stopped (a deleted deployment is) nor failed. */
const serves = (d: engine.Resource): boolean =>
  !d.deleted && d.fields["status"] !== "stopped" && d.fields["status"] !== "failed" && appName(d) !== undefined

/**
 * Whether a deployment the caller of `project` sees serves the app `name` at `version` (deployed in
 * this world or seeded).
 */
export const isDeployed = (store: engine.Store, name: unknown, version: unknown, project: string | undefined) => {
  for (const d of store.collections.get("/deployments")?.values() ?? []) {
    if (serves(d) && engine.visible(d, project) && appName(d) === name && versionOf(d) === version) return true
  }
  return false
}

export const handlers: Handlers = {
  listApps: ({ call, op, store }) =>
    // only the page's apps are made
    engine.list(op, store.collections.get("/deployments")?.values() ?? [], call.query, (d) => ({
      id: `app_${d.id}`,
      app_name: appName(d),
      version: versionOf(d),
      region: d.fields["region"],
      deployment: d.id,
      actions: [],
      env_vars: d.fields["env_vars"] ?? {}
    }), serves)
}
