/**
 * What the package's declarations make a user's type-check load: `undici` is an optional peer
 * dependency, and a program that imports `effect-kernel` must not parse undici's 44 declaration
 * files (about 0.05 s a check) because one public module names an undici type. Each public module's
 * declaration is emitted here as tsc emits it for `dist/dts`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import ts from "typescript"

const root = path.resolve(import.meta.dirname, "..")

const emitted = (() => {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.build.dts.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    }
  })
  if (config === undefined) throw new Error("tsconfig.build.dts.json: not read")
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: config.options
  })
  const files = new Map<string, string>()
  for (const source of program.getSourceFiles()) {
    const relative = path.relative(path.join(root, "src"), source.fileName)
    if (relative.startsWith("..") || relative.startsWith("internal") || relative.includes(path.sep)) continue
    program.emit(
      source,
      (name, text) => {
        if (name.endsWith(".d.ts")) files.set(relative, text)
      },
      undefined,
      true
    )
  }
  return files
})()

describe("the public modules' declarations", () => {
  it("are emitted for every public module", () => {
    expect(emitted.size).toBeGreaterThan(30)
    expect([...emitted.keys()]).toContain("KernelTransport.ts")
  })

  it("name no undici type (KernelTransport's tls and dispatcher are written structurally)", () => {
    const naming = [...emitted].filter(([, text]) => /["']undici(?:\/[^"']*)?["']/.test(text)).map(([file]) => file)
    expect(naming).toEqual([])
    const transport = emitted.get("KernelTransport.ts")!
    expect(transport).toContain("export type TlsOptions")
    expect(transport).toContain("export interface Dispatcher")
  })
})
