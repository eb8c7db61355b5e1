/**
 * Formats emitted TypeScript as the repository's lint does (dprint through @effect/eslint-plugin,
 * with the options of formatting.json), so the committed output is lint-clean as written.
 */
import { createFromBuffer } from "@dprint/formatter"
import { getPath } from "@dprint/typescript"
import * as fs from "node:fs"

// the options of the lint's dprint rule (eslint.config.mjs reads the same file)
const options: Record<string, unknown> = JSON.parse(
  fs.readFileSync(new URL("../../formatting.json", import.meta.url), "utf8")
)

let formatter: ReturnType<typeof createFromBuffer> | undefined

export const format = (filePath: string, text: string): string => {
  const made = formatter ??= createFromBuffer(fs.readFileSync(getPath()))
  // dprint is not always idempotent (a long class heading settles on the second pass)
  let formatted = text
  for (let pass = 0; pass < 4; pass++) {
    const next = made.formatText({ filePath, fileText: formatted, overrideConfig: options })
    if (next === formatted) return next
    formatted = next
  }
  throw new Error(`${filePath}: the formatting does not settle`)
}
