// Builds the package from clean, the way Effect's own packages are laid out:
//   dist/esm  ES modules (the package is "type": "module"), and the simulator bin
//   dist/cjs  CommonJS, with its own declarations, marked by a {"type":"commonjs"} package.json
//             so that TypeScript reads them as CommonJS for `require` consumers (node16, node10)
//   dist/dts  declarations for `import` consumers (node16 ESM, bundler)
// Usage: npm run build (also run by prepack, so a packed or published tarball always has dist)
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const dist = path.join(root, "dist")
const tsc = path.join(root, "node_modules/typescript/bin/tsc")

fs.rmSync(dist, { recursive: true, force: true })
for (const project of ["tsconfig.build.json", "tsconfig.build.cjs.json", "tsconfig.build.dts.json"]) {
  execFileSync(process.execPath, [tsc, "-p", project], { cwd: root, stdio: "inherit" })
}
fs.writeFileSync(path.join(dist, "cjs/package.json"), JSON.stringify({ type: "commonjs" }, null, 2) + "\n")
fs.chmodSync(path.join(dist, "esm/bin/simulator.js"), 0o755)
