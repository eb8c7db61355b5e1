// Builds the package from clean, the way Effect's own packages are laid out:
//   dist/esm  ES modules (the package is "type": "module"), and the simulator bin: tsc's output, then
//             chunked by rollup (below) so that Node loads a few files instead of ~145
//   dist/node the same ES modules in three files, for Node (below)
//   dist/cjs  CommonJS, with its own declarations, marked by a {"type":"commonjs"} package.json
//             so that TypeScript reads them as CommonJS for `require` consumers (node16, node10)
//   dist/dts  declarations for `import` consumers (node16 ESM, bundler)
// Usage: npm run build (also run by prepack, so a packed or published tarball always has dist)
//        node scripts/build.mjs --esm-only=DIR: only the ES modules, into DIR/esm and DIR/node (test/build.test.ts)
//
// dist/esm, chunked: importing the package is mostly Node *loading* modules (resolving each file's bare
// specifiers, reading, compiling), not evaluating them, so fewer files is faster. The layout:
//   - every public module (src/<Name>.ts, testing.ts, bin/simulator.ts) stays its own entry file with the
//     same name and exports, and index.js is tsc's (`export * as X from "./X.js"`): a bundler still sees
//     one module per namespace and tree-shakes an unused area or operation away;
//   - internal/runtime.js: the code every area shares (the client, the call pipeline, errors, events,
//     retry, config, the common schemas) and the public modules that code imports (KernelError,
//     KernelEvents, KernelRetry, KernelClient, KernelConfig: their entry files re-export it from there);
//   - internal/<Area>.js: an area's code (its public module, generated schemas, operations, module,
//     hand-written part), which its entry file <Area>.js re-exports and the simulator (its table of every
//     operation) shares;
//   - the simulator's own code (testing/**) in chunk(s) that only testing.js and the bin load.
// No cycle between chunks (checked below, the build fails on one): the runtime never imports area code.
// Source maps chain tsc's through rollup's, so stack traces and debuggers still point into src/.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { rollup } from "rollup"

const root = path.resolve(import.meta.dirname, "..")
const esmOnly = process.argv.find((arg) => arg.startsWith("--esm-only="))?.slice("--esm-only=".length)
const dist = esmOnly === undefined ? path.join(root, "dist") : path.resolve(esmOnly)
const tsc = path.join(root, "node_modules/typescript/bin/tsc")
// tsc's ES modules, before rollup (then removed): the same depth as dist/esm, so that the relative paths
// of tsc's source maps are right from either
const tscEsm = path.join(dist, "esm-tsc")
const esm = path.join(dist, "esm")

for (const dir of esmOnly === undefined ? [dist] : [esm, tscEsm]) fs.rmSync(dir, { recursive: true, force: true })
const runTsc = (...args) => execFileSync(process.execPath, [tsc, ...args], { cwd: root, stdio: "inherit" })
runTsc("-p", "tsconfig.build.json", "--outDir", tscEsm)
if (esmOnly === undefined) {
  runTsc("-p", "tsconfig.build.cjs.json")
  runTsc("-p", "tsconfig.build.dts.json")
  fs.writeFileSync(path.join(dist, "cjs/package.json"), JSON.stringify({ type: "commonjs" }, null, 2) + "\n")
}

/** The module's path inside tsc's output, e.g. "internal/call.js". */
const relative = (id) => path.relative(tscEsm, id).split(path.sep).join("/")
/** The area an internal module belongs to (its generated schemas, operations, module, hand-written part). */
const areaOf = (rel) => {
  const match = /^internal\/(?:generated\/(?:schemas|operations|modules)|handwritten)\/(\w+)\.js$/.exec(rel)
  return match === null || match[1] === "Common" ? undefined : match[1]
}
const isPublic = (rel) => !rel.includes("/")
const areas = new Set(
  fs.readdirSync(path.join(tscEsm, "internal/generated/operations")).filter((file) => file.endsWith(".js"))
    .map((file) => file.slice(0, -3))
)
/** An area's public module (`Browsers.js`), or Kernel.js, which imports every area. */
const isAreaModule = (rel) => rel === "Kernel.js" || (isPublic(rel) && areas.has(rel.slice(0, -3)))
// code for the simulator and its bin only: the table of every operation (it imports every area)
const isTestingOnly = (rel) =>
  rel.startsWith("testing/") || rel.startsWith("bin/") || rel === "testing.js" || rel === "internal/generated/table.js"

const publicModules = fs.readdirSync(tscEsm).filter((file) => file.endsWith(".js") && file !== "index.js")
const input = Object.fromEntries(publicModules.map((file) => [file.slice(0, -3), path.join(tscEsm, file)]))
input["bin/simulator"] = path.join(tscEsm, "bin/simulator.js")

/**
 * The runtime chunk's modules: every shared internal module, then (to a fixed point) every public module
 * that one of them imports. The build fails if the runtime would import area or simulator code: that
 * would be a cycle between chunks, which evaluates a chunk before the one it needs.
 */
const runtimeModules = (getModuleIds, getModuleInfo) => {
  const ids = [...getModuleIds()].filter((id) => path.isAbsolute(id) && id.startsWith(tscEsm))
  const runtime = new Set(ids.filter((id) => {
    const rel = relative(id)
    return !isPublic(rel) && !isTestingOnly(rel) && areaOf(rel) === undefined
  }))
  for (let grew = true; grew;) {
    grew = false
    for (const id of runtime) {
      for (const imported of getModuleInfo(id).importedIds) {
        if (runtime.has(imported) || !imported.startsWith(tscEsm)) continue
        const rel = relative(imported)
        if (!isPublic(rel) || isAreaModule(rel) || isTestingOnly(rel)) {
          throw new Error(`build: the shared runtime (${relative(id)}) imports area or simulator code (${rel})`)
        }
        runtime.add(imported)
        grew = true
      }
    }
  }
  return runtime
}

/**
 * Loads each `.js` under `dir` with its `.js.map` (tsc's, or dist/esm's, which lead into src/), so that the
 * maps rollup writes point through them into src/.
 */
const sourceMapsOf = (dir) => ({
  name: "source-maps",
  load(id) {
    if (!id.startsWith(dir) || !id.endsWith(".js")) return null
    const code = fs.readFileSync(id, "utf8").replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n")
    return { code, map: fs.readFileSync(`${id}.map`, "utf8") }
  }
})
/**
 * Rollup's warnings are errors, but for cycles between modules inside one chunk: they are src's own (e.g.
 * Browsers.ts <-> its hand-written part), evaluated in the same order as tsc's files; cycles between chunks
 * are checked below.
 */
const onwarn = (warning) => {
  if (warning.code === "CIRCULAR_DEPENDENCY") return
  throw new Error(`build: rollup: ${warning.message}`)
}

let runtime
const bundle = await rollup({
  input,
  external: (id) => !id.startsWith(".") && !path.isAbsolute(id),
  // the package is `"sideEffects": false`: an unused import is dropped, as a user's bundler would
  // (effect and @effect/platform say the same of themselves)
  treeshake: { moduleSideEffects: (id, external) => !external && relative(id).startsWith("bin/") },
  plugins: [sourceMapsOf(tscEsm)],
  onwarn
})
await bundle.write({
  dir: esm,
  format: "es",
  sourcemap: true,
  entryFileNames: "[name].js",
  chunkFileNames: "internal/[name].js",
  hoistTransitiveImports: false,
  manualChunks(id, { getModuleIds, getModuleInfo }) {
    runtime ??= runtimeModules(getModuleIds, getModuleInfo)
    if (runtime.has(id)) return "runtime"
    // one chunk per area, its public module with its internal ones: the simulator's table of every operation
    // shares the internal ones, and a hand-written part imports the public module (Browsers)
    if (!id.startsWith(tscEsm)) return undefined
    const rel = relative(id)
    return rel !== "Kernel.js" && isAreaModule(rel) ? rel.slice(0, -3) : areaOf(rel)
  },
  plugins: [{
    name: "no-chunk-cycles",
    generateBundle(_, output) {
      const chunks = Object.values(output).filter((file) => file.type === "chunk")
      const imports = new Map(chunks.map((chunk) => [chunk.fileName, chunk.imports.filter((i) => i in output)]))
      const state = new Map()
      const visit = (file, trail) => {
        if (state.get(file) === "done") return
        if (state.get(file) === "open") {
          throw new Error(`build: a cycle between chunks: ${[...trail.slice(trail.indexOf(file)), file].join(" -> ")}`)
        }
        state.set(file, "open")
        for (const next of imports.get(file)) visit(next, [...trail, file])
        state.set(file, "done")
      }
      for (const chunk of chunks) visit(chunk.fileName, [])
    }
  }]
})
await bundle.close()
// the index as tsc wrote it: `export * as X from "./X.js"`, one namespace per public module
for (const file of ["index.js", "index.js.map"]) fs.copyFileSync(path.join(tscEsm, file), path.join(esm, file))
fs.rmSync(tscEsm, { recursive: true, force: true })
fs.chmodSync(path.join(esm, "bin/simulator.js"), 0o755)

// dist/node: what Node loads (the exports' `default` under `import`; bundlers take dist/esm by the `module`
// condition). The same code as dist/esm, from it, in three files: index.js (its namespaces), testing.js (the
// simulator), and the one chunk both import (internal/package.js: everything the index loads, so the two
// entries share one copy of every class and Tag). Importing the package is mostly Node loading modules
// (resolving, reading, compiling each file), not evaluating them: 3 files load in about 0.6x the time of
// dist/esm's 54 (docs/performance.md). A bundler needs dist/esm's one module per namespace to drop what a
// program does not use; Node needs none of it.
const node = path.join(dist, "node")
fs.rmSync(node, { recursive: true, force: true })
/** Every module of dist/esm the index loads (itself left out): the chunk both entries share. */
const indexModules = (getModuleInfo) => {
  const seen = new Set()
  const visit = (id) => {
    if (seen.has(id) || !id.startsWith(esm)) return
    seen.add(id)
    for (const next of getModuleInfo(id).importedIds) visit(next)
  }
  visit(path.join(esm, "index.js"))
  seen.delete(path.join(esm, "index.js"))
  return seen
}
// each public module is an entry too (the package's `effect-kernel/<Module>` subpaths, which a library's
// declarations name): a file that re-exports it from the shared chunk, so a program that imports both the
// index and a subpath has one copy of every class and Tag
const namespaces = [
  ...fs.readFileSync(path.join(esm, "index.js"), "utf8").matchAll(/export \* as (\w+) from "\.\/(\w+)\.js"/g)
].map(([, name]) => name)
let shared
const nodeBundle = await rollup({
  input: {
    index: path.join(esm, "index.js"),
    testing: path.join(esm, "testing.js"),
    ...Object.fromEntries(namespaces.map((name) => [name, path.join(esm, `${name}.js`)]))
  },
  external: (id) => !id.startsWith(".") && !path.isAbsolute(id),
  treeshake: { moduleSideEffects: (_, external) => !external },
  plugins: [sourceMapsOf(esm)],
  onwarn
})
await nodeBundle.write({
  dir: node,
  format: "es",
  sourcemap: true,
  entryFileNames: "[name].js",
  chunkFileNames: "internal/[name].js",
  hoistTransitiveImports: false,
  manualChunks(id, { getModuleInfo }) {
    shared ??= indexModules(getModuleInfo)
    return shared.has(id) ? "package" : undefined
  }
})
await nodeBundle.close()
