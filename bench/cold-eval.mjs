// What importing the whole package spends evaluating effect-kernel's own modules (their top-level code:
// building schemas, error classes, Tags), apart from Node loading them. Each build's dist/esm is copied
// into .tmp/cold-eval/<n> with every module's body timed (performance.now() around it: the time of that
// module alone, its imports being evaluated before it), then imported in fresh processes, interleaved.
// Prints the medians per group of modules, per build.
// Usage: npm run build && node bench/cold-eval.mjs [--runs=N] DIST...   (e.g. .tmp/main-dist dist/esm)
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

if (process.argv[2] === "--child") {
  await import("effect")
  await import("@effect/platform")
  await import(pathToFileURL(path.join(process.argv[3], "index.js")).href)
  process.stdout.write(JSON.stringify(globalThis.__effectKernelEval))
  process.exit(0)
}

const root = path.resolve(import.meta.dirname, "..")
const runs = Number(process.argv.find((a) => a.startsWith("--runs="))?.slice("--runs=".length) ?? 9)
const dists = process.argv.slice(2).filter((a) => !a.startsWith("--"))
if (dists.length === 0) throw new Error("usage: cold-eval.mjs [--runs=N] DIST...")

const instrument = (from, to) => {
  fs.rmSync(to, { recursive: true, force: true })
  for (const file of fs.readdirSync(from, { recursive: true, encoding: "utf8" })) {
    const source = path.join(from, file)
    if (fs.statSync(source).isDirectory() || !file.endsWith(".js")) continue
    const target = path.join(to, file)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    const code = fs.readFileSync(source, "utf8")
    // import declarations are hoisted: the first statement runs after every import is evaluated
    fs.writeFileSync(
      target,
      `const __t0 = performance.now();\n${code}\n;(globalThis.__effectKernelEval ??= {})[${
        JSON.stringify(file)
      }] = performance.now() - __t0;\n`
    )
  }
}
const copies = dists.map((dist, i) => {
  const to = path.join(root, ".tmp/cold-eval", String(i))
  instrument(path.resolve(dist), to)
  return to
})

const groups = [
  ["generated schemas", /^internal\/generated\/schemas\//],
  ["generated operations", /^internal\/generated\/operations\//],
  ["generated modules + table", /^internal\/generated\/(modules\/|table)/],
  ["KernelError", /^KernelError\.js$/],
  ["area and other public modules", /^[A-Z][^/]*\.js$/],
  ["other internal modules", /^internal\//],
  ["all", /./]
]
const samples = dists.map(() => groups.map(() => []))
for (let run = 0; run < runs; run++) {
  copies.forEach((copy, d) => {
    const times = JSON.parse(
      execFileSync(process.execPath, [import.meta.filename, "--child", copy], { encoding: "utf8" })
    )
    const seen = new Set()
    groups.forEach(([, pattern], g) => {
      let sum = 0
      for (const [file, ms] of Object.entries(times)) {
        if (!pattern.test(file) || (g < groups.length - 1 && seen.has(file))) continue
        seen.add(file)
        sum += ms
      }
      samples[d][g].push(sum)
    })
  })
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
console.log(`evaluating effect-kernel's modules on importing the package, ms: median of ${runs} fresh processes each`)
console.log(`  ${"".padEnd(32)}${dists.map((d) => d.slice(-24).padStart(26)).join("")}`)
groups.forEach(([name], g) => {
  console.log(`  ${name.padEnd(32)}${samples.map((s) => median(s[g]).toFixed(2).padStart(26)).join("")}`)
})
