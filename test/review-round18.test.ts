/**
 * Hostile review, round 18: the document's value limits as the simulator enforces them over HTTP
 * (a body field, a query parameter, an array and the items of a nested array), with the Error body
 * naming the field, and a request within the limits still served.
 */
import { describe, expect, it } from "@effect/vitest"
import { KernelSimulator } from "effect-kernel/testing"
import { raw, withServed } from "./utils/served.js"

const auth = { authorization: `Bearer ${KernelSimulator.defaultToken}` }
const json = { ...auth, "content-type": "application/json" }

const post = (url: string, path: string, body: unknown) =>
  raw(url, { method: "POST", path, headers: json, body: JSON.stringify(body) })

const refused = (answer: { readonly status: number; readonly body: string }, message: string) => {
  expect(answer.status).toBe(400)
  expect(JSON.parse(answer.body)).toMatchObject({ code: "bad_request", message: expect.stringContaining(message) })
}

describe("review round 18: the simulator enforces the document's limits over HTTP", () => {
  it("a body field below its minimum or above its maximum is 400 naming the field; nothing is created", () =>
    withServed({}, async ({ url }) => {
      const count = async () => JSON.parse((await raw(url, { path: "/browser_pools", headers: auth })).body).length
      const before = await count()
      refused(await post(url, "/browser_pools", { size: -5 }), "size: must be >= 1, got -5")
      refused(
        await post(url, "/browser_pools", { size: 5, fill_rate_per_minute: 1000 }),
        "fill_rate_per_minute: must be <= 25, got 1000"
      )
      expect(await count()).toBe(before)
      const ok = await post(url, "/browser_pools", { size: 1, fill_rate_per_minute: 25 })
      expect(ok.status).toBe(201)
    }))

  it("a query parameter out of its range is 400 naming it", () =>
    withServed({}, async ({ url }) => {
      refused(await raw(url, { path: "/invocations?limit=1000", headers: auth }), "limit")
      refused(await raw(url, { path: "/invocations?offset=-1", headers: auth }), "offset")
      expect((await raw(url, { path: "/invocations?limit=100&offset=0", headers: auth })).status).toBe(200)
    }))

  it("an array with too few items, and a nested array item with too many, are 400 naming the path", () =>
    withServed({}, async ({ url }) => {
      const drag = "/browsers/browser_1/computer/drag_mouse"
      refused(await post(url, drag, { path: [[1, 2]] }), "path: must have at least 2 items")
      refused(await post(url, drag, { path: [[1, 2], [3, 4, 5]] }), "path.1: must have at most 2 items")
      expect((await post(url, drag, { path: [[1, 2], [3, 4]] })).status).toBeLessThan(300)
    }))
})
