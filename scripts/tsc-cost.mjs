// What effect-kernel costs the type-check of a program that uses it: `tsc --noEmit` (wall time) on
// small programs written into .tmp/tsc-cost/ (inside this package, so `effect-kernel` resolves as a
// user's program resolves it: through the package's `exports`, to the built declarations in
// dist/dts; `npm run build` first):
//   empty    `export {}`: tsc's own start-up and the default libraries
//   effect   one Effect program without the SDK (effect's own types)
//   1 op     Browsers.retrieve, provided with Kernel.layerConfig() on KernelTransport
//   20 ops   20 operations of 12 areas in one Effect.gen, errors caught by tag, the same layers
// Each program is checked with two tsconfigs (strict, nodenext): the README's, `"skipLibCheck": true`
// as `tsc --init` writes it (only the program is checked, and what it uses of the declarations), and
// the same without skipLibCheck (the declarations of every package are checked too: effect's alone
// take about 1.5 s). Runs interleaved (`--runs=N`, default 3), each with `--extendedDiagnostics`;
// prints the median (min–max) of the wall time, the median of tsc's own "Check time" (less noisy on
// a shared machine) and the instantiation count (the same every run), then the issue-18 target (20
// ops at most 1 s above empty, README tsconfig) and the same differences for the other tsconfig and
// above the effect-only program. `--json` prints one JSON line instead; `--readme-only` leaves out the
// other tsconfig (the bench's --quick run: 4 checks a run, not 8).
// Usage: npm run build && node scripts/tsc-cost.mjs [--runs=N] [--json] [--readme-only]
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const runsFlag = process.argv.find((arg) => arg.startsWith("--runs="))
const runs = runsFlag === undefined ? 3 : Math.max(1, Number(runsFlag.slice("--runs=".length)))
const json = process.argv.includes("--json")
const tsc = path.join(root, "node_modules/typescript/bin/tsc")
if (!fs.existsSync(path.join(root, "dist/dts/index.d.ts"))) {
  console.error("tsc-cost: dist/dts/index.d.ts is missing: run `npm run build` first")
  process.exit(1)
}

const layers = `
const KernelLive = Kernel.layerConfig().pipe(Layer.provide(KernelTransport.layerUndici))`

const programs = {
  "empty": `export {}\n`,
  "effect": `import { Console, Effect } from "effect"

const program = Effect.gen(function*() {
  const n = yield* Effect.succeed(1)
  yield* Console.log(n)
})
Effect.runPromise(program)
`,
  "1 op": `import { Console, Effect, Layer } from "effect"
import { Browsers, Kernel, KernelTransport } from "effect-kernel"
${layers}
const program = Effect.gen(function*() {
  const browser = yield* Browsers.retrieve({ id: "id" })
  yield* Console.log(browser.session_id)
}).pipe(Effect.catchTag("NotFound", () => Console.error("no such browser")))
Effect.runPromise(program.pipe(Effect.provide(KernelLive)))
`,
  "20 ops": `import { Console, Effect, Layer } from "effect"
import {
  ApiKeys, BrowserPools, Browsers, Computer, Credentials, Deployments, Filesystem, Invocations, Kernel,
  KernelTransport, Processes, Profiles, Projects, Proxies
} from "effect-kernel"
${layers}
const program = Effect.gen(function*() {
  const browser = yield* Browsers.create()
  const id = browser.session_id
  yield* Browsers.retrieve({ id })
  yield* Browsers.list()
  yield* Computer.captureScreenshot({ id })
  yield* Computer.clickMouse({ id, x: 1, y: 1 })
  yield* Computer.typeText({ id, text: "hello" })
  yield* Filesystem.writeFile({ id, path: "/tmp/a.txt", contents: new TextEncoder().encode("a") })
  yield* Filesystem.readFile({ id, path: "/tmp/a.txt" })
  yield* Filesystem.listFiles({ id, path: "/tmp" })
  yield* Processes.exec({ id, command: "ls" })
  yield* BrowserPools.list()
  yield* BrowserPools.acquire({ idOrName: "pool" })
  yield* Profiles.list()
  yield* Proxies.list()
  yield* Deployments.list()
  yield* Invocations.list()
  yield* Credentials.list()
  yield* Projects.list()
  yield* ApiKeys.list()
  yield* Browsers.delete({ id })
}).pipe(
  Effect.catchTags({
    NotFound: (e) => Console.error(e.message),
    Unauthorized: () => Console.error("check KERNEL_API_KEY")
  })
)
Effect.runPromise(program.pipe(Effect.provide(KernelLive)))
`
}

// the README's tsconfig (README.md, docs/getting-started.md) first: the target is measured with it
const configs = process.argv.includes("--readme-only")
  ? { "README tsconfig": { skipLibCheck: true } }
  : { "README tsconfig": { skipLibCheck: true }, "no skipLibCheck": {} }
const base = path.join(root, ".tmp", "tsc-cost")
fs.rmSync(base, { recursive: true, force: true })
const dirs = Object.entries(configs).flatMap(([config, extra]) =>
  Object.keys(programs).map((name) => {
    const dir = path.join(base, `${name}-${config}`.replace(/\W+/g, "-"))
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, "program.ts"), programs[name])
    const compilerOptions = {
      strict: true,
      module: "nodenext",
      target: "es2022",
      types: ["node"],
      noEmit: true,
      ...extra
    }
    fs.writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: ["program.ts"] }, null, 2)
    )
    return [`${name}, ${config}`, dir]
  })
)

const times = Object.fromEntries(dirs.map(([key]) => [key, []]))
const checks = Object.fromEntries(dirs.map(([key]) => [key, []]))
const instantiations = {}
const diagnostic = (output, name) => {
  const match = new RegExp(`^${name}:\\s+([\\d.]+)`, "m").exec(output)
  if (match === null) throw new Error(`tsc-cost: no "${name}" in tsc --extendedDiagnostics`)
  return Number(match[1])
}
for (let run = 0; run < runs; run++) {
  for (const [key, dir] of dirs) {
    const started = performance.now()
    let output
    try {
      output = execFileSync(process.execPath, [tsc, "--noEmit", "--extendedDiagnostics", "-p", dir], {
        cwd: root,
        encoding: "utf8",
        stdio: "pipe"
      })
    } catch (error) {
      console.error(`tsc-cost: the "${key}" program does not type-check (${dir}):\n${error.stdout ?? error}`)
      process.exit(1)
    }
    times[key].push((performance.now() - started) / 1000)
    checks[key].push(diagnostic(output, "Check time"))
    instantiations[key] = diagnostic(output, "Instantiations")
  }
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const result = Object.fromEntries(
  Object.entries(times).map(([name, values]) => [name, {
    median: median(values),
    min: Math.min(...values),
    max: Math.max(...values),
    check: median(checks[name]),
    instantiations: instantiations[name]
  }])
)
const differences = Object.fromEntries(
  Object.keys(configs).flatMap((config) => [
    [`20 ops above empty, ${config}`, result[`20 ops, ${config}`].median - result[`empty, ${config}`].median],
    [`20 ops above effect, ${config}`, result[`20 ops, ${config}`].median - result[`effect, ${config}`].median],
    [`effect above empty, ${config}`, result[`effect, ${config}`].median - result[`empty, ${config}`].median]
  ])
)
if (json) {
  process.stdout.write(JSON.stringify({ runs, seconds: result, differences }) + "\n")
} else {
  const version = JSON.parse(fs.readFileSync(path.join(root, "node_modules/typescript/package.json"), "utf8")).version
  console.log(
    `tsc --noEmit (wall seconds, median of ${runs} run${runs > 1 ? "s" : ""}, min–max; tsc's check time, median; ` +
      `instantiations), TypeScript ${version}; README tsconfig: "skipLibCheck": true`
  )
  for (const [key, { median: m, min, max, check, instantiations: count }] of Object.entries(result)) {
    console.log(
      `  ${key.padEnd(28)} ${m.toFixed(2).padStart(6)} s  (${min.toFixed(2)}–${max.toFixed(2)})  check ${
        check.toFixed(2).padStart(5)
      } s  ${String(count).padStart(7)} inst.`
    )
  }
  console.log("\ntargets (issue 18)")
  for (const [what, value] of Object.entries(differences)) {
    const target = what.startsWith("20 ops above empty, README")
    console.log(
      `  ${`tsc --noEmit: s, ${what}`.padEnd(78)} ${value.toFixed(2).padStart(7)}  ${
        target ? `<= 1  ${value <= 1 ? "met" : "NOT MET"}` : "(for comparison)"
      }`
    )
  }
}
