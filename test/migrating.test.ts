import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { officialMethods, render } from "../scripts/render-migrating.js"
import { operations } from "../src/internal/generated/table.js"

// docs/migrating.md maps every method of the official client to its accessor: the table is rendered
// from the definitions and @onkernel/sdk's declarations (npx tsx scripts/render-migrating.ts)
describe("docs/migrating.md", () => {
  it("its table of methods is up to date", () => {
    expect(render()).toBe(fs.readFileSync("docs/migrating.md", "utf8"))
  }, 30_000)

  it("names every accessor, and every method of the official client", () => {
    const text = fs.readFileSync("docs/migrating.md", "utf8")
    for (const operation of operations) expect(text).toContain(`\`${operation.module}.${operation.accessor}(`)
    const methods = officialMethods()
    expect(methods.length).toBeGreaterThanOrEqual(operations.length)
    for (const method of methods) expect(text).toContain(`\`${method.chain}.${method.name}(`)
  }, 30_000)
})
