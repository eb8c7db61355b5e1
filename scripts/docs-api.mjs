// Generates docs/api with @effect/docgen (which also type-checks every @example).
// docgen runs in .tmp/docgen, a copy of the project's layout (sources and node_modules linked) with
// a minimal package.json. It insists on a `homepage`, which only reaches its _config.yml (not
// kept): the README stands in for it, so the generated pages do not change with package.json.
// Usage: npm run docs:api
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const work = path.join(root, ".tmp", "docgen")
fs.rmSync(work, { recursive: true, force: true })
fs.mkdirSync(work, { recursive: true })
for (const entry of ["src", "node_modules"]) fs.symlinkSync(path.join(root, entry), path.join(work, entry))
for (const file of ["docgen.json", "tsconfig.json", "tsconfig.build.json"]) {
  fs.copyFileSync(path.join(root, file), path.join(work, file))
}
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
fs.writeFileSync(
  path.join(work, "package.json"),
  JSON.stringify({ name: pkg.name, version: pkg.version, type: pkg.type, homepage: "README.md" })
)
execFileSync(process.execPath, [path.join(root, "node_modules/@effect/docgen/bin.cjs")], {
  cwd: work,
  stdio: "inherit"
})
const api = path.join(root, "docs", "api")
fs.rmSync(api, { recursive: true, force: true })
fs.cpSync(path.join(work, "docs", "modules"), api, { recursive: true })
fs.rmSync(work, { recursive: true, force: true })
