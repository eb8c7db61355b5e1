/**
 * The event streams of a deployment or an invocation, consistent with what is stored. A deployment
 * still queued or in progress is driven to `running`, stored so, and followed through its build (a
 * log line, `in_progress`, a log line, `running`); one already running, failed or stopped gives that
 * state and ends. An invocation's run is followed at its stored times (started, running, finished,
 * its terminal state); one not finished yet succeeds now, stored so. `since` (an RFC 3339 time or a
 * duration such as `5m`, as the document says) leaves out the log lines before it; the states are
 * always told, so the stream still ends at its resource's state.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handler } from "./shared.js"
import { error, ok } from "./shared.js"

const deploymentEnds: ReadonlySet<unknown> = new Set(["running", "failed", "stopped"])
const invocationEnds: ReadonlySet<unknown> = new Set(["succeeded", "failed"])

/** The events of a follow without the log lines before `since` (epoch milliseconds; `undefined`: all). */
const since = <E extends { readonly event: string; readonly timestamp: string }>(
  events: ReadonlyArray<E>,
  from: number | undefined
): ReadonlyArray<E> =>
  from === undefined ? events : events.filter((e) => e.event !== "log" || Date.parse(e.timestamp) >= from)

/** A stored time, or `fallback` when there is none. */
const timeOf = (value: unknown, fallback: string): string => typeof value === "string" ? value : fallback

export const follow = (kind: "deployment" | "invocation"): Handler => ({ call, op, org, stamp, store }) => {
  const deployment = kind === "deployment"
  const resource = engine.find(store, deployment ? "/deployments" : "/invocations", call.segments[1]!, call.project)
  if (resource === undefined) return error(404, "not_found", `${kind} not found`)
  const given = engine.sinceOf(call.query, call.now)
  if (!("since" in given)) return given
  const from = given.since
  const before = resource.fields
  if (deployment) {
    // a deployment that has reached its state gives it, stamped when it was reached, without a replay of its build
    if (deploymentEnds.has(before["status"])) {
      const at = timeOf(before["updated_at"] ?? before["created_at"], stamp)
      return ok(op, [{ event: "deployment_state", timestamp: at, deployment: before }])
    }
    resource.fields = { ...before, status: "running", updated_at: stamp }
    const live = org.deployments.get(resource.id)
    if (live !== undefined) live.state = "running"
    return ok(
      op,
      since([
        { event: "log", timestamp: stamp, message: "building image" },
        { event: "deployment_state", timestamp: stamp, deployment: { ...before, status: "in_progress" } },
        { event: "log", timestamp: stamp, message: "deployed" },
        { event: "deployment_state", timestamp: stamp, deployment: resource.fields }
      ], from)
    )
  }
  // an invocation's run, at its stored times; one not finished yet finishes now
  if (!invocationEnds.has(before["status"])) resource.fields = { ...before, status: "succeeded", finished_at: stamp }
  const started = timeOf(before["started_at"], stamp)
  const finished = timeOf(resource.fields["finished_at"], stamp)
  return ok(
    op,
    since([
      { event: "log", timestamp: started, message: "invocation started" },
      {
        event: "invocation_state",
        timestamp: started,
        invocation: { ...before, status: "running", finished_at: null }
      },
      { event: "log", timestamp: finished, message: "invocation finished" },
      { event: "invocation_state", timestamp: finished, invocation: resource.fields }
    ], from)
  )
}
