/**
 * The simulator's profiles: a profile has no state until a browser that used it with
 * `save_changes` ends (`Browsers.ts` saves it); its download answers 202 until then, as the
 * document says ("Profile exists but has not yet captured any state"), then the saved archive.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error, obj } from "./shared.js"

/** The state a browser session leaves in its profile: a (tiny) zstd frame, as the service's archive. */
const savedState = (browserId: string): Uint8Array =>
  new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, ...new TextEncoder().encode(`profile state of ${browserId}`)])

/** Saves a browser's state into the profile it was created with, when it asked to save changes. */
export const saveProfile = (
  store: engine.Store,
  browser: engine.Resource,
  stamp: string
): void => {
  const profile = obj(browser.fields["profile"])
  if (profile["save_changes"] !== true) return
  const key = typeof profile["id"] === "string" ? profile["id"] : profile["name"]
  if (typeof key !== "string") return
  const stored = engine.find(store, "/profiles", key, browser.project)
  if (stored === undefined || stored.deleted) return
  stored.fields = { ...stored.fields, __bytes: savedState(browser.id), updated_at: stamp, last_used_at: stamp }
  store.byteCollections.add("/profiles")
}

export const handlers: Handlers = {
  downloadProfile: ({ call, op, store }) => {
    const stored = engine.find(store, "/profiles", call.segments[1]!, call.project)
    if (stored === undefined || stored.deleted) return error(404, "not_found", "profile not found")
    const state = stored.fields["__bytes"]
    return state instanceof Uint8Array ? engine.reply(op, state, 200) : engine.reply(op, undefined, 202)
  }
}
