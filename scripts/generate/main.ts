/**
 * `npm run generate`: writes the generated sources from spec/kernel-openapi.yml (patched by
 * patches.ts). `npm run generate -- --check` writes nothing and fails, naming the files, when the
 * committed output differs from what it would write. No network; deterministic.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Config from "./config.js"
import { format } from "./format.js"
import * as Ir from "./ir.js"
import { examplesFile, moduleFile } from "./modules.js"
import * as OpenApi from "./openapi.js"
import { operationsFile } from "./operations.js"
import { applyPatches } from "./patches.js"
import { closure, commonArea, header, placeSchemas, schemaFile, typesFile } from "./schemas.js"
import { closedSchemasFile, secretFieldsFile } from "./secrets.js"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
export const specFile = "spec/kernel-openapi.yml"
/** The folder the generator owns entirely (a file there it does not write is stale). */
export const generatedDir = "src/internal/generated"
/** The contract test's params per operation (`test/contract-prism.test.ts`). */
export const examplesFile_ = "test/generated/examples.ts"
/** Every generated schema's type checked against the schema (type-checked, not run). */
export const typesFile_ = "test/generated/types.ts"

/** The patched document and its IR. */
export const load = (specPath: string = path.join(root, specFile)) => {
  const source = OpenApi.load(specPath)
  const { applied, document } = applyPatches(source)
  return { source, document, applied, api: Ir.build(document) }
}

/** Every generated file: repository-relative path → formatted content. */
export const generate = (specPath?: string): Map<string, string> => {
  const { api, document } = load(specPath)
  const files = new Map<string, string>()
  const add = (file: string, text: string) => files.set(file, format(file, text))
  const placement = placeSchemas(api, Ir.operationReferences)
  // the schema files, each in the document's order of its schemas
  const names = [...closure(api, api.operations.flatMap((operation) => [...Ir.operationReferences(operation)]))]
  for (const area of [commonArea, ...Config.modules]) {
    const own = names.filter((name) => placement.get(name) === area)
    if (own.length > 0) add(`${generatedDir}/schemas/${area}.ts`, schemaFile(api, area, own, placement))
  }
  const tagDescriptions = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]))
  const tagOf = new Map<string, string | undefined>()
  for (const item of Object.values(document.paths)) {
    for (const method of OpenApi.methods) {
      const operation = item[method]
      if (operation !== undefined) tagOf.set(operation.operationId, operation.tags?.[0])
    }
  }
  for (const area of Config.modules) {
    const operations = api.operations.filter((operation) => operation.module === area)
    if (operations.length === 0) throw new Error(`module ${area} has no operation`)
    add(`${generatedDir}/operations/${area}.ts`, operationsFile(area, operations, placement))
    const tag = tagOf.get(operations[0]!.operationId)
    const description = (tag === undefined ? undefined : tagDescriptions.get(tag)) ?? `The ${area} operations.`
    const companion = Config.handWrittenModules.has(area)
    add(
      companion ? `${generatedDir}/modules/${area}.ts` : `src/${area}.ts`,
      moduleFile(api, area, description.trim(), operations, placement, companion)
    )
  }
  add(
    `${generatedDir}/table.ts`,
    `${header}
/**
 * Every operation of the API, area by area in the order of the docs (each area's definitions are
 * \`src/internal/generated/operations/<Area>.ts\`: import one area from there to keep the others out).
 *
 * @internal
 */
${Config.modules.map((area) => `import { operations as ${area} } from "./operations/${area}.js"`).join("\n")}

/** @internal */
export const operations = [${Config.modules.map((area) => `...${area}`).join(", ")}] as const
`
  )
  add(`${generatedDir}/secretFields.ts`, secretFieldsFile(api))
  add(`${generatedDir}/closedSchemas.ts`, closedSchemasFile(api))
  add(examplesFile_, examplesFile(api))
  add(typesFile_, typesFile(names, placement))
  for (const module of api.operations.map((operation) => operation.module)) {
    if (!Config.modules.includes(module)) throw new Error(`module ${module} is not in config.modules`)
  }
  return files
}

const listFiles = (dir: string): Array<string> =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name))
    : []

/** The files under `into` that differ from `files` (or are missing, or are stale in the generated folder). */
export const check = (files: ReadonlyMap<string, string>, into: string = root): Array<string> => {
  const stale: Array<string> = []
  for (const [file, content] of files) {
    const target = path.join(into, file)
    if (!fs.existsSync(target) || fs.readFileSync(target, "utf8") !== content) stale.push(file)
  }
  for (const file of listFiles(path.join(into, generatedDir))) {
    const relative = path.relative(into, file).split(path.sep).join("/")
    if (!files.has(relative)) stale.push(relative)
  }
  return stale.sort()
}

/** Writes the files under `into`, removing the generated folder's files it no longer writes. */
export const write = (files: ReadonlyMap<string, string>, into: string = root): void => {
  for (const file of listFiles(path.join(into, generatedDir))) {
    if (!files.has(path.relative(into, file).split(path.sep).join("/"))) fs.rmSync(file)
  }
  for (const [file, content] of files) {
    const target = path.join(into, file)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    if (!fs.existsSync(target) || fs.readFileSync(target, "utf8") !== content) fs.writeFileSync(target, content)
  }
}

const main = (args: ReadonlyArray<string>): number => {
  const files = generate()
  if (args.includes("--check")) {
    const stale = check(files)
    if (stale.length > 0) {
      console.error(`stale generated files (run npm run generate):\n${stale.map((file) => `  ${file}`).join("\n")}`)
      return 1
    }
    console.log(`${files.size} generated files are up to date`)
    return 0
  }
  write(files)
  console.log(`wrote ${files.size} files`)
  return 0
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2))
}
