// Packs effect-kernel, installs the tarball into a fresh project with only the peer dependencies,
// type-checks a consumer written as ESM (import) and as CommonJS (require of ESM, Node >= 20.19),
// runs both, and runs the simulator bin. Usage: npm run test:pack
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kernel-pack-"))
try {
  run(npm, ["run", "build"], root)
  const tarball = path.join(
    dir,
    run(npm, ["pack", "--silent", "--pack-destination", dir], root).trim().split("\n").at(-1)
  )
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
  const program = (label) => `
const main = async () => {
  const layer = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))
  const pools = await Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer)))
  const error = await Effect.runPromise(Effect.flip(Computer.getMousePosition({ id: "" }).pipe(Effect.provide(layer))))
  console.log("${label}", pools.length, error._tag)
}
main()
`
  fs.writeFileSync(
    path.join(project, "esm.mts"),
    `import { Effect, Layer } from "effect"
import { BrowserPools, Computer, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
${program("esm")}`
  )
  fs.writeFileSync(
    path.join(project, "cjs.cts"),
    `import { Effect, Layer } from "effect"
import { BrowserPools, Computer, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
${program("cjs")}`
  )
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        target: "es2022",
        strict: true,
        outDir: "out",
        skipLibCheck: false,
        types: ["node"]
      },
      files: ["esm.mts", "cjs.cts"]
    })
  )
  run(process.execPath, [path.join(project, "node_modules/typescript/bin/tsc"), "-p", project], project)
  const esm = run(process.execPath, ["out/esm.mjs"], project).trim()
  const cjs = run(process.execPath, ["--no-warnings", "out/cjs.cjs"], project).trim()
  const cjsSource = fs.readFileSync(path.join(project, "out/cjs.cjs"), "utf8")
  if (!cjsSource.includes("require(\"effect-kernel\")")) throw new Error("the CommonJS consumer does not use require")
  if (esm !== "esm 3 InvalidInput" || cjs !== "cjs 3 InvalidInput") {
    throw new Error(`unexpected output: ${esm} / ${cjs}`)
  }
  const help = run(path.join(project, "node_modules/.bin/effect-kernel-simulator"), ["--help"], project)
  if (!help.includes("usage: effect-kernel-simulator")) throw new Error(`bin: ${help}`)
  const files = run(npm, ["pack", "--dry-run", "--json"], root)
  const size = JSON.parse(files)[0]
  console.log(
    `pack-test: ${path.basename(tarball)} (${size.entryCount} files, ${
      (size.size / 1024).toFixed(0)
    } KiB) installs with its peers only; type-checks and runs as ESM ("${esm}") and from require ("${cjs}"); bin ok`
  )
} catch (error) {
  console.error("pack-test failed:", error.stderr ?? "", error.stdout ?? "", error.message)
  process.exitCode = 1
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
