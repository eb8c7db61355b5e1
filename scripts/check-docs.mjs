// Type-checks every ```ts block of README.md and docs/**/*.md as its own module.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const out = path.join(root, ".tmp", "snippets")
fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })

const markdown = [
  "README.md",
  ...fs.readdirSync(path.join(root, "docs"), { recursive: true })
    .filter((f) => String(f).endsWith(".md") && !String(f).startsWith("api"))
    .map((f) => path.join("docs", String(f)))
]

const files = []
for (const file of markdown) {
  const text = fs.readFileSync(path.join(root, file), "utf8")
  const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```/gm)]
  blocks.forEach((block, i) => {
    // snippets that are tests run with the suite (vitest includes .tmp/snippets/*.test.ts)
    const isTest = block[1].includes("@effect/vitest")
    const name = `${file.replace(/[/.]/g, "_")}_${i + 1}${isTest ? ".test" : ""}.ts`
    // a snippet is a module; names it declares but does not use are fine in documentation
    fs.writeFileSync(path.join(out, name), `// ${file}, block ${i + 1}\n${block[1]}\nexport {}\n`)
    files.push(name)
  })
}

fs.writeFileSync(
  path.join(out, "tsconfig.json"),
  JSON.stringify({
    extends: "../../tsconfig.json",
    compilerOptions: { noUnusedLocals: false, noUnusedParameters: false },
    include: ["./*.ts"]
  })
)
try {
  execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", out], {
    stdio: "inherit"
  })
} catch {
  console.error(`check-docs: snippets of ${markdown.join(", ")} do not type-check (extracted to ${out})`)
  process.exit(1)
}
console.log(`check-docs: ${files.length} snippets from ${markdown.length} files type-check`)
