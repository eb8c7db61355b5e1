/**
 * The event streams of a deployment or an invocation: a log line, the running state, a log line,
 * and the terminal state.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handler } from "./shared.js"
import { error, ok } from "./shared.js"

export const follow = (kind: "deployment" | "invocation"): Handler => ({ call, op, stamp, store }) => {
  const deployment = kind === "deployment"
  const resource = engine.find(store, deployment ? "/deployments" : "/invocations", call.segments[1]!, call.project)
  if (resource === undefined) return error(404, "not_found", `${kind} not found`)
  const status = deployment
    ? (resource.fields["status"] === "queued" || resource.fields["status"] === "in_progress"
      ? "running"
      : resource.fields["status"])
    : (resource.fields["status"] === "failed" ? "failed" : "succeeded")
  const state = { ...resource.fields, status }
  return ok(op, [
    { event: "log", timestamp: stamp, message: deployment ? "building image" : "invocation started" },
    deployment
      ? { event: "deployment_state", timestamp: stamp, deployment: { ...state, status: "in_progress" } }
      : { event: "invocation_state", timestamp: stamp, invocation: { ...state, status: "running", finished_at: null } },
    { event: "log", timestamp: stamp, message: deployment ? "deployed" : "invocation finished" },
    deployment
      ? { event: "deployment_state", timestamp: stamp, deployment: state }
      : { event: "invocation_state", timestamp: stamp, invocation: { ...state, finished_at: stamp } }
  ])
}
