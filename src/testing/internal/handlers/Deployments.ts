/**
 * The simulator's deployments (of the new operations): create from a multipart upload, and the
 * followed event stream. The original five operations' deployment delete is in `simulator.ts`.
 *
 * @internal
 */
import * as engine from "../engine.js"
import { isObject } from "../values.js"
import { follow } from "./follow.js"
import type { Handlers } from "./shared.js"
import { lastOf } from "./shared.js"

export const handlers: Handlers = {
  createDeployment: ({ body, call, org, store }) => {
    // the request's fields as the form gave them (`env_vars[FOO]` assembled into `env_vars`), its
    // zip aside; a GitHub source without its token (never answered, not kept)
    const { __bytes: _zip, source, ...fields } = body
    if (isObject(source)) {
      const { auth: _auth, ...kept } = source
      fields["source"] = kept
    }
    const reply = engine.generic(
      store,
      { ...call, body: { ...fields, status: "running", region: "aws.us-east-1a" } },
      () => "dep"
    )
    const created = lastOf(store, "/deployments")
    if (created !== undefined) {
      org.deployments.set(created.id, { id: created.id, state: "running", markedForDeletion: false })
    }
    return reply
  },
  followDeployment: follow("deployment")
}
