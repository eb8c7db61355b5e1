/**
 * effect-kernel as its users run it: the built package (`dist/node`, what Node loads of what `npm pack` ships), not
 * `src/` through tsx. tsx compiles with esbuild's `keepNames`, which wraps every named function
 * expression in a `__name(fn, "…")` call (an `Object.defineProperty` on each closure made), so
 * the SDK's per-call closures cost more under tsx than in the package, while undici and the
 * official client, plain JavaScript in `node_modules`, are run as they ship: measured on the same
 * loop (32 in flight), CPU per call 49.9 µs from `src/` against 28.8 µs from `dist/esm`.
 *
 * `npm run bench` builds first; run directly (`npx tsx bench/run.ts`), `ensureBuilt` builds when
 * `dist/node` is missing or older than a file of `src/`, and the children fail rather than measure
 * a stale build.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type * as EffectKernel from "../src/index.js"

const root = path.resolve(import.meta.dirname, "..")
const entry = path.join(root, "dist/node/index.js")

/** The newest modification time of a file under `dir`. */
const newest = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((latest, dirent) => {
    const file = path.join(dir, dirent.name)
    return Math.max(latest, dirent.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs)
  }, 0)

/** Why the build cannot be measured (missing, or older than `src/`), or `undefined`. */
const staleness = (): string | undefined => {
  if (!fs.existsSync(entry)) return "dist/node is missing"
  return fs.statSync(entry).mtimeMs < newest(path.join(root, "src")) ? "dist/node is older than src/" : undefined
}

/** Builds the package (`npm run build`) when `dist/node` is missing or older than `src/`. */
export const ensureBuilt = (): void => {
  const why = staleness()
  if (why === undefined) return
  process.stderr.write(`bench: ${why}: building (node scripts/build.mjs)\n`)
  execFileSync(process.execPath, [path.join(root, "scripts/build.mjs")], { cwd: root, stdio: "inherit" })
}

/** The built package's public modules (its types are `src/`'s, which the build emits). */
export const loadSdk = async (): Promise<typeof EffectKernel> => {
  const why = staleness()
  if (why !== undefined) throw new Error(`bench: ${why}: run \`npm run build\` (npm run bench does)`)
  return import(pathToFileURL(entry).href)
}
