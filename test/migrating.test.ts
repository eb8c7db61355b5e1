import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Browsers, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as fs from "node:fs"
import { officialMethods, render } from "../scripts/render-migrating.js"
import { operations } from "../src/internal/generated/table.js"

// docs/migrating.md maps every method of the official client to its accessor: the table is rendered
// from the definitions and @onkernel/sdk's declarations (npx tsx scripts/render-migrating.ts)
describe("docs/migrating.md", () => {
  it("its table of methods is up to date", () => {
    expect(render()).toBe(fs.readFileSync("docs/migrating.md", "utf8"))
  }, 120_000)

  it("names every accessor, and every method of the official client", () => {
    const text = fs.readFileSync("docs/migrating.md", "utf8")
    for (const operation of operations) expect(text).toContain(`\`${operation.module}.${operation.accessor}(`)
    const methods = officialMethods()
    expect(methods.length).toBeGreaterThanOrEqual(operations.length)
    for (const method of methods) expect(text).toContain(`\`${method.chain}.${method.name}(`)
  }, 120_000)

  // the official client (newer than the document) takes fields no accessor does: each is listed,
  // read from both sides' types (a hand-kept list named 5 methods of 26)
  it("lists every field of the official parameters that the accessor does not take", () => {
    const text = fs.readFileSync("docs/migrating.md", "utf8")
    expect(text).toContain("- `client.apiKeys.retrieve(id, query?)`: `include_deleted`")
    expect(text).toContain("- `client.browsers.create(body?)`: `name`, `tags`")
    expect(text).toContain("- `client.browserPools.acquire(idOrName, body)`: `name`, `start_url`, `tags`, `telemetry`")
    expect(text).toContain("- `client.auth.connections.submit(id, body)`: `field_values`, `selected_choice_id`")
    // and the one field the document requires where the client does not
    expect(text).toMatch(/makes them optional \(1\)[\s\S]*- `client\.browserPools\.update\(idOrName, body\)`: `size`/)
  })

  // the one official method whose accessor has another name: exported under the client's name too
  it("client.browsers.deleteByID is Browsers.deleteByID, the same accessor as Browsers.delete", () => {
    expect(Browsers.deleteByID).toBe(Browsers.delete)
    expect(fs.readFileSync("docs/migrating.md", "utf8")).toContain(
      "| `client.browsers.deleteByID(idOrName)` | `Browsers.deleteByID({ id })` (also `Browsers.delete({ id })`) |"
    )
  })

  // what the list says of such a field given in a variable (a migrated call's options object)
  it.effect("a field the accessor does not take, given in a variable, is not sent", () =>
    Effect.gen(function*() {
      const options = { headless: true, name: "agent-1", tags: { team: "a" } }
      const browser = yield* Browsers.create(options)
      expect(browser.headless).toBe(true)
      const simulator = yield* KernelSimulator.KernelSimulator
      const sent = (yield* simulator.requests).filter((r) => r.method === "POST" && r.path === "/browsers")
      expect(sent.length).toBe(1)
      expect(JSON.parse(sent[0]!.body ?? "{}")).toEqual({ headless: true })
    }).pipe(Effect.provide(Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer())))))
})
