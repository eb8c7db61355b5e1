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

// The registry's `latest` of effect and of the @effect/* packages is the 4.x line, which does not
// install next to this SDK (ERESOLVE): every install command of the README and docs/ pins the 3.x
// line (effect 3, @effect/* 0.x) for each of them, and every one of them a snippet imports has one.
describe("install commands in the documentation", () => {
  const markdown = [
    "README.md",
    ...fs.readdirSync("docs", { recursive: true, encoding: "utf8" }).map((f) => `docs/${f}`)
  ].filter((file) => file.endsWith(".md"))

  const install = /^(?:npm (?:install|i|add)|pnpm (?:add|install|i)|yarn add|bun add)(?=\s|$)/

  /** Every install command as [file, command]: in code blocks, and in inline code of the prose. */
  const commands = markdown.flatMap((file) => {
    const text = fs.readFileSync(file, "utf8")
    const found: Array<readonly [string, string]> = []
    for (const [, block] of text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)) {
      for (const line of block!.replace(/\\\n/g, " ").split("\n")) {
        for (const part of line.replace(/\s#.*$/, "").split(/&&|\|\||;/)) {
          const command = part.trim().replace(/^\$\s+/, "")
          if (install.test(command)) found.push([file, command])
        }
      }
    }
    // inline code may wrap; "an unpinned `npm install effect`" is the documented mistake, not advice
    for (const [, before, span] of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/(unpinned\s+)?`([^`]+)`/g)) {
      const command = span!.replace(/\s+/g, " ").trim()
      if (before === undefined && install.test(command)) found.push([file, command])
    }
    return found
  })

  const effectPackage = /^(effect|@effect\/[\w.-]+)(?:@(.*))?$/
  // effect 3.x, and the @effect/* packages of its line (0.x); not a tag such as `latest`
  const pinnedTo3 = (name: string, version: string | undefined) =>
    version !== undefined && (name === "effect" ? /^[\^~]?3(\.|$)/ : /^[\^~]?0\.\d+/).test(version)

  it("finds the install commands", () => {
    expect(commands.length).toBeGreaterThanOrEqual(5)
    expect(commands.some(([file]) => file === "README.md")).toBe(true)
  })

  it("every install command pins the 3.x line of effect and each @effect/* package", () => {
    const unpinned = commands.flatMap(([file, command]) =>
      command.replace(install, "").trim().split(/\s+/).filter((word) => !word.startsWith("-")).flatMap((word) => {
        const match = effectPackage.exec(word)
        return match !== null && !pinnedTo3(match[1]!, match[2]) ? [`${file}: ${word} in \`${command}\``] : []
      })
    )
    expect(unpinned).toEqual([])
  })

  it("every effect package a snippet imports has a pinned install command", () => {
    const installed = new Set(
      commands.flatMap(([, command]) =>
        command.split(/\s+/).flatMap((word) => {
          const match = effectPackage.exec(word)
          return match !== null && pinnedTo3(match[1]!, match[2]) ? [match[1]!] : []
        })
      )
    )
    const imported = new Set(
      markdown.flatMap((file) =>
        [...fs.readFileSync(file, "utf8").matchAll(/^```ts\n([\s\S]*?)^```/gm)].flatMap(([, block]) =>
          [...block!.matchAll(/from "((?:@effect\/[\w.-]+)|effect)(?:\/[^"]*)?"/g)].map((m) => m[1]!)
        )
      )
    )
    expect([...imported].filter((name) => !installed.has(name)).sort()).toEqual([])
  })
})
