// The simulator lives in the `./testing` entry's own folder (src/testing/): the main entry never
// reaches it, and it does not import the public area modules back (only the internal table and
// schemas, and KernelConfig for the layer it provides).
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const importsOf = (file: string): ReadonlyArray<string> => {
  const text = fs.readFileSync(file, "utf8")
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s+"(\.{1,2}\/[^"]+)"/g)]
    .concat([...text.matchAll(/import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)])
    .map((m) => path.normalize(path.join(path.dirname(file), m[1]!.replace(/\.js$/, ".ts"))))
}

const closure = (entry: string): ReadonlySet<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const next of importsOf(file)) visit(next)
  }
  visit(entry)
  return seen
}

const filesUnder = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) =>
    path.join(dir, f)
  )

describe("the simulator's place", () => {
  it("the main entry's import graph holds no simulator module", () => {
    const reached = [...closure("src/index.ts")]
    expect(reached.length).toBeGreaterThan(20)
    expect(reached.filter((f) => f.startsWith("src/testing") || f.startsWith("src/bin") || /simulator/i.test(f)))
      .toEqual([])
  })

  it("no simulator module is left in src/internal", () => {
    expect(fs.readdirSync("src/internal").filter((f) => /simulator/i.test(f))).toEqual([])
    expect(fs.existsSync("src/KernelSimulator.ts")).toBe(false)
  })

  it("the simulator imports no public area module; only KernelConfig, for the layer it provides", () => {
    const outside = filesUnder("src/testing").flatMap((file) =>
      importsOf(file).filter((target) => !target.startsWith("src/testing/") && !target.startsWith("src/internal/"))
        .map((target) => `${file} -> ${target}`)
    )
    expect(outside).toEqual(["src/testing/KernelSimulator.ts -> src/KernelConfig.ts"])
  })

  it("one handler module per API area", () => {
    const areas = filesUnder("src/testing/internal/handlers").map((f) => path.basename(f, ".ts"))
    for (
      const area of ["Browsers", "BrowserPools", "Computer", "Filesystem", "Processes", "Replays", "Deployments"]
    ) {
      expect(areas).toContain(area)
    }
  })
})
