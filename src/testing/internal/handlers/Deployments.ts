/**
 * The simulator's deployments (of the new operations): create from a multipart upload, and the
 * followed event stream. The original five operations' deployment delete is in `simulator.ts`.
 *
 * @internal
 */
import * as engine from "../engine.js"
import { isObject } from "../values.js"
import { actionsIn, appName, deployedBy, versionOf } from "./Apps.js"
import { follow } from "./follow.js"
import type { Handlers } from "./shared.js"
import { error, lastOf } from "./shared.js"

export const handlers: Handlers = {
  createDeployment: ({ body, call, org, stamp, store }) => {
    // the request's fields as the form gave them (`env_vars[FOO]` assembled into `env_vars`), its
    // zip aside; a GitHub source without its token (never answered, not kept)
    const { __bytes: _zip, source, ...fields } = body
    if (isObject(source)) {
      const { auth: _auth, ...kept } = source
      fields["source"] = kept
    }
    // the app and version a running deployment serves are overwritten only with `force` (the document)
    const name = appName({ fields })
    const version = versionOf({ fields })
    const serving = deployedBy(store, name, version, call.project)
    if (serving !== undefined && body["force"] !== true) {
      return error(
        400,
        "bad_request",
        `app ${name} version ${String(version)} is already deployed (${serving}): deploy it with force to overwrite it`
      )
    }
    const reply = engine.generic(
      store,
      { ...call, body: { ...fields, status: "running", region: "aws.us-east-1a" } },
      () => "dep"
    )
    const created = lastOf(store, "/deployments")
    if (created === undefined || reply._tag === "Error") return reply
    org.deployments.set(created.id, {
      id: created.id,
      state: "running",
      markedForDeletion: false,
      actions: actionsIn(body["__bytes"])
    })
    // forced: the deployments that served the app's version stop serving it (the new one does)
    let old = serving
    while (old !== undefined && old !== created.id) {
      const stopped = engine.find(store, "/deployments", old, call.project)
      if (stopped === undefined) break
      stopped.fields = { ...stopped.fields, status: "stopped", updated_at: stamp }
      const live = org.deployments.get(old)
      if (live !== undefined) live.state = "stopped"
      old = deployedBy(store, name, version, call.project)
    }
    return reply
  },
  followDeployment: follow("deployment")
}
