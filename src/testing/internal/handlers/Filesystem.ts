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
import { baseName, error, fileInTheWay, normalize, ok, onBrowser, overBudget, parentOf } from "./shared.js"

/** What a zip upload may hold once inflated (a small archive cannot fill the simulator's memory). */
const zipBytesLimit = 1024 * 1024

const permissions = ["---", "--x", "-w-", "-wx", "r--", "r-x", "rw-", "rwx"]

/**
 * A stored mode (octal digits, `"0644"`) as the browser's server shows it: Go's `FileMode.String()`, the
 * document's own example (`"drwxr-xr-x"`, `"-rw-r--r--"`): its type and special bits in Go's order
 * (`d`, then `u` setuid, `g` setgid, `t` sticky; `-` when none), then the nine permission bits.
 */
export const modeString = (mode: string, dir: boolean): string => {
  const bits = parseInt(mode, 8)
  const kind = `${dir ? "d" : ""}${bits & 0o4000 ? "u" : ""}${bits & 0o2000 ? "g" : ""}${bits & 0o1000 ? "t" : ""}`
  return `${kind === "" ? "-" : kind}${permissions[(bits >> 6) & 7]}${permissions[(bits >> 3) & 7]}${
    permissions[bits & 7]
  }`
}

const fileInfo = (path: string, node: engine.FsNode) => ({
  name: baseName(path),
  path,
  size_bytes: node.bytes.length,
  is_dir: node.dir,
  mod_time: new Date(node.modTime).toISOString(),
  mode: modeString(node.mode, node.dir)
})

/** Tells the browser's filesystem watches. */
const changed = (
  browser: Browser,
  type: "CREATE" | "WRITE" | "DELETE" | "RENAME",
  path: string,
  isDir: boolean,
  appended?: engine.Appended
) => live.publish(browser.events, { _tag: "Fs", type, path, isDir, appended })

/** The most of a write a followed log file's event carries (its lines past it are not told). */
const appendedLimit = 1024 * 1024

/** What a write of `bytes` over `before` adds, for the log streams that follow `path`; `undefined` when none does. */
const appendedBy = (browser: Browser, path: string, before: number, bytes: Uint8Array, now: number) =>
  (browser.logTails.get(path) ?? 0) === 0 ? undefined : {
    from: before,
    length: bytes.length,
    // a copy: the event must not keep the file's whole buffer alive once it is written again
    bytes: bytes.length > before ? bytes.slice(before, before + appendedLimit) : new Uint8Array(0),
    at: now
  }

/**
 * A path of the request (`path`, `dest_path`...) normalized, or the 400 refusing one longer than `PATH_MAX`,
 * or one that goes through a file of the browser's tree as if it were a directory (`/t/f.txt/`, `/t/f.txt/.`,
 * `/t/f.txt/x`: `ENOTDIR`, as Linux answers).
 */
const pathOf = (raw: unknown, browser: Browser): string | Reply => {
  const given = typeof raw === "string" ? raw : "/"
  const path = normalize(given)
  if (Buffer.byteLength(path) > engine.fsPathBytes) {
    return error(400, "bad_request", `a path is at most ${engine.fsPathBytes} bytes`)
  }
  const file = fileInTheWay(browser.fs, given)
  return file === undefined ? path : error(400, "bad_request", `${file} is not a directory`)
}

/**
 * A path a file is written at: as {@link pathOf}, and one that ends with `/` (or `/.`) names a directory,
 * not a file (`EISDIR`).
 */
const filePathOf = (raw: unknown, browser: Browser): string | Reply => {
  const given = typeof raw === "string" ? raw : "/"
  if (given.endsWith("/") || given.endsWith("/.") || given === ".") {
    return error(400, "bad_request", `${given.slice(0, 256)} names a directory, not a file`)
  }
  return pathOf(given, browser)
}

/** The 400 refusing `count` more entries when the browser's filesystem would then hold more than its limit. */
const roomFor = (browser: Browser, count: number): Reply | undefined =>
  browser.fs.size + count > engine.fsLimit
    ? error(400, "bad_request", `the simulated filesystem holds at most ${engine.fsLimit} entries`)
    : undefined

/**
 * The directories missing on the way to `path` (itself included), the shallowest first, or the
 * 400 when a file is in the way.
 */
const missingDirs = (browser: Browser, path: string): Array<string> | Reply => {
  const missing: Array<string> = []
  for (let at = path;; at = parentOf(at)) {
    const node = browser.fs.get(at)
    if (node !== undefined) {
      return node.dir ? missing.reverse() : error(400, "bad_request", `${at} is not a directory`)
    }
    missing.push(at)
    if (at === "/") return missing.reverse()
  }
}

/** Makes the directories `path` and those on its way, within the browser's entry limit. */
const makeDirs = (browser: Browser, path: string, now: number, mode = "0755"): Reply | undefined => {
  const missing = missingDirs(browser, path)
  if (!Array.isArray(missing)) return missing
  const full = roomFor(browser, missing.length)
  if (full !== undefined) return full
  for (const at of missing) {
    browser.fs.set(at, { dir: true, bytes: new Uint8Array(0), mode, modTime: now })
    changed(browser, "CREATE", at, true)
  }
  return undefined
}

/**
 * The 400 refusing files written at once (an upload) when their bytes, less those of the files
 * they replace, would take the simulator over its byte budget.
 */
const overBudgetAll = (
  org: Organization,
  browser: Browser,
  files: ReadonlyArray<{ readonly path: string; readonly bytes: Uint8Array }>
): Reply | undefined => {
  const replaced = new Set(files.map((f) => f.path))
  let freeing = 0
  for (const path of replaced) freeing += browser.fs.get(path)?.bytes.length ?? 0
  return overBudget(org, files.reduce((n, f) => n + f.bytes.length, 0), freeing)
}

/** A file (its bytes) or a directory (`bytes` undefined) that a write or an upload makes at `path`. */
interface Making {
  readonly path: string
  readonly bytes: Uint8Array | undefined
  readonly mode: string
}

/**
 * The 400 refusing to make `items` (in their order, the later replacing the earlier at the same
 * path) when one would break the tree (a file onto a directory, a directory onto a file, a file on
 * the way to another) or the whole would go over the entry limit or the byte budget: checked
 * against the tree and against each other before anything is made, so a refused write makes nothing.
 */
const refused = (org: Organization, browser: Browser, items: ReadonlyArray<Making>): Reply | undefined => {
  // whether each path is a directory once the items before are made
  const planned = new Map<string, boolean>()
  const isDir = (at: string) => planned.get(at) ?? browser.fs.get(at)?.dir
  for (const { bytes, path } of items) {
    const existing = isDir(path)
    if (bytes !== undefined && existing === true) return error(400, "bad_request", `${path} is a directory`)
    if (bytes === undefined && existing === false) return error(400, "bad_request", `${path} is not a directory`)
    planned.set(path, bytes === undefined)
    for (let at = parentOf(path); at !== path; at = parentOf(at)) {
      const dir = isDir(at)
      if (dir === false) return error(400, "bad_request", `${at} is not a directory`)
      if (dir === true) break
      planned.set(at, true)
    }
  }
  let added = 0
  for (const path of planned.keys()) if (!browser.fs.has(path)) added++
  const files = items.flatMap(({ bytes, path }) => bytes === undefined ? [] : [{ path, bytes }])
  return roomFor(browser, added) ?? overBudgetAll(org, browser, files)
}

/** Makes `items` (checked by {@link refused} first), with the directories on their way, telling the watches. */
const make = (browser: Browser, items: ReadonlyArray<Making>, now: number): undefined => {
  for (const { bytes, mode, path } of items) {
    makeDirs(browser, bytes === undefined ? path : parentOf(path), now)
    if (bytes === undefined) continue
    const existing = browser.fs.get(path)
    const existed = existing !== undefined
    // a file written again keeps its mode (the browser's server opens it with O_TRUNC: the mode given
    // applies to a new file only)
    const file = { dir: false, bytes, mode: existing?.mode ?? mode, modTime: now }
    browser.fs.set(path, file)
    // as inotify tells it: a new file is created, then written (when anything is written to it)
    if (!existed) changed(browser, "CREATE", path, false)
    if (existed || bytes.length > 0) {
      changed(browser, "WRITE", path, false, appendedBy(browser, path, existing?.bytes.length ?? 0, bytes, now))
    }
  }
  return undefined
}

/** Makes `items` whole, or nothing and the 400 saying why. */
const makeAll = (org: Organization, browser: Browser, items: ReadonlyArray<Making>, now: number): Reply | undefined =>
  refused(org, browser, items) ?? make(browser, items, now)

/**
 * A mode given in octal as the browser's server applies it: its nine permission bits (Go's `os.FileMode(0o4755)`
 * is not setuid: the bits above them are dropped), stored as four octal digits.
 */
const modeOf = (mode: string): string => (parseInt(mode, 8) & 0o777).toString(8).padStart(4, "0")

/** Entries of the tree in the order of their paths (as `os.ReadDir` gives a directory's names). */
const byPath = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]): number => a < b ? -1 : a > b ? 1 : 0

const readNode: Handler = onBrowser(({ call, op }, browser) => {
  const path = pathOf(call.query.get("path") ?? "/", browser)
  if (typeof path !== "string") return path
  const node = browser.fs.get(path)
  if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
  if (op.name === "getFileInfo") return ok(op, fileInfo(path, node))
  if (op.name === "readFile") {
    if (node.dir) return error(400, "bad_request", `${path} is a directory`)
    return ok(op, node.bytes)
  }
  if (!node.dir) return error(400, "bad_request", `${path} is not a directory`)
  // the entries under it, named relative to it (a directory's name ends with "/"): at most `fsLimit` entries
  // of names under `fsPathBytes`, so the archive is its files' bytes and a few megabytes of headers
  const prefix = path === "/" ? "/" : `${path}/`
  const entries = [...browser.fs.entries()]
    .filter(([p]) => p.startsWith(prefix))
    .sort(byPath)
    .map(([p, n]) => ({
      name: n.dir ? `${p.slice(prefix.length)}/` : p.slice(prefix.length),
      bytes: n.bytes,
      // once per content: a write makes a new node
      crc: n.crc ??= values.crc32(n.bytes)
    }))
  // in pieces, the files' bytes as they are stored (not copied): the server writes them as the client reads
  return ok(op, values.zipChunks(entries))
})

/**
 * As the browser's server deletes: `delete_directory` is Go's `os.RemoveAll` (a path that does not exist is
 * already gone: 200; a file is removed as well), `delete_file` is `os.Remove` (a missing path: 404; an empty
 * directory is removed; one that holds something cannot be, `ENOTEMPTY`: its 500). A path ending with `.`
 * is refused by both (`EINVAL`: their 500), not taken for the directory it names.
 */
const deleteNode: Handler = onBrowser(({ body, op }, browser) => {
  const path = pathOf(body["path"], browser)
  if (typeof path !== "string") return path
  if (path === "/") return error(400, "bad_request", "the root directory cannot be deleted")
  const all = op.name === "deleteDirectory"
  const given = body["path"]
  if (typeof given === "string" && (given === "." || given.endsWith("/."))) {
    return error(500, "internal_error", all ? "failed to delete directory" : "failed to delete file")
  }
  const node = browser.fs.get(path)
  if (node === undefined) return all ? ok(op) : error(404, "not_found", `${path}: no such file or directory`)
  if (!all && node.dir && [...browser.fs.keys()].some((p) => p.startsWith(`${path}/`))) {
    return error(500, "internal_error", "failed to delete file")
  }
  // what a directory holds goes before it, the deepest first (as `rm -r` deletes, and inotify tells it)
  const gone = [...browser.fs.entries()].filter(([p]) => p === path || p.startsWith(`${path}/`)).sort((
    [a],
    [b]
  ) => b.split("/").length - a.split("/").length)
  for (const [p, node] of gone) {
    browser.fs.delete(p)
    changed(browser, "DELETE", p, node.dir)
  }
  return ok(op)
})

/**
 * Why moving `src` (the entry `moved`) to `dest` is refused, as `rename(2)` would: into itself, onto
 * a directory, a directory onto a file, under a file (400), into a directory that does not exist
 * (404), or making a path longer than `fsPathBytes` (400); `undefined` when it may be moved.
 */
const moveRefused = (browser: Browser, src: string, moved: engine.FsNode, dest: string): Reply | undefined => {
  if (dest === src) return undefined
  if (dest.startsWith(`${src}/`)) return error(400, "bad_request", `cannot move ${src} into itself (${dest})`)
  const target = browser.fs.get(dest)
  if (target?.dir === true) return error(400, "bad_request", `${dest} is a directory that exists`)
  if (target !== undefined && moved.dir) return error(400, "bad_request", `${dest} exists and is not a directory`)
  const parent = browser.fs.get(parentOf(dest))
  if (parent === undefined) return error(404, "not_found", `${parentOf(dest)}: no such directory`)
  if (!parent.dir) return error(400, "bad_request", `${parentOf(dest)} is not a directory`)
  let longest = 0
  for (const p of browser.fs.keys()) {
    if (p === src || p.startsWith(`${src}/`)) longest = Math.max(longest, Buffer.byteLength(p))
  }
  return Buffer.byteLength(dest) + longest - Buffer.byteLength(src) > engine.fsPathBytes
    ? error(400, "bad_request", `a path is at most ${engine.fsPathBytes} bytes`)
    : undefined
}

/** An upload's files by their index (`files[0][file]` with `files[0][dest_path]`), in index order. */
const uploadsOf = (
  parts: ReadonlyArray<values.Part>
): ReadonlyArray<{ readonly index: number; file?: Uint8Array; dest?: string }> => {
  const byIndex = new Map<number, { readonly index: number; file?: Uint8Array; dest?: string }>()
  for (const part of parts) {
    const match = /^files\[(\d+)\]\[(file|dest_path)\]$/.exec(part.name)
    if (match === null) continue
    const index = Number(match[1])
    const upload = byIndex.get(index) ?? { index }
    byIndex.set(index, upload)
    if (match[2] === "file") upload.file = part.bytes
    else upload.dest = new TextDecoder().decode(part.bytes)
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index)
}

export const handlers: Handlers = {
  writeFile: onBrowser(({ call, op, org }, browser) => {
    const path = filePathOf(call.query.get("path") ?? "/", browser)
    if (typeof path !== "string") return path
    const mode = modeOf(call.query.get("mode") ?? "0644")
    return makeAll(org, browser, [{ path, bytes: call.raw, mode }], call.now) ?? ok(op)
  }),
  uploadFiles: onBrowser(({ call, op, org }, browser) => {
    const uploads = uploadsOf(call.parts)
    const files: Array<Making> = []
    for (const { dest, file, index } of uploads) {
      if (file === undefined || dest === undefined) {
        return error(400, "bad_request", `files.${index}: file and dest_path are required`)
      }
      const path = filePathOf(dest, browser)
      if (typeof path !== "string") return path
      files.push({ path, bytes: file, mode: "0644" })
    }
    // nothing written when one of them is refused
    return makeAll(org, browser, files, call.now) ?? ok(op)
  }),
  uploadZip: onBrowser(({ call, op, org }, browser) => {
    const archive = call.parts.find((p) => p.name === "zip_file")
    const destination = call.parts.find((p) => p.name === "dest_path")
    if (archive === undefined || destination === undefined) {
      return error(400, "bad_request", "zip_file and dest_path are required")
    }
    const root = pathOf(new TextDecoder().decode(destination.bytes), browser)
    if (typeof root !== "string") return root
    const entries = values.unzip(archive.bytes, engine.fsLimit, zipBytesLimit)
    if (typeof entries === "string") return error(400, "bad_request", `zip_file: ${entries}`)
    // the destination, then the entries (a name ending with "/" is a directory)
    const items: Array<Making> = [{ path: root, bytes: undefined, mode: "0755" }]
    for (const entry of entries) {
      const path = pathOf(`${root}/${entry.name}`, browser)
      if (typeof path !== "string") return path
      // an entry may not climb out of its destination ("../x")
      if (path !== root && !path.startsWith(root === "/" ? "/" : `${root}/`)) {
        return error(400, "bad_request", `zip_file: ${entry.name} is outside ${root}`)
      }
      items.push({ path, bytes: entry.name.endsWith("/") ? undefined : entry.bytes, mode: "0644" })
    }
    // nothing extracted when one entry is refused
    return makeAll(org, browser, items, call.now) ?? ok(op)
  }),
  readFile: readNode,
  getFileInfo: readNode,
  downloadDirZip: readNode,
  listFiles: onBrowser(({ call, op }, browser) => {
    const path = pathOf(call.query.get("path") ?? "/", browser)
    if (typeof path !== "string") return path
    const node = browser.fs.get(path)
    if (node === undefined) return error(404, "not_found", `${path}: no such directory`)
    if (!node.dir) return error(400, "bad_request", `${path} is not a directory`)
    // by name, as `os.ReadDir` gives them
    const entries = [...browser.fs.entries()].filter(([p]) => p !== path && parentOf(p) === path)
      .sort(byPath)
    return ok(op, entries.map(([p, n]) => fileInfo(p, n)))
  }),
  createDirectory: onBrowser(({ body, call, op }, browser) => {
    const path = pathOf(body["path"], browser)
    if (typeof path !== "string") return path
    // as `MkdirAll` makes them: the directories it makes get the mode (one that exists is left as it is)
    const failed = makeDirs(browser, path, call.now, typeof body["mode"] === "string" ? modeOf(body["mode"]) : "0755")
    return failed ?? ok(op)
  }),
  deleteFile: deleteNode,
  deleteDirectory: deleteNode,
  setFilePermissions: onBrowser(({ body, op }, browser) => {
    const path = pathOf(body["path"], browser)
    if (typeof path !== "string") return path
    const node = browser.fs.get(path)
    if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
    if (typeof body["mode"] === "string") node.mode = modeOf(body["mode"])
    return ok(op)
  }),
  movePath: onBrowser(({ body, op }, browser) => {
    const src = pathOf(body["src_path"], browser)
    if (typeof src !== "string") return src
    const dest = pathOf(body["dest_path"], browser)
    if (typeof dest !== "string") return dest
    const moved = browser.fs.get(src)
    if (moved === undefined) return error(404, "not_found", `${src}: no such file or directory`)
    if (src === "/") return error(400, "bad_request", "the root directory cannot be moved")
    // a file moved to a path ending with `/` (rename(2): ENOTDIR)
    if (!moved.dir) {
      const named = filePathOf(body["dest_path"], browser)
      if (typeof named !== "string") return named
    }
    const refused = moveRefused(browser, src, moved, dest)
    if (refused !== undefined) return refused
    if (dest === src) return ok(op)
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
