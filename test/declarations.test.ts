/**
 * What the package's declarations cost a user's type-check. `undici` is an optional peer
 * dependency, and a program that imports `effect-kernel` must not parse undici's 44 declaration
 * files (about 0.05 s a check) because one public module names an undici type. And a program that
 * uses an operation (its error union, its Tag in a layer's requirements) must not make tsc resolve
 * every error class's `Schema.TaggedErrorClass` or compare its Tag with each of `Kernel.Services`'
 * 119 Tags: counted in type instantiations (the same every run), the figure tsc's
 * `--extendedDiagnostics` prints. The declarations are emitted here as tsc emits them for
 * `dist/dts`, and programs are checked against them as a user's program is (README tsconfig).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
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
    if (relative.startsWith("..") || source.isDeclarationFile) continue
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

const publicModules = new Map([...emitted].filter(([relative]) => !relative.includes(path.sep)))

// the declarations as a package in node_modules, inside this repository (so that `effect` resolves)
fs.mkdirSync(path.join(root, ".tmp"), { recursive: true })
const scratch = fs.mkdtempSync(path.join(root, ".tmp", "declarations-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))
const installed = path.join(scratch, "node_modules", "effect-kernel")
for (const [relative, text] of emitted) {
  const file = path.join(installed, relative.replace(/\.ts$/, ".d.ts"))
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}
// the package's own subpaths (package.json's `exports`), no other: a declaration that needs a path
// outside them (`internal/...`) cannot be written by a user's program (TS2742), as installed
const { exports: subpaths } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  readonly exports: Record<string, unknown>
}
fs.writeFileSync(
  path.join(installed, "package.json"),
  JSON.stringify({
    name: "effect-kernel",
    type: "module",
    types: "./index.d.ts",
    exports: Object.fromEntries(
      Object.keys(subpaths).filter((subpath) => subpath !== "./package.json").map((subpath) => [
        subpath,
        { types: subpath === "." ? "./index.d.ts" : `${subpath}.d.ts` }
      ])
    )
  })
)
fs.writeFileSync(path.join(scratch, "package.json"), JSON.stringify({ type: "module" }))

/** Type-checks `source` as a user's program (the README's tsconfig); its errors and instantiation count. */
const check = (name: string, source: string, emitDeclarations = false) => {
  const file = path.join(scratch, `${name}.ts`)
  fs.writeFileSync(file, source)
  const program = ts.createProgram({
    rootNames: [file],
    options: {
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ["node"],
      skipLibCheck: true,
      ...(emitDeclarations ? { declaration: true, emitDeclarationOnly: true } : { noEmit: true })
    }
  })
  const diagnostics = [
    ...ts.getPreEmitDiagnostics(program),
    ...(emitDeclarations ? program.emit(undefined, () => {}).diagnostics : [])
  ]
  const errors = diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
  return { errors, instantiations: program.getInstantiationCount() }
}

describe("the public modules' declarations", () => {
  it("are emitted for every public module", () => {
    expect(publicModules.size).toBeGreaterThan(30)
    expect([...publicModules.keys()]).toContain("KernelTransport.ts")
  })

  it("name no undici type (KernelTransport's tls and dispatcher are written structurally)", () => {
    const naming = [...publicModules].filter(([, text]) => /["']undici(?:\/[^"']*)?["']/.test(text)).map(([file]) =>
      file
    )
    expect(naming).toEqual([])
    const transport = emitted.get("KernelTransport.ts")!
    expect(transport).toContain("export type TlsOptions")
    expect(transport).toContain("export interface Dispatcher")
  })

  it("cost a program that yields an operation and catches one of its errors little to check", () => {
    const { errors, instantiations } = check(
      "catch",
      `import { Console, Effect } from "effect"
import { Browsers } from "effect-kernel"

export const program = Effect.gen(function*() {
  const browser = yield* Browsers.retrieve({ id: "id" })
  yield* Console.log(browser.session_id)
}).pipe(Effect.catchTag("NotFound", (error) => Console.error(error.message, error.status)))
`
    )
    expect(errors).toEqual([])
    // with each error class declared as a `Schema.TaggedErrorClass`: 16,560 (now 5,361)
    expect(instantiations).toBeLessThan(8000)
  })

  it("cost a program that yields operations whose answers tsc compares little to check", () => {
    // an Effect.gen's yields are reduced pairwise: alike successes (two lists, two void answers) make
    // tsc compare their error unions, and so the error classes and the models themselves
    const { errors, instantiations } = check(
      "compare",
      `import { Effect } from "effect"
import { BrowserPools, Browsers, Computer, Filesystem, Proxies } from "effect-kernel"

export const program = Effect.gen(function*() {
  const pools = yield* BrowserPools.list()
  const proxies = yield* Proxies.list()
  yield* Filesystem.writeFile({ id: "id", path: "/a", contents: new Uint8Array(1) })
  yield* Browsers.delete({ id: "id" })
  const position = yield* Computer.getMousePosition({ id: "id" })
  const ok = yield* Computer.setCursorVisibility({ id: "id", hidden: true })
  const browser = yield* BrowserPools.acquireScoped({ idOrName: "pool" })
  return [pools.length, proxies.length, position.x, ok.ok, browser.session_id] as const
}).pipe(Effect.scoped)
`
    )
    expect(errors).toEqual([])
    // with the pool models, MousePosition / Ok, NoBrowserAvailable and the error classes' constructor
    // argument derived from their schemas: 12,558 (now 3,180)
    expect(instantiations).toBeLessThan(6000)
  })

  it("cost a program that provides Kernel's layer to an operation little to check", () => {
    const { errors, instantiations } = check(
      "provide",
      `import { Effect, Layer } from "effect"
import { Browsers, Kernel, KernelTransport } from "effect-kernel"

declare const program: Effect.Effect<void, never, Browsers.GetBrowser>
export const provided: Effect.Effect<void, unknown> = program.pipe(
  Effect.provide(Kernel.layerConfig().pipe(Layer.provide(KernelTransport.layerUndici)))
)
`
    )
    expect(errors).toEqual([])
    // with each Tag class read as its base type, compared with every Tag of `Kernel.Services`:
    // 8,095 (now 834)
    expect(instantiations).toBeLessThan(2000)
  })

  it("can be written out in a user's own declarations (a library that exports what encodes an error)", () => {
    const { errors } = check(
      "library",
      `import { Schema } from "effect"
import { KernelError } from "effect-kernel"

export const encodeNotFound = Schema.encode(KernelError.NotFound)
export const described = KernelError.NotFound.annotations({ description: "404" })
export const encodeTimeout = Schema.encodeSync(KernelError.Timeout)
export const encodeTransport = Schema.encodeSync(KernelError.TransportError)
export const encodeAny = Schema.encode(Schema.Union(KernelError.UnexpectedStatus, KernelError.ReplayNotReady))
export class MoreNotFound extends KernelError.NotFound.extend<MoreNotFound>("MoreNotFound")({ hint: Schema.String }) {}
`,
      true
    )
    expect(errors).toEqual([])
  })

  it("name the schemas of a oneOf (exactly one of id or name) in a user's own declarations", () => {
    const { errors } = check(
      "library-one-of",
      `import { Schema } from "effect"
import { AuthConnections, Browsers } from "effect-kernel"

export const Extensions = Schema.Array(Browsers.BrowserExtension)
export const Session = Schema.Struct({ profile: Browsers.BrowserProfile })
export const Proxy = Schema.NullOr(AuthConnections.ProxyRef)
`,
      true
    )
    expect(errors).toEqual([])
  })

  it("name what a user's library returns from operations, a caught error's rest included", () => {
    const { errors } = check(
      "library-effects",
      `import { Effect, Schema, Stream } from "effect"
import { BrowserPools, Replays } from "effect-kernel"

export const video = (id: string) =>
  Replays.download({ id, replayId: "r" }).pipe(Stream.catchTag("ReplayNotReady", () => Stream.empty))
export const saved = Replays.downloadToFile({ id: "b", replayId: "r" }, "x.mp4").pipe(
  Effect.catchTag("ReplayNotReady", () => Effect.succeed(null))
)
export const pool = (name: string) => BrowserPools.retrieve({ idOrName: name })
export const created = BrowserPools.create({ name: "p", size: 1 })
export const updated = BrowserPools.update({ idOrName: "p", size: 2 })
export const listed = BrowserPools.list()
export const Snapshot = Schema.Struct({ pool: BrowserPools.BrowserPoolResource, at: Schema.String })
export type Pool = BrowserPools.BrowserPoolResource
`,
      true
    )
    expect(errors).toEqual([])
  })

  it("name the schemas with a file field (an upload) in a user's own declarations", () => {
    const { errors } = check(
      "library-upload",
      `import { Schema } from "effect"
import { Browsers, Deployments, Extensions, Filesystem, KernelFiles } from "effect-kernel"

export const Release = Schema.Struct({ request: Deployments.DeploymentRequest, note: Schema.String })
export const Load = Schema.Array(Browsers.LoadBrowserExtensionsBody)
export const Upload = Schema.NullOr(Extensions.UploadExtensionBody)
export const Files = Schema.Struct({ upload: Filesystem.UploadFilesBody })
export const report = KernelFiles.file("/tmp/report.pdf")
export const source = (path: string): KernelFiles.Upload => KernelFiles.file(path)
`,
      true
    )
    expect(errors).toEqual([])
  })
})
