/**
 * The simulator's apps: one per deployment, named by the deployment (or its entrypoint).
 *
 * @internal
 */
import * as engine from "../engine.js"
import * as values from "../values.js"
import type { Handlers } from "./shared.js"
import { error } from "./shared.js"

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

/**
 * An action's registration in an app's source: `app.action("name", ...)` (TypeScript), `@app.action("name")`
 * (Python); a name of letters, digits, `_`, `-` and `.` (a `form.action("/x")` or a template is none).
 */
const registration = /\b\w+\.action\(\s*(["'])([\w.-]{1,128})\1/g

/** The entries of a deployment's zip read for registrations: its source files. */
const sourceFile = /\.(?:[cm]?[jt]sx?|py)$/

/**
 * The actions an uploaded app registers: read from every source file of its zip (or the file itself, when it
 * is not a zip), in order, once each; `undefined` when none registers one (a GitHub source, a binary, an
 * app that registers them in a way this does not read): the simulator then takes any action.
 */
export const actionsIn = (file: unknown): ReadonlyArray<string> | undefined => {
  if (!(file instanceof Uint8Array)) return undefined
  const isZip = file[0] === 0x50 && file[1] === 0x4b
  const entries = isZip ? values.unzip(file, 1000, 8 * 1024 * 1024) : [{ name: "", bytes: file }]
  if (typeof entries === "string") return undefined
  const names = new Set<string>()
  for (const entry of entries) {
    if (isZip && !sourceFile.test(entry.name)) continue
    const text = values.utf8Text(entry.bytes)
    if (text === undefined) continue
    for (const match of text.matchAll(registration)) names.add(match[2]!)
  }
  return names.size === 0 ? undefined : [...names]
}

/** Whether a deployment passes a list's `app_name` and version filters (`null`: not given). */
const named = (d: engine.Resource, name: string | null, version: string | null): boolean =>
  (name === null || appName(d) === name) && (version === null || versionOf(d) === version)

export const handlers: Handlers = {
  listApps: ({ call, op, org, store }) => {
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
        actions: (org.deployments.get(d.id)?.actions ?? []).map((name) => ({ name })),
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
    // the document: `app_version` "Requires app_name to be set"
    if (version !== null && name === null) return error(400, "bad_request", "app_version requires app_name")
    return engine.list(
      op,
      store.collections.get("/deployments")?.values() ?? [],
      call.query,
      (d) => d.fields,
      (d) => !d.deleted && engine.visible(d, call.project) && named(d, name, version)
    )
  }
}
