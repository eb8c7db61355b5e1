/**
 * The simulator's apps: one per deployment, named by the deployment (or its entrypoint).
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"

/** An app's name from its entrypoint, `src/my-app.ts` → `my-app`. */
const appNameOf = (entrypoint: string): string => entrypoint.split("/").at(-1)!.replace(/\.[^.]*$/, "") || "app"

export const handlers: Handlers = {
  listApps: ({ call, op, store }) => {
    // the service reads the app's name from its code, which the simulator does not run: a
    // deployment that names no app is listed under its entrypoint's base name
    const appName = (d: engine.Resource): string | undefined => {
      const named = d.fields["app_name"]
      const entrypoint = d.fields["entrypoint_rel_path"]
      return typeof named === "string" ? named : typeof entrypoint === "string" ? appNameOf(entrypoint) : undefined
    }
    const listed = (d: engine.Resource): boolean =>
      !d.deleted && (typeof d.fields["app_name"] === "string" || typeof d.fields["entrypoint_rel_path"] === "string")
    // only the page's apps are made
    return engine.list(op, store.collections.get("/deployments")?.values() ?? [], call.query, (d) => ({
      id: `app_${d.id}`,
      app_name: appName(d),
      version: d.fields["version"] ?? "latest",
      region: d.fields["region"],
      deployment: d.id,
      actions: []
    }), listed)
  }
}
