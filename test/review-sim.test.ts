/**
 * Review of the simulator as other clients see it (issue 20): defects found driving the served
 * simulator over HTTP as an outside harness would. One served simulator for the file; each case makes
 * the resources it uses.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import { sendJson, servedForFile } from "./utils/served.js"

const served = servedForFile()

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  sendJson(served.url, method, path, body, headers)

let unique = 0
const name = (prefix: string) => `${prefix}-${++unique}`

describe("a browser's profile is the stored profile it loads", () => {
  const withProfile = async () => {
    const profile = (await send("POST", "/profiles", { name: name("profile") })).json
    return { id: String(profile.id), name: String(profile.name), created_at: String(profile.created_at) }
  }
  it.each([
    {
      how: "created naming it by name",
      make: async (profile: { name: string }) =>
        (await send("POST", "/browsers", { profile: { name: profile.name } })).json
    },
    {
      how: "created naming it by id",
      make: async (profile: { id: string }) => (await send("POST", "/browsers", { profile: { id: profile.id } })).json
    },
    {
      how: "acquired from a pool naming it by name",
      make: async (profile: { name: string }) => {
        const pool =
          (await send("POST", "/browser_pools", { name: name("pool"), size: 1, profile: { name: profile.name } }))
            .json.id
        return (await send("POST", `/browser_pools/${pool}/acquire`, {})).json
      }
    },
    {
      how: "loaded by an update",
      make: async (profile: { name: string }) => {
        const browser = (await send("POST", "/browsers", {})).json.session_id
        return (await send("PATCH", `/browsers/${browser}`, { profile: { name: profile.name } })).json
      }
    }
  ])("$how: its id, name and created_at, found by the list's query", async ({ make }) => {
    const profile = await withProfile()
    const browser = await make(profile)
    expect(browser.profile).toMatchObject(profile)
    expect((await send("GET", `/browsers/${browser.session_id}`)).json.profile).toMatchObject(profile)
    const listed = (await send("GET", `/browsers?query=${profile.id}`)).json
    expect(listed.map((b: { session_id: string }) => b.session_id)).toEqual([browser.session_id])
  })

  it("an id and a name: 400, even naming one profile (the document's oneOf: exactly one of them)", async () => {
    const [a, b] = [await withProfile(), await withProfile()]
    for (const profile of [{ id: a.id, name: b.name }, { id: a.id, name: a.name }]) {
      const answer = await send("POST", "/browsers", { profile })
      expect(answer.status).toBe(400)
      expect(answer.json.message).toContain("profile: exactly one of id or name")
    }
    const byName = await send("POST", "/browsers", { profile: { name: a.name } })
    expect(byName.status).toBe(200)
    expect(byName.json.profile).toMatchObject(a)
  })
})

/** A credential, a proxy and a credential provider of the caller's, for an auth connection to name. */
const world = async () => {
  const credential =
    (await send("POST", "/credentials", { name: name("cred"), domain: "example.com", values: { u: "a" } }))
      .json
  const proxy = (await send("POST", "/proxies", { type: "datacenter", name: name("proxy"), config: { country: "US" } }))
    .json
  const provider = (await send("POST", "/org/credential_providers", {
    name: name("provider"),
    provider_type: "onepassword",
    token: "ops_x"
  })).json
  return {
    credential: String(credential.name),
    proxy: String(proxy.id),
    proxyName: String(proxy.name),
    provider: String(provider.name)
  }
}

describe("an auth connection's references name something of the caller's, as a browser's do", () => {
  it.each([
    { field: "credential.name", body: (_: unknown) => ({ credential: { name: "no-such-credential" } }), status: 400 },
    {
      field: "credential.provider",
      body: (_: unknown) => ({ credential: { provider: "no-such-provider", auto: true } }),
      status: 400
    },
    { field: "proxy.id", body: (_: unknown) => ({ proxy: { id: "no-such-proxy" } }), status: 400 },
    { field: "proxy.name", body: (_: unknown) => ({ proxy: { name: "no-such-proxy" } }), status: 400 },
    {
      field: "proxy id and name of two proxies",
      body: (w: { proxy: string }) => ({ proxy: { id: w.proxy, name: "no-such-proxy" } }),
      status: 400
    },
    {
      field: "an existing credential",
      body: (w: { credential: string }) => ({ credential: { name: w.credential } }),
      status: 201
    },
    {
      field: "an existing provider",
      body: (w: { provider: string }) => ({ credential: { provider: w.provider, auto: true } }),
      status: 201
    },
    {
      field: "an existing proxy by id",
      body: (w: { proxy: string }) => ({ proxy: { id: w.proxy } }),
      status: 201
    },
    {
      field: "an existing proxy by name",
      body: (w: { proxyName: string }) => ({ proxy: { name: w.proxyName } }),
      status: 201
    },
    {
      field: "an existing proxy by id and name (the document's oneOf: exactly one)",
      body: (w: { proxy: string; proxyName: string }) => ({ proxy: { id: w.proxy, name: w.proxyName } }),
      status: 400
    }
  ])("$field: $status on create and on update", async ({ body, status }) => {
    const w = await world()
    const created = await send("POST", "/auth/connections", {
      profile_name: name("ap"),
      domain: "example.com",
      ...body(w)
    })
    expect(created.status).toBe(status)
    const plain = (await send("POST", "/auth/connections", { profile_name: name("ap"), domain: "example.com" })).json.id
    const updated = await send("PATCH", `/auth/connections/${plain}`, body(w))
    expect(updated.status).toBe(status === 201 ? 200 : status)
  })
})

describe("a seed the API could not have made is refused, naming the field", () => {
  const org = (fields: Record<string, unknown>) => ({ organizations: [{ id: "o", token: "t", ...fields }] })
  it.each([
    {
      what: "two organizations with one id",
      seed: { organizations: [{ id: "o", token: "t" }, { id: "o", token: "u" }] },
      path: "organizations[1].id"
    },
    {
      what: "two pools with one name",
      seed: org({ pools: [{ id: "p", name: "n" }, { id: "q", name: "n" }] }),
      path: "organizations[0].pools[1].name"
    },
    {
      what: "a pool's name shared with a pool of no project",
      seed: org({ pools: [{ id: "p", name: "n" }, { id: "q", name: "n", project: "a" }] }),
      path: "organizations[0].pools[1].name"
    },
    {
      what: "two credentials with one name",
      seed: org({ credentials: [{ id: "c", name: "n" }, { id: "d", name: "n" }] }),
      path: "organizations[0].credentials[1].name"
    },
    {
      what: "a pool holding more browsers than its size",
      seed: org({ pools: [{ id: "p", available_count: 5, acquired_count: 1, browser_pool_config: { size: 3 } }] }),
      path: "organizations[0].pools[0].available_count"
    },
    {
      what: "a pool of no size (1) with 2 available",
      seed: org({ pools: [{ id: "p", available_count: 2 }] }),
      path: "organizations[0].pools[0].available_count"
    }
  ])("$what: $path", async ({ path, seed }) => {
    const exit = await Effect.runPromiseExit(KernelSimulator.decodeSeed(seed))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
    expect(Option.map(error, (e) => e.issues.map((issue) => issue.path))).toEqual(Option.some([path]))
  })

  it.each([
    {
      what: "one name in two projects",
      seed: org({ pools: [{ id: "p", name: "n", project: "a" }, { id: "q", name: "n", project: "b" }] })
    },
    {
      what: "a full pool",
      seed: org({ pools: [{ id: "p", available_count: 2, acquired_count: 1, browser_pool_config: { size: 3 } }] })
    },
    { what: "the default seed", seed: KernelSimulator.defaultSeed }
  ])("$what is accepted", async ({ seed }) => {
    expect(Exit.isSuccess(await Effect.runPromiseExit(KernelSimulator.decodeSeed(seed)))).toBe(true)
  })
})

describe("an auth connection's update replaces a reference whole", () => {
  it.each([
    {
      field: "credential",
      first: (w: { credential: string }) => ({ name: w.credential }),
      then: (w: { provider: string }) => ({ provider: w.provider, auto: true })
    }
  ])("$field (not merged with the one it replaces)", async ({ field, first, then }) => {
    const w = await world()
    const created = await send("POST", "/auth/connections", {
      profile_name: name("ap"),
      domain: "example.com",
      [field]: first(w)
    })
    expect(created.status).toBe(201)
    const updated = await send("PATCH", `/auth/connections/${created.json.id}`, { [field]: then(w) })
    expect(updated.status).toBe(200)
    expect(updated.json[field]).toEqual(then(w))
    expect((await send("GET", `/auth/connections/${created.json.id}`)).json[field]).toEqual(then(w))
  })
})

describe("a list ignores a query parameter the document does not declare, as the service does", () => {
  it.each([
    { path: "/profiles", create: () => send("POST", "/profiles", { name: name("profile") }), extra: "name=none" },
    {
      path: "/proxies",
      create: () => send("POST", "/proxies", { type: "datacenter", name: name("proxy"), config: { country: "US" } }),
      extra: "type=none"
    },
    {
      path: "/credentials",
      create: () => send("POST", "/credentials", { name: name("cred"), domain: "example.com", values: { u: "a" } }),
      extra: "_=1700000000"
    },
    { path: "/org/api_keys", create: () => send("POST", "/org/api_keys", { name: name("key") }), extra: "foo=bar" },
    {
      path: "/org/projects",
      create: () => send("POST", "/org/projects", { name: name("project") }),
      extra: "status=none"
    }
  ])("$path?$extra lists what $path lists", async ({ create, extra, path }) => {
    expect((await create()).status).toBe(201)
    const all = await send("GET", `${path}?limit=100`)
    expect(all.json.length).toBeGreaterThan(0)
    expect((await send("GET", `${path}?limit=100&${extra}`)).json).toEqual(all.json)
  })

  it.each([
    { path: "/credentials?domain=none.example", count: 0 },
    { path: "/auth/connections?domain=none.example", count: 0 },
    { path: "/invocations?status=failed", count: 0 }
  ])("a declared filter still filters: $path", async ({ count, path }) => {
    expect((await send("GET", path)).json.length).toBe(count)
  })
})

describe("a path or a field the document names by id does not find a resource by its name", () => {
  it.each([
    {
      what: "a proxy",
      create: () => send("POST", "/proxies", { type: "datacenter", name: name("proxy"), config: { country: "US" } }),
      paths: (n: string) => [["GET", `/proxies/${n}`], ["DELETE", `/proxies/${n}`], ["POST", `/proxies/${n}/check`]]
    },
    {
      what: "an API key",
      create: () => send("POST", "/org/api_keys", { name: name("key") }),
      paths: (n: string) => [["GET", `/org/api_keys/${n}`], ["DELETE", `/org/api_keys/${n}`]]
    },
    {
      what: "a credential provider",
      create: () =>
        send("POST", "/org/credential_providers", {
          name: name("provider"),
          provider_type: "onepassword",
          token: "ops_x"
        }),
      paths: (n: string) => [
        ["GET", `/org/credential_providers/${n}`],
        ["POST", `/org/credential_providers/${n}/test`],
        ["GET", `/org/credential_providers/${n}/items`],
        ["DELETE", `/org/credential_providers/${n}`]
      ]
    }
  ])("$what: 404 by name, found by id", async ({ create, paths }) => {
    const created = (await create()).json
    for (const [method, path] of paths(created.name)) {
      expect([method, path, (await send(method!, path!)).status]).toEqual([method, path, 404])
    }
    expect((await send("GET", paths(created.id)[0]![1]!)).status).toBe(200)
  })

  it("a browser's or a pool's proxy_id is the proxy's id, not its name (400)", async () => {
    const proxy =
      (await send("POST", "/proxies", { type: "datacenter", name: name("proxy"), config: { country: "US" } })).json
    expect((await send("POST", "/browsers", { proxy_id: proxy.name })).status).toBe(400)
    expect((await send("POST", "/browser_pools", { name: name("pool"), size: 1, proxy_id: proxy.name })).status).toBe(
      400
    )
    const browser = await send("POST", "/browsers", { proxy_id: proxy.id })
    expect([browser.status, browser.json.proxy_id]).toEqual([200, proxy.id])
  })
})

describe("a browser's invocation_id names an invocation of the caller's, as its other references do", () => {
  it("an id naming none is 400 (the browser was made, listed under an invocation that never was)", async () => {
    const refused = await send("POST", "/browsers", { invocation_id: "inv_nothing" })
    expect([refused.status, refused.json.code]).toEqual([400, "bad_request"])
    const invocation =
      (await send("POST", "/invocations", { app_name: "my-app", version: "1.0.0", action_name: "run" })).json
    const browser = await send("POST", "/browsers", { invocation_id: invocation.id })
    expect(browser.status).toBe(200)
    const listed = (await send("GET", `/invocations/${invocation.id}/browsers`)).json.browsers
    expect(listed.map((each: { readonly session_id: string }) => each.session_id)).toEqual([browser.json.session_id])
  })
})

describe("a fault's fields that shape an injected status's answer need the status", () => {
  it.each([
    { fault: { route: "listProfiles", retryAfter: 2 }, paths: ["retryAfter"] },
    { fault: { route: "listProfiles", body: "oops" }, paths: ["body"] },
    { fault: { route: "listProfiles", gateway: true }, paths: ["gateway"] },
    { fault: { route: "listProfiles", retryAfter: 2, gateway: true }, paths: ["retryAfter", "gateway"] }
  ])("$fault: refused, naming $paths", async ({ fault, paths }) => {
    const exit = await Effect.runPromiseExit(Schema.decodeUnknown(KernelSimulator.FaultSchema)(fault))
    expect(Exit.isFailure(exit)).toBe(true)
    const message = Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : ""
    for (const path of paths) expect(message).toContain(path)
  })

  it.each([
    { route: "listProfiles", status: 429, retryAfter: 2 },
    { route: "listProfiles", status: 502, gateway: true },
    { route: "listProfiles", status: 500, body: "oops" },
    { route: "listProfiles", gateway: false },
    { route: "listProfiles", headers: { "x-a": "1" } }
  ])("%o is accepted", async (fault) => {
    expect(Exit.isSuccess(await Effect.runPromiseExit(Schema.decodeUnknown(KernelSimulator.FaultSchema)(fault)))).toBe(
      true
    )
  })
})
