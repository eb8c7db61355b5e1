/**
 * Review of the served simulator driven from outside, as a team in another language would (curl and
 * plain HTTP, no SDK): defects it found, each case failing before its fix. One served simulator for
 * the file, on a seed whose ids are those the simulator's own counter gives out.
 */
import { describe, expect, it } from "@effect/vitest"
import { KernelSimulator } from "effect-kernel/testing"
import * as OpenApi from "../scripts/generate/openapi.js"
import { raw, sendJson, servedForFile } from "./utils/served.js"

const tokenA = "sk_outside_a_0123456789"
const tokenB = "sk_outside_b_0123456789"

const served = servedForFile({
  adminToken: "adm_outside_0123456789",
  seed: {
    organizations: [
      {
        id: "org_a",
        token: tokenA,
        browsers: [{ id: "browser_00001", mouse: { x: 7, y: 7 }, viewport: { width: 640, height: 480 } }],
        pools: [{
          id: "pool_00002",
          name: "seeded",
          available_count: 1,
          acquired_count: 0,
          created_at: "2026-11-01T09:00:00Z",
          browser_pool_config: { size: 1 }
        }],
        deployments: [{ id: "dep_00003", state: "running", app_name: "seeded-app", version: "1" }]
      },
      { id: "org_b", token: tokenB, browsers: [] },
      ...(KernelSimulator.defaultSeed.organizations ?? [])
    ]
  }
})

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  sendJson(served.url, method, path, body, headers)

describe("ids: a created resource never takes a seeded one's id, nor another organization's", () => {
  it("a browser, a pool and a deployment created next to seeded ones with the counter's ids", async () => {
    const a = { token: tokenA }
    const browsers: Array<string> = []
    for (let i = 0; i < 4; i++) {
      browsers.push((await send("POST", "/browsers", { timeout_seconds: 999 }, a)).json.session_id)
    }
    expect(browsers).not.toContain("browser_00001")
    const seeded = await send("POST", "/browsers/browser_00001/computer/get_mouse_position", undefined, a)
    expect(seeded.json).toEqual({ x: 7, y: 7 })
    expect((await send("GET", "/browsers/browser_00001", undefined, a)).json.viewport).toMatchObject({ width: 640 })

    const pools: Array<string> = []
    for (let i = 0; i < 4; i++) {
      pools.push((await send("POST", "/browser_pools", { name: `new-${i}`, size: 1 }, a)).json.id)
    }
    expect(pools).not.toContain("pool_00002")
    expect((await send("GET", "/browser_pools/pool_00002", undefined, a)).json.name).toBe("seeded")

    const boundary = "----outside"
    const body = [
      `--${boundary}\r\ncontent-disposition: form-data; name="entrypoint_rel_path"\r\n\r\napp.ts\r\n`,
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.zip"\r\n`,
      "content-type: application/zip\r\n\r\nPK\u0005\u0006" + "\0".repeat(18) + "\r\n",
      `--${boundary}--\r\n`
    ].join("")
    const deployed = new Set<string>()
    for (let i = 0; i < 4; i++) {
      const answer = await raw(served.url, {
        method: "POST",
        path: "/deployments",
        headers: { authorization: `Bearer ${tokenA}`, "content-type": `multipart/form-data; boundary=${boundary}` },
        body: body.replace("app.ts", `app-${i}.ts`)
      })
      expect(answer.status).toBe(201)
      deployed.add(JSON.parse(answer.body).id)
    }
    expect(deployed).not.toContain("dep_00003")
    expect((await send("GET", "/deployments/dep_00003", undefined, a)).json.status).toBe("running")
    const apps = (await send("GET", "/apps?limit=100", undefined, a)).json as ReadonlyArray<{ app_name: string }>
    expect(apps.map((app) => app.app_name)).toContain("seeded-app")
  })

  it("two organizations' browsers have different ids and CDP URLs", async () => {
    const other = (await send("POST", "/browsers", {}, { token: tokenB })).json
    const ofA = (await send("GET", "/browsers?status=all&limit=100", undefined, { token: tokenA }))
      .json as ReadonlyArray<
        { session_id: string; cdp_ws_url: string }
      >
    expect(ofA.length).toBeGreaterThan(1)
    expect(ofA.map((b) => b.session_id)).not.toContain(other.session_id)
    expect(ofA.map((b) => b.cdp_ws_url)).not.toContain(other.cdp_ws_url)
  })
})

const admin = { authorization: "Bearer adm_outside_0123456789" }

/** The request log's text (`GET /_simulator/requests`), after `requests` were sent on a cleared log. */
const loggedAfter = async (requests: () => Promise<unknown>): Promise<string> => {
  await raw(served.url, { method: "DELETE", path: "/_simulator/requests", headers: admin })
  await requests()
  return (await raw(served.url, { path: "/_simulator/requests", headers: admin })).body
}

describe("the request log keeps no credential, whatever shape it was sent in", () => {
  it.each([
    ["a credential's values as an array", "/credentials", { name: "c1", domain: "x.com", values: ["hunter9"] }],
    ["a credential's values as a string", "/credentials", { name: "c2", domain: "x.com", values: "hunter20" }],
    ["a provider's token as an object", "/org/credential_providers", {
      name: "p1",
      provider_type: "onepassword",
      token: { nested: "hunter21" }
    }]
  ])("%s: refused, and logged without it", async (_, path, body) => {
    const logged = await loggedAfter(async () => expect((await send("POST", path, body)).status).toBe(400))
    expect(logged).toContain(path)
    expect(logged).not.toMatch(/hunter\d+/)
  })

  it("a login's fields of the wrong shape: logged without them", async () => {
    const profile = (await send("POST", "/profiles", { name: "outside-profile" })).json
    const connection = (await send("POST", "/auth/connections", {
      domain: "example.com",
      profile_name: profile.name
    })).json
    const logged = await loggedAfter(async () => {
      for (const fields of [["hunter22"], "hunter23"]) {
        expect((await send("POST", `/auth/connections/${connection.id}/submit`, { fields })).status).toBe(400)
      }
    })
    expect(logged).toContain("/submit")
    expect(logged).not.toMatch(/hunter\d+/)
  })

  it("a token in a cookie, a proxy's credentials, an API key header or a query parameter", async () => {
    const logged = await loggedAfter(() =>
      raw(served.url, {
        path: `/browsers?api_key=${KernelSimulator.defaultToken}&limit=1&access_token=hunter30`,
        headers: {
          authorization: `Bearer ${KernelSimulator.defaultToken}`,
          cookie: `session=${KernelSimulator.defaultToken}`,
          "proxy-authorization": "Basic aHVudGVyMzE=",
          "x-api-key": KernelSimulator.defaultToken
        }
      })
    )
    expect(logged).toContain("limit=1")
    expect(logged).toContain("cookie")
    // a name written with escapes is read decoded
    const escaped = await loggedAfter(() =>
      raw(served.url, {
        path: "/browsers?tok%65n=hunter32&%61uth=hunter33&limit=2",
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      })
    )
    expect(escaped).toContain("limit=2")
    expect(escaped).not.toMatch(/hunter\d+/)
    expect(logged).not.toContain(KernelSimulator.defaultToken)
    expect(logged).not.toContain("hunter30")
    expect(logged).not.toContain("aHVudGVyMzE=")
  })
})

describe("the request log: credential headers a body carries for another server", () => {
  it("curl's headers: Authorization, Cookie, X-Api-Key are not kept, the rest is", async () => {
    const logged = await loggedAfter(() =>
      send("POST", "/browsers/browser_1/curl", {
        url: "https://example.com/",
        headers: {
          Cookie: "sid=hunter40",
          Authorization: "Bearer hunter41",
          "X-Api-Key": "hunter42",
          Accept: "text/html"
        }
      })
    )
    expect(logged).toContain("/curl")
    expect(logged).toContain("text/html")
    expect(logged).not.toMatch(/hunter\d+/)
  })
})

describe("telemetry as the document says", () => {
  it("ts in Unix microseconds; a key event per key typed or pressed, with its key", async () => {
    const browser = (await send("POST", "/browsers", { telemetry: {} })).json.session_id
    const controller = new AbortController()
    const response = await fetch(`${served.url}/browsers/${browser}/telemetry`, {
      headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` },
      signal: controller.signal
    })
    const before = Date.now()
    await send("POST", `/browsers/${browser}/computer/click_mouse`, { x: 3, y: 4 })
    await send("POST", `/browsers/${browser}/computer/type`, { text: "ab" })
    await send("POST", `/browsers/${browser}/computer/press_key`, { keys: ["Return", "Ctrl+t", "constructor"] })
    const after = Date.now()
    const events: Array<{ type: string; ts: number; data: Record<string, unknown> }> = []
    const reader = response.body!.getReader()
    let text = ""
    // what came within 5 s (the events come at once; fewer than seven never end the stream)
    const deadline = setTimeout(() => controller.abort(), 5000)
    try {
      while (events.length < 7) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
        events.length = 0
        for (const m of text.matchAll(/^data: (.*)$/gm)) events.push(JSON.parse(m[1]!).event)
      }
    } catch {
      // aborted at the deadline: the events so far are checked below
    } finally {
      clearTimeout(deadline)
      controller.abort()
    }
    expect(events.map((e) => [e.type, e.data["key"]])).toEqual([
      ["interaction_click", undefined],
      ["interaction_key", "a"],
      ["interaction_key", "b"],
      // KeyboardEvent key values: xdotool's `Return` is `Enter`, a combination each of its keys
      ["interaction_key", "Enter"],
      ["interaction_key", "Control"],
      ["interaction_key", "t"],
      // a key's own name, never a property of an object's prototype
      ["interaction_key", "constructor"]
    ])
    for (const event of events) {
      expect(event.ts).toBeGreaterThanOrEqual(before * 1000)
      expect(event.ts).toBeLessThanOrEqual(after * 1000 + 999)
    }
  })
})

describe("the filesystem: a path through a file is not a directory", () => {
  const bearer = { authorization: `Bearer ${KernelSimulator.defaultToken}` }
  const write = (path: string, contentType: string | undefined, body = "hi") =>
    raw(served.url, {
      method: "PUT",
      path: `/browsers/browser_1/fs/write_file?path=${encodeURIComponent(path)}`,
      headers: { ...bearer, ...(contentType === undefined ? {} : { "content-type": contentType }) },
      body
    })
  const read = (path: string) =>
    raw(served.url, { path: `/browsers/browser_1/fs/read_file?path=${encodeURIComponent(path)}`, headers: bearer })

  it.each(["/t/f.txt/", "/t/f.txt/.", "/t/f.txt/..", "/t/f.txt/x"])(
    "%s: read and file info: 400 not a directory",
    async (path) => {
      expect((await write("/t/f.txt", "application/octet-stream")).status).toBe(201)
      expect((await read("/t/f.txt")).body).toBe("hi")
      const answers = [
        await read(path),
        await raw(served.url, {
          path: `/browsers/browser_1/fs/file_info?path=${encodeURIComponent(path)}`,
          headers: bearer
        })
      ]
      for (const answer of answers) {
        expect(answer.status).toBe(400)
        expect(answer.body).toContain("/t/f.txt is not a directory")
      }
    }
  )

  it("a file moved to a path ending with a slash, a watch of a path through a file: 400", async () => {
    expect((await write("/t/f.txt", "application/octet-stream")).status).toBe(201)
    const moved = await send("PUT", "/browsers/browser_1/fs/move", { src_path: "/t/f.txt", dest_path: "/t/new.txt/" })
    expect(moved.status).toBe(400)
    expect((await read("/t/new.txt")).status).toBe(404)
    expect((await read("/t/f.txt")).status).toBe(200)
    for (const path of ["/t/f.txt/", "/t/f.txt/x"]) {
      const watch = await send("POST", "/browsers/browser_1/fs/watch", { path, recursive: true })
      expect([path, watch.status, watch.json.message]).toEqual([path, 400, "/t/f.txt is not a directory"])
    }
  })

  it("a file written at a path ending with a slash: 400, nothing made", async () => {
    expect((await write("/t/g.txt/", "application/octet-stream")).status).toBe(400)
    expect((await read("/t/g.txt")).status).toBe(404)
  })

  it("cat and ls of a path through a file fail as on Linux", async () => {
    expect((await write("/t/f.txt", "application/octet-stream")).status).toBe(201)
    const cat = (await send("POST", "/browsers/browser_1/process/exec", { command: "cat", args: ["/t/f.txt/"] })).json
    expect(cat.exit_code).toBe(1)
    expect(Buffer.from(cat.stderr_b64, "base64").toString()).toBe("cat: /t/f.txt/: Not a directory\n")
    const ls = (await send("POST", "/browsers/browser_1/process/exec", { command: "ls", args: ["/t/f.txt/"] })).json
    expect(ls.exit_code).toBe(2)
  })

  it("writeFile's raw body sent as another type than application/octet-stream: 415; with no type: taken", async () => {
    const json = await write("/t/j", "application/json", "{}")
    expect(json.status).toBe(415)
    expect(JSON.parse(json.body).message).toBe("the request body must be application/octet-stream")
    expect((await write("/t/k", "application/x-www-form-urlencoded")).status).toBe(415)
    expect((await read("/t/j")).status).toBe(404)
    expect((await write("/t/l", undefined)).status).toBe(201)
    expect((await write("/t/m", "Application/Octet-Stream; charset=binary")).status).toBe(201)
  })
})

describe("the document's deprecated operations", () => {
  const document = OpenApi.load(new URL("../spec/kernel-openapi.yml", import.meta.url).pathname)
  const deprecated: Array<readonly [string, string]> = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of OpenApi.methods) {
      if (item[method]?.deprecated === true) deprecated.push([method.toUpperCase(), path.replace(/\{[^}]+\}/g, "x1")])
    }
  }

  it("15 of them, each a 404 that names what replaces it, not \"no such route\"", async () => {
    expect(deprecated).toHaveLength(15)
    for (const [method, path] of deprecated) {
      const answer = await raw(served.url, {
        method,
        path,
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": "application/json" },
        ...(method === "GET" || method === "DELETE" ? {} : { body: "{}" })
      })
      expect(answer.status, `${method} ${path}`).toBe(404)
      expect(JSON.parse(answer.body).message, `${method} ${path}`).toBe(
        `a deprecated operation of the Kernel API, not simulated: use ${
          path.startsWith("/agents/auth") ? "/auth/connections" : "/org/projects"
        }`
      )
    }
    // a path under them that the document does not have is no route of it
    for (const path of ["/agents/other", "/agents/auth/x/y/z", "/projects/a/b/c", "/projects/a/limits/x"]) {
      const unknown = await raw(served.url, {
        path,
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      })
      expect([path, JSON.parse(unknown.body).message]).toEqual([path, "no such route in the Kernel API"])
    }
  })
})

describe("a refused query parameter says what it takes", () => {
  it.each([
    ["/browsers?status=bogus", "status: \"bogus\" is not valid (expected one of \"active\", \"deleted\", \"all\")"],
    [
      "/invocations?status=bogus",
      "status: \"bogus\" is not valid (expected one of \"queued\", \"running\", \"succeeded\", \"failed\")"
    ],
    ["/browsers?limit=1&limit=2", "limit: is given 2 times, once at most"]
  ])("%s", async (path, message) => {
    const answer = await send("GET", path)
    expect(answer.status).toBe(400)
    expect(answer.json.message).toBe(`invalid input: ${message}`)
  })
})

describe("the control plane names the operations a fault can target", () => {
  it("GET /_simulator/operations lists the 118 (name and operationId); a fault naming neither says where to look", async () => {
    const listed = JSON.parse((await raw(served.url, { path: "/_simulator/operations", headers: admin })).body)
    expect(listed).toHaveLength(118)
    expect(listed).toContainEqual({
      name: "listBrowserPools",
      operationId: "getBrowserPools",
      method: "GET",
      path: "/browser_pools"
    })
    const inject = (route: string) =>
      raw(served.url, {
        method: "POST",
        path: "/_simulator/faults",
        headers: { ...admin, "content-type": "application/json" },
        body: JSON.stringify({ route, status: 503, times: 1 })
      })
    const refused = await inject("getBrowserPoolz")
    expect(refused.status).toBe(400)
    expect(JSON.parse(refused.body).message).toContain(
      "expected an operation's name (as listBrowserPools; GET /_simulator/operations lists them), its operationId, or \"*\", got \"getBrowserPoolz\""
    )
    // the document's operationId names the operation as its table name does
    expect((await inject("getBrowserPools")).status).toBeLessThan(300)
    expect((await send("GET", "/browser_pools")).status).toBe(503)
    expect((await send("GET", "/browser_pools")).status).toBe(200)
  })
})
