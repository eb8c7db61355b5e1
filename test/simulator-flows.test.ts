/**
 * A client in another language drives the served simulator over plain HTTP through multi-step
 * flows, and checks what it reads back against the document: a pool deleted with leased browsers,
 * a browser's update naming what does not exist, a pool's update likewise.
 * One served simulator for the file; each case makes the resources it uses.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import { handleJson, sendJson, servedForFile } from "./utils/served.js"

// the answers' JSON, read field by field
type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const served = servedForFile()

const send = (method: string, path: string, body?: unknown) => sendJson(served.url, method, path, body)

let unique = 0
const name = (prefix: string) => `${prefix}-${++unique}`

/** A pool of `size` with one browser acquired from it. */
const leasedPool = async (size: number) => {
  const pool = (await send("POST", "/browser_pools", { name: name("pool"), size })).json.id
  const acquired = await send("POST", `/browser_pools/${pool}/acquire`, {})
  expect(acquired.status).toBe(200)
  return { pool: String(pool), browser: String(acquired.json.session_id) }
}

describe("a pool deleted while browsers are leased (the document: blocked, unless force)", () => {
  it.each([{ body: undefined }, { body: {} }, { body: { force: false } }])(
    "without force ($body) it is 400, and the pool and its browser stay",
    async ({ body }) => {
      const { browser, pool } = await leasedPool(2)
      const refused = await send("DELETE", `/browser_pools/${pool}`, body)
      expect(refused.status).toBe(400)
      expect(refused.json.message).toContain("force")
      expect((await send("GET", `/browser_pools/${pool}`)).json).toMatchObject({ acquired_count: 1 })
      expect((await send("GET", `/browsers/${browser}`)).status).toBe(200)
    }
  )

  it("with force its leased browsers are terminated: 404, listed as deleted", async () => {
    const { browser, pool } = await leasedPool(2)
    expect((await send("DELETE", `/browser_pools/${pool}`, { force: true })).status).toBe(204)
    expect((await send("GET", `/browser_pools/${pool}`)).status).toBe(404)
    expect((await send("GET", `/browsers/${browser}`)).status).toBe(404)
    const deleted = await send("GET", `/browsers/${browser}?include_deleted=true`)
    expect(deleted.json.deleted_at).toEqual(expect.any(String))
    expect((await send("POST", `/browsers/${browser}/computer/get_mouse_position`)).status).toBe(404)
    const active = (await send("GET", "/browsers?limit=100")).json as ReadonlyArray<Json>
    expect(active.map((b) => b.session_id)).not.toContain(browser)
  })

  it("a pool with no leased browser is deleted without force", async () => {
    const { browser, pool } = await leasedPool(1)
    await send("POST", `/browser_pools/${pool}/release`, { session_id: browser })
    expect((await send("DELETE", `/browser_pools/${pool}`)).status).toBe(204)
    expect((await send("GET", `/browser_pools/${pool}`)).status).toBe(404)
  })
})

describe("an update names only what exists, as a create does (400)", () => {
  it.each([
    { what: "a browser's proxy", path: async () => `/browsers/${await browserId()}`, body: { proxy_id: "nope" } },
    {
      what: "a browser's profile",
      path: async () => `/browsers/${await browserId()}`,
      body: { profile: { name: "no-such-profile" } }
    },
    {
      what: "a pool's proxy",
      path: async () => `/browser_pools/${(await leasedPool(1)).pool}`,
      body: { size: 1, proxy_id: "nope" }
    },
    {
      what: "a pool's profile",
      path: async () => `/browser_pools/${(await leasedPool(1)).pool}`,
      body: { size: 1, profile: { name: "no-such-profile" } }
    },
    {
      what: "a pool's extension",
      path: async () => `/browser_pools/${(await leasedPool(1)).pool}`,
      body: { size: 1, extensions: [{ name: "no-such-extension" }] }
    }
  ])("$what", async ({ body, path }) => {
    const at = await path()
    const before = (await send("GET", at)).json
    const refused = await send("PATCH", at, body)
    expect(refused.status).toBe(400)
    expect(refused.json.code).toBe("bad_request")
    expect((await send("GET", at)).json).toEqual(before)
  })
})

const browserId = async (body: unknown = {}) => String((await send("POST", "/browsers", body)).json.session_id)

describe("a browser's update as the document says", () => {
  it("proxy_id names an existing proxy, and \"\" removes it", async () => {
    const proxy = (await send("POST", "/proxies", { name: name("proxy"), type: "datacenter", config: {} })).json.id
    const id = await browserId()
    expect((await send("PATCH", `/browsers/${id}`, { proxy_id: proxy })).json.proxy_id).toBe(proxy)
    expect((await send("GET", `/browsers/${id}`)).json.proxy_id).toBe(proxy)
    // omitted: unchanged
    expect((await send("PATCH", `/browsers/${id}`, { viewport: { width: 800, height: 600 } })).json.proxy_id).toBe(
      proxy
    )
    const removed = await send("PATCH", `/browsers/${id}`, { proxy_id: "" })
    expect(removed.status).toBe(200)
    expect(removed.json.proxy_id).toBeUndefined()
    expect((await send("GET", `/browsers/${id}`)).json.proxy_id).toBeUndefined()
  })

  it("a profile loads only into a session without one", async () => {
    const first = (await send("POST", "/profiles", { name: name("profile") })).json.name
    const second = (await send("POST", "/profiles", { name: name("profile") })).json.name
    const id = await browserId()
    const loaded = await send("PATCH", `/browsers/${id}`, { profile: { name: first } })
    expect(loaded.status).toBe(200)
    expect(loaded.json.profile).toMatchObject({ name: first })
    const again = await send("PATCH", `/browsers/${id}`, { profile: { name: second } })
    expect(again.status).toBe(400)
    expect((await send("GET", `/browsers/${id}`)).json.profile).toMatchObject({ name: first })
  })

  it.each([{ telemetry: null }, { telemetry: {} }])("telemetry $telemetry leaves the configuration as it is", async (
    { telemetry }
  ) => {
    const configured = { browser: {} }
    const id = await browserId({ telemetry: configured })
    expect((await send("GET", `/browsers/${id}`)).json.telemetry).toEqual(configured)
    expect((await send("PATCH", `/browsers/${id}`, { telemetry })).json.telemetry).toEqual(configured)
    expect((await send("GET", `/browsers/${id}`)).json.telemetry).toEqual(configured)
  })
})

describe("the organization's own resources are seen by every project's caller", () => {
  it.each([
    { collection: "/org/projects", body: () => ({ name: name("project") }) },
    {
      collection: "/org/credential_providers",
      body: () => ({ name: name("provider"), provider_type: "onepassword", token: "ops_secret" })
    }
  ])("$collection made by a project's caller", async ({ body, collection }) => {
    const made = await sendAs("proj_a", "POST", collection, body())
    expect(made.status).toBe(201)
    const id = String(made.json.id)
    for (const project of ["proj_a", "proj_b", id, undefined]) {
      expect((await sendAs(project, "GET", `${collection}/${id}`)).status).toBe(200)
      const listed = (await sendAs(project, "GET", `${collection}?limit=100`)).json as ReadonlyArray<Json>
      expect(listed.map((item) => item.id)).toContain(id)
    }
    // its name is taken in the organization: seen where it is refused
    expect((await sendAs("proj_b", "POST", collection, { ...body(), name: made.json.name })).status).toBe(409)
    // a project is changed by its own caller or the organization's only (another project's caller: 404)
    const deleter = collection === "/org/projects" ? undefined : "proj_b"
    if (deleter === undefined) expect((await sendAs("proj_b", "DELETE", `${collection}/${id}`)).status).toBe(404)
    expect((await sendAs(deleter, "DELETE", `${collection}/${id}`)).status).toBe(204)
    expect((await sendAs(undefined, "GET", `${collection}/${id}`)).status).toBe(404)
  })

  it("a project's limits are read and set by its own project's caller", async () => {
    const project = String((await sendAs("proj_a", "POST", "/org/projects", { name: name("project") })).json.id)
    const limits = { max_concurrent_sessions: 3 }
    expect((await sendAs(project, "PATCH", `/org/projects/${project}/limits`, limits)).status).toBe(200)
    expect((await sendAs(project, "GET", `/org/projects/${project}/limits`)).json).toMatchObject(limits)
  })
})

const sendAs = (project: string | undefined, method: string, path: string, body?: unknown) =>
  sendJson(served.url, method, path, body, project === undefined ? {} : { "x-kernel-project-id": project })

describe("a list's query searches what the document says, case-insensitively", () => {
  it.each([
    {
      collection: "/org/projects",
      body: (tag: string) => ({ name: `Alpha-${tag}` }),
      // a project's name only: not its id, status or time
      finds: (made: Json) => [made.name.toUpperCase(), "alpha-"],
      misses: (made: Json) => [made.id, "active", made.created_at.slice(0, 4)]
    },
    {
      collection: "/profiles",
      body: (tag: string) => ({ name: `alpha-${tag}` }),
      // a profile's name or id: not its times
      finds: (made: Json) => [made.name.toUpperCase(), made.id],
      misses: (made: Json) => [made.created_at.slice(0, 4), "T"]
    }
  ])("$collection", async ({ body, collection, finds, misses }) => {
    const made = (await send("POST", collection, body(name("q")))).json
    const ids = async (query: string) =>
      ((await send("GET", `${collection}?limit=100&query=${encodeURIComponent(query)}`)).json as ReadonlyArray<Json>)
        .map((item) => item.id)
    for (const query of finds(made)) expect(await ids(query)).toContain(made.id)
    for (const query of misses(made)) expect(await ids(query)).not.toContain(made.id)
  })
})

/** A request to a simulator in memory (on the `TestClock`), its JSON (or SSE) text answer. */
const sendTo = handleJson

describe("a deployment deleted is stopped then, as its answers and its follow say", () => {
  it.effect("its updated_at and its follow's stopped state are the time of the delete", () =>
    Effect.gen(function*() {
      const send = sendTo(yield* KernelSimulator.make())
      const created = JSON.parse((yield* send("GET", "/deployments/dep_running")).text).created_at
      yield* TestClock.adjust("1 minute")
      expect((yield* send("DELETE", "/deployments/dep_running")).status).toBe(204)
      const stoppedAt = new Date(Date.parse(created) + 60_000).toISOString()
      expect(JSON.parse((yield* send("GET", "/deployments/dep_running")).text)).toMatchObject({
        status: "stopped",
        updated_at: stoppedAt
      })
      const frames = [...(yield* send("GET", "/deployments/dep_running/events")).text.matchAll(/^data: (.*)$/gm)]
        .map((m) => JSON.parse(m[1]!))
      expect(frames.at(-1)).toMatchObject({ event: "deployment_state", timestamp: stoppedAt })
      // a second delete changes nothing
      yield* TestClock.adjust("1 minute")
      expect((yield* send("DELETE", "/deployments/dep_running")).status).toBe(204)
      expect(JSON.parse((yield* send("GET", "/deployments/dep_running")).text).updated_at).toBe(stoppedAt)
    }))
})

describe("an auth connection's login flow expired is told so by every read", () => {
  it.effect("a list and an update after flow_expires_at say EXPIRED, as a retrieve does", () =>
    Effect.gen(function*() {
      const send = sendTo(yield* KernelSimulator.make())
      const made = yield* send("POST", "/auth/connections", { profile_name: "expiring", domain: "example.com" })
      const id = JSON.parse(made.text).id
      expect((yield* send("POST", `/auth/connections/${id}/login`, {})).status).toBe(200)
      yield* TestClock.adjust("11 minutes")
      const listed = JSON.parse((yield* send("GET", "/auth/connections?profile_name=expiring")).text)
      expect(listed).toEqual([expect.objectContaining({ id, flow_status: "EXPIRED" })])
      const updated = yield* send("PATCH", `/auth/connections/${id}`, { login_url: "https://example.com/login" })
      expect(JSON.parse(updated.text)).toMatchObject({ flow_status: "EXPIRED", login_url: "https://example.com/login" })
      expect(JSON.parse((yield* send("GET", `/auth/connections/${id}`)).text)).toMatchObject({ flow_status: "EXPIRED" })
      // a new login may start
      expect((yield* send("POST", `/auth/connections/${id}/login`, {})).status).toBe(200)
    }))

  it.effect("an update of a connection that does not exist is 404", () =>
    Effect.gen(function*() {
      const send = sendTo(yield* KernelSimulator.make())
      expect((yield* send("PATCH", "/auth/connections/nope", { login_url: "https://example.com/" })).status).toBe(404)
    }))
})

describe("an invocation's browsers: those created with its invocation_id", () => {
  it("are listed by it, and its delete ends them (not the others)", async () => {
    const invoke = () =>
      send("POST", "/invocations", { app_name: "my-app", version: "1.0.0", action_name: "run" }).then((r) =>
        String(r.json.id)
      )
    const [invocation, other] = [await invoke(), await invoke()]
    const within = [await browserId({ invocation_id: invocation }), await browserId({ invocation_id: invocation })]
    const elsewhere = [await browserId({ invocation_id: other }), await browserId()]
    const listed = await send("GET", `/invocations/${invocation}/browsers`)
    expect(listed.status).toBe(200)
    expect((listed.json.browsers as ReadonlyArray<Json>).map((b) => b.session_id)).toEqual(within)
    expect((await send("DELETE", `/invocations/${invocation}/browsers`)).status).toBe(204)
    for (const id of within) expect((await send("GET", `/browsers/${id}`)).status).toBe(404)
    for (const id of elsewhere) expect((await send("GET", `/browsers/${id}`)).status).toBe(200)
    expect((await send("GET", `/invocations/${invocation}/browsers`)).json).toEqual({ browsers: [] })
    expect((await send("GET", `/invocations/${other}/browsers`)).json.browsers).toHaveLength(1)
  })
})

describe("the mouse stays on the screen", () => {
  it("a smaller viewport puts it at its nearest edge", async () => {
    const id = await browserId({ viewport: { width: 800, height: 600 } })
    await send("POST", `/browsers/${id}/computer/move_mouse`, { x: 700, y: 500 })
    expect((await send("PATCH", `/browsers/${id}`, { viewport: { width: 400, height: 300 } })).status).toBe(200)
    expect((await send("POST", `/browsers/${id}/computer/get_mouse_position`)).json).toEqual({ x: 399, y: 299 })
    // a larger one leaves it where it is
    await send("PATCH", `/browsers/${id}`, { viewport: { width: 1024, height: 768 } })
    expect((await send("POST", `/browsers/${id}/computer/get_mouse_position`)).json).toEqual({ x: 399, y: 299 })
  })
})

describe("a credential says what it holds (has_values, has_totp_secret), never the values", () => {
  it.each([
    { given: { values: { username: "u", password: "p" } }, has: { has_values: true, has_totp_secret: false } },
    { given: { values: {}, totp_secret: "JBSWY3DPEHPK3PXP" }, has: { has_values: false, has_totp_secret: true } },
    {
      given: { values: { username: "u" }, totp_secret: "JBSWY3DPEHPK3PXP" },
      has: { has_values: true, has_totp_secret: true }
    }
  ])("made with $given", async ({ given, has }) => {
    const made = await send("POST", "/credentials", { name: name("cred"), domain: "example.com", ...given })
    expect(made.status).toBe(201)
    expect(made.json).toMatchObject(has)
    expect(made.json.values).toBeUndefined()
    for (
      const answer of [await send("GET", `/credentials/${made.json.id}`), await send("GET", "/credentials?limit=100")]
    ) {
      const read = Array.isArray(answer.json) ? answer.json.find((c: Json) => c.id === made.json.id) : answer.json
      expect(read).toMatchObject(has)
    }
    // the secret removed: it has none
    const removed = await send("PATCH", `/credentials/${made.json.id}`, { totp_secret: "" })
    expect(removed.json).toMatchObject({ has_values: has.has_values, has_totp_secret: false })
  })
})

// UpdateCredentialRequest.sso_provider: "Set to empty string or null to remove" (an empty string was kept)
describe("a credential's SSO provider is removed by an empty string or null", () => {
  it.each(["", null])("%j", async (removal) => {
    const made = await send("POST", "/credentials", {
      name: name("sso"),
      domain: "example.com",
      values: { username: "u" },
      sso_provider: "google"
    })
    expect(made.json.sso_provider).toBe("google")
    const updated = await send("PATCH", `/credentials/${made.json.id}`, { sso_provider: removal })
    expect(updated.status).toBe(200)
    for (const read of [updated.json, (await send("GET", `/credentials/${made.json.id}`)).json]) {
      expect(read.sso_provider ?? null).toBeNull()
    }
  })
})

// docs/testing.md: an API key's `project_name` is its project's name: a rename left the keys with the old one
describe("an API key tells its project's current name", () => {
  it("after the project is renamed, in the key's answers and in the list", async () => {
    const project = await send("POST", "/org/projects", { name: name("before") })
    expect(project.status).toBe(201)
    const key = await send("POST", "/org/api_keys", { name: name("key"), project_id: project.json.id })
    expect(key.json.project_name).toBe(project.json.name)
    const renamed = name("after")
    expect((await send("PATCH", `/org/projects/${project.json.id}`, { name: renamed })).status).toBe(200)
    expect((await send("GET", `/org/api_keys/${key.json.id}`)).json.project_name).toBe(renamed)
    const listed = (await send("GET", "/org/api_keys?limit=100")).json.find((k: Json) => k.id === key.json.id)
    expect(listed.project_name).toBe(renamed)
    // the project addressed by its name, which the update changes
    const again = name("again")
    expect((await send("PATCH", `/org/projects/${renamed}`, { name: again })).status).toBe(200)
    expect((await send("GET", `/org/api_keys/${key.json.id}`)).json.project_name).toBe(again)
  })
})

// an auth connection's `login_url` is a URI (`format: uri`): one that is not was stored and answered (and copied
// to `post_login_url`), breaking the document's answers; an update's "" clears it ("Set to empty string to clear")
describe("an auth connection's login_url", () => {
  it("is refused when it is not a URI, and cleared by an update's empty string", async () => {
    const body = { profile_name: name("login"), domain: "example.com" }
    expect((await send("POST", "/auth/connections", { ...body, login_url: "not a uri" })).status).toBe(400)
    const made = await send("POST", "/auth/connections", { ...body, login_url: "https://example.com/login" })
    expect(made.status).toBe(201)
    expect(made.json.login_url).toBe("https://example.com/login")
    const path = `/auth/connections/${made.json.id}`
    expect((await send("PATCH", path, { login_url: "nope" })).status).toBe(400)
    const cleared = await send("PATCH", path, { login_url: "" })
    expect(cleared.status).toBe(200)
    for (const read of [cleared.json, (await send("GET", path)).json]) expect(read.login_url ?? null).toBeNull()
  })
})

// a credential addressed by its name and renamed by the same update: its secret's and provider's changes were
// looked up under the old name, after the rename, and lost
describe("a credential renamed by an update that addresses it by name", () => {
  it("removes its TOTP secret and SSO provider, or sets a secret, as by its id", async () => {
    const first = name("cred")
    const made = await send("POST", "/credentials", {
      name: first,
      domain: "example.com",
      values: { username: "u" },
      totp_secret: "JBSWY3DPEHPK3PXP",
      sso_provider: "google"
    })
    expect(made.status).toBe(201)
    const second = name("cred")
    const removed = await send("PATCH", `/credentials/${first}`, { name: second, totp_secret: "", sso_provider: "" })
    expect(removed.json).toMatchObject({ name: second, has_totp_secret: false })
    expect(removed.json.sso_provider ?? null).toBeNull()
    expect((await send("GET", `/credentials/${second}/totp-code`)).status).toBe(404)
    const third = name("cred")
    const set = await send("PATCH", `/credentials/${second}`, { name: third, totp_secret: "JBSWY3DPEHPK3PXP" })
    expect(set.json).toMatchObject({ name: third, has_totp_secret: true })
    expect(typeof set.json.totp_code).toBe("string")
  })
})

describe("an empty X-Kernel-Project-Id names no project", () => {
  it.each(["", " "])("%j: what it makes is the organization's, and it sees every project's", async (header) => {
    const mine = String((await sendAs(header, "POST", "/browsers", {})).json.session_id)
    const theirs = String((await sendAs("proj_x", "POST", "/browsers", {})).json.session_id)
    expect((await sendAs("proj_y", "GET", `/browsers/${mine}`)).status).toBe(200)
    expect((await sendAs(header, "GET", `/browsers/${theirs}`)).status).toBe(200)
    const key = await sendAs(header, "POST", "/org/api_keys", { name: name("key") })
    expect(key.status).toBe(201)
    expect(key.json).toMatchObject({ project_id: null, project_name: null })
  })
})

describe("an auth connection for a profile that does not exist creates it (the document)", () => {
  it.each([{ project: undefined }, { project: "proj_auth" }])(
    "in the caller's project ($project)",
    async ({ project }) => {
      const profile = name("auto-profile")
      const made = await sendAs(project, "POST", "/auth/connections", { profile_name: profile, domain: "example.com" })
      expect(made.status).toBe(201)
      const read = await sendAs(project, "GET", `/profiles/${profile}`)
      expect(read.status).toBe(200)
      expect(read.json.name).toBe(profile)
      const listed = (await sendAs(project, "GET", `/profiles?query=${profile}`)).json as ReadonlyArray<Json>
      expect(listed.map((p) => p.name)).toEqual([profile])
      if (project !== undefined) expect((await sendAs("proj_other", "GET", `/profiles/${profile}`)).status).toBe(404)
      // an existing profile is used, not made again
      expect(
        (await sendAs(project, "POST", "/auth/connections", { profile_name: profile, domain: "other.example" })).status
      )
        .toBe(201)
      expect((await sendAs(project, "GET", `/profiles?query=${profile}`)).json).toHaveLength(1)
    }
  )
})

describe("a resource made without the fields the document defaults reads them back at their defaults", () => {
  it.each([
    {
      collection: "/browser_pools",
      body: () => ({ name: name("pool"), size: 1 }),
      reads: { browser_pool_config: { size: 1, timeout_seconds: 600, fill_rate_per_minute: 10 } }
    },
    {
      collection: "/auth/connections",
      body: () => ({ profile_name: name("defaults"), domain: "example.com" }),
      reads: {
        save_credentials: true,
        record_session: false,
        health_check_interval: 3600,
        health_checks: true,
        auto_reauth: true
      }
    },
    {
      collection: "/proxies",
      body: () => ({ name: name("proxy"), type: "custom", config: { host: "proxy.example", port: 8080 } }),
      reads: { protocol: "https" }
    }
  ])("$collection", async ({ body, collection, reads }) => {
    const made = await send("POST", collection, body())
    expect(made.status).toBe(201)
    expect(made.json).toMatchObject(reads)
    expect((await send("GET", `${collection}/${made.json.id}`)).json).toMatchObject(reads)
  })

  it("what a request gives is kept", async () => {
    const made = await send("POST", "/auth/connections", {
      profile_name: name("given"),
      domain: "example.com",
      save_credentials: false
    })
    expect(made.json.save_credentials).toBe(false)
  })
})
