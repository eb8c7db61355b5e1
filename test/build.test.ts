/**
 * The chunked `dist/esm` (scripts/build.mjs: rollup over tsc's output), built into a directory of its own
 * under .tmp (where Node resolves `effect` from this checkout): every public module is its own entry file
 * with its source's exports, importable alone; no cycle between chunks; an area loads the shared runtime
 * and its own chunk only; the source maps lead into src/; a bundler still drops what a program does not use.
 * And `dist/node` (what Node loads: the same code in three files): the same exports, one chunk that the index
 * and testing share, source maps into src/.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { SourceMap } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll } from "vitest"
import { bundle } from "../scripts/bundle.js"

const root = path.resolve(import.meta.dirname, "..")
const run = promisify(execFile)
fs.mkdirSync(path.join(root, ".tmp"), { recursive: true })
const out = fs.mkdtempSync(path.join(root, ".tmp", "build-test-"))
const esm = path.join(out, "esm")

beforeAll(() => {
  execFileSync(process.execPath, [path.join(root, "scripts/build.mjs"), `--esm-only=${out}`], {
    cwd: root,
    stdio: "pipe"
  })
}, 180_000)
afterAll(() => fs.rmSync(out, { recursive: true, force: true }))

/** The public modules: src/<Name>.ts, apart from the index. */
const publicModules = fs.readdirSync(path.join(root, "src"))
  .filter((file) => file.endsWith(".ts") && file !== "index.ts")
  .map((file) => file.slice(0, -3))

/** Every .js file of the output, relative to it ("internal/runtime.js"). */
const outputFiles = (): Array<string> =>
  fs.readdirSync(esm, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".js"))
    .map((file) => file.split(path.sep).join("/"))

/** The files a module of `dir` imports statically (relative specifiers only), relative to `dir`. */
const importsOf = (file: string, dir = esm): Array<string> => {
  const code = fs.readFileSync(path.join(dir, file), "utf8")
  const specifiers = [...code.matchAll(/^(?:import|export)\b[^;]*?["'](\.{1,2}\/[^"']+)["']/gm)].map((m) => m[1]!)
  return specifiers.map((specifier) => path.posix.join(path.posix.dirname(file), specifier))
}

/** Every file a module of `dir` loads, itself included. */
const graphOf = (file: string, dir = esm, seen = new Set<string>()): Set<string> => {
  if (seen.has(file)) return seen
  seen.add(file)
  for (const next of importsOf(file, dir)) graphOf(next, dir, seen)
  return seen
}

/** The source map of `file` leads the line that names KernelClient's Tag key to that line in src/KernelClient.ts. */
const expectMapIntoSrc = (file: string) => {
  const lines = fs.readFileSync(file, "utf8").split("\n")
  const needle = `"effect-kernel/KernelClient"`
  const line = lines.findIndex((text) => text.includes(needle))
  expect(line).toBeGreaterThanOrEqual(0)
  const map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, "utf8")))
  const entry = map.findEntry(line, lines[line]!.indexOf(needle))
  expect("originalSource" in entry).toBe(true)
  if (!("originalSource" in entry)) return
  const source = path.resolve(path.dirname(file), entry.originalSource)
  expect(path.relative(root, source)).toBe(path.join("src", "KernelClient.ts"))
  expect(fs.readFileSync(source, "utf8").split("\n")[entry.originalLine]).toContain(needle)
}

/** The names a module exports, imported alone in a fresh process. */
const exportsInFreshProcess = async (file: string): Promise<Array<string>> => {
  const script = `const m = await import(${JSON.stringify(pathToFileURL(path.join(esm, file)).href)})
process.stdout.write(JSON.stringify(Object.keys(m).sort()))`
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root })
  return JSON.parse(stdout)
}

describe("the chunked dist/esm", () => {
  it(
    "every public module is its own entry file, and alone in a fresh process exports what its source does",
    async () => {
      const files = outputFiles()
      for (const name of publicModules) expect(files).toContain(`${name}.js`)
      expect(files).toContain("index.js")
      expect(files).toContain("bin/simulator.js")
      // a few at a time: each is a fresh Node process
      const names = [...publicModules, "index"]
      for (let i = 0; i < names.length; i += 4) {
        await Promise.all(
          names.slice(i, i + 4).map(async (name) => {
            const source: Record<string, unknown> = await import(`../src/${name}.ts`)
            expect({ name, exports: await exportsInFreshProcess(`${name}.js`) }).toEqual({
              name,
              exports: Object.keys(source).sort()
            })
          })
        )
      }
    },
    180_000
  )

  it("the index re-exports each public module as tsc wrote it, so that bundlers see one module per namespace", () => {
    const index = fs.readFileSync(path.join(esm, "index.js"), "utf8")
    for (const name of publicModules.filter((n) => n !== "testing")) {
      expect(index).toContain(`export * as ${name} from "./${name}.js"`)
    }
  })

  it("has no cycle between its files, and the shared runtime imports no other chunk", () => {
    const state = new Map<string, "open" | "done">()
    const cycles: Array<string> = []
    const visit = (file: string, trail: Array<string>) => {
      if (state.get(file) === "done") return
      if (state.get(file) === "open") {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(" -> "))
        return
      }
      state.set(file, "open")
      for (const next of importsOf(file)) visit(next, [...trail, file])
      state.set(file, "done")
    }
    for (const file of outputFiles()) visit(file, [])
    expect(cycles).toEqual([])
    expect(importsOf("internal/runtime.js")).toEqual([])
  })

  it("the client loads the shared runtime; an area loads that and its own chunk only", () => {
    // KernelConfig and KernelClient are in the runtime (the shared code imports them): their files re-export it
    for (const name of ["KernelClient", "KernelConfig"]) {
      expect([...graphOf(`${name}.js`)].sort()).toEqual([`${name}.js`, "internal/runtime.js"])
    }
    for (const area of ["Browsers", "BrowserPools", "Computer"]) {
      expect([...graphOf(`${area}.js`)].sort()).toEqual([`${area}.js`, `internal/${area}.js`, "internal/runtime.js"])
    }
    // the simulator is not in anything the SDK loads
    const sdk = graphOf("index.js")
    expect([...sdk].filter((file) => /simulator/i.test(file))).toEqual([])
    expect(graphOf("testing.js").size).toBeGreaterThan(1)
  })

  it("its source maps lead into src/", () => expectMapIntoSrc(path.join(esm, "internal/runtime.js")))

  it("a bundler still keeps only what a one-operation program uses (as from src/)", async () => {
    const onePool = `
      import { FetchHttpClient } from "@effect/platform"
      import { Effect, Layer, Redacted } from "effect"
      import { BrowserPools, KernelClient, KernelConfig } from "effect-kernel"
      const layer = BrowserPools.layerList.pipe(
        Layer.provide(KernelClient.layer),
        Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })),
        Layer.provide(FetchHttpClient.layer)
      )
      Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)`
    const fromDist = new TextDecoder().decode(await bundle(onePool, { entry: path.join(esm, "index.js") }))
    const fromSrc = await bundle(onePool)
    expect(fromDist).toContain("/browser_pools")
    for (const absent of ["/replays/", "get_mouse_position", "/deployments/", "KernelSimulator"]) {
      expect(fromDist).not.toContain(absent)
    }
    // within 1% of the same program bundled from the sources
    expect(Math.abs(fromDist.length - fromSrc.length) / fromSrc.length).toBeLessThan(0.01)
  }, 60_000)

  it("the simulator bin runs, with its shebang", async () => {
    const bin = path.join(esm, "bin/simulator.js")
    expect(fs.readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true)
    const { stdout } = await run(process.execPath, [bin, "--help"], { cwd: root })
    expect(stdout).toContain("usage: effect-kernel-simulator")
  }, 60_000)
})

describe("dist/node: the same modules in three files, for Node", () => {
  const node = path.join(out, "node")

  it("the index and testing export what their sources do, and share one chunk", async () => {
    for (const name of ["index", "testing"]) {
      const source: Record<string, unknown> = await import(`../src/${name}.ts`)
      const script = `const m = await import(${JSON.stringify(pathToFileURL(path.join(node, `${name}.js`)).href)})
process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Object.keys(v).sort()]))))`
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root })
      expect(JSON.parse(stdout)).toEqual(
        Object.fromEntries(
          Object.entries(source).map(([key, value]) => [key, Object.keys(value as object).sort()])
        )
      )
    }
    expect([...graphOf("index.js", node)].sort()).toEqual(["index.js", "internal/package.js"])
    expect([...graphOf("testing.js", node)].sort()).toEqual(["internal/package.js", "testing.js"])
    expect(fs.readFileSync(path.join(node, "internal/package.js"), "utf8")).not.toMatch(/KernelSimulator/)
  }, 60_000)

  it(
    "a program on its index and testing runs against the simulator, its typed errors the index's classes",
    async () => {
      const href = (file: string) => JSON.stringify(pathToFileURL(path.join(node, file)).href)
      const script = `import { Effect, Layer } from "effect"
const { Computer, Kernel, KernelError } = await import(${href("index.js")})
const { KernelSimulator } = await import(${href("testing.js")})
const layer = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))
const error = await Effect.runPromise(Effect.flip(Computer.getMousePosition({ id: "no-such-browser" }).pipe(Effect.provide(layer))))
process.stdout.write(JSON.stringify([error._tag, error instanceof KernelError.NotFound]))`
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root })
      expect(JSON.parse(stdout)).toEqual(["NotFound", true])
    },
    60_000
  )

  it(
    "with dist/esm in the same process (a bundler's copy beside Node's), an error of one is an instance of the other",
    async () => {
      const script = `const esm = await import(${JSON.stringify(pathToFileURL(path.join(esm, "index.js")).href)})
const node = await import(${JSON.stringify(pathToFileURL(path.join(node, "index.js")).href)})
const fields = { status: 404, code: "not_found", message: "no such browser", method: "GET", path: "/browsers/x" }
const error = new esm.KernelError.NotFound(fields)
process.stdout.write(JSON.stringify([esm.KernelError.NotFound === node.KernelError.NotFound, error instanceof node.KernelError.NotFound, error instanceof node.KernelError.Conflict]))`
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root })
      expect(JSON.parse(stdout)).toEqual([false, true, false])
    },
    60_000
  )

  it("its source maps lead into src/", () => expectMapIntoSrc(path.join(node, "internal/package.js")))
})
