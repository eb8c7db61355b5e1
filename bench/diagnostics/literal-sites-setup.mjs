// Loaded with `--import` before the instrumented modules (see literal-sites-instrument.mjs and
// README.md here): counts, per object or array literal, how many objects it made while counting
// is on, and how many of them V8 allocated straight into the old generation (a site "tenured" by
// allocation-site pretenuring). Needs `--allow-natives-syntax`.
import * as fs from "node:fs"

const young = new Function("o", "return %InYoungGeneration(o)")
const made = new Map()
const old = new Map()
globalThis.__literalSitesOn = false
globalThis.__p = (id, o) => {
  if (globalThis.__literalSitesOn) {
    made.set(id, (made.get(id) ?? 0) + 1)
    if (!young(o)) old.set(id, (old.get(id) ?? 0) + 1)
  }
  return o
}
/** Prints every literal that made at least `min` objects: made, allocated old, where. */
globalThis.__literalSitesReport = (min = 1000) => {
  const sites = JSON.parse(fs.readFileSync(".tmp/literal-sites.json", "utf8"))
  const rows = [...made].map(([id, n]) => [id, n, old.get(id) ?? 0]).sort((a, b) => b[1] - a[1])
  for (const [id, n, o] of rows) {
    if (n >= min) console.log(String(n).padStart(8), String(o).padStart(8), sites[id])
  }
}
