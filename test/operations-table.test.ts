import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import { BrowserPools, Computer, Deployments, Replays } from "../src/index.js"
import * as Extensions from "../src/internal/generated/operations/Extensions.js"
import * as Operations from "../src/internal/operations.js"
import type * as Sim from "../src/testing/KernelSimulator.js"
import { renderStatusTable } from "./utils/errorsTable.js"

// the simulator's route matching before it was derived from the table, kept as the oracle
const oldRouteOf = (method: string, segments: ReadonlyArray<string>) => {
  const [first, id, third, fourth, ...rest] = segments
  const is = (expected: string, route: Sim.Route) =>
    method === expected ? route : { _tag: "WrongMethod", allow: expected }
  if (first === "browser_pools" && segments.length === 1) return is("GET", "listBrowserPools")
  if (first === "deployments" && segments.length === 2) return is("DELETE", "deleteDeployment")
  if (first === "browsers" && id !== undefined && rest.length === 0) {
    if (third === "replays" && fourth !== undefined) return is("GET", "downloadReplay")
    if (third === "computer" && fourth === "cursor") return is("POST", "setCursorVisibility")
    if (third === "computer" && fourth === "get_mouse_position") return is("POST", "getMousePosition")
  }
  return undefined
}

describe("the operations table", () => {
  it("docs/errors.md's status table is rendered from it", () => {
    const doc = fs.readFileSync(new URL("../docs/errors.md", import.meta.url), "utf8")
    const table = /<!-- operations:start -->\n([\s\S]*?)\n?<!-- operations:end -->/.exec(doc)?.[1]
    expect(table, "run `npm run docs:errors` to regenerate the table").toBe(renderStatusTable())
  })

  it("docs/errors.md's status table has a row per operation of the API, as its types say", () => {
    const rows = renderStatusTable().split("\n").slice(2)
    expect(rows).toHaveLength(118)
    // a paged list names its stream; an operation without content has no DecodeError
    expect(rows).toContain(
      "| `Browsers.list` / `listAll` | `GET /browsers` | — | `DecodeError` `InvalidInput` | common |"
    )
    expect(rows).toContain(
      "| `Browsers.delete` | `DELETE /browsers/{id}` | 400 `BadRequest`, 404 `NotFound` | `BadRequest` `NotFound` `InvalidInput` | common |"
    )
  })

  it("names five of the simulator's routes (which are every operation of the generated table)", () => {
    expectTypeOf<Operations.Name>().toMatchTypeOf<Sim.Route>()
    expect(Operations.table.map((d) => d.name).sort()).toEqual(
      ["deleteDeployment", "downloadReplay", "getMousePosition", "listBrowserPools", "setCursorVisibility"]
    )
  })

  it("routes like the hand-written matcher did, for every method and path shape", () => {
    const words = [
      "browsers",
      "browser_pools",
      "deployments",
      "computer",
      "replays",
      "cursor",
      "get_mouse_position",
      "x",
      ""
    ]
    const methods = ["GET", "POST", "DELETE", "PUT"]
    let checked = 0
    const paths: Array<Array<string>> = [[]]
    for (let length = 1; length <= 5; length++) {
      for (const prefix of paths.filter((p) => p.length === length - 1)) {
        for (const word of words) paths.push([...prefix, word])
      }
    }
    for (const segments of paths) {
      for (const method of methods) {
        expect(Operations.route(method, segments), `${method} /${segments.join("/")}`).toEqual(
          oldRouteOf(method, segments)
        )
        checked++
      }
    }
    expect(checked).toBeGreaterThan(10_000)
  })

  it("a multipart body in memory is a Uint8Array of its own (not a slice of a shared buffer)", () => {
    const prepared = Either.getOrThrow(
      Operations.preparer(Extensions.uploadExtension)({ file: new Uint8Array([1, 2]), name: "ext" })
    )
    const content = prepared.content
    expect(content?._tag).toBe("Bytes")
    if (content?._tag !== "Bytes") return
    expect(Object.getPrototypeOf(content.bytes)).toBe(Uint8Array.prototype)
    expect(content.bytes.byteOffset).toBe(0)
    expect(content.bytes.buffer.byteLength).toBe(content.bytes.length)
    const text = new TextDecoder().decode(content.bytes)
    expect(text).toContain(
      `name="file"; filename="file"\r\nContent-Type: application/octet-stream\r\n\r\n\u0001\u0002\r\n`
    )
    expect(text).toContain(`name="name"\r\n\r\next\r\n`)
  })

  it("each multipart body has a random boundary of its own: RFC 2046's characters, at most 70 of them", () => {
    const prepare = Operations.preparer(Extensions.uploadExtension)
    const boundaries = new Set<string>()
    for (let i = 0; i < 1000; i++) {
      const content = Either.getOrThrow(prepare({ file: new Uint8Array([1]), name: "ext" })).content
      if (content?._tag !== "Bytes") throw new Error("expected bytes")
      const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(content.contentType)?.[1] ?? ""
      expect(boundary).toMatch(/^effect-kernel-[0-9a-f]{32}$/)
      expect(boundary.length).toBeLessThanOrEqual(70)
      expect(new TextDecoder().decode(content.bytes).endsWith(`--${boundary}--\r\n`)).toBe(true)
      boundaries.add(boundary)
    }
    expect(boundaries.size).toBe(1000)
    // one body's boundary tells nothing of the next (a counter after a UUID shown in every request did)
    const [first, second] = [...boundaries].map((boundary) => boundary.slice("effect-kernel-".length))
    expect(first!.slice(0, 16)).not.toBe(second!.slice(0, 16))
    expect(first!.slice(16)).not.toBe(second!.slice(16))
  })

  it("a file part's default name is the field's last [key], as the form encoding's regular expression gives it", () => {
    const byRegex = (name: string) => name.replace(/^.*\[([^\]]*)\]$/, "$1")
    const names = [
      "files[0][file]",
      "file",
      "a[b[c]",
      "a[]",
      "x]y[z]",
      "a[b]c]",
      "[x]",
      "a\nb[file]",
      "a\rb[file]",
      "a\u2028b[file]",
      "a\u2029[x]",
      "a[b\nc]",
      "ü[ñ]"
    ]
    for (const name of names) expect(Operations.fieldFileName(name), JSON.stringify(name)).toBe(byRegex(name))
  })

  it("derives each request from its input: encoded segments, body, span attributes", () => {
    const cursor = Operations.preparer(Operations.setCursorVisibility)
    expect(cursor({ id: "a/b c", hidden: true })).toEqual(
      Either.right({
        path: "/browsers/a%2Fb%20c/computer/cursor",
        body: { hidden: true },
        json: "{\"hidden\":true}",
        attributes: { "kernel.browser.id": "a/b c", "kernel.cursor.hidden": true }
      })
    )
    const refused = cursor({ id: "b", hidden: "yes" })
    expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "InvalidInput", field: "hidden" })
    const replay = Operations.preparer(Operations.downloadReplay)
    expect(Either.getOrThrow(replay({ id: "b", replayId: "r" })).path).toBe("/browsers/b/replays/r")
    const dotted = replay({ id: "b", replayId: ".." })
    expect(Either.isLeft(dotted) && dotted.left).toMatchObject({ _tag: "InvalidInput", field: "replayId" })
    expect(Either.getOrThrow(Operations.preparer(Operations.listBrowserPools)(undefined)).path).toBe("/browser_pools")
    const notObject = Operations.preparer(Operations.deleteDeployment)(null)
    expect(Either.isLeft(notObject) && notObject.left).toMatchObject({ _tag: "InvalidInput", field: "params" })
  })

  it("one naming rule: make<Op>, layer<Op> and the accessor named after the operation", () => {
    expect(BrowserPools.makeListBrowserPools).toBe(BrowserPools.makeList)
    expect(BrowserPools.layerListBrowserPools).toBe(BrowserPools.layerList)
    expect(BrowserPools.listBrowserPools).toBe(BrowserPools.list)
    expect(Deployments.makeDeleteDeployment).toBe(Deployments.makeDelete)
    expect(Deployments.layerDeleteDeployment).toBe(Deployments.layerDelete)
    expect(Deployments.deleteDeployment).toBe(Deployments.delete)
    expect(Replays.makeDownloadReplay).toBe(Replays.makeDownload)
    expect(Replays.layerDownloadReplay).toBe(Replays.layerDownload)
    expect(Replays.downloadReplay).toBe(Replays.download)
    for (const definition of Operations.table) {
      const pascal = definition.name[0].toUpperCase() + definition.name.slice(1)
      const module: Record<string, unknown> = { Replays, Computer, BrowserPools, Deployments }[definition.module]
      expect(module[`make${pascal}`], `${definition.module}.make${pascal}`).toBeDefined()
      expect(module[`layer${pascal}`], `${definition.module}.layer${pascal}`).toBeDefined()
      expect(module[definition.name], `${definition.module}.${definition.name}`).toBeTypeOf("function")
      expect(module[definition.accessor], `${definition.module}.${definition.accessor}`).toBeTypeOf("function")
    }
  })
})
