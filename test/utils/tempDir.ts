/**
 * Temporary directories for a test file: each made under the system's temp directory and removed,
 * with what it holds, when the file's tests have run (a suite run three times a CI job left
 * thousands of them behind).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

const made: Array<string> = []

afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A new empty directory named `<prefix><random>`, removed after the test file. */
export const tempDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.push(dir)
  return dir
}
