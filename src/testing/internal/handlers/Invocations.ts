/**
 * The simulator's invocations: synchronous ones succeed at once, asynchronous ones answer 202
 * `queued` and succeed right after; and the followed event stream.
 *
 * @internal
 */
import * as engine from "../engine.js"
import { deployedBy } from "./Apps.js"
import { follow } from "./follow.js"
import type { Handlers } from "./shared.js"
import { error, lastOf } from "./shared.js"

export const handlers: Handlers = {
  createInvocation: ({ body, call, op, org, stamp, store }) => {
    // the document: 404 for an app or a version that is not deployed (the version defaults to "latest")
    const deployment = deployedBy(store, body["app_name"], body["version"] ?? "latest", call.project)
    if (deployment === undefined) {
      return error(404, "not_found", "app or version not found: deploy it first")
    }
    // an app whose actions are known (read from its entrypoint, or seeded) serves only those
    const actions = org.deployments.get(deployment)?.actions
    const action = body["action_name"]
    if (actions !== undefined && !actions.includes(String(action))) {
      return error(
        404,
        "not_found",
        `action ${JSON.stringify(action)} not found in app ${String(body["app_name"])}: its actions are ${
          actions.map((name) => JSON.stringify(name)).join(", ")
        }`
      )
    }
    const async = body["async"] === true
    // `deployment_id` (not in the answer's schema): what `GET /invocations?deployment_id=` filters by
    const reply = engine.generic(
      store,
      {
        ...call,
        body: {
          ...body,
          status: async ? "queued" : "succeeded",
          deployment_id: deployment,
          started_at: stamp,
          ...(async ? {} : { finished_at: stamp })
        }
      },
      () => "inv"
    )
    const created = lastOf(store, "/invocations")
    if (created === undefined || reply._tag !== "Json") return reply
    // an asynchronous invocation reaches its terminal state right after the answer
    if (async) {
      const answer = engine.reply(op, created.fields, 202)
      created.fields = { ...created.fields, status: "succeeded", finished_at: stamp }
      return answer
    }
    return reply
  },
  followInvocation: follow("invocation")
}
