/**
 * The simulator's per-browser filesystem: write, upload, read, stat, list, make directories,
 * delete, chmod, move, a zip of a directory (its files and directories) and a zip upload
 * (extracted under its destination).
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import * as live from "../live.js"
import * as values from "../values.js"
import type { Browser, Handler, Handlers, Organization } from "./shared.js"
import { baseName, error, normalize, ok, onBrowser, overBudget, parentOf } from "./shared.js"

/** What a zip upload may hold once inflated (a small archive cannot fill the simulator's memory). */
const zipBytesLimit = 1024 * 1024

const fileInfo = (path: string, node: engine.FsNode) => ({
  name: baseName(path),
  path,
  size_bytes: node.bytes.length,
  is_dir: node.dir,
  mod_time: new Date(node.modTime).toISOString(),
  mode: node.mode
})

/** Tells the browser's filesystem watches. */
const changed = (browser: Browser, type: "CREATE" | "WRITE" | "DELETE" | "RENAME", path: string, isDir: boolean) =>
  live.publish(browser.events, { _tag: "Fs", type, path, isDir })

const makeDirs = (browser: Browser, path: string, now: number): void => {
  let at = "/"
  for (const part of path.split("/").filter((p) => p !== "")) {
    at = at === "/" ? `/${part}` : `${at}/${part}`
    if (!browser.fs.has(at)) {
      browser.fs.set(at, { dir: true, bytes: new Uint8Array(0), mode: "0755", modTime: now })
      changed(browser, "CREATE", at, true)
    }
  }
}

const writeNode = (
  org: Organization,
  browser: Browser,
  path: string,
  bytes: Uint8Array,
  mode: string,
  now: number
): Reply | undefined => {
  const existing = browser.fs.get(path)
  if (existing?.dir === true) return error(400, "bad_request", `${path} is a directory`)
  if (existing === undefined && browser.fs.size >= engine.fsLimit) {
    return error(400, "bad_request", `the simulated filesystem holds at most ${engine.fsLimit} entries`)
  }
  const over = overBudget(org, bytes.length, existing?.bytes.length)
  if (over !== undefined) return over
  makeDirs(browser, parentOf(path), now)
  browser.fs.set(path, { dir: false, bytes, mode, modTime: now })
  changed(browser, existing === undefined ? "CREATE" : "WRITE", path, false)
  return undefined
}

const readNode: Handler = onBrowser(({ call, op }, browser) => {
  const path = normalize(call.query.get("path") ?? "/")
  const node = browser.fs.get(path)
  if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
  if (op.name === "getFileInfo") return ok(op, fileInfo(path, node))
  if (op.name === "readFile") {
    if (node.dir) return error(400, "bad_request", `${path} is a directory`)
    return ok(op, node.bytes)
  }
  if (!node.dir) return error(400, "bad_request", `${path} is not a directory`)
  // the entries under it, named relative to it (a directory's name ends with "/")
  const prefix = path === "/" ? "/" : `${path}/`
  const entries = [...browser.fs.entries()]
    .filter(([p]) => p.startsWith(prefix))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, n]) => ({ name: n.dir ? `${p.slice(prefix.length)}/` : p.slice(prefix.length), bytes: n.bytes }))
  return ok(op, values.zip(entries))
})

const deleteNode: Handler = onBrowser(({ body, op }, browser) => {
  const path = normalize(String(body["path"] ?? "/"))
  const node = browser.fs.get(path)
  if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
  if (node.dir !== (op.name === "deleteDirectory")) {
    return error(400, "bad_request", `${path} is ${node.dir ? "a directory" : "not a directory"}`)
  }
  for (const [p, gone] of [...browser.fs.entries()]) {
    if (p === path || p.startsWith(`${path}/`)) {
      browser.fs.delete(p)
      changed(browser, "DELETE", p, gone.dir)
    }
  }
  return ok(op)
})

export const handlers: Handlers = {
  writeFile: onBrowser(({ call, op, org }, browser) => {
    const path = normalize(call.query.get("path") ?? "/")
    const failed = writeNode(org, browser, path, call.raw, call.query.get("mode") ?? "0644", call.now)
    return failed ?? ok(op)
  }),
  uploadFiles: onBrowser(({ call, op, org }, browser) => {
    const files = call.parts.filter((p) => p.filename !== undefined || /file\]?$/.test(p.name))
    const destinations = call.parts.filter((p) => p.name.includes("dest_path"))
    for (const [i, file] of files.entries()) {
      const dest = destinations[i] === undefined
        ? `/${file.filename ?? `upload_${i}`}`
        : new TextDecoder().decode(destinations[i]!.bytes)
      const failed = writeNode(org, browser, normalize(dest), file.bytes, "0644", call.now)
      if (failed !== undefined) return failed
    }
    return ok(op)
  }),
  uploadZip: onBrowser(({ call, op, org }, browser) => {
    const archive = call.parts.find((p) => p.name === "zip_file")
    const destination = call.parts.find((p) => p.name === "dest_path")
    if (archive === undefined || destination === undefined) {
      return error(400, "bad_request", "zip_file and dest_path are required")
    }
    const root = normalize(new TextDecoder().decode(destination.bytes))
    const entries = values.unzip(archive.bytes, engine.fsLimit, zipBytesLimit)
    if (typeof entries === "string") return error(400, "bad_request", `zip_file: ${entries}`)
    // nothing extracted when the whole would not fit
    const over = overBudget(org, entries.reduce((n, entry) => n + entry.bytes.length, 0))
    if (over !== undefined) return over
    for (const entry of entries) {
      const path = normalize(`${root}/${entry.name}`)
      // an entry may not climb out of its destination ("../x")
      if (path !== root && !path.startsWith(root === "/" ? "/" : `${root}/`)) {
        return error(400, "bad_request", `zip_file: ${entry.name} is outside ${root}`)
      }
      if (entry.name.endsWith("/")) {
        makeDirs(browser, path, call.now)
        continue
      }
      const failed = writeNode(org, browser, path, entry.bytes, "0644", call.now)
      if (failed !== undefined) return failed
    }
    makeDirs(browser, root, call.now)
    return ok(op)
  }),
  readFile: readNode,
  getFileInfo: readNode,
  downloadDirZip: readNode,
  listFiles: onBrowser(({ call, op }, browser) => {
    const path = normalize(call.query.get("path") ?? "/")
    const node = browser.fs.get(path)
    if (node === undefined || !node.dir) return error(404, "not_found", `${path}: no such directory`)
    const entries = [...browser.fs.entries()].filter(([p]) => p !== path && parentOf(p) === path)
    return ok(op, entries.map(([p, n]) => fileInfo(p, n)))
  }),
  createDirectory: onBrowser(({ body, call, op }, browser) => {
    const path = normalize(String(body["path"] ?? "/"))
    if (browser.fs.get(path)?.dir === false) return error(400, "bad_request", `${path} is a file`)
    makeDirs(browser, path, call.now)
    if (typeof body["mode"] === "string") browser.fs.get(path)!.mode = body["mode"]
    return ok(op)
  }),
  deleteFile: deleteNode,
  deleteDirectory: deleteNode,
  setFilePermissions: onBrowser(({ body, op }, browser) => {
    const path = normalize(String(body["path"] ?? "/"))
    const node = browser.fs.get(path)
    if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
    node.mode = String(body["mode"] ?? node.mode)
    return ok(op)
  }),
  movePath: onBrowser(({ body, call, op }, browser) => {
    const src = normalize(String(body["src_path"] ?? "/"))
    const dest = normalize(String(body["dest_path"] ?? "/"))
    if (!browser.fs.has(src) || src === "/") return error(404, "not_found", `${src}: no such file or directory`)
    makeDirs(browser, parentOf(dest), call.now)
    const moved = browser.fs.get(src)!
    for (const [p, node] of [...browser.fs.entries()]) {
      if (p === src || p.startsWith(`${src}/`)) {
        browser.fs.delete(p)
        browser.fs.set(dest + p.slice(src.length), node)
      }
    }
    changed(browser, "RENAME", src, moved.dir)
    changed(browser, "CREATE", dest, moved.dir)
    return ok(op)
  })
}
