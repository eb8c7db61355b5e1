/**
 * The simulator's filesystem watch events: a `CREATE` event per entry of the browser's tree.
 *
 * @internal
 */
import type { Handlers } from "./shared.js"
import { baseName, ok, onBrowser } from "./shared.js"

export const handlers: Handlers = {
  streamFilesystemEvents: onBrowser(({ op }, browser) => {
    const files = [...browser.fs.entries()].filter(([p]) => p !== "/").slice(0, 5)
    return ok(
      op,
      files.map(([path, node]) => ({ type: "CREATE", path, name: baseName(path), is_dir: node.dir }))
    )
  })
}
