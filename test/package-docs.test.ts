import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// The README and docs/ ship in the tarball: a relative link must reach a file that ships too (a link
// to examples/, test/ or ../shared is dead on the registry's page and in node_modules), and an
// anchor must name a heading of its target.
const files: ReadonlyArray<string> = JSON.parse(fs.readFileSync("package.json", "utf8")).files
const ships = (file: string) =>
  files.some((entry) => file === entry || file.startsWith(`${entry}/`)) || file === "package.json"

const markdown = ["README.md", ...fs.readdirSync("docs", { recursive: true, encoding: "utf8" }).map((f) => `docs/${f}`)]
  .filter((file) => file.endsWith(".md"))

const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-")
// as GitHub (and docgen's tables of contents) number them: a repeated heading gets -1, -2...
const anchors = (file: string) => {
  const seen = new Map<string, number>()
  return new Set([...fs.readFileSync(file, "utf8").matchAll(/^#+ (.+)$/gm)].map((m) => {
    const base = slug(m[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    return n === 0 ? base : `${base}-${n}`
  }))
}

describe("links in the shipped documentation", () => {
  it.each(markdown)("%s links only to shipped files and existing headings", (file) => {
    const text = fs.readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "")
    const dead: Array<string> = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [where, anchor] = target!.split("#")
      const resolved = where === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where!))
      if (resolved.startsWith("..") || !ships(resolved.replace(/\/$/, "")) || !fs.existsSync(resolved)) {
        dead.push(`${target} (not in the package)`)
      } else if (anchor !== undefined && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
        dead.push(`${target} (no such heading)`)
      }
    }
    expect(dead).toEqual([])
  })
})

// every option of KernelSimulator.layer and every field of a fault has a row in docs/testing.md
const fieldsOf = (source: string, name: string): ReadonlyArray<string> => {
  const body = new RegExp(`^export interface ${name}\\b[^{]*\\{([\\s\\S]*?)^\\}`, "m").exec(source)
  expect(body, `interface ${name}`).not.toBeNull()
  return [...body![1]!.matchAll(/^ {2}readonly (\w+)\??:/gm)].map((m) => m[1]!)
}

describe("docs/testing.md documents the simulator's options", () => {
  const source = fs.readFileSync("src/testing/KernelSimulator.ts", "utf8")
  const testing = fs.readFileSync("docs/testing.md", "utf8")
  const rows = new Set([...testing.matchAll(/^\| `([\w.]+)`/gm)].map((m) => m[1]!))

  it("every option of KernelSimulator.layer (LayerOptions and its Limits)", () => {
    const options = [...fieldsOf(source, "LayerOptions"), ...fieldsOf(source, "Limits")]
    expect(options.filter((name) => !rows.has(`options.${name}`))).toEqual([])
  })

  it("every field of a fault", () => {
    expect(fieldsOf(source, "Fault").filter((name) => !rows.has(name))).toEqual([])
  })
})

// the registry's page links the source, the README and the issues from these fields
describe("package.json", () => {
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"))

  it("names the repository, the homepage and the bug tracker", () => {
    expect(pkg.repository).toEqual({ type: "git", url: "git+https://github.com/effect-kernel/effect-kernel.git" })
    expect(pkg.homepage).toBe("https://github.com/effect-kernel/effect-kernel#readme")
    expect(pkg.bugs).toEqual({ url: "https://github.com/effect-kernel/effect-kernel/issues" })
  })

  // `npm test` takes minutes on two cores: `npm run test:quick` is the type-check and the fast files
  it("has a test:quick script that type-checks and leaves out only slow test files that exist", async () => {
    expect(pkg.scripts["test:quick"]).toBe("npm run typecheck && vitest run --config vitest.quick.config.ts")
    const { slowTests } = await import("../vitest.shared.js")
    expect(slowTests.filter((file) => !fs.existsSync(file))).toEqual([])
    const readme = fs.readFileSync("README.md", "utf8")
    expect(readme).toMatch(/npm run test:quick/)
  })

  // the package never ships docs that speak of a later version than its own (`@since 0.2.0` in a
  // 0.1.0 package): a release runs `npx changeset version` before it is packed
  it("its version is the latest the sources, the docs and the CHANGELOG name", () => {
    const parse = (version: string) => version.split(".").map(Number)
    const later = (a: string, b: string) => {
      const [x, y] = [parse(a), parse(b)]
      for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! > y[i]!
      return false
    }
    const texts = [
      ...fs.readdirSync("src", { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) =>
        `src/${f}`
      ),
      ...markdown.filter((file) => !file.startsWith("docs/api/"))
    ]
    const ahead = texts.flatMap((file) =>
      [...fs.readFileSync(file, "utf8").matchAll(/(?:@since|[Cc]hanged in|[Aa]dded in|[Nn]ew in) v?(\d+\.\d+\.\d+)/g)]
        .filter((m) => later(m[1]!, pkg.version))
        .map((m) => `${file}: ${m[0]} (package.json: ${pkg.version}; run npx changeset version)`)
    )
    expect(ahead).toEqual([])
    expect(/^## (\S+)$/m.exec(fs.readFileSync("CHANGELOG.md", "utf8"))?.[1]).toBe(pkg.version)
  })
})
