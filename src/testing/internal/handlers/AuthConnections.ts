/**
 * The simulator's managed auth connections: a login gives a hosted URL, and the followed flow
 * succeeds.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error, ok } from "./shared.js"

export const handlers: Handlers = {
  loginAuthConnection: ({ call, op, store }) => {
    const resource = engine.find(store, "/auth/connections", call.segments[2]!, call.project)
    if (resource === undefined) return error(404, "not_found", "auth connection not found")
    return ok(op, {
      id: resource.id,
      flow_type: "LOGIN",
      hosted_url: `https://sim.kernel.local/login/${resource.id}`,
      flow_expires_at: new Date(call.now + 10 * 60_000).toISOString()
    })
  },
  followAuthConnection: ({ op, stamp }) =>
    ok(op, [
      { event: "managed_auth_state", timestamp: stamp, flow_status: "IN_PROGRESS", flow_step: "DISCOVERING" },
      { event: "managed_auth_state", timestamp: stamp, flow_status: "SUCCESS", flow_step: "COMPLETED" }
    ])
}
