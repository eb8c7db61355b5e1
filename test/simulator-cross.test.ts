/**
 * The simulator as a client in another language drives it over HTTP: the state one
 * resource keeps about another (a pool's counts and its acquired browsers, an API key and its
 * project, a replay and its recording) stays consistent across the operations that touch both.
 * One served simulator for the file; each case makes the resources it uses.
 */
import { describe, expect, it } from "@effect/vitest"
import { operations } from "../src/internal/generated/table.js"
import * as engine from "../src/testing/internal/engine.js"
import { sendJson, servedForFile } from "./utils/served.js"

// the answers' JSON, read field by field
type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const served = servedForFile()

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  sendJson(served.url, method, path, body, headers)

let unique = 0
const name = (prefix: string) => `${prefix}-${++unique}`

const counts = async (pool: string) => {
  const { json } = await send("GET", `/browser_pools/${pool}`)
  return [json.available_count, json.acquired_count]
}

describe("a pool's counts follow what happens to its acquired browsers", () => {
  it.each([
    { how: "deleted", end: (pool: string, id: string) => send("DELETE", `/browsers/${id}`).then(() => pool) },
    {
      how: "released without reuse",
      end: (pool: string, id: string) =>
        send("POST", `/browser_pools/${pool}/release`, { session_id: id, reuse: false }).then(() => pool)
    }
  ])("an acquired browser $how frees its slot for a new browser", async ({ end }) => {
    const pool = (await send("POST", "/browser_pools", { name: name("pool"), size: 1 })).json.id
    const acquired = (await send("POST", `/browser_pools/${pool}/acquire`, {})).json.session_id
    expect(await counts(pool)).toEqual([0, 1])
    await end(pool, acquired)
    expect(await counts(pool)).toEqual([1, 0])
    const next = await send("POST", `/browser_pools/${pool}/acquire`, {})
    expect(next.status).toBe(200)
    expect(next.json.session_id).not.toBe(acquired)
    expect(next.json.deleted_at).toBeUndefined()
  })

  it("an acquired browser is made as the pool's configuration says", async () => {
    const profile = (await send("POST", "/profiles", { name: name("profile") })).json.name
    const config = { profile: { name: profile }, kiosk_mode: true, headless: true, timeout_seconds: 120 }
    const pool = (await send("POST", "/browser_pools", { name: name("pool"), size: 1, ...config })).json.id
    const acquired = (await send("POST", `/browser_pools/${pool}/acquire`, {})).json
    expect(acquired).toMatchObject({ ...config, pool: { id: pool } })
    // the pool's own fields are not the browser's
    expect(acquired).not.toHaveProperty("size")
  })

  it("a deleted browser is not released: 404, and the counts do not move", async () => {
    const pool = (await send("POST", "/browser_pools", { name: name("pool"), size: 2 })).json.id
    const acquired = (await send("POST", `/browser_pools/${pool}/acquire`, {})).json.session_id
    expect((await send("DELETE", `/browsers/${acquired}`)).status).toBe(204)
    for (const reuse of [true, false]) {
      const answer = await send("POST", `/browser_pools/${pool}/release`, { session_id: acquired, reuse })
      expect(answer.status).toBe(404)
    }
    expect(await counts(pool)).toEqual([2, 0])
    // nothing hands the deleted session out again
    for (let i = 0; i < 2; i++) {
      const next = (await send("POST", `/browser_pools/${pool}/acquire`, {})).json
      expect(next.session_id).not.toBe(acquired)
    }
  })

  it.each([true, false])(
    "a pool made smaller than its acquired browsers never counts past its size (reuse %s)",
    async (reuse) => {
      const pool = (await send("POST", "/browser_pools", { name: name("pool"), size: 3 })).json.id
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) ids.push((await send("POST", `/browser_pools/${pool}/acquire`, {})).json.session_id)
      await send("PATCH", `/browser_pools/${pool}`, { size: 1 })
      const seen: Array<Array<number>> = []
      for (const id of ids) {
        expect((await send("POST", `/browser_pools/${pool}/release`, { session_id: id, reuse })).status).toBe(204)
        seen.push(await counts(pool))
      }
      expect(seen).toEqual([[0, 2], [0, 1], [1, 0]])
      expect((await send("POST", `/browser_pools/${pool}/acquire`, {})).status).toBe(200)
      expect((await send("POST", `/browser_pools/${pool}/acquire`, {})).status).toBe(204)
    }
  )

  it("a waiting acquire is handed the browser that replaces a deleted one", async () => {
    const pool = (await send("POST", "/browser_pools", { name: name("pool"), size: 1 })).json.id
    const acquired = (await send("POST", `/browser_pools/${pool}/acquire`, {})).json.session_id
    const waiting = send("POST", `/browser_pools/${pool}/acquire`, { acquire_timeout_seconds: 5 })
    await new Promise((resolve) => setTimeout(resolve, 100))
    await send("DELETE", `/browsers/${acquired}`)
    const handed = await waiting
    expect(handed.status).toBe(200)
    expect(handed.json.session_id).not.toBe(acquired)
    expect(await counts(pool)).toEqual([0, 1])
  })
})

describe("an API key made by a project's caller", () => {
  it("names its project (project_name too), and cannot be made for another project", async () => {
    const a = (await send("POST", "/org/projects", { name: name("project") })).json
    const b = (await send("POST", "/org/projects", { name: name("project") })).json
    const key = (await send("POST", "/org/api_keys", { name: name("key"), project_id: a.id })).json
    expect(key).toMatchObject({ project_id: a.id, project_name: a.name })
    const callers = [{ token: key.key }, { "x-kernel-project-id": a.id }]
    for (const caller of callers) {
      const own = await send("POST", "/org/api_keys", { name: name("key") }, caller)
      expect(own.status).toBe(201)
      expect(own.json).toMatchObject({ project_id: a.id, project_name: a.name })
      const other = await send("POST", "/org/api_keys", { name: name("key"), project_id: b.id }, caller)
      expect(other.status).toBe(404)
    }
    // no key of project B was made
    const keys = (await send("GET", "/org/api_keys?limit=100")).json as Array<Json>
    expect(keys.filter((k) => k["project_id"] === b.id)).toEqual([])
    // the organization's caller still makes keys of any project
    const org = await send("POST", "/org/api_keys", { name: name("key"), project_id: b.id })
    expect(org.json).toMatchObject({ project_id: b.id, project_name: b.name })
  })
})

describe("a replay's recording", () => {
  it("is listed with finished_at null while it records, then the time it was stopped", async () => {
    const browser = (await send("POST", "/browsers", { timeout_seconds: 600 })).json.session_id
    const replays = `/browsers/${browser}/replays`
    const started = (await send("POST", replays, {})).json
    expect((await send("GET", replays)).json).toEqual([
      { replay_id: started.replay_id, started_at: started.started_at, finished_at: null }
    ])
    expect((await send("POST", `${replays}/${started.replay_id}/stop`)).status).toBe(200)
    const [stopped] = (await send("GET", replays)).json as Array<Json>
    expect(typeof stopped!["finished_at"]).toBe("string")
    expect(Date.parse(stopped!["finished_at"])).toBeGreaterThanOrEqual(Date.parse(started.started_at))
    // a second stop keeps the first one's time
    await send("POST", `${replays}/${started.replay_id}/stop`)
    expect((await send("GET", replays)).json).toEqual([stopped])
  })
})

describe("a project's limits", () => {
  it.each(["id", "name"] as const)(
    "set through its %s, are the project's whatever names it, and go with it",
    async (by) => {
      const projectName = name("project")
      const project = (await send("POST", "/org/projects", { name: projectName })).json
      const via = { id: project.id, name: projectName }
      const set = await send("PATCH", `/org/projects/${via[by]}/limits`, { max_concurrent_sessions: 3 })
      expect(set.json).toEqual({ max_concurrent_sessions: 3 })
      for (const path of [project.id, projectName]) {
        expect((await send("GET", `/org/projects/${path}/limits`)).json).toEqual({ max_concurrent_sessions: 3 })
      }
      expect((await send("DELETE", `/org/projects/${project.id}`)).status).toBe(204)
      // a new project of the same name starts with no limits
      const again = (await send("POST", "/org/projects", { name: projectName })).json
      for (const path of [again.id, projectName]) {
        expect((await send("GET", `/org/projects/${path}/limits`)).json).toEqual({})
      }
    }
  )

  it("are not kept once their project is gone (removed or evicted)", () => {
    const store = engine.emptyStore()
    const operation = operations.find((o) => o.name === "updateProjectLimits")!
    const limitsOf = (id: string) =>
      engine.generic(store, {
        operation,
        template: operation.path,
        segments: ["org", "projects", id, "limits"],
        query: new URLSearchParams(),
        body: { max_concurrent_sessions: 2 },
        raw: new Uint8Array(),
        parts: [],
        project: undefined,
        now: 0,
        headers: {}
      }, () => "limits")
    const project = (id: string): engine.Resource => ({
      id,
      project: undefined,
      deleted: false,
      fields: { id, name: id }
    })
    engine.put(store, "/org/projects", project("p0"))
    limitsOf("p0")
    expect(store.singletons.size).toBe(1)
    engine.remove(store, "/org/projects", "p0")
    expect(store.singletons.size).toBe(0)
    // a thousand and one projects with limits: the evicted one's go with it
    for (let i = 1; i <= engine.collectionLimit + 1; i++) {
      engine.put(store, "/org/projects", project(`p${i}`))
      limitsOf(`p${i}`)
    }
    expect(store.singletons.size).toBe(engine.collectionLimit)
    expect(store.singletonsOf.size).toBe(engine.collectionLimit)
  })
})
