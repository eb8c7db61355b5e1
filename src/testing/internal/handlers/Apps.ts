/**
 * The simulator's apps: one per deployment, named by the deployment (or its entrypoint).
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"

/** The app a deployment serves (see `engine.appName`). */
export const appName = engine.appName

/** The version of a deployment's app. */
export const versionOf = (d: Pick<engine.Resource, "fields">): unknown => d.fields["version"] ?? "latest"

/** Whether a deployment serves its app: not deleted, not stopped (a deleted deployment is) nor failed. */
const serves = (d: engine.Resource): boolean =>
  !d.deleted && d.fields["status"] !== "stopped" && d.fields["status"] !== "failed" && appName(d) !== undefined

/**
 * The id of a deployment the caller of `project` sees that serves the app `name` at `version` (deployed
 * in this world or seeded), if there is one.
 */
export const deployedBy = (
  store: engine.Store,
  name: unknown,
  version: unknown,
  project: string | undefined
): string | undefined => {
  // only the deployments of that app (a scan of every deployment found the same first one)
  if (typeof name !== "string") return undefined
  for (const d of engine.deploymentsOf(store, name)) {
    if (serves(d) && engine.visible(d, project) && appName(d) === name && versionOf(d) === version) return d.id
  }
  return undefined
}

/** Whether a deployment passes a list's `app_name` and version filters (`null`: not given). */
const named = (d: engine.Resource, name: string | null, version: string | null): boolean =>
  (name === null || appName(d) === name) && (version === null || versionOf(d) === version)

export const handlers: Handlers = {
  listApps: ({ call, op, store }) => {
    const name = call.query.get("app_name")
    const version = call.query.get("version")
    const query = call.query.get("query")?.toLowerCase() ?? ""
    // only the page's apps are made, from the current deployments (a deleted or retired one serves none)
    return engine.list(
      op,
      engine.currentOf(store, "/deployments"),
      call.query,
      (d) => ({
        id: `app_${d.id}`,
        app_name: appName(d),
        version: versionOf(d),
        region: d.fields["region"],
        deployment: d.id,
        actions: [],
        env_vars: d.fields["env_vars"] ?? {}
      }),
      (d) =>
        serves(d) && engine.visible(d, call.project) && named(d, name, version) &&
        (query === "" || (appName(d) ?? "").toLowerCase().includes(query))
    )
  },
  // the deployments of an app: `app_name` is the app a deployment serves (named or from its entrypoint)
  listDeployments: ({ call, op, store }) => {
    const name = call.query.get("app_name")
    const version = call.query.get("app_version")
    return engine.list(
      op,
      store.collections.get("/deployments")?.values() ?? [],
      call.query,
      (d) => d.fields,
      (d) => !d.deleted && engine.visible(d, call.project) && named(d, name, version)
    )
  }
}
