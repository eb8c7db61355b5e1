/**
 * The simulator as an HTTP server: strict as the service's document, bounded, and driven over
 * HTTP through its control plane.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { Computer, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { raw, withServed } from "./utils/served.js"

const token = KernelSimulator.defaultToken
const auth = { authorization: `Bearer ${token}` }
const cursor = "/browsers/browser_1/computer/cursor"
const json = { ...auth, "content-type": "application/json" }

describe("simulator over HTTP: strict as the service's document", () => {
  it("refuses extra properties, wrong types and a missing field with 400 naming the field", () =>
    withServed({}, async ({ url }) => {
      const extra = await raw(url, { method: "POST", path: cursor, headers: json, body: "{\"hidden\":true,\"x\":1}" })
      expect(extra.status).toBe(400)
      expect(JSON.parse(extra.body)).toMatchObject({ code: "bad_request", details: [{ code: "invalid_input" }] })
      expect(extra.body).toContain("x: is not allowed")
      const wrongType = await raw(url, { method: "POST", path: cursor, headers: json, body: "{\"hidden\":\"yes\"}" })
      expect(wrongType.status).toBe(400)
      expect(wrongType.body).toContain("hidden: must be a boolean")
      const missing = await raw(url, { method: "POST", path: cursor, headers: json, body: "{}" })
      expect(missing.status).toBe(400)
      expect(missing.body).toContain("hidden: is required")
      const array = await raw(url, { method: "POST", path: cursor, headers: json, body: "[true]" })
      expect(array.status).toBe(400)
      const ok = await raw(url, {
        method: "POST",
        path: cursor,
        headers: { ...auth, "content-type": "application/json; charset=utf-8" },
        body: "{\"hidden\":true}"
      })
      expect(ok.status).toBe(200)
      expect(JSON.parse(ok.body)).toEqual({ ok: true })
    }))

  it("answers 415 to a body that is not application/json", () =>
    withServed({}, async ({ url }) => {
      for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
        const response = await raw(url, {
          method: "POST",
          path: cursor,
          headers: type === undefined ? auth : { ...auth, "content-type": type },
          body: "{\"hidden\":true}"
        })
        expect(response.status).toBe(415)
        expect(JSON.parse(response.body)).toMatchObject({ code: "unsupported_media_type" })
      }
    }))

  it("checks the token before telling anything about routes, methods or paths", () =>
    withServed({}, async ({ url }) => {
      for (
        const [method, path] of [
          ["GET", "/nope"],
          ["GET", "/deployments/dep_running"],
          ["POST", "/browser_pools"],
          ["GET", "/browsers/%zz/replays/r"],
          ["GET", "/_simulatorx"]
        ] as const
      ) {
        const response = await raw(url, { method, path })
        expect(response.status, `${method} ${path}`).toBe(401)
        expect(JSON.parse(response.body)).toMatchObject({ code: "unauthorized" })
        expect(response.headers.allow).toBeUndefined()
      }
      expect((await raw(url, { path: "/nope", headers: auth })).status).toBe(404)
      expect((await raw(url, { path: "/browsers/%zz/replays/r", headers: auth })).status).toBe(400)
    }))

  it("answers 405 with Allow, and takes the bearer scheme in any case", () =>
    withServed({}, async ({ url }) => {
      const wrong = await raw(url, { method: "DELETE", path: "/browser_pools", headers: auth })
      expect(wrong.status).toBe(405)
      expect(wrong.headers.allow).toBe("GET, POST")
      expect(JSON.parse(wrong.body)).toMatchObject({ code: "method_not_allowed" })
      const mouse = await raw(url, { method: "GET", path: "/browsers/b/computer/get_mouse_position", headers: auth })
      expect(mouse.headers.allow).toBe("POST")
      for (const scheme of ["bearer", "BEARER", "BeArEr"]) {
        const response = await raw(url, { path: "/browser_pools", headers: { authorization: `${scheme} ${token}` } })
        expect(response.status, scheme).toBe(200)
      }
    }))

  it("answers oversized ids with the Error JSON", () =>
    withServed({}, async ({ url }) => {
      const long = await raw(url, { path: `/deployments/${"a".repeat(20_000)}`, method: "DELETE", headers: auth })
      expect(long.status).toBe(404)
      expect(JSON.parse(long.body)).toMatchObject({ code: "not_found" })
      const huge = await raw(url, { path: `/deployments/${"a".repeat(70_000)}`, method: "DELETE", headers: auth })
      expect(huge.status).toBe(431)
      expect(JSON.parse(huge.body)).toMatchObject({ code: "request_header_fields_too_large" })
    }))
})

describe("simulator over HTTP: bounded", () => {
  it("answers 413 beyond the body limit without reading the body, and closes the connection", () =>
    withServed({ maxBodyBytes: 1024 }, async ({ url }) => {
      const declared = await raw(url, { method: "POST", path: cursor, headers: json, streamBytes: 50 * 1024 * 1024 })
      expect(declared.status).toBe(413)
      expect(JSON.parse(declared.body)).toMatchObject({ code: "payload_too_large" })
      expect(declared.closed).toBe(true)
      // chunked: no declared length, cut as it arrives
      const started = Date.now()
      const chunked = await raw(url, {
        method: "POST",
        path: cursor,
        headers: { ...json, "transfer-encoding": "chunked" },
        streamBytes: 50 * 1024 * 1024
      })
      expect(chunked.status).toBe(413)
      expect(chunked.closed).toBe(true)
      expect(Date.now() - started).toBeLessThan(5000)
      const fits = await raw(url, { method: "POST", path: cursor, headers: json, body: "{\"hidden\":false}" })
      expect(fits.status).toBe(200)
    }))

  it("does not read an unauthenticated body at all: 401 at once, connection closed", () =>
    withServed({}, async ({ url, requests }) => {
      const started = Date.now()
      const response = await raw(url, {
        method: "POST",
        path: "/nope",
        headers: { "content-type": "application/json" },
        streamBytes: 100 * 1024 * 1024
      })
      expect(response.status).toBe(401)
      expect(response.closed).toBe(true)
      expect(Date.now() - started).toBeLessThan(5000)
      const log = await Effect.runPromise(requests)
      expect(log.at(-1)).toMatchObject({ path: "/nope", body: undefined, status: 401 })
    }))

  it("keeps the request log as a bounded ring with bodies cut", () =>
    withServed({ requestLogSize: 5, recordedBodyBytes: 8 }, async ({ url, requests }) => {
      for (let i = 0; i < 12; i++) {
        await raw(url, { method: "DELETE", path: `/deployments/d${i}`, headers: auth })
      }
      await raw(url, { method: "POST", path: cursor, headers: json, body: "{\"hidden\":false}" })
      const log = await Effect.runPromise(requests)
      expect(log.length).toBe(5)
      expect(log.map((r) => r.path)).toEqual([
        "/deployments/d8",
        "/deployments/d9",
        "/deployments/d10",
        "/deployments/d11",
        cursor
      ])
      expect(log[4]).toMatchObject({ body: "{\"hidden…", bodyBytes: 16, status: 200 })
    }))

  it("records each request's query apart from its path", () =>
    withServed({}, async ({ url, requests }) => {
      await raw(url, { path: "/browsers?limit=3&offset=2&query=a%20b", headers: auth })
      await raw(url, { path: "/browsers?", headers: auth })
      const log = await Effect.runPromise(requests)
      expect(log.map((r) => [r.path, r.query, r.status])).toEqual([
        ["/browsers", "limit=3&offset=2&query=a%20b", 200],
        ["/browsers", undefined, 200]
      ])
    }))
})

describe("simulator over HTTP: the control plane", () => {
  const admin = (url: string, adminToken: string, method: string, path: string, body?: unknown) =>
    raw(url, {
      method,
      path,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })

  it("is guarded by its own token; the two tokens never cross", () =>
    withServed({ adminToken: "admin_secret" }, async ({ url, admin: adminToken }) => {
      expect(adminToken).toBe("admin_secret")
      for (const authorization of [undefined, `Bearer ${token}`, "Bearer wrong"]) {
        const response = await raw(url, {
          path: "/_simulator/requests",
          headers: authorization === undefined ? {} : { authorization }
        })
        expect(response.status).toBe(401)
      }
      expect((await raw(url, { path: "/browser_pools", headers: { authorization: "Bearer admin_secret" } })).status)
        .toBe(401)
      expect((await admin(url, adminToken, "GET", "/_simulator/requests")).status).toBe(200)
      expect((await admin(url, adminToken, "GET", "/_simulator/nope")).status).toBe(404)
      const wrong = await admin(url, adminToken, "PUT", "/_simulator/faults")
      expect(wrong.status).toBe(405)
      expect(wrong.headers.allow).toBe("POST, DELETE")
    }))

  it("serves a fault only after authentication, and does not spend it on a caller with no token", () =>
    withServed({}, async ({ url, admin: adminToken }) => {
      await admin(url, adminToken, "POST", "/_simulator/faults", { route: "listBrowserPools", status: 500, times: 1 })
      for (const headers of [{}, { authorization: "Bearer wrong" }]) {
        const anonymous = await raw(url, { path: "/browser_pools", headers })
        expect(anonymous.status).toBe(401)
        expect(JSON.parse(anonymous.body)).toMatchObject({ code: "unauthorized" })
      }
      expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(500)
      expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(200)
    }))

  it("answers a path the Kernel API does not have with a 404 no missing resource is confused with", () =>
    withServed({}, async ({ url }) => {
      const unknown = await raw(url, { path: "/nope/at/all", headers: auth })
      expect(unknown.status).toBe(404)
      expect(JSON.parse(unknown.body)).toMatchObject({ code: "not_found", message: "no such route in the Kernel API" })
      const missing = await raw(url, { method: "DELETE", path: "/deployments/dep_missing", headers: auth })
      expect(missing.status).toBe(404)
      expect(JSON.parse(missing.body).message).not.toContain("route")
    }))

  it("injects faults as injectFault does, including a 429 with Retry-After and a gateway 502", () =>
    withServed({}, async ({ url, admin: adminToken }) => {
      const injected = await admin(url, adminToken, "POST", "/_simulator/faults", {
        route: "listBrowserPools",
        status: 429,
        retryAfter: 2,
        times: 1
      })
      expect(injected.status).toBe(201)
      const limited = await raw(url, { path: "/browser_pools", headers: auth })
      expect(limited.status).toBe(429)
      expect(limited.headers["retry-after"]).toBe("2")
      expect(JSON.parse(limited.body)).toMatchObject({ code: "rate_limited" })
      expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(200)

      await admin(url, adminToken, "POST", "/_simulator/faults", { route: "*", status: 502, gateway: true })
      const gateway = await raw(url, { path: "/browser_pools", headers: auth })
      expect(gateway.status).toBe(502)
      expect(gateway.headers["content-type"]).toBe("text/html")
      expect(gateway.body).toContain("502 Bad Gateway")
      expect((await admin(url, adminToken, "DELETE", "/_simulator/faults")).status).toBe(200)
      expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(200)

      await admin(url, adminToken, "POST", "/_simulator/faults", { route: "getMousePosition", delay: 300, times: 1 })
      const started = Date.now()
      const slow = await raw(url, {
        method: "POST",
        path: "/browsers/browser_1/computer/get_mouse_position",
        headers: auth
      })
      expect(slow.status).toBe(200)
      expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    }))

  it("refuses an invalid fault with 400 naming the field, and a non-JSON body with 415", () =>
    withServed({}, async ({ url, admin: adminToken }) => {
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ route: "nope" }, "route"],
        [{ route: "*", status: 429, retryAfter: 0 }, "retryAfter"],
        [{ route: "*", probability: 2 }, "probability"],
        [{ route: "*", times: 1.5 }, "times"],
        [{ route: "*", delay: "soon" }, "delay"],
        [{ route: "*", stauts: 500 }, "stauts"],
        // review 87: a header name that is no HTTP token read "is not allowed (unknown field)"
        [{ route: "*", status: 500, headers: { "bad name": "x" } }, "headers.bad name"]
      ]
      for (const [fault, field] of cases) {
        const response = await admin(url, adminToken, "POST", "/_simulator/faults", fault)
        expect(response.status, JSON.stringify(fault)).toBe(400)
        const body = JSON.parse(response.body) as { message: string; details: Array<{ message: string }> }
        expect(body.details[0]!.message.startsWith(`${field}:`), body.details[0]!.message).toBe(true)
        if (field === "headers.bad name") expect(body.details[0]!.message).not.toContain("unknown field")
      }
      const badName = await admin(url, adminToken, "POST", "/_simulator/faults", {
        route: "*",
        status: 500,
        headers: { "bad name": "x" }
      })
      expect(badName.body).toContain("a header name is an HTTP token")
      const text = await raw(url, {
        method: "POST",
        path: "/_simulator/faults",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "text/plain" },
        body: "{\"route\":\"*\"}"
      })
      expect(text.status).toBe(415)
    }))

  it("reads and clears the request log with the token redacted, and resets the world", () =>
    withServed({}, async ({ url, admin: adminToken }) => {
      await raw(url, { method: "POST", path: cursor, headers: json, body: "{\"hidden\":true}" })
      const log = JSON.parse((await admin(url, adminToken, "GET", "/_simulator/requests")).body) as Array<
        Record<string, unknown>
      >
      expect(log).toHaveLength(1)
      expect(log[0]).toMatchObject({
        method: "POST",
        path: cursor,
        query: null,
        route: "setCursorVisibility",
        status: 200
      })
      expect(JSON.stringify(log)).not.toContain(token)
      expect((log[0]!.headers as Record<string, string>).authorization).toBe("Bearer <redacted>")
      expect(JSON.stringify(log)).not.toContain(adminToken)
      expect((await admin(url, adminToken, "DELETE", "/_simulator/requests")).status).toBe(200)
      expect(JSON.parse((await admin(url, adminToken, "GET", "/_simulator/requests")).body)).toEqual([])

      const reset = await admin(url, adminToken, "POST", "/_simulator/reset", {
        organizations: [{ id: "o", token: "fresh", browsers: [{ id: "b", mouse: { x: 1, y: 2 } }] }]
      })
      expect(reset.status).toBe(200)
      expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(401)
      const mouse = await raw(url, {
        method: "POST",
        path: "/browsers/b/computer/get_mouse_position",
        headers: { authorization: "Bearer fresh" }
      })
      expect(JSON.parse(mouse.body)).toEqual({ x: 1, y: 2 })
      const bad = await admin(url, adminToken, "POST", "/_simulator/reset", {
        organizations: [{ id: "o", token: "t", browsers: [{ id: "b", mouse: { x: 1.5, y: 2 } }] }]
      })
      expect(bad.status).toBe(400)
      expect(bad.body).toContain("organizations[0].browsers[0].mouse.x")
      // the world is untouched by a refused seed; an empty reset goes back to the start
      expect((await raw(url, { path: "/browser_pools", headers: { authorization: "Bearer fresh" } })).status).toBe(200)
      expect((await admin(url, adminToken, "POST", "/_simulator/reset")).status).toBe(200)
      expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(200)
    }))
})

describe("seeds are validated and errors name the field", () => {
  const org = (extra: object) => ({ organizations: [{ id: "o", token: "t", ...extra }] })
  const cases: ReadonlyArray<[string, unknown, string]> = [
    [
      "retryAfter 0",
      org({ browsers: [{ id: "b", replays: [{ id: "r", retryAfter: 0 }] }] }),
      "organizations[0].browsers[0].replays[0].retryAfter"
    ],
    [
      "retryAfter 1.5",
      org({ browsers: [{ id: "b", replays: [{ id: "r", retryAfter: 1.5 }] }] }),
      "organizations[0].browsers[0].replays[0].retryAfter"
    ],
    [
      "a 1-byte replay",
      org({ browsers: [{ id: "b", replays: [{ id: "r", size: 1 }] }] }),
      "organizations[0].browsers[0].replays[0].size"
    ],
    ["mouse 1.5", org({ browsers: [{ id: "b", mouse: { x: 1.5, y: 0 } }] }), "organizations[0].browsers[0].mouse.x"],
    [
      "created_at yesterday",
      org({ pools: [{ id: "p", created_at: "yesterday" }] }),
      "organizations[0].pools[0].created_at"
    ],
    ["created_at 0", org({ pools: [{ id: "p", created_at: "0" }] }), "organizations[0].pools[0].created_at"],
    // `Date.parse` rolls these over (March 2, the next day): the answers then broke the document's date-time
    [
      "created_at February 30",
      org({ pools: [{ id: "p", created_at: "2026-02-30T00:00:00Z" }] }),
      "organizations[0].pools[0].created_at"
    ],
    [
      "created_at 24:00",
      org({ pools: [{ id: "p", created_at: "2026-01-01T24:00:00Z" }] }),
      "organizations[0].pools[0].created_at"
    ],
    // more than a collection holds: its oldest were evicted as the world started, silently
    [
      "1,001 browsers",
      org({ browsers: Array.from({ length: 1001 }, (_, i) => ({ id: `b${i}` })) }),
      "organizations[0].browsers"
    ],
    // references the API checks (400) to things a seed cannot hold: answered with a made-up profile
    [
      "a pool naming a proxy",
      org({ pools: [{ id: "p", browser_pool_config: { proxy_id: "nope" } }] }),
      "organizations[0].pools[0].browser_pool_config.proxy_id"
    ],
    [
      "a pool naming a profile",
      org({ pools: [{ id: "p", browser_pool_config: { profile: { name: "ghost" } } }] }),
      "organizations[0].pools[0].browser_pool_config.profile"
    ],
    [
      "a pool naming extensions",
      org({ pools: [{ id: "p", browser_pool_config: { extensions: [{ name: "ext" }] } }] }),
      "organizations[0].pools[0].browser_pool_config.extensions"
    ],
    // the API refuses a second deployment of a served app version without `force` (which stops the first)
    [
      "two deployments serving one app version",
      org({
        deployments: [
          { id: "d1", state: "running", app_name: "a", version: "1" },
          { id: "d2", state: "queued", app_name: "a", version: "1" }
        ]
      }),
      "organizations[0].deployments[1].app_name"
    ],
    ["state exploded", org({ deployments: [{ id: "d", state: "exploded" }] }), "organizations[0].deployments[0].state"],
    // the mouse is on the screen, as every move keeps it
    [
      "a mouse off its viewport",
      org({ browsers: [{ id: "b", viewport: { width: 1024, height: 768 }, mouse: { x: 5, y: 768 } }] }),
      "organizations[0].browsers[0].mouse.y"
    ],
    [
      "a mouse off the default viewport",
      org({ browsers: [{ id: "b", mouse: { x: 1920, y: 5 } }] }),
      "organizations[0].browsers[0].mouse.x"
    ],
    ["an unknown field", org({ browserz: [] }), "organizations[0].browserz"],
    [
      "a pool timeout out of the document's bounds",
      org({ pools: [{ id: "p", browser_pool_config: { timeout_seconds: 5 } }] }),
      "organizations[0].pools[0].browser_pool_config.timeout_seconds"
    ],
    ["a token with a space", { organizations: [{ id: "o", token: "a b" }] }, "organizations[0].token"],
    [
      "a duplicate token",
      { organizations: [{ id: "a", token: "t" }, { id: "b", token: "t" }] },
      "organizations[1].token"
    ]
  ]
  for (const [name, seed, path] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(KernelSimulator.decodeSeed(seed))
        expect(error._tag).toBe("SeedError")
        expect(error.issues.map((i) => i.path)).toContain(path)
        expect(error.message).toContain(path)
      }))
  }

  it.effect("accepts the default seed and a JSON round trip of it", () =>
    Effect.gen(function*() {
      yield* KernelSimulator.decodeSeed(KernelSimulator.defaultSeed)
      yield* KernelSimulator.decodeSeed(JSON.parse(JSON.stringify(KernelSimulator.defaultSeed)))
    }))

  it.effect("accepts what those rules leave: 1,000 items, a leap day, one app version served per project", () =>
    Effect.gen(function*() {
      yield* KernelSimulator.decodeSeed(org({
        browsers: Array.from({ length: 1000 }, (_, i) => ({ id: `b${i}` })),
        pools: [{ id: "p", created_at: "2028-02-29T23:59:59.999Z" }],
        deployments: [
          { id: "d1", state: "running", app_name: "a", version: "1" },
          { id: "d2", state: "stopped", app_name: "a", version: "1" },
          { id: "d3", state: "running", app_name: "a", version: "2" },
          { id: "d4", state: "running", app_name: "b", version: "1", project: "x" },
          { id: "d5", state: "running", app_name: "b", version: "1", project: "y" }
        ]
      }))
    }))

  it.effect("serve fails with the SeedError; layer dies with it", () =>
    Effect.gen(function*() {
      const bad = org({ deployments: [{ id: "d", state: "exploded" }] }) as unknown as KernelSimulator.Seed
      const served = yield* Effect.flip(Effect.scoped(KernelSimulator.serve({ seed: bad })))
      expect(served._tag).toBe("SeedError")
      const exit = yield* Effect.exit(
        Computer.getMousePosition({ id: "b" }).pipe(
          Effect.provide(Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(bad))))
        )
      )
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("organizations[0].deployments[0].state")
    }))

  it.effect("an admin token equal to an organization's token is refused", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.scoped(KernelSimulator.serve({ adminToken: token })))
      expect(error._tag).toBe("SeedError")
      expect(error.message).toContain("adminToken")
    }))
})

describe("gateway faults in memory", () => {
  it.effect("a 503 with Retry-After reaches the SDK as a typed error after its retries", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* simulator.injectFault({ route: "getMousePosition", status: 503, retryAfter: 1, gateway: true })
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "browser_1" }))
      expect(error._tag).not.toBe("NotFound")
      const requests = yield* simulator.requests
      expect(requests.every((r) => r.status === 503)).toBe(true)
    }).pipe(
      Effect.provide(
        Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(undefined, { config: { maxRetries: 0 } })))
      )
    ))
})
