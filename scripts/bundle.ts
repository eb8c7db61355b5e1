// Bundles a program (esbuild, minified, ESM for Node) with `effect-kernel` resolved to the sources.
import { build } from "esbuild"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")

export const bundle = async (contents: string): Promise<Uint8Array> => {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: "ts" },
    bundle: true,
    minify: true,
    write: false,
    format: "esm",
    platform: "node",
    logLevel: "silent",
    alias: { "effect-kernel": path.join(root, "src/index.ts") }
  })
  return result.outputFiles[0]!.contents
}
