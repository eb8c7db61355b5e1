// Bundles a program (esbuild, minified, ESM for Node) with `effect-kernel` resolved to the sources
// (or, with `entry`, to another copy of them: scripts/bundle-size.ts --before=<rev>).
import { build, type Metafile } from "esbuild"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")

export interface BundleOptions {
  /** The file `effect-kernel` resolves to (default: src/index.ts of this checkout). */
  readonly entry?: string
}

/** The minified bundle and esbuild's metafile (which input files it kept, and how many bytes each). */
export const bundleWithMeta = async (
  contents: string,
  options: BundleOptions = {}
): Promise<{ readonly code: Uint8Array; readonly metafile: Metafile }> => {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: "ts" },
    bundle: true,
    minify: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    logLevel: "silent",
    alias: { "effect-kernel": options.entry ?? path.join(root, "src/index.ts") }
  })
  return { code: result.outputFiles[0]!.contents, metafile: result.metafile }
}

export const bundle = async (contents: string, options: BundleOptions = {}): Promise<Uint8Array> =>
  (await bundleWithMeta(contents, options)).code
