import { describe, expect, it } from "@effect/vitest"
import { KernelError } from "effect-kernel"
import * as fs from "node:fs"

describe("documentation", () => {
  it("docs/errors.md documents every error tag", () => {
    const text = fs.readFileSync("docs/errors.md", "utf8")
    const documented = [...text.matchAll(/^### (\w+)$/gm)].map((m) => m[1])
    expect(documented.sort()).toEqual([...KernelError.tags].sort())
  })

  it("the README starts with the two set-up commands", () => {
    const text = fs.readFileSync("README.md", "utf8")
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(text)![1]!
    expect(firstBlock).toMatch(/^npm ci && npm run demo/m)
    expect(firstBlock).toMatch(/^npm test/m)
  })
})
