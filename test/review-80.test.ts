/**
 * Review 80: what the document says of a value is checked on both sides. A process's id is
 * `format: uuid` in each of its five paths: the SDK refuses another string as `InvalidInput`
 * before sending, and the simulator answers it 400 (it looked the id up and answered 404, as for a
 * process that does not exist). Each case failed before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import { examples } from "./generated/examples.js"
import { callOf } from "./utils/accessors.js"
import { mockLayer } from "./utils/mock.js"

const processOperations = examples.filter((example) => example.path.includes("{processId}"))

describe("a process's id is a UUID, as the document says", () => {
  it("the five operations that name one", () => {
    expect(processOperations.map((example) => example.name).sort()).toEqual(
      ["getProcessStatus", "killProcess", "resizeProcess", "streamProcessStdout", "writeProcessStdin"].sort()
    )
  })

  for (const example of processOperations) {
    it.effect(`${example.module}.${example.accessor}: another string is InvalidInput, nothing sent`, () => {
      const { layer, requests } = mockLayer(() => new Response(null, { status: 500 }))
      const params = { ...Object(example.params), processId: "not-a-uuid" }
      return Effect.gen(function*() {
        const error = yield* Effect.flip(callOf(example.module, example.accessor, params))
        expect(error).toMatchObject({ _tag: "InvalidInput", field: "processId", message: "processId: must be a UUID" })
        expect(requests).toHaveLength(0)
      }).pipe(Effect.provide(layer))
    })
  }

  it.scoped("the simulator answers 400 for another string, naming the parameter", () =>
    Effect.gen(function*() {
      const server = yield* KernelSimulator.serve()
      for (const example of processOperations) {
        const path = example.path.replace("{id}", "browser_1").replace("{processId}", "not-a-uuid")
        const response = yield* Effect.promise(() =>
          fetch(`${server.url}${path}`, {
            method: example.method,
            headers: {
              authorization: `Bearer ${KernelSimulator.defaultToken}`,
              ...(example.body === "json" ? { "content-type": "application/json" } : {})
            },
            ...(example.body === "json" ? { body: "{}" } : {})
          })
        )
        const body = yield* Effect.promise(() => response.json())
        expect([example.name, response.status]).toEqual([example.name, 400])
        expect(body).toMatchObject({ code: "bad_request" })
        expect(String(Reflect.get(Object(body), "message"))).toContain("process_id")
      }
    }))
})

describe("a JSON body that is not Unicode text (RFC 8259 §8.1) is refused, not stored", () => {
  const post = (url: string, body: string | Blob) =>
    fetch(`${url}/profiles`, {
      method: "POST",
      headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": "application/json" },
      body
    })
  it.scoped("a lone surrogate escaped, and bytes that are not UTF-8: 400; a pair escaped: stored", () =>
    Effect.gen(function*() {
      const server = yield* KernelSimulator.serve()
      const lone = yield* Effect.promise(() => post(server.url, `{"name":"a\\ud800"}`))
      expect(lone.status).toBe(400)
      expect(yield* Effect.promise(() => lone.text())).toContain("not well-formed Unicode")
      const bytes = yield* Effect.promise(() =>
        post(
          server.url,
          new Blob([new Uint8Array([...new TextEncoder().encode(`{"name":"b`), 0xff, 0xfe, 0x22, 0x7d])])
        )
      )
      expect(bytes.status).toBe(400)
      expect(yield* Effect.promise(() => bytes.text())).toContain("not valid UTF-8")
      const pair = yield* Effect.promise(() => post(server.url, `{"name":"c\\ud83d\\ude00"}`))
      expect(pair.status).toBe(201)
      expect(yield* Effect.promise(() => pair.json())).toMatchObject({ name: "c\u{1F600}" })
      // nothing of the refused ones was stored: the list decodes as UTF-8 text
      const list = yield* Effect.promise(() =>
        fetch(`${server.url}/profiles`, { headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` } })
      )
      const names = (yield* Effect.promise(() => list.json())).map((p: { readonly name?: string }) => p.name)
      expect(names).toEqual(["c\u{1F600}"])
    }))
})

describe("a 400's message says why the value is refused", () => {
  it.scoped("a nullable integer out of its range names the range, not `Expected null`", () =>
    Effect.gen(function*() {
      const server = yield* KernelSimulator.serve()
      const messages: Array<string> = []
      for (const days of [0, 3651, 1.5]) {
        const response = yield* Effect.promise(() =>
          fetch(`${server.url}/org/api_keys`, {
            method: "POST",
            headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": "application/json" },
            body: JSON.stringify({ name: "k", days_to_expire: days })
          })
        )
        expect(response.status).toBe(400)
        messages.push(String(Reflect.get(Object(yield* Effect.promise(() => response.json())), "message")))
      }
      expect(messages).toEqual([
        "invalid input: days_to_expire: must be >= 1, got 0",
        "invalid input: days_to_expire: must be <= 3650, got 3651",
        "invalid input: days_to_expire: Expected an integer, actual 1.5"
      ])
    }))
})

describe("a process's id is one whatever the case of its hex digits (review 83)", () => {
  it.scoped("upper case and the urn:uuid: form find the process the lower-case id names", () =>
    Effect.gen(function*() {
      const server = yield* KernelSimulator.serve()
      const call = (method: string, path: string, body?: unknown) =>
        Effect.promise(() =>
          fetch(`${server.url}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${KernelSimulator.defaultToken}`,
              ...(body === undefined ? {} : { "content-type": "application/json" })
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })
        )
      // spawned until an id holds a hex letter (the simulator's ids count up)
      let id = ""
      for (let i = 0; i < 32 && !/[a-f]/.test(id); i++) {
        const spawned = yield* call("POST", "/browsers/browser_1/process/spawn", { command: "true" })
        id = String(Reflect.get(Object(yield* Effect.promise(() => spawned.json())), "process_id"))
      }
      expect(id).toMatch(/[a-f]/)
      const statuses: Array<number> = []
      for (const form of [id, id.toUpperCase(), `urn:uuid:${id}`]) {
        statuses.push((yield* call("GET", `/browsers/browser_1/process/${encodeURIComponent(form)}/status`)).status)
      }
      expect(statuses).toEqual([200, 200, 200])
    }))
})

describe("a union's 400 names each type once (review 83)", () => {
  it.scoped("a residential proxy's country given a number", () =>
    Effect.gen(function*() {
      const server = yield* KernelSimulator.serve()
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}/proxies`, {
          method: "POST",
          headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": "application/json" },
          body: JSON.stringify({ type: "residential", config: { country: 5 } })
        })
      )
      expect(response.status).toBe(400)
      const message = String(Reflect.get(Object(yield* Effect.promise(() => response.json())), "message"))
      expect(message).toContain("config.country: Expected string | undefined, actual 5")
    }))
})
