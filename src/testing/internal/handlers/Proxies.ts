/**
 * The simulator's proxies: a check marks the proxy available.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error, ok } from "./shared.js"

export const handlers: Handlers = {
  checkProxy: ({ call, op, stamp, store }) => {
    const resource = engine.find(store, "/proxies", call.segments[1]!, call.project)
    if (resource === undefined) return error(404, "not_found", "proxy not found")
    resource.fields = { ...resource.fields, status: "available", last_checked: stamp }
    return ok(op, resource.fields)
  }
}
