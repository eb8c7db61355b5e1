// Rewrites the per-operation status table of docs/errors.md from the operations table
// (src/internal/operations.ts). `npm run docs:errors`; test/operations-table.test.ts fails when it is stale.
import * as fs from "node:fs"
import { renderStatusTable } from "../test/utils/errorsTable.js"

const file = new URL("../docs/errors.md", import.meta.url)
const doc = fs.readFileSync(file, "utf8")
const next = doc.replace(
  /<!-- operations:start -->\n[\s\S]*?<!-- operations:end -->/,
  `<!-- operations:start -->\n${renderStatusTable()}\n<!-- operations:end -->`
)
fs.writeFileSync(file, next)
console.log(next === doc ? "docs/errors.md: status table up to date" : "docs/errors.md: status table rewritten")
