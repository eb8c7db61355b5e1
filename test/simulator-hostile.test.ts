/**
 * The served simulator against hostile and foreign clients: raw sockets, pipelining, curl's
 * `Expect: 100-continue`, invalid faults and seeds sent over the control plane, and a log fed with
 * the largest requests the server accepts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import * as Http from "node:http"
import * as Net from "node:net"
import { raw, withServed } from "./utils/served.js"

const token = KernelSimulator.defaultToken
const auth = { authorization: `Bearer ${token}` }

/** Writes `data` on one connection and collects what comes back until the server closes or `ms` pass. */
const socketExchange = (url: string, data: string, ms = 3000) =>
  new Promise<{ text: string; closed: boolean }>((resolve) => {
    const target = new URL(url)
    const socket = Net.connect(Number(target.port), target.hostname)
    let text = ""
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ text, closed })
    }
    const timer = setTimeout(() => finish(false), ms)
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")))
    socket.on("end", () => finish(true))
    socket.on("close", () => finish(true))
    socket.on("error", () => finish(true))
    socket.write(data)
  })

const request = (method: string, path: string, headers: Record<string, string> = {}, body = "") =>
  `${method} ${path} HTTP/1.1\r\nhost: sim\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}${
    body === "" ? "" : `content-length: ${Buffer.byteLength(body)}\r\n`
  }\r\n${body}`

const statuses = (text: string) => Array.from(text.matchAll(/HTTP\/1\.1 (\d{3}) /g), (m) => Number(m[1]))

const admin = (url: string, adminToken: string, method: string, path: string, body?: unknown) =>
  raw(url, {
    method,
    path,
    headers: {
      authorization: `Bearer ${adminToken}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

describe("served simulator: keep-alive and pipelining", () => {
  it("answers every pipelined request after an early 401, 404, 405 or 415 on a body-less request", () =>
    withServed({}, async ({ url }) => {
      const mouse = "/browsers/browser_1/computer/get_mouse_position"
      const early = [
        request("GET", "/nope"),
        request("GET", "/nope", auth),
        request("PUT", "/browser_pools", auth),
        request("POST", "/browsers/browser_1/computer/cursor", auth)
      ]
      const { text } = await socketExchange(
        url,
        early.join("") + request("POST", mouse, { ...auth, connection: "close" })
      )
      expect(statuses(text)).toEqual([401, 404, 405, 415, 200])
      expect(text).toContain("{\"x\":640,\"y\":360}")
    }))

  it("keeps the connection after refusing a small body it was not going to read", () =>
    withServed({}, async ({ url }) => {
      const body = "{\"hidden\":true}"
      const { text } = await socketExchange(
        url,
        request("POST", "/browsers/browser_1/computer/cursor", {}, body) +
          request("POST", "/browsers/browser_1/computer/cursor", {
            ...auth,
            "content-type": "application/json",
            connection: "close"
          }, body)
      )
      expect(statuses(text)).toEqual([401, 200])
    }))

  it("accepts an absolute-form request target", () =>
    withServed({}, async ({ url }) => {
      const { text } = await socketExchange(
        url,
        request("GET", `${url}/browser_pools?x=1`, { ...auth, connection: "close" })
      )
      expect(statuses(text)).toEqual([200])
    }))
})

describe("served simulator: requests other servers refuse bare", () => {
  it("serves a request without Host, and answers an unknown expectation with the Error JSON", () =>
    withServed({}, async ({ url }) => {
      const noHost = await socketExchange(
        url,
        `GET /browser_pools HTTP/1.1\r\nauthorization: Bearer ${token}\r\nconnection: close\r\n\r\n`
      )
      expect(statuses(noHost.text)).toEqual([200])
      const noHostNoToken = await socketExchange(url, "GET /nope HTTP/1.1\r\nconnection: close\r\n\r\n")
      expect(statuses(noHostNoToken.text)).toEqual([401])
      const expectation = await socketExchange(
        url,
        request("GET", "/browser_pools", { ...auth, expect: "200-ok", connection: "close" })
      )
      expect(statuses(expectation.text)).toEqual([417])
      expect(expectation.text).toContain("\"code\":\"expectation_failed\"")
    }))
})

describe("served simulator: Expect: 100-continue", () => {
  const expect100 = (url: string, headers: Record<string, string>, path: string) =>
    new Promise<{ continued: boolean; status: number }>((resolve, reject) => {
      const target = new URL(url)
      let continued = false
      const req = Http.request({
        host: target.hostname,
        port: target.port,
        method: "POST",
        path,
        agent: false,
        headers: { ...headers, expect: "100-continue", "content-length": "15", "content-type": "application/json" }
      })
      req.on("continue", () => {
        continued = true
        req.end("{\"hidden\":true}")
      })
      req.on("response", (response) => {
        response.resume()
        response.on("end", () => {
          resolve({ continued, status: response.statusCode ?? 0 })
          req.destroy()
        })
      })
      req.on("error", reject)
      req.flushHeaders()
    })

  it("asks for the body only once the caller is authenticated and the route needs it", () =>
    withServed({}, async ({ url }) => {
      expect(await expect100(url, {}, "/browsers/browser_1/computer/cursor")).toEqual({
        continued: false,
        status: 401
      })
      expect(await expect100(url, auth, "/nope")).toEqual({ continued: false, status: 404 })
      expect(await expect100(url, auth, "/browsers/browser_1/computer/cursor")).toEqual({
        continued: true,
        status: 200
      })
    }))
})

describe("served simulator: the control plane refuses what it cannot serve", () => {
  it("refuses fault headers that are not valid HTTP with 400 naming the field, and never hangs a client", () =>
    withServed({}, async ({ url, admin: adminToken }) => {
      for (const headers of [{ "bad name": "x" }, { "x-a": "a\r\nb" }, { "": "x" }, { "x-b": "\u0000" }]) {
        const refused = await admin(url, adminToken, "POST", "/_simulator/faults", {
          route: "listBrowserPools",
          status: 500,
          headers
        })
        expect(refused.status, JSON.stringify(headers)).toBe(400)
        expect(refused.body).toContain("headers")
      }
      const fine = await admin(url, adminToken, "POST", "/_simulator/faults", {
        route: "listBrowserPools",
        status: 500,
        headers: { "x-request-id": "abc 123" },
        times: 1
      })
      expect(fine.status).toBe(201)
      const faulted = await raw(url, { path: "/browser_pools", headers: auth })
      expect(faulted.status).toBe(500)
      expect(faulted.headers["x-request-id"]).toBe("abc 123")
    }))

  it("answers with the Error JSON, never a hang, when an in-process fault carries invalid headers", () =>
    withServed({}, async ({ injectFault, url }) => {
      await Effect.runPromise(injectFault({ route: "listBrowserPools", status: 500, headers: { "bad name": "x" } }))
      const { text } = await socketExchange(
        url,
        request("GET", "/browser_pools", { ...auth, connection: "close" }),
        5000
      )
      expect(statuses(text)).toEqual([500])
      expect(text).toContain("\"code\":\"internal_error\"")
    }))

  it("refuses a reset to a seed where an organization has the admin token", () =>
    withServed({}, async ({ url, admin: adminToken }) => {
      const reset = await admin(url, adminToken, "POST", "/_simulator/reset", {
        organizations: [{ id: "o", token: adminToken }]
      })
      expect(reset.status).toBe(400)
      expect(reset.body).toContain("organizations[0].token")
      // the admin token still opens nothing on the service's routes
      expect((await raw(url, { path: "/browser_pools", headers: { authorization: `Bearer ${adminToken}` } })).status)
        .toBe(401)
    }))

  it.effect("the in-process reset of a served simulator refuses the admin token too", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* KernelSimulator.serve({ adminToken: "admin_x" })
      const error = yield* Effect.flip(served.reset({ organizations: [{ id: "o", token: "admin_x" }] }))
      expect(error._tag).toBe("SeedError")
      expect(error.message).toContain("organizations[0].token")
    })))
})

describe("served simulator: the request log stays small whatever is sent", () => {
  it(
    "keeps the log's size bounded in bytes with the largest paths and headers accepted",
    () =>
      withServed({}, async ({ url, admin: adminToken }) => {
        const headers = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`x-pad-${i}`, "v".repeat(1000)]))
        for (let i = 0; i < 400; i++) {
          const response = await raw(url, {
            method: "DELETE",
            path: `/deployments/${i}${"a".repeat(58_000)}`,
            headers: { ...auth, ...headers }
          })
          expect(response.status).toBe(404)
        }
        const log = await admin(url, adminToken, "GET", "/_simulator/requests")
        expect(log.status).toBe(200)
        // the newest entries are kept, the total stays under the documented budget
        expect(log.body.length).toBeLessThan(KernelSimulator.defaultRequestLogBytes + 1024 * 1024)
        const entries = JSON.parse(log.body) as Array<{ path: string }>
        expect(entries.at(-1)!.path).toContain("/deployments/399")
        expect(entries.length).toBeGreaterThan(0)
      }),
    60_000
  )
})

describe("seeds and faults: total validation", () => {
  const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`

  it(
    "answers JSON nested too deep with 400, on reset and on faults, and keeps serving",
    () =>
      withServed({}, async ({ url, admin: adminToken }) => {
        for (
          const [path, body] of [
            ["/_simulator/reset", deep(200_000)],
            ["/_simulator/reset", `{"organizations":${deep(200_000)}}`],
            ["/_simulator/faults", deep(200_000)],
            ["/_simulator/faults", `{"route":"*","headers":${deep(1000)}}`]
          ] as const
        ) {
          const { text } = await socketExchange(
            url,
            request(
              "POST",
              path,
              { authorization: `Bearer ${adminToken}`, "content-type": "application/json", connection: "close" },
              body
            ),
            8000
          )
          expect(statuses(text), path).toEqual([400])
          expect(text).toContain("bad_request")
        }
        expect((await raw(url, { path: "/browser_pools", headers: auth })).status).toBe(200)
      }),
    60_000
  )

  it.effect("decodeSeed is total: deep or cyclic input is a SeedError, shared objects are fine", () =>
    Effect.gen(function*() {
      const cyclic: { organizations: Array<unknown> } = { organizations: [] }
      cyclic.organizations.push(cyclic)
      for (const input of [JSON.parse(deep(100_000)), cyclic]) {
        const error = yield* Effect.flip(KernelSimulator.decodeSeed(input))
        expect(error._tag).toBe("SeedError")
        expect(error.message).toContain("nests deeper than")
      }
      const config = { size: 2 }
      const shared = yield* KernelSimulator.decodeSeed({
        organizations: [{
          id: "o",
          token: "t",
          pools: [{ id: "a", browser_pool_config: config }, { id: "b", browser_pool_config: config }]
        }]
      })
      expect(shared.organizations?.[0]?.pools).toHaveLength(2)
    }))

  it.effect("duplicate ids within an organization are refused, naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(KernelSimulator.decodeSeed({
        organizations: [{
          id: "o",
          token: "t",
          browsers: [{ id: "b", replays: [{ id: "r" }, { id: "r" }] }, { id: "b" }],
          pools: [{ id: "p" }, { id: "p" }],
          deployments: [{ id: "d", state: "running" }, { id: "d", state: "stopped" }]
        }]
      }))
      for (
        const path of [
          "organizations[0].browsers[1].id",
          "organizations[0].pools[1].id",
          "organizations[0].deployments[1].id",
          "organizations[0].browsers[0].replays[1].id"
        ]
      ) expect(error.message).toContain(path)
      // the same ids in two organizations are two resources
      yield* KernelSimulator.decodeSeed({
        organizations: [{ id: "a", token: "ta", pools: [{ id: "p" }] }, { id: "b", token: "tb", pools: [{ id: "p" }] }]
      })
    }))

  it.effect("a seed that is not an object says what is expected in a few words", () =>
    Effect.gen(function*() {
      for (const input of [null, [], "x", 1]) {
        const error = yield* Effect.flip(KernelSimulator.decodeSeed(input))
        expect(error.message.length, error.message).toBeLessThan(120)
        expect(error.message).toContain("Seed")
      }
    }))
})

describe("served simulator: what a hostile client found", () => {
  it("a JSON body nested deeper than 64 levels is 400 and stores nothing: the lists still answer", () =>
    withServed({}, async ({ url }) => {
      // written as text: a value this deep is more than JSON.stringify's stack takes
      const nested = (depth: number) =>
        `{"timeout_seconds":600,"chrome_policy":{"x":${"[".repeat(depth)}${"]".repeat(depth)}}}`
      const headers = { ...auth, "content-type": "application/json" }
      const before = await raw(url, { path: "/browsers", headers: auth })
      const deep = await raw(url, { method: "POST", path: "/browsers", headers, body: nested(5000) })
      expect(deep.status).toBe(400)
      expect(deep.body).toContain("nests deeper than 64 levels")
      const fine = await raw(url, { method: "POST", path: "/browsers", headers, body: nested(30) })
      expect(fine.status).toBe(200)
      const after = await raw(url, { path: "/browsers?limit=100", headers: auth })
      expect(after.status).toBe(200)
      expect(JSON.parse(after.body)).toHaveLength(JSON.parse(before.body).length + 1)
    }))

  it("a fault's Content-Length or Transfer-Encoding is dropped: the next answer on the connection is whole", () =>
    withServed({}, async ({ admin: adminToken, url }) => {
      const injected = await admin(url, adminToken, "POST", "/_simulator/faults", {
        route: "listBrowserPools",
        status: 500,
        headers: { "content-length": "5", "Transfer-Encoding": "chunked", "x-fault": "yes" },
        times: 1
      })
      expect(injected.status).toBe(201)
      const { text } = await socketExchange(
        url,
        request("GET", "/browser_pools", auth) + request("GET", "/nope", { ...auth, connection: "close" })
      )
      expect(statuses(text)).toEqual([500, 404])
      expect(text).toContain("x-fault: yes")
      // the first answer's one Content-Length is its body's length, up to the second answer
      const [head = "", body = ""] = text.slice(0, text.indexOf("HTTP/1.1 404")).split("\r\n\r\n")
      expect(Array.from(head.matchAll(/content-length: (\d+)/gi), (m) => Number(m[1]))).toEqual([body.length])
      expect(head.toLowerCase()).not.toContain("transfer-encoding")
      expect(text).toContain("\"code\":\"internal_error\"")
      expect(text).toContain("no such route in the Kernel API")
    }))
})
