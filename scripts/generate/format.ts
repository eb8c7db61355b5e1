/**
 * Formats emitted TypeScript as the repository's lint does (dprint through @effect/eslint-plugin,
 * the options of eslint.config.mjs), so the committed output is lint-clean as written.
 */
import { createFromBuffer } from "@dprint/formatter"
import { getPath } from "@dprint/typescript"
import * as fs from "node:fs"

const options = {
  indentWidth: 2,
  lineWidth: 120,
  semiColons: "asi",
  quoteStyle: "alwaysDouble",
  trailingCommas: "never",
  operatorPosition: "maintain",
  "arrowFunction.useParentheses": "force"
}

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
