/**
 * The simulator's invocations: synchronous ones succeed at once, asynchronous ones answer 202
 * `queued` and succeed right after; and the followed event stream.
 *
 * @internal
 */
import * as engine from "../engine.js"
import { follow } from "./follow.js"
import type { Handlers } from "./shared.js"
import { lastOf } from "./shared.js"

export const handlers: Handlers = {
  createInvocation: ({ body, call, op, stamp, store }) => {
    const async = body["async"] === true
    const reply = engine.generic(
      store,
      { ...call, body: { ...body, status: async ? "queued" : "succeeded" } },
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
