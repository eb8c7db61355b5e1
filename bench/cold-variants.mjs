// The import time of variants of the built package, in fresh processes, interleaved: dist/esm as built,
// the same without comments (esbuild transform per file), the same bundled into one index.js (effect,
// @effect/platform and undici external), and optionally another build (--before-dist=DIR, e.g. an
// earlier revision built into .tmp). Prints the ms each adds to importing effect + @effect/platform.
// Usage: npm run build && node bench/cold-variants.mjs [--runs=N] [--before-dist=DIR]
import { build, transform } from "esbuild"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

const root = path.resolve(import.meta.dirname, "..")
const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const runs = Number(arg("runs") ?? 15)
const before = arg("before-dist")

if (process.argv[2] === "--child") {
  await import("effect")
  await import("@effect/platform")
  const t = performance.now()
  await import(pathToFileURL(path.join(process.argv[3], "index.js")).href)
  process.stdout.write(String(performance.now() - t))
  process.exit(0)
}

const dist = path.join(root, "dist/esm")
const noComments = path.join(root, ".tmp/cold-variants/no-comments")
const oneFile = path.join(root, ".tmp/cold-variants/one-file")
fs.rmSync(path.join(root, ".tmp/cold-variants"), { recursive: true, force: true })
for (const file of fs.readdirSync(dist, { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".js")) continue
  const to = path.join(noComments, file)
  fs.mkdirSync(path.dirname(to), { recursive: true })
  const { code } = await transform(fs.readFileSync(path.join(dist, file), "utf8"), {
    loader: "js",
    format: "esm",
    legalComments: "none",
    target: "es2022"
  })
  fs.writeFileSync(to, code)
}
await build({
  entryPoints: [path.join(dist, "index.js")],
  outfile: path.join(oneFile, "index.js"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "es2022",
  external: [
    "effect",
    "effect/*",
    "@effect/platform",
    "@effect/platform/*",
    "@effect/platform-node",
    "@effect/platform-node/*",
    "undici"
  ],
  logLevel: "silent"
})
const size = (dir) => {
  const files = fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) =>
    f.endsWith(".js") && !f.startsWith("bin")
  )
  return `${files.length} modules, ${
    (files.reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0) / 1024).toFixed(0)
  } KiB`
}
const variants = [
  [`dist/esm (${size(dist)})`, dist],
  [`dist/esm without comments (${size(noComments)})`, noComments],
  [`dist/esm bundled into one index.js (${size(oneFile)})`, oneFile],
  ...(before === undefined ? [] : [[`${before} (${size(path.resolve(before))})`, path.resolve(before)]])
]
const times = variants.map(() => [])
for (let run = 0; run < runs; run++) {
  variants.forEach(([, dir], i) => {
    const out = execFileSync(process.execPath, [import.meta.filename, "--child", dir], { encoding: "utf8" })
    times[i].push(Number(out))
  })
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
console.log(`import above effect + @effect/platform, ms: median (min–max) of ${runs} fresh processes each, interleaved`)
variants.forEach(([name], i) => {
  console.log(
    `  ${name.padEnd(64)} ${median(times[i]).toFixed(1).padStart(6)}  (${Math.min(...times[i]).toFixed(1)}–${
      Math.max(...times[i]).toFixed(1)
    })`
  )
})
