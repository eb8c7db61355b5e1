/**
 * The simulator's real behaviours, over the generic engine: browsers (ids, URLs, status filter,
 * soft delete), the computer (mouse, cursor, keys, clipboard, a real PNG screenshot of the
 * viewport, batches), the per-browser filesystem, processes (deterministic `echo`, `cat`, `ls`),
 * replays, pools (acquire / release / flush), TOTP codes, deployments and invocations. An
 * operation without one here answers by convention (`simulatorEngine.ts`).
 *
 * @internal
 */
import type * as Sim from "../KernelSimulator.js"
import * as engine from "./simulatorEngine.js"
import type { Call, Reply, Store } from "./simulatorEngine.js"
import * as values from "./simulatorValues.js"

export interface Replay {
  readonly id: string
  readonly size: number
  readonly retryAfter: number
  pollsLeft: number
  readonly readyAt: number
  readonly startedAt: string
  stopped: boolean
}

export interface Browser extends engine.BrowserState {
  readonly replays: Map<string, Replay>
}

export interface Deployment {
  readonly id: string
  state: Sim.DeploymentState
  markedForDeletion: boolean
}

export interface Organization {
  readonly id: string
  readonly token: string
  readonly plan: Sim.Plan
  readonly store: Store
  readonly browsers: Map<string, Browser>
  readonly deployments: Map<string, Deployment>
}

/** A browser's stored fields: ids, URLs and what it was created with. */
export const browserFields = (id: string, given: Record<string, unknown>): Record<string, unknown> => ({
  ...given,
  id,
  session_id: id,
  cdp_ws_url: `wss://sim.kernel.local/browsers/${id}/cdp`,
  webdriver_ws_url: `wss://sim.kernel.local/browsers/${id}/webdriver`,
  base_url: `https://sim.kernel.local/browsers/${id}`,
  ...(given["headless"] === true ? {} : { browser_live_view_url: `https://sim.kernel.local/browsers/${id}/live` })
})

const ok = (operation: Call["operation"], fields?: unknown): Reply => engine.reply(operation, fields)
const error = (status: number, code: string, message: string): Reply => ({ _tag: "Error", status, code, message })

const obj = (u: unknown): Record<string, unknown> => values.isObject(u) ? u : {}
const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

const num = (u: unknown, fallback: number): number => typeof u === "number" && Number.isFinite(u) ? u : fallback

const normalize = (path: string): string => {
  const parts: Array<string> = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") parts.pop()
    else parts.push(part)
  }
  return `/${parts.join("/")}`
}
const parentOf = (path: string): string => path === "/" ? "/" : normalize(path.slice(0, path.lastIndexOf("/")) || "/")
const baseName = (path: string): string => path === "/" ? "/" : path.slice(path.lastIndexOf("/") + 1)

const fileInfo = (path: string, node: engine.FsNode) => ({
  name: baseName(path),
  path,
  size_bytes: node.bytes.length,
  is_dir: node.dir,
  mod_time: new Date(node.modTime).toISOString(),
  mode: node.mode
})

const makeDirs = (browser: Browser, path: string, now: number): void => {
  let at = "/"
  for (const part of path.split("/").filter((p) => p !== "")) {
    at = at === "/" ? `/${part}` : `${at}/${part}`
    if (!browser.fs.has(at)) browser.fs.set(at, { dir: true, bytes: new Uint8Array(0), mode: "0755", modTime: now })
  }
}

const writeNode = (browser: Browser, path: string, bytes: Uint8Array, mode: string, now: number): Reply | undefined => {
  const existing = browser.fs.get(path)
  if (existing?.dir === true) return error(400, "bad_request", `${path} is a directory`)
  if (existing === undefined && browser.fs.size >= engine.fsLimit) {
    return error(400, "bad_request", `the simulated filesystem holds at most ${engine.fsLimit} entries`)
  }
  makeDirs(browser, parentOf(path), now)
  browser.fs.set(path, { dir: false, bytes, mode, modTime: now })
  return undefined
}

const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64")

/** The deterministic output of a command: `echo`, `cat <file of the tree>`, `ls [dir]`, `true`, `false`. */
const run = (
  browser: Browser,
  command: string,
  args: ReadonlyArray<string>
): { out: string; err: string; code: number } => {
  const words = args.length === 0 && command.includes(" ") ? command.split(/\s+/) : [command, ...args]
  const [program, ...rest] = words
  switch (program) {
    case "echo":
      return { out: `${rest.join(" ")}\n`, err: "", code: 0 }
    case "true":
      return { out: "", err: "", code: 0 }
    case "false":
      return { out: "", err: "", code: 1 }
    case "pwd":
      return { out: "/\n", err: "", code: 0 }
    case "cat": {
      let out = ""
      for (const file of rest) {
        const node = browser.fs.get(normalize(file))
        if (node === undefined || node.dir) return { out, err: `cat: ${file}: No such file or directory\n`, code: 1 }
        out += new TextDecoder().decode(node.bytes)
      }
      return { out, err: "", code: 0 }
    }
    case "ls": {
      const dir = normalize(rest.find((a) => !a.startsWith("-")) ?? "/")
      const node = browser.fs.get(dir)
      if (node === undefined) {
        return { out: "", err: `ls: cannot access '${dir}': No such file or directory\n`, code: 2 }
      }
      const names = [...browser.fs.keys()].filter((p) => p !== dir && parentOf(p) === dir).map(baseName).sort()
      return { out: names.map((n) => `${n}\n`).join(""), err: "", code: 0 }
    }
    default:
      return { out: "", err: `${program ?? ""}: command not found\n`, code: 127 }
  }
}

const applyAction = (browser: Browser, action: Record<string, unknown>): void => {
  const type = action["type"]
  const args = (name: string): Record<string, unknown> => {
    const value = action[name]
    return obj(value)
  }
  switch (type) {
    case "click_mouse":
    case "move_mouse":
    case "scroll": {
      const a = args(type)
      browser.mouse = { x: num(a["x"], browser.mouse.x), y: num(a["y"], browser.mouse.y) }
      return
    }
    case "drag_mouse":
      dragTo(browser, args(type)["path"])
      return
    case "type_text":
      browser.typed.push(String(args(type)["text"] ?? ""))
      return
    case "press_key":
      browser.typed.push(...strings(args(type)["keys"]).map((k) => `<${k}>`))
      return
    case "set_cursor":
      browser.cursorHidden = args(type)["hidden"] === true
      return
  }
}

const dragTo = (browser: Browser, path: unknown): void => {
  if (!Array.isArray(path) || path.length === 0) return
  const last: unknown = path[path.length - 1]
  if (Array.isArray(last) && last.length >= 2) browser.mouse = { x: num(last[0], 0), y: num(last[1], 0) }
}

/** A behaviour of the operation, or `undefined` to answer by convention. */
export const handle = (org: Organization, call: Call): Reply | undefined => {
  const op = call.operation
  const body = call.body
  const store = org.store
  const stamp = new Date(call.now).toISOString()
  const browserId = call.template.startsWith("/browsers/{id}/") ? call.segments[1]! : undefined
  const browser = browserId === undefined ? undefined : org.browsers.get(browserId)
  if (browserId !== undefined && browser === undefined) return error(404, "not_found", "browser not found")
  switch (op.name) {
    case "createBrowser":
    case "acquireBrowser": {
      let pool: engine.Resource | undefined
      if (op.name === "acquireBrowser") {
        pool = engine.find(store, "/browser_pools", call.segments[1]!, call.project)
        if (pool === undefined) return error(404, "not_found", "browser pool not found")
        const available = num(pool.fields["available_count"], 0)
        // nothing available within the wait: 204
        if (available <= 0) return engine.reply(op, undefined, 204)
        pool.fields = {
          ...pool.fields,
          available_count: available - 1,
          acquired_count: num(pool.fields["acquired_count"], 0) + 1
        }
      }
      const config = obj(pool?.fields["browser_pool_config"])
      const source = pool === undefined ? body : config
      const id = engine.nextId(store, "browser")
      const given = obj(source["viewport"])
      const viewport = { ...given, width: num(given["width"], 1920), height: num(given["height"], 1080) }
      const fields = browserFields(id, {
        ...(pool === undefined ? body : {}),
        headless: source["headless"] === true,
        stealth: source["stealth"] === true,
        timeout_seconds: num(source["timeout_seconds"], 60),
        viewport,
        created_at: stamp,
        ...(pool === undefined
          ? {}
          : { pool: { id: pool.id, ...(pool.fields["name"] === undefined ? {} : { name: pool.fields["name"] }) } })
      })
      engine.put(store, "/browsers", { id, project: call.project, deleted: false, fields })
      org.browsers.set(id, {
        ...engine.newBrowserState(id, {
          viewport: { width: num(viewport.width, 1920), height: num(viewport.height, 1080) }
        }),
        replays: new Map()
      })
      return ok(op, fields)
    }
    case "releaseBrowser": {
      const pool = engine.find(store, "/browser_pools", call.segments[1]!, call.project)
      if (pool === undefined) return error(404, "not_found", "browser pool not found")
      const sessionId = String(body["session_id"] ?? "")
      const resource = engine.find(store, "/browsers", sessionId, call.project)
      if (resource === undefined) return error(404, "not_found", "browser not found")
      store.collections.get("/browsers")?.delete(resource.id)
      org.browsers.delete(resource.id)
      pool.fields = {
        ...pool.fields,
        available_count: num(pool.fields["available_count"], 0) + (body["reuse"] === false ? 0 : 1),
        acquired_count: Math.max(0, num(pool.fields["acquired_count"], 0) - 1)
      }
      return ok(op)
    }
    case "flushBrowserPool": {
      const pool = engine.find(store, "/browser_pools", call.segments[1]!, call.project)
      if (pool === undefined) return error(404, "not_found", "browser pool not found")
      pool.fields = { ...pool.fields, available_count: 0 }
      return ok(op)
    }
    case "createBrowserPool": {
      const reply = engine.generic(store, call, () => "pool")
      const created = [...(store.collections.get("/browser_pools")?.values() ?? [])].at(-1)
      if (created !== undefined) {
        const size = num(body["size"], 1)
        created.fields = {
          ...created.fields,
          available_count: size,
          acquired_count: 0,
          browser_pool_config: { ...body }
        }
        return ok(op, created.fields)
      }
      return reply
    }
    case "updateBrowserPool": {
      const pool = engine.find(store, "/browser_pools", call.segments[1]!, call.project)
      if (pool === undefined) return error(404, "not_found", "browser pool not found")
      const config = { ...obj(pool.fields["browser_pool_config"]), ...body }
      pool.fields = {
        ...pool.fields,
        ...(typeof body["name"] === "string" ? { name: body["name"] } : {}),
        browser_pool_config: config,
        available_count: Math.max(0, num(config["size"], 1) - num(pool.fields["acquired_count"], 0))
      }
      return ok(op, pool.fields)
    }
    case "listBrowsers": {
      const status = call.query.get("status") ?? (call.query.get("include_deleted") === "true" ? "all" : "active")
      const items = [...(store.collections.get("/browsers")?.values() ?? [])].filter((r) =>
        (r.project === undefined || call.project === undefined || r.project === call.project) &&
        (status === "all" || (status === "deleted") === r.deleted)
      )
      return engine.list(op, items.map((r) => r.fields), call.query)
    }
    case "getBrowser": {
      const resource = engine.find(store, "/browsers", call.segments[1]!, call.project)
      if (resource === undefined || (resource.deleted && call.query.get("include_deleted") !== "true")) {
        return error(404, "not_found", "browser not found")
      }
      return ok(op, resource.fields)
    }
    case "deleteBrowser": {
      const resource = engine.find(store, "/browsers", call.segments[1]!, call.project)
      if (resource === undefined || resource.deleted) return error(404, "not_found", "browser not found")
      resource.deleted = true
      resource.fields = { ...resource.fields, deleted_at: stamp }
      org.browsers.delete(resource.id)
      return ok(op)
    }
    case "updateBrowser": {
      const resource = engine.find(store, "/browsers", call.segments[1]!, call.project)
      const browser = resource === undefined ? undefined : org.browsers.get(resource.id)
      if (resource === undefined || resource.deleted || browser === undefined) {
        return error(404, "not_found", "browser not found")
      }
      const viewport = values.isObject(body["viewport"]) ? body["viewport"] : undefined
      if (viewport !== undefined) {
        browser.viewport = {
          width: num(viewport.width, browser.viewport.width),
          height: num(viewport.height, browser.viewport.height)
        }
      }
      const { force: _force, ...rest } = viewport ?? {}
      resource.fields = {
        ...resource.fields,
        ...body,
        ...(viewport === undefined ? {} : { viewport: rest })
      }
      return ok(op, resource.fields)
    }
    case "clickMouse":
    case "moveMouse":
    case "scrollMouseWheel":
      browser!.mouse = { x: num(body["x"], browser!.mouse.x), y: num(body["y"], browser!.mouse.y) }
      return ok(op)
    case "dragMouse":
      dragTo(browser!, body["path"])
      return ok(op)
    case "typeText":
      browser!.typed.push(String(body["text"] ?? ""))
      return ok(op)
    case "pressKey":
      browser!.typed.push(...strings(body["keys"]).map((k) => `<${k}>`))
      return ok(op)
    case "batchComputerActions":
      for (const action of Array.isArray(body["actions"]) ? body["actions"].map(obj) : []) {
        applyAction(browser!, action)
      }
      return ok(op)
    case "writeClipboard":
      browser!.clipboard = String(body["text"] ?? "")
      return ok(op)
    case "readClipboard":
      return ok(op, { text: browser!.clipboard })
    case "captureScreenshot": {
      const region = obj(body["region"])
      return ok(
        op,
        values.png(num(region["width"], browser!.viewport.width), num(region["height"], browser!.viewport.height))
      )
    }
    // the filesystem
    case "writeFile": {
      const path = normalize(call.query.get("path") ?? "/")
      const failed = writeNode(browser!, path, call.raw, call.query.get("mode") ?? "0644", call.now)
      return failed ?? ok(op)
    }
    case "uploadFiles": {
      const files = call.parts.filter((p) => p.filename !== undefined || /file\]?$/.test(p.name))
      const destinations = call.parts.filter((p) => p.name.includes("dest_path"))
      for (const [i, file] of files.entries()) {
        const dest = destinations[i] === undefined
          ? `/${file.filename ?? `upload_${i}`}`
          : new TextDecoder().decode(destinations[i]!.bytes)
        const failed = writeNode(browser!, normalize(dest), file.bytes, "0644", call.now)
        if (failed !== undefined) return failed
      }
      return ok(op)
    }
    case "readFile":
    case "getFileInfo":
    case "downloadDirZip": {
      const path = normalize(call.query.get("path") ?? "/")
      const node = browser!.fs.get(path)
      if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
      if (op.name === "getFileInfo") return ok(op, fileInfo(path, node))
      if (op.name === "readFile") {
        if (node.dir) return error(400, "bad_request", `${path} is a directory`)
        return ok(op, node.bytes)
      }
      return ok(op, new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)]))
    }
    case "listFiles": {
      const path = normalize(call.query.get("path") ?? "/")
      const node = browser!.fs.get(path)
      if (node === undefined || !node.dir) return error(404, "not_found", `${path}: no such directory`)
      const entries = [...browser!.fs.entries()].filter(([p]) => p !== path && parentOf(p) === path)
      return ok(op, entries.map(([p, n]) => fileInfo(p, n)))
    }
    case "createDirectory": {
      const path = normalize(String(body["path"] ?? "/"))
      if (browser!.fs.get(path)?.dir === false) return error(400, "bad_request", `${path} is a file`)
      makeDirs(browser!, path, call.now)
      if (typeof body["mode"] === "string") browser!.fs.get(path)!.mode = body["mode"]
      return ok(op)
    }
    case "deleteFile":
    case "deleteDirectory": {
      const path = normalize(String(body["path"] ?? "/"))
      const node = browser!.fs.get(path)
      if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
      if (node.dir !== (op.name === "deleteDirectory")) {
        return error(400, "bad_request", `${path} is ${node.dir ? "a directory" : "not a directory"}`)
      }
      for (const p of [...browser!.fs.keys()]) if (p === path || p.startsWith(`${path}/`)) browser!.fs.delete(p)
      return ok(op)
    }
    case "setFilePermissions": {
      const path = normalize(String(body["path"] ?? "/"))
      const node = browser!.fs.get(path)
      if (node === undefined) return error(404, "not_found", `${path}: no such file or directory`)
      node.mode = String(body["mode"] ?? node.mode)
      return ok(op)
    }
    case "movePath": {
      const src = normalize(String(body["src_path"] ?? "/"))
      const dest = normalize(String(body["dest_path"] ?? "/"))
      if (!browser!.fs.has(src) || src === "/") return error(404, "not_found", `${src}: no such file or directory`)
      makeDirs(browser!, parentOf(dest), call.now)
      for (const [p, node] of [...browser!.fs.entries()]) {
        if (p === src || p.startsWith(`${src}/`)) {
          browser!.fs.delete(p)
          browser!.fs.set(dest + p.slice(src.length), node)
        }
      }
      return ok(op)
    }
    // processes
    case "execProcess": {
      const result = run(browser!, String(body["command"] ?? ""), strings(body["args"]))
      return ok(op, {
        exit_code: result.code,
        stdout_b64: b64(result.out),
        stderr_b64: b64(result.err),
        duration_ms: 1
      })
    }
    case "spawnProcess": {
      const result = run(browser!, String(body["command"] ?? ""), strings(body["args"]))
      // the document's process ids are UUIDs
      store.counter++
      const id = `00000000-0000-4000-8000-${store.counter.toString(16).padStart(12, "0")}`
      const process: engine.Process = {
        id,
        pid: 1000 + store.counter,
        state: "running",
        exitCode: null,
        output: result.out
      }
      browser!.processes.set(id, process)
      engine.put(store, `/browsers/${browser!.id}/process`, {
        id,
        project: call.project,
        deleted: false,
        fields: { id }
      })
      return ok(op, { process_id: id, pid: process.pid, started_at: stamp })
    }
    case "getProcessStatus":
    case "killProcess":
    case "writeProcessStdin":
    case "resizeProcess":
    case "streamProcessStdout": {
      const process = browser!.processes.get(call.segments[3]!)
      if (process === undefined) return error(404, "not_found", "process not found")
      if (op.name === "getProcessStatus") {
        return ok(op, { state: process.state, exit_code: process.exitCode, cpu_pct: 0, mem_bytes: 1024 * 1024 })
      }
      if (op.name === "killProcess") {
        process.state = "exited"
        process.exitCode = body["signal"] === "KILL" ? 137 : 143
        return ok(op, { ok: true })
      }
      if (op.name === "writeProcessStdin") {
        return ok(op, { written_bytes: Buffer.from(String(body["data_b64"] ?? ""), "base64").length })
      }
      if (op.name === "resizeProcess") return ok(op, { ok: true })
      process.state = "exited"
      process.exitCode ??= 0
      return ok(op, [
        { stream: "stdout", data_b64: b64(process.output) },
        { event: "exit", exit_code: process.exitCode }
      ])
    }
    case "listApps": {
      const apps = [...(store.collections.get("/deployments")?.values() ?? [])]
        .flatMap((d) => {
          // the service reads the app's name from its code, which the simulator does not run: a
          // deployment that names no app is listed under its entrypoint's base name
          const named = d.fields["app_name"]
          const entrypoint = d.fields["entrypoint_rel_path"]
          const appName = typeof named === "string"
            ? named
            : typeof entrypoint === "string"
            ? appNameOf(entrypoint)
            : undefined
          return d.deleted || appName === undefined ? [] : [{ d, appName }]
        })
        .map(({ appName, d }) => ({
          id: `app_${d.id}`,
          app_name: appName,
          version: d.fields["version"] ?? "latest",
          region: d.fields["region"],
          deployment: d.id,
          actions: []
        }))
      return engine.list(op, apps, call.query)
    }
    // replays
    case "startReplay": {
      const id = engine.nextId(store, "replay")
      engine.put(store, `/browsers/${browser!.id}/replays`, {
        id,
        project: call.project,
        deleted: false,
        fields: { id }
      })
      browser!.replays.set(id, {
        id,
        size: 64 * 1024,
        retryAfter: 1,
        pollsLeft: 0,
        readyAt: call.now,
        startedAt: stamp,
        stopped: false
      })
      return ok(op, { replay_id: id, started_at: stamp })
    }
    case "listReplays":
      return ok(op, [...browser!.replays.values()].map((r) => ({ replay_id: r.id, started_at: r.startedAt })))
    case "stopReplay": {
      const replay = browser!.replays.get(call.segments[3]!)
      if (replay === undefined) return error(404, "not_found", "replay not found")
      replay.stopped = true
      return ok(op)
    }
    // credentials
    case "createCredential":
    case "updateCredential": {
      const reply = engine.generic(store, call, () => "cred")
      if (reply._tag !== "Json") return reply
      const resource = op.name === "createCredential"
        ? [...(store.collections.get("/credentials")?.values() ?? [])].at(-1)
        : engine.find(store, "/credentials", call.segments[1]!, call.project)
      if (resource === undefined) return reply
      const secret = body["totp_secret"]
      if (typeof secret === "string" && secret !== "") {
        resource.fields = { ...resource.fields, has_totp_secret: true }
        return ok(op, {
          ...resource.fields,
          totp_code: values.totp(secret, call.now),
          totp_code_expires_at: new Date((Math.floor(call.now / 30_000) + 1) * 30_000).toISOString()
        })
      }
      return ok(op, resource.fields)
    }
    case "getCredentialTotpCode": {
      const resource = engine.find(store, "/credentials", call.segments[1]!, call.project)
      if (resource === undefined) return error(404, "not_found", "credential not found")
      const secret = resource.fields["totp_secret"]
      if (typeof secret !== "string") return error(400, "bad_request", "this credential has no TOTP secret")
      return ok(op, {
        code: values.totp(secret, call.now),
        expires_at: new Date((Math.floor(call.now / 30_000) + 1) * 30_000).toISOString()
      })
    }
    // deployments and invocations
    case "createDeployment": {
      const fields: Record<string, unknown> = {}
      for (const part of call.parts) {
        if (part.filename === undefined) fields[part.name] = new TextDecoder().decode(part.bytes)
      }
      const reply = engine.generic(
        store,
        { ...call, body: { ...fields, status: "running", region: "aws.us-east-1a" } },
        () => "dep"
      )
      const created = [...(store.collections.get("/deployments")?.values() ?? [])].at(-1)
      if (created !== undefined) {
        org.deployments.set(created.id, { id: created.id, state: "running", markedForDeletion: false })
      }
      return reply
    }
    case "createInvocation": {
      const async = body["async"] === true
      const reply = engine.generic(
        store,
        { ...call, body: { ...body, status: async ? "queued" : "succeeded" } },
        () => "inv"
      )
      const created = [...(store.collections.get("/invocations")?.values() ?? [])].at(-1)
      if (created === undefined || reply._tag !== "Json") return reply
      // an asynchronous invocation reaches its terminal state right after the answer
      if (async) {
        const answer = engine.reply(op, created.fields, 202)
        created.fields = { ...created.fields, status: "succeeded", finished_at: stamp }
        return answer
      }
      return reply
    }
    // event streams that end at the resource's terminal state
    case "followDeployment":
    case "followInvocation": {
      const deployment = op.name === "followDeployment"
      const resource = engine.find(store, deployment ? "/deployments" : "/invocations", call.segments[1]!, call.project)
      if (resource === undefined) {
        return error(404, "not_found", `${deployment ? "deployment" : "invocation"} not found`)
      }
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
          : { event: "invocation_state", timestamp: stamp, invocation: { ...state, status: "running" } },
        { event: "log", timestamp: stamp, message: deployment ? "deployed" : "invocation finished" },
        deployment
          ? { event: "deployment_state", timestamp: stamp, deployment: state }
          : { event: "invocation_state", timestamp: stamp, invocation: { ...state, finished_at: stamp } }
      ])
    }
    case "loginAuthConnection": {
      const resource = engine.find(store, "/auth/connections", call.segments[2]!, call.project)
      if (resource === undefined) return error(404, "not_found", "auth connection not found")
      return ok(op, {
        id: resource.id,
        flow_type: "LOGIN",
        hosted_url: `https://sim.kernel.local/login/${resource.id}`,
        flow_expires_at: new Date(call.now + 10 * 60_000).toISOString()
      })
    }
    case "followAuthConnection":
      return ok(op, [
        { event: "managed_auth_state", timestamp: stamp, flow_status: "IN_PROGRESS", flow_step: "DISCOVERING" },
        { event: "managed_auth_state", timestamp: stamp, flow_status: "SUCCESS", flow_step: "COMPLETED" }
      ])
    case "streamLogs":
      return ok(op, [
        { event: "log", timestamp: stamp, message: "browser started" },
        { event: "log", timestamp: stamp, message: `session ${browser!.id} ready` }
      ])
    case "streamFilesystemEvents": {
      const files = [...browser!.fs.entries()].filter(([p]) => p !== "/").slice(0, 5)
      return ok(
        op,
        files.map(([path, node]) => ({ type: "CREATE", path, name: baseName(path), is_dir: node.dir }))
      )
    }
    // the simulator runs no code: the run succeeds, with no result (the service returns the code's)
    case "executePlaywrightCode":
      return ok(op, { success: true })
    case "checkProxy": {
      const resource = engine.find(store, "/proxies", call.segments[1]!, call.project)
      if (resource === undefined) return error(404, "not_found", "proxy not found")
      resource.fields = { ...resource.fields, status: "available", last_checked: stamp }
      return ok(op, resource.fields)
    }
  }
  return undefined
}

/** An app's name from its entrypoint, `src/my-app.ts` → `my-app`. */
const appNameOf = (entrypoint: string): string => entrypoint.split("/").at(-1)!.replace(/\.[^.]*$/, "") || "app"
