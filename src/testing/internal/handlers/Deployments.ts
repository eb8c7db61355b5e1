/**
 * The simulator's deployments (of the new operations): create from a multipart upload, and the
 * followed event stream. The original five operations' deployment delete is in `simulator.ts`.
 *
 * @internal
 */
import * as engine from "../engine.js"
import { follow } from "./follow.js"
import type { Handlers } from "./shared.js"
import { lastOf } from "./shared.js"

/** One decoder for the text parts (a `TextDecoder` per part cost more than the rest of the create). */
const utf8 = new TextDecoder()

export const handlers: Handlers = {
  createDeployment: ({ call, org, store }) => {
    const fields: Record<string, unknown> = {}
    for (const part of call.parts) {
      if (part.filename === undefined) fields[part.name] = utf8.decode(part.bytes)
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
