// Minified bundle sizes (esbuild) of small programs: a bare effect + Schema + FetchHttpClient program
// (the floor: what any Effect program that calls an HTTP API bundles), effect-kernel with one
// operation (BrowserPools.list on its own layer; Browsers.retrieve on its area's layer), with
// Kernel.layer, and the official @onkernel/sdk. Then the targets of issue 18 for the one-operation
// program, and which of effect-kernel's own files each effect-kernel program keeps.
// Usage: npx tsx scripts/bundle-size.ts [--before=<git rev>] [--src=<dir>] [--files] [--json]
//   --before=<rev>: also bundles the one-operation program against that revision's src/ (extracted
//                   with `git archive` into .tmp/bundle-before/<rev>), the "before" of the targets
//   --src=<dir>:    resolves effect-kernel to <dir>/index.ts instead of src/ (a patched copy of
//                   src/, to measure a proposal before it lands)
//   --json:         prints one JSON line (the sizes in KiB) instead of the table (bench/run.ts)
//   --files:        lists, per effect-kernel program, the bytes each of effect-kernel's files keeps
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { gzipSync } from "node:zlib"
import { bundleWithMeta } from "./bundle.js"

const root = path.resolve(import.meta.dirname, "..")
const before = process.argv.find((arg) => arg.startsWith("--before="))?.slice("--before=".length)
const listFiles = process.argv.includes("--files")
const json = process.argv.includes("--json")
const log = (line: string) => {
  if (!json) console.log(line)
}
const srcFlag = process.argv.find((arg) => arg.startsWith("--src="))?.slice("--src=".length)
const src = srcFlag === undefined ? undefined : path.resolve(srcFlag, "index.ts")

const config = `Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("k") })), Layer.provide(FetchHttpClient.layer)`
const onePool = `
    import { FetchHttpClient } from "@effect/platform"
    import { Effect, Layer, Redacted } from "effect"
    import { BrowserPools, KernelClient, KernelConfig } from "effect-kernel"
    const layer = BrowserPools.layerList.pipe(Layer.provide(KernelClient.layer), ${config})
    Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)`

const programs: Record<string, string> = {
  "floor: effect + Schema + FetchHttpClient (no SDK)": `
    import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
    import { Effect, Schema } from "effect"
    const Pool = Schema.Struct({ id: Schema.String, name: Schema.optional(Schema.String), available_count: Schema.Number })
    const program = Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const response = yield* client.execute(
        HttpClientRequest.get("https://api.onkernel.com/browser_pools").pipe(HttpClientRequest.bearerToken("k"))
      )
      return yield* HttpClientResponse.schemaBodyJson(Schema.Array(Pool))(response)
    })
    Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer))).then(console.log)`,
  "effect-kernel: BrowserPools.list (BrowserPools.layerList)": onePool,
  "effect-kernel: Browsers.retrieve (Browsers.layer)": `
    import { FetchHttpClient } from "@effect/platform"
    import { Effect, Layer, Redacted } from "effect"
    import { Browsers, KernelClient, KernelConfig } from "effect-kernel"
    const layer = Browsers.layer.pipe(Layer.provide(KernelClient.layer), ${config})
    Effect.runPromise(Browsers.retrieve({ id: "b1" }).pipe(Effect.provide(layer))).then(console.log)`,
  "effect-kernel: Kernel.layer (all 118 operations)": `
    import { FetchHttpClient } from "@effect/platform"
    import { Effect, Layer, Redacted } from "effect"
    import { BrowserPools, Kernel, KernelConfig } from "effect-kernel"
    const layer = Kernel.layer.pipe(${config})
    Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then(console.log)`,
  "@onkernel/sdk: browserPools.list": `
    import Kernel from "@onkernel/sdk"
    new Kernel({ apiKey: "k" }).browserPools.list().then(console.log)`
}

const entries: Array<[string, string, string | undefined]> = Object.entries(programs).map((
  [name, contents]
) => [name, contents, name.startsWith("effect-kernel") ? src : undefined])
if (before !== undefined) {
  // the revision's own src/, resolved against this checkout's node_modules (same effect, same esbuild)
  const dir = path.join(root, ".tmp", "bundle-before", before.replace(/[^\w.-]/g, "_"))
  if (!fs.existsSync(path.join(dir, "src", "index.ts"))) {
    fs.mkdirSync(dir, { recursive: true })
    const tar = execFileSync("git", ["archive", before, "src"], { cwd: root, maxBuffer: 1 << 30 })
    execFileSync("tar", ["-x", "-C", dir], { input: tar })
  }
  entries.push([
    `before (${before}): BrowserPools.list (BrowserPools.layerList)`,
    onePool,
    path.join(dir, "src", "index.ts")
  ])
}

const sizes: Record<string, number> = {}
const gzipKib: Record<string, number> = {}
const kept: Record<string, Array<[string, number]>> = {}
for (const [name, contents, entry] of entries) {
  const { code, metafile } = await bundleWithMeta(contents, entry === undefined ? {} : { entry })
  sizes[name] = code.length / 1024
  gzipKib[name] = gzipSync(code).length / 1024
  const where = entry === undefined ? "" : ` [${path.relative(root, entry)}]`
  log(
    `${(name + where).padEnd(66)} ${(code.length / 1024).toFixed(1).padStart(7)} KiB minified, ${
      (gzipSync(code).length / 1024).toFixed(1).padStart(6)
    } KiB gzip`
  )
  const inputs = Object.values(metafile.outputs)[0]!.inputs
  kept[name] = Object.entries(inputs)
    .filter(([file]) => !file.includes("node_modules") && !file.startsWith("<stdin>"))
    .map(([file, { bytesInOutput }]): [string, number] => [file.replace(/^.*?src\//, "src/"), bytesInOutput])
    .sort((a, b) => b[1] - a[1])
}

const floor = sizes["floor: effect + Schema + FetchHttpClient (no SDK)"]!
log("\ntargets (issue 18)")
const row = (target: string, value: number, op: string, bound: number) =>
  log(
    `  ${target.padEnd(78)} ${value.toFixed(2).padStart(7)}  ${op} ${bound}  ${
      (op === "<=" ? value <= bound : value >= bound) ? "met" : "NOT MET"
    }`
  )
for (
  const name of Object.keys(programs).filter((n) => n.startsWith("effect-kernel: ") && !n.includes("Kernel.layer"))
) {
  const program = name.slice("effect-kernel: ".length).replace(/ \(.*\)$/, "")
  row(`${program}: minified size / floor`, sizes[name]! / floor, "<=", 1.3)
  row(`${program}: KiB minified (main before the 118 operations: 862)`, sizes[name]!, "<=", 862)
}
if (before !== undefined) {
  const previous = sizes[`before (${before}): BrowserPools.list (BrowserPools.layerList)`]!
  row(
    `BrowserPools.list: minified size / the same program on ${before}`,
    sizes["effect-kernel: BrowserPools.list (BrowserPools.layerList)"]! / previous,
    "<=",
    1
  )
}

if (listFiles) {
  for (const [name, files] of Object.entries(kept)) {
    if (files.length === 0) continue
    const total = files.reduce((n, [, bytes]) => n + bytes, 0)
    log(`\n${name}: effect-kernel's own files, ${(total / 1024).toFixed(1)} KiB in ${files.length} files`)
    for (const [file, bytes] of files.slice(0, 15)) {
      log(`  ${(bytes / 1024).toFixed(1).padStart(6)} KiB  ${file}`)
    }
  }
}
if (json) {
  console.log(JSON.stringify({ kib: sizes, gzipKib }))
}
