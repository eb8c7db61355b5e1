// Packs effect-kernel WITHOUT building first (prepack must build, from clean: a stale file left in
// dist must not ship), checks the tarball's layout, installs it into a fresh project with only the
// peer dependencies, type-checks a consumer written as ESM (`.mts`) and as CommonJS (`.cts`) under
// `--module node16`, runs both (the CommonJS one must load dist/cjs through `require`, the ESM one
// dist/node), bundles a program with esbuild (which must take dist/esm), and runs the simulator bin. Usage: npm run test:pack
import { build } from "esbuild"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kernel-pack-"))
try {
  // a file no build produces: a clean build removes it, a build on top of dist would ship it
  fs.mkdirSync(path.join(root, "dist"), { recursive: true })
  fs.writeFileSync(path.join(root, "dist/stale-sentinel.js"), "throw new Error('stale')\n")
  const tarball = path.join(
    dir,
    run(npm, ["pack", "--silent", "--pack-destination", dir], root).trim().split("\n").at(-1)
  )
  const entries = new Set(run("tar", ["-tzf", tarball], dir).split("\n").map((e) => e.replace(/^package\//, "")))
  for (
    const expected of [
      "dist/esm/index.js",
      "dist/esm/testing.js",
      "dist/esm/bin/simulator.js",
      "dist/node/index.js",
      "dist/node/testing.js",
      "dist/node/KernelError.js",
      "dist/cjs/KernelError.js",
      "dist/cjs/index.js",
      "dist/cjs/index.d.ts",
      "dist/cjs/testing.js",
      "dist/cjs/package.json",
      "dist/dts/index.d.ts",
      "dist/dts/testing.d.ts",
      "testing/package.json",
      "package.json",
      "README.md"
    ]
  ) {
    if (!entries.has(expected)) throw new Error(`the tarball lacks ${expected}`)
  }
  if (entries.has("dist/stale-sentinel.js")) {
    throw new Error("the tarball ships a stale file: prepack did not clean dist")
  }
  const project = path.join(dir, "consumer")
  fs.mkdirSync(project)
  const peers = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).devDependencies
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" })
  )
  run(npm, [
    "install",
    "--no-audit",
    "--no-fund",
    tarball,
    `effect@${peers.effect}`,
    `@effect/platform@${peers["@effect/platform"]}`,
    `@effect/platform-node@${peers["@effect/platform-node"]}`,
    `typescript@${peers.typescript}`,
    `@types/node@${peers["@types/node"]}`
  ], project)
  // every namespace of the index is a subpath too (`effect-kernel/KernelError`: what a library's declarations
  // name), and no other: the same module, one copy of its classes and Tags
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
  const namespaces = [...fs.readFileSync(path.join(root, "src/index.ts"), "utf8").matchAll(/export \* as (\w+) from/g)]
    .map(([, name]) => name).sort()
  const subpaths = Object.keys(pkg.exports).filter((key) => /^\.\/[A-Z]/.test(key)).map((key) => key.slice(2)).sort()
  if (JSON.stringify(namespaces) !== JSON.stringify(subpaths)) {
    throw new Error(`the subpath exports are not the index's namespaces: ${subpaths} / ${namespaces}`)
  }
  if (JSON.stringify(Object.keys(pkg.typesVersions["*"]).sort()) !== JSON.stringify(subpaths)) {
    throw new Error("typesVersions (node10's types) does not list every subpath")
  }
  const program = (label, resolved) => `
const main = async () => {
  console.error("${label} resolves", ${resolved})
  const layer = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))
  const pools = await Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer)))
  const error = await Effect.runPromise(Effect.flip(Computer.getMousePosition({ id: "" }).pipe(Effect.provide(layer))))
  console.log("${label}", pools.length, error._tag, KernelError.NotFound === KernelErrorSubpath.NotFound)
}
main()
`
  fs.writeFileSync(
    path.join(project, "esm.mts"),
    `import { Effect, Layer } from "effect"
import { BrowserPools, Computer, Kernel, KernelError } from "effect-kernel"
import * as KernelErrorSubpath from "effect-kernel/KernelError"
import { KernelSimulator } from "effect-kernel/testing"
${program("esm", "import.meta.resolve(\"effect-kernel\")")}`
  )
  fs.writeFileSync(
    path.join(project, "cjs.cts"),
    `import { Effect, Layer } from "effect"
import { BrowserPools, Computer, Kernel, KernelError } from "effect-kernel"
import * as KernelErrorSubpath from "effect-kernel/KernelError"
import { KernelSimulator } from "effect-kernel/testing"
${program("cjs", "require.resolve(\"effect-kernel\")")}`
  )
  // a library's declarations name the types its exports infer: TS2742 ("cannot be named without a reference
  // to .../dist/dts/KernelConfig.js") when a namespace had no subpath of its own
  fs.writeFileSync(
    path.join(project, "library.mts"),
    `import { Effect, Layer } from "effect"
import { Computer, Kernel, KernelTransport } from "effect-kernel"
export const KernelLive = Kernel.layerConfig().pipe(Layer.provide(KernelTransport.layerUndici))
export const position = Computer.getMousePosition({ id: "b1" }).pipe(Effect.catchTag("NotFound", () => Effect.succeed(null)))
`
  )
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "node16",
        target: "es2022",
        strict: true,
        declaration: true,
        outDir: "out",
        skipLibCheck: false,
        types: ["node"]
      },
      files: ["esm.mts", "cjs.cts", "library.mts"]
    })
  )
  run(process.execPath, [path.join(project, "node_modules/typescript/bin/tsc"), "-p", project], project)
  const runBoth = (file) => {
    const result = spawnSync(process.execPath, [file], { cwd: project, encoding: "utf8" })
    if (result.status !== 0) throw new Error(`${file}: ${result.stderr}`)
    return { out: result.stdout.trim(), err: result.stderr }
  }
  const esmRun = runBoth("out/esm.mjs")
  const cjsRun = runBoth("out/cjs.cjs")
  const esm = esmRun.out
  const cjs = cjsRun.out
  if (!/esm resolves .*\/dist\/node\/index\.js/.test(esmRun.err)) throw new Error(`ESM loads ${esmRun.err}`)
  if (!/cjs resolves .*\/dist\/cjs\/index\.js/.test(cjsRun.err)) throw new Error(`CommonJS loads ${cjsRun.err}`)
  // no warning: the CommonJS consumer does not go through require(esm)
  if (cjsRun.err.includes("ExperimentalWarning")) throw new Error(`CommonJS: ${cjsRun.err}`)
  const cjsSource = fs.readFileSync(path.join(project, "out/cjs.cjs"), "utf8")
  if (!cjsSource.includes("require(\"effect-kernel\")")) throw new Error("the CommonJS consumer does not use require")
  if (esm !== "esm 3 InvalidInput true" || cjs !== "cjs 3 InvalidInput true") {
    throw new Error(`unexpected output: ${esm} / ${cjs}`)
  }
  // a bundler takes dist/esm (the `module` condition): one module per namespace, so that it drops what a
  // program does not use
  fs.writeFileSync(
    path.join(project, "bundled.mjs"),
    `import { BrowserPools } from "effect-kernel"\nconsole.log(BrowserPools.list)\n`
  )
  const { metafile } = await build({
    absWorkingDir: project,
    entryPoints: ["bundled.mjs"],
    bundle: true,
    platform: "node",
    format: "esm",
    metafile: true,
    outdir: "out",
    write: false
  })
  // the files with a byte in the output (esbuild lists every file it read, kept or dropped)
  const bundled = Object.entries(Object.values(metafile.outputs)[0].inputs)
    .filter(([file, { bytesInOutput }]) => file.includes("effect-kernel/") && bytesInOutput > 0).map(([file]) => file)
  if (!bundled.some((file) => file.includes("effect-kernel/dist/esm/BrowserPools.js"))) {
    throw new Error(`esbuild did not take dist/esm: ${bundled.join(", ")}`)
  }
  if (bundled.some((file) => file.includes("/dist/node/") || file.includes("internal/Computer.js"))) {
    throw new Error(`esbuild bundled more than BrowserPools: ${bundled.join(", ")}`)
  }
  const help = run(path.join(project, "node_modules/.bin/effect-kernel-simulator"), ["--help"], project)
  if (!help.includes("usage: effect-kernel-simulator")) throw new Error(`bin: ${help}`)
  console.log(
    `pack-test: ${path.basename(tarball)} (${[...entries].filter((e) => e !== "").length} entries, ${
      (fs.statSync(tarball).size / 1024).toFixed(0)
    } KiB) built from clean by prepack; installs with its peers only; type-checks (node16) and runs as ESM from dist/node ("${esm}") and as CommonJS from dist/cjs ("${cjs}"); esbuild bundles from dist/esm; bin ok`
  )
} catch (error) {
  console.error("pack-test failed:", error.stderr ?? "", error.stdout ?? "", error.message)
  process.exitCode = 1
} finally {
  fs.rmSync(path.join(root, "dist/stale-sentinel.js"), { force: true })
  fs.rmSync(dir, { recursive: true, force: true })
}
