// Rewrites JavaScript files in place so that every object and array literal, and every `new Array(…)`, `L` reads
// `__p(id, L)` (the literal, and so its V8 allocation site, stays where it was), keeping each
// original as `<file>.orig` and the id -> file:line table in .tmp/literal-sites.json. Run
// `--restore` with the same files to put the originals back. See README.md here.
//   node bench/diagnostics/literal-sites-instrument.mjs [--restore] <file.js>...
import * as fs from "node:fs"
import ts from "typescript"

const restore = process.argv.includes("--restore")
const files = process.argv.slice(2).filter((arg) => arg !== "--restore")
const table = ".tmp/literal-sites.json"
const sites = !restore && fs.existsSync(table) ? JSON.parse(fs.readFileSync(table, "utf8")) : []

/** A literal on the left of `=` or in a for-of/in head is a pattern, not an allocation. */
const isTarget = (node) => {
  let n = node
  while (
    n.parent &&
    (ts.isParenthesizedExpression(n.parent) || ts.isArrayLiteralExpression(n.parent) ||
      ts.isObjectLiteralExpression(n.parent) || ts.isPropertyAssignment(n.parent) || ts.isSpreadElement(n.parent) ||
      ts.isShorthandPropertyAssignment(n.parent) || ts.isSpreadAssignment(n.parent))
  ) n = n.parent
  const p = n.parent
  if (p && ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken && p.left === n) return true
  return Boolean(p && (ts.isForOfStatement(p) || ts.isForInStatement(p)) && p.initializer === n)
}

for (const file of files) {
  const saved = `${file}.orig`
  if (restore) {
    if (fs.existsSync(saved)) fs.renameSync(saved, file)
    continue
  }
  if (!fs.existsSync(saved)) fs.copyFileSync(file, saved)
  const text = fs.readFileSync(saved, "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
  const edits = []
  const visit = (node) => {
    const isNewArray = ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "Array"
    if (isNewArray || ((ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node)) && !isTarget(node))) {
      const start = node.getStart()
      const { line } = source.getLineAndCharacterOfPosition(start)
      const shown = text.slice(start, start + 40).replace(/\s+/g, " ")
      edits.push([start, `__p(${sites.length}, `], [node.getEnd(), ")"])
      sites.push(`${file.replace(/.*node_modules\//, "")}:${line + 1} ${shown}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  edits.sort((a, b) => b[0] - a[0])
  let out = text
  for (const [at, insert] of edits) out = out.slice(0, at) + insert + out.slice(at)
  fs.writeFileSync(file, out)
}
if (!restore) {
  fs.mkdirSync(".tmp", { recursive: true })
  fs.writeFileSync(table, JSON.stringify(sites))
  console.log(`${sites.length} literals instrumented`)
}
