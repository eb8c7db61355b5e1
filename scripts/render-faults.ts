// Rewrites the fault table of docs/reliability.md from test/utils/faultMatrix.ts.
import * as fs from "node:fs"
import { renderTable } from "../test/utils/faultMatrix.js"

const file = new URL("../docs/reliability.md", import.meta.url)
const doc = fs.readFileSync(file, "utf8")
const next = doc.replace(
  /<!-- faults:start -->\n[\s\S]*?<!-- faults:end -->/,
  `<!-- faults:start -->\n${renderTable()}\n<!-- faults:end -->`
)
fs.writeFileSync(file, next)
console.log(next === doc ? "docs/reliability.md: fault table up to date" : "docs/reliability.md: fault table rewritten")
