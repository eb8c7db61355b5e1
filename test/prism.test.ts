/**
 * The bin behind Prism's validating proxy (`prism proxy <document> <simulator> --errors`), with
 * the service's public OpenAPI document: every status each route can produce, including faults
 * injected through the control plane. Any violation Prism reports fails, except the one that is
 * the document's own gap: a status it does not list for a route (401 on the two computer routes,
 * gateway statuses), which Prism reports as a warning "Unable to match the returned status code".
 */
import { describe, expect, it } from "@effect/vitest"
import { KernelSimulator } from "effect-kernel/testing"
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import type { Operation } from "../src/internal/definition.js"
import { operations } from "../src/internal/generated/table.js"
import { sample } from "../src/testing/internal/values.js"

const require = createRequire(import.meta.url)
const tsx = require.resolve("tsx/cli")
const prism = require.resolve("@stoplight/prism-cli/dist/index.js")
// the service's document, copied verbatim into the repository (spec/kernel-openapi.yml), or where
// KERNEL_OPENAPI_DOCUMENT says
const document = process.env["KERNEL_OPENAPI_DOCUMENT"] ??
  new URL("../spec/kernel-openapi.yml", import.meta.url).pathname
const admin = "adm_prism"

const start = (args: ReadonlyArray<string>, pattern: RegExp, children: Array<ChildProcess>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    children.push(child)
    let out = ""
    const timer = setTimeout(() => reject(new Error(`not ready in time: ${out.slice(-2000)}`)), 50_000)
    const onData = (data: Buffer) => {
      out += data.toString()
      if (out.length > 100_000) out = out.slice(-50_000)
      const match = pattern.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out.slice(-2000)}`)))
  })

/** The statuses the document lists, per route. */
const documented: Record<string, ReadonlyArray<number>> = {
  listBrowserPools: [200, 401, 403, 500],
  downloadReplay: [200, 202, 400, 401, 403, 404, 500],
  getMousePosition: [200, 400, 404, 500],
  setCursorVisibility: [200, 400, 404, 500],
  deleteDeployment: [204, 401, 404, 500]
}

interface Case {
  readonly route: keyof typeof documented
  readonly status: number
  readonly method: string
  readonly path: string
  readonly token?: string
  readonly body?: string
  readonly fault?: Record<string, unknown>
}

const paid = KernelSimulator.defaultToken
const cursorBody = "{\"hidden\":true}"

const cases: ReadonlyArray<Case> = [
  { route: "listBrowserPools", status: 200, method: "GET", path: "/browser_pools" },
  { route: "listBrowserPools", status: 401, method: "GET", path: "/browser_pools", token: "wrong" },
  { route: "listBrowserPools", status: 403, method: "GET", path: "/browser_pools", token: "sk_sim_free" },
  { route: "listBrowserPools", status: 500, method: "GET", path: "/browser_pools", fault: { status: 500 } },
  { route: "downloadReplay", status: 202, method: "GET", path: "/browsers/browser_1/replays/replay_1" },
  { route: "downloadReplay", status: 202, method: "GET", path: "/browsers/browser_1/replays/replay_1" },
  { route: "downloadReplay", status: 200, method: "GET", path: "/browsers/browser_1/replays/replay_1" },
  { route: "downloadReplay", status: 404, method: "GET", path: "/browsers/browser_1/replays/nope" },
  { route: "downloadReplay", status: 404, method: "GET", path: "/browsers/nope/replays/replay_1" },
  { route: "downloadReplay", status: 401, method: "GET", path: "/browsers/browser_1/replays/replay_1", token: "x" },
  {
    route: "downloadReplay",
    status: 403,
    method: "GET",
    path: "/browsers/browser_1/replays/replay_1",
    token: "sk_sim_free"
  },
  {
    route: "downloadReplay",
    status: 400,
    method: "GET",
    path: "/browsers/browser_1/replays/replay_1",
    fault: { status: 400 }
  },
  {
    route: "downloadReplay",
    status: 500,
    method: "GET",
    path: "/browsers/browser_1/replays/replay_1",
    fault: { status: 500 }
  },
  { route: "getMousePosition", status: 200, method: "POST", path: "/browsers/browser_1/computer/get_mouse_position" },
  { route: "getMousePosition", status: 404, method: "POST", path: "/browsers/nope/computer/get_mouse_position" },
  {
    route: "getMousePosition",
    status: 400,
    method: "POST",
    path: "/browsers/browser_1/computer/get_mouse_position",
    fault: { status: 400 }
  },
  {
    route: "getMousePosition",
    status: 500,
    method: "POST",
    path: "/browsers/browser_1/computer/get_mouse_position",
    fault: { status: 500 }
  },
  {
    route: "getMousePosition",
    status: 401,
    method: "POST",
    path: "/browsers/browser_1/computer/get_mouse_position",
    token: "wrong"
  },
  {
    route: "getMousePosition",
    status: 429,
    method: "POST",
    path: "/browsers/browser_1/computer/get_mouse_position",
    fault: { status: 429, retryAfter: 2 }
  },
  { route: "setCursorVisibility", status: 200, method: "POST", path: "/browsers/browser_1/computer/cursor" },
  { route: "setCursorVisibility", status: 404, method: "POST", path: "/browsers/nope/computer/cursor" },
  {
    route: "setCursorVisibility",
    status: 400,
    method: "POST",
    path: "/browsers/browser_1/computer/cursor",
    fault: { status: 400 }
  },
  {
    route: "setCursorVisibility",
    status: 500,
    method: "POST",
    path: "/browsers/browser_1/computer/cursor",
    fault: { status: 500 }
  },
  {
    route: "setCursorVisibility",
    status: 401,
    method: "POST",
    path: "/browsers/browser_1/computer/cursor",
    token: "wrong"
  },
  { route: "deleteDeployment", status: 204, method: "DELETE", path: "/deployments/dep_running" },
  { route: "deleteDeployment", status: 404, method: "DELETE", path: "/deployments/nope" },
  { route: "deleteDeployment", status: 401, method: "DELETE", path: "/deployments/dep_queued", token: "wrong" },
  {
    route: "deleteDeployment",
    status: 500,
    method: "DELETE",
    path: "/deployments/dep_queued",
    fault: { status: 500 }
  },
  {
    route: "deleteDeployment",
    status: 502,
    method: "DELETE",
    path: "/deployments/dep_queued",
    fault: { status: 502, gateway: true }
  },
  {
    route: "listBrowserPools",
    status: 503,
    method: "GET",
    path: "/browser_pools",
    fault: { status: 503, retryAfter: 5 }
  }
]

interface Violation {
  readonly severity?: unknown
  readonly message?: unknown
  readonly code?: unknown
}

describe("the bin behind Prism's validating proxy", () => {
  it("every status of every route conforms to the public document", async () => {
    const children: Array<ChildProcess> = []
    try {
      const simulator = await start(
        [tsx, "src/bin/simulator.ts", "--port", "0", "--admin-token", admin],
        /listening on (http:\/\/\S+)/,
        children
      )
      const proxy = await start(
        [prism, "proxy", document, simulator, "--errors", "--port", "0", "--host", "127.0.0.1", "-m", "false"],
        /Prism is listening on (http:\/\/\S+)/,
        children
      )
      const problems: Array<string> = []
      let gaps = 0
      for (const c of cases) {
        if (c.fault !== undefined) {
          const injected = await fetch(`${simulator}/_simulator/faults`, {
            method: "POST",
            headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
            body: JSON.stringify({ route: c.route, times: 1, ...c.fault })
          })
          expect(injected.status).toBe(201)
        }
        const response = await fetch(`${proxy}${c.path}`, {
          method: c.method,
          headers: {
            authorization: `Bearer ${c.token ?? paid}`,
            ...(c.route === "setCursorVisibility" ? { "content-type": "application/json" } : {})
          },
          ...(c.route === "setCursorVisibility" ? { body: cursorBody } : {})
        })
        const body = new Uint8Array(await response.arrayBuffer())
        const label = `${c.method} ${c.path} -> ${c.status}`
        if (response.status !== c.status) {
          problems.push(`${label}: got ${response.status} ${new TextDecoder().decode(body.subarray(0, 500))}`)
          continue
        }
        const header = response.headers.get("sl-violations")
        const violations: ReadonlyArray<Violation> = header === null ? [] : JSON.parse(header)
        const undocumented = !documented[c.route]!.includes(c.status)
        for (const v of violations) {
          const gap = undocumented && String(v.message).startsWith("Unable to match the returned status code")
          if (gap) gaps++
          else problems.push(`${label}: ${JSON.stringify(v)}`)
        }
        if (c.status === 200 && c.route === "downloadReplay") {
          // Prism relays a non-JSON body as UTF-8 text (prism-http parseResponse: response.text()), so
          // the bytes it forwards are not the replay's; the status, headers and media type are
          // what it validates. The bytes are checked straight from the simulator.
          expect(response.headers.get("content-type")).toBe("video/mp4")
          const direct = await fetch(`${simulator}${c.path}`, { headers: { authorization: `Bearer ${paid}` } })
          const bytes = new Uint8Array(await direct.arrayBuffer())
          expect(bytes.length).toBe(4 * 1024 * 1024)
          expect(new TextDecoder().decode(bytes.subarray(4, 8))).toBe("ftyp")
        }
      }
      expect(problems).toEqual([])
      // the undocumented statuses were seen, and reported as the document's gap
      expect(gaps).toBe(cases.filter((c) => !documented[c.route]!.includes(c.status)).length)

      // a live validator: an answer outside the document (a 500 whose body is not the Error JSON) is caught
      await fetch(`${simulator}/_simulator/faults`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ route: "listBrowserPools", times: 1, status: 500, body: "oops" })
      })
      const caught = await fetch(`${proxy}/browser_pools`, { headers: { authorization: `Bearer ${paid}` } })
      const text = await caught.text()
      expect(`${caught.headers.get("sl-violations")} ${text}`).toMatch(/media type/)
    } finally {
      for (const child of children) child.kill("SIGTERM")
    }
  }, 120_000)
})

// ---------------------------------------------------------------------------------------------
// every operation of the table, every documented status it can be made to answer

const all: ReadonlyArray<Operation> = operations
const byName = (name: string): Operation => all.find((o) => o.name === name)!

/** The request of an operation, from its definition: sampled JSON / multipart / bytes body. */
const bodyOf = (
  definition: Operation,
  extra: Record<string, unknown> = {}
): { headers: Record<string, string>; body?: BodyInit } => {
  const body = definition.body
  if (body === undefined) return { headers: {} }
  if (body.kind === "bytes") return { headers: { "content-type": body.contentType }, body: "hello\n" }
  const value = { ...Object(sample(body.schema.ast)), ...extra }
  if (body.kind === "json") return { headers: { "content-type": "application/json" }, body: JSON.stringify(value) }
  const form = new FormData()
  for (const [key, field] of Object.entries(value)) {
    if (field instanceof Uint8Array) form.append(key, new Blob([new Uint8Array(field)]), `${key}.bin`)
    else if (Array.isArray(field)) {
      field.forEach((item, i) => {
        for (const [k, v] of Object.entries(Object(item))) {
          if (v instanceof Uint8Array) form.append(`${key}[${i}].${k}`, new Blob([new Uint8Array(v)]), `${k}.bin`)
          else form.append(`${key}[${i}].${k}`, String(v))
        }
      })
    } else form.append(key, typeof field === "string" ? field : JSON.stringify(field))
  }
  return { headers: {}, body: form }
}

const queryOf = (definition: Operation, overrides: Record<string, string>): string => {
  const params = new URLSearchParams()
  for (const p of definition.parameters) {
    if (p.in !== "query") continue
    const value = overrides[p.name] ?? (p.required ? String(sample(p.schema.ast, p.name)) : undefined)
    if (value !== undefined) params.set(p.name, value)
  }
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

const fileQueries: Record<string, Record<string, string>> = {
  readFile: { path: "/hello.txt" },
  getFileInfo: { path: "/hello.txt" },
  listFiles: { path: "/" },
  downloadDirZip: { path: "/" },
  writeFile: { path: "/hello.txt" },
  downloadChromeStoreExtension: { url: "https://chromewebstore.google.com/detail/x" }
}

const fileBodies: Record<string, Record<string, unknown>> = {
  createDirectory: { path: "/dir" },
  deleteDirectory: { path: "/dir" },
  deleteFile: { path: "/delete-me.txt" },
  setFilePermissions: { path: "/hello.txt", mode: "0600" },
  movePath: { src_path: "/move-me.txt", dest_path: "/moved.txt" },
  execProcess: { command: "echo", args: ["hi"] },
  dragMouse: { path: [[0, 0], [10, 10]] },
  uploadZip: { dest_path: "/unzipped" },
  batchComputerActions: { actions: [{ type: "move_mouse", move_mouse: { x: 1, y: 1 } }] },
  spawnProcess: { command: "echo", args: ["hi"] }
}

describe("the bin behind Prism's validating proxy, for the whole API", () => {
  it("every operation answers what the document says (violations counted)", async () => {
    const children: Array<ChildProcess> = []
    try {
      const simulator = await start(
        [tsx, "src/bin/simulator.ts", "--port", "0", "--admin-token", admin],
        /listening on (http:\/\/\S+)/,
        children
      )
      const proxy = await start(
        [prism, "proxy", document, simulator, "--errors", "--port", "0", "--host", "127.0.0.1", "-m", "false"],
        /Prism is listening on (http:\/\/\S+)/,
        children
      )
      const auth = { authorization: `Bearer ${paid}` }
      const direct = async (name: string, path: string, extra: Record<string, unknown> = {}) => {
        const definition = byName(name)
        const request = bodyOf(definition, extra)
        const response = await fetch(`${simulator}${path}`, {
          method: definition.method,
          headers: { ...auth, ...request.headers },
          ...(request.body === undefined ? {} : { body: request.body })
        })
        const text = await response.text()
        return text === "" ? {} : JSON.parse(text)
      }
      const ids: Record<string, string> = {
        browsers: "browser_1",
        browser_pools: "pool_small",
        deployments: "dep_running",
        replay: "replay_1",
        profiles: (await direct("createProfile", "/profiles", { name: "prism-profile" })).id,
        extensions: (await direct("uploadExtension", "/extensions")).id,
        proxies: (await direct("createProxy", "/proxies")).id,
        invocations: (await direct("createInvocation", "/invocations")).id,
        auth: (await direct("createAuthConnection", "/auth/connections")).id,
        credentials: (await direct("createCredential", "/credentials", { totp_secret: "JBSWY3DPEHPK3PXP" })).id,
        credential_providers: (await direct("createCredentialProvider", "/org/credential_providers")).id,
        projects: (await direct("createProject", "/org/projects")).id,
        api_keys: (await direct("createApiKey", "/org/api_keys")).id,
        watch: (await direct("startFilesystemWatch", "/browsers/browser_1/fs/watch")).watch_id,
        process:
          (await direct("spawnProcess", "/browsers/browser_1/process/spawn", fileBodies["spawnProcess"])).process_id
      }
      const acquired = (await direct("acquireBrowser", "/browser_pools/pool_small/acquire")).session_id
      for (const file of ["/hello.txt", "/delete-me.txt", "/move-me.txt"]) {
        await fetch(`${simulator}/browsers/browser_1/fs/write_file?path=${encodeURIComponent(file)}`, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/octet-stream" },
          body: "hello\n"
        })
      }
      const pathOf = (definition: Operation): string =>
        definition.path.replace(/\{(\w+)\}/g, (_, field: string) => {
          if (field === "replayId") return ids["replay"]!
          if (field === "watchId") return ids["watch"]!
          if (field === "processId") return ids["process"]!
          const parts = definition.path.split("/")
          return ids[parts[1] === "org" ? parts[2]! : parts[1]!]!
        })
      const ordered = [
        ...all.filter((d) => d.method !== "DELETE"),
        ...all.filter((d) => d.method === "DELETE").sort((a, b) => b.path.length - a.path.length)
      ]
      const violations: Array<string> = []
      const statuses: Array<string> = []
      // requests Prism refused (422) before they reached the simulator: this test's request encoding
      const rejected: Array<string> = []
      // an injected status the caller did not get
      const faultMisses: Array<string> = []
      const send = async (definition: Operation, fault?: number, options: {
        readonly body?: Record<string, unknown>
        readonly path?: string
        readonly expect?: number
      } = {}) => {
        if (fault !== undefined) {
          await fetch(`${simulator}/_simulator/faults`, {
            method: "POST",
            headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
            body: JSON.stringify({ route: definition.name, times: 1, status: fault })
          })
        }
        const extra = options.body ??
          (definition.name === "releaseBrowser" ? { session_id: acquired } : fileBodies[definition.name])
        const request = bodyOf(definition, extra)
        const response = await fetch(
          `${proxy}${options.path ?? pathOf(definition)}${queryOf(definition, fileQueries[definition.name] ?? {})}`,
          {
            method: definition.method,
            headers: { ...auth, ...request.headers },
            ...(request.body === undefined ? {} : { body: request.body })
          }
        )
        const answered = await response.text()
        if (response.status === 422 && fault === undefined) {
          rejected.push(`${definition.name}: ${answered.slice(0, 300)}`)
        }
        statuses.push(`${definition.name} ${response.status}`)
        if (fault !== undefined && response.status !== fault) {
          faultMisses.push(`${definition.name} ${fault} → ${response.status}`)
        }
        if (options.expect !== undefined) {
          expect(`${definition.name} ${response.status}`).toBe(`${definition.name} ${options.expect}`)
        }
        const label = `${definition.name}${fault === undefined ? "" : ` (fault ${fault})`} ${response.status}`
        const header = response.headers.get("sl-violations")
        for (const v of header === null ? [] : JSON.parse(header) as ReadonlyArray<Violation>) {
          violations.push(`${label}: ${String(v.message)}`)
        }
      }
      // the other documented successes: 202 of an asynchronous invocation and of a replay still
      // recording, 204 of a pool with nothing available
      await send(byName("createInvocation"), undefined, { body: { async: true }, expect: 202 })
      await send(byName("downloadReplay"), undefined, { expect: 202 })
      await fetch(`${simulator}/browser_pools/pool_stealth/flush`, { method: "POST", headers: auth })
      await send(byName("acquireBrowser"), undefined, { path: "/browser_pools/pool_stealth/acquire", expect: 204 })
      for (const definition of ordered) await send(definition)
      const unsuccessful = statuses.filter((s) => !/\s2\d\d$/.test(s))
      // every documented error status, as a fault on the operation
      for (const definition of all) {
        for (const Class of definition.errors) await send(definition, Class.status)
      }
      const successes = statuses.filter((s) => /\s2\d\d$/.test(s)).length

      console.log(
        `Prism, whole API: ${statuses.length} requests, ${successes} 2xx, ${violations.length} violations\n${
          violations.join("\n")
        }\nnot 2xx without a fault: ${unsuccessful.join(", ")}\nrefused by Prism: ${rejected.join("\n")}`
      )
      // every injected status is answered, but where Prism refuses this test's multipart request
      // (422) or replaces an answer it finds invalid (curl's 502, whose documented shape differs)
      expect(faultMisses.filter((m) => !m.endsWith("→ 422") && m !== "curlBrowser 502 → 500")).toEqual([])
      // no route is unknown to the simulator, none answers "wrong method"
      expect(statuses.filter((s) => / 405$/.test(s))).toEqual([])
      expect(violations.length).toBeLessThanOrEqual(violationBudget)
    } finally {
      for (const child of children) child.kill("SIGTERM")
    }
  }, 300_000)
})

/** The violations Prism still reports for the whole API (see docs/testing.md); it only goes down. */
const violationBudget = 20
