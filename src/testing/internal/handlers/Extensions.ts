/**
 * The simulator's extensions: an upload is a ZIP archive (an unpacked extension, as the document says),
 * anything else is a 400, as `Filesystem.uploadZip`'s is (its structure is checked, nothing inflated); the Chrome Web Store gives a ZIP archive of an
 * unpacked extension (its `manifest.json`) for the extension the URL names.
 *
 * @internal
 */
import * as engine from "../engine.js"
import * as values from "../values.js"
import type { Handlers } from "./shared.js"
import { error, overBudget } from "./shared.js"

/** The last path segment of a Chrome Web Store URL (its extension id), or `extension`. */
const storeId = (url: string): string => /([a-z0-9]{32})(?:[/?#]|$)/i.exec(url)?.[1] ?? "extension"

export const handlers: Handlers = {
  uploadExtension: ({ body, call, org, store }) => {
    const archive = body["__bytes"]
    // its structure only: the document sets no limit on what an extension holds
    const issue = archive instanceof Uint8Array ? values.zipIssue(archive) : undefined
    if (issue !== undefined) return error(400, "bad_request", `file: ${issue}`)
    return (archive instanceof Uint8Array ? overBudget(org, archive.length) : undefined) ??
      engine.generic(store, call, () => "extension")
  },
  downloadChromeStoreExtension: ({ call, op }) => {
    const id = storeId(call.query.get("url") ?? "")
    const manifest = JSON.stringify({ manifest_version: 3, name: `Chrome Web Store extension ${id}`, version: "1.0.0" })
    return engine.reply(op, values.zip([{ name: "manifest.json", bytes: new TextEncoder().encode(manifest) }]), 200)
  }
}
