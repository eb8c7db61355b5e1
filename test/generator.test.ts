/**
 * scripts/generate: the document's defects patched, the IR (118 operations, names, deprecated
 * ones left out), the emitted schemas decoding the document's own examples, and `--check`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Config from "../scripts/generate/config.js"
import * as Ir from "../scripts/generate/ir.js"
import { check, generate, generatedDir, load, write } from "../scripts/generate/main.js"
import * as OpenApi from "../scripts/generate/openapi.js"
import { applyPatches } from "../scripts/generate/patches.js"
import { ident } from "../scripts/generate/schemas.js"
import { closedSchemaNames, secretFieldNames } from "../scripts/generate/secrets.js"
import type { Operation } from "../src/internal/definition.js"
import * as HandWritten from "../src/internal/operations.js"

const { applied, api, document, source } = load()

// every generated schema and operation module
const modulesOf = (folder: string): Promise<Array<Record<string, unknown>>> =>
  Promise.all(
    fs.readdirSync(new URL(`../${generatedDir}/${folder}/`, import.meta.url)).sort().map((file) =>
      import(new URL(`../${generatedDir}/${folder}/${file}`, import.meta.url).href) as Promise<Record<string, unknown>>
    )
  )
const schemaModules = await modulesOf("schemas")
const operationModules = (await modulesOf("operations")) as unknown as Array<
  { readonly operations: ReadonlyArray<Operation> }
>
const { operations: table } = await import("../src/internal/generated/table.js")
const emittedSchemas = new Map<string, Schema.Schema.AnyNoContext>()
for (const module of schemaModules) {
  for (const [name, value] of Object.entries(module)) {
    if (Schema.isSchema(value)) emittedSchemas.set(name, value as Schema.Schema.AnyNoContext)
  }
}
const emittedOperations: ReadonlyArray<Operation> = operationModules.flatMap((module) => module.operations)

const schemaOf = (name: string): Schema.Schema.AnyNoContext => {
  const schema = emittedSchemas.get(ident(name))
  if (schema === undefined) throw new Error(`no emitted schema ${name}`)
  return schema
}

const mapping = (doc: OpenApi.Document, value: string) =>
  doc.components.schemas["DeploymentEvent"]?.discriminator?.mapping?.[value]

describe("the patch list", () => {
  it.each([
    ["deployment-event-error", 1],
    ["deployment-event-app-version-summary", 1],
    ["auth-connections-tag", 1],
    // what the browser's server sends beyond the document: 2 stack traces, 22 events' data, the target type opened
    ["telemetry-stack-trace-null", 2],
    ["telemetry-truncated-data-null", 22],
    ["browser-target-type-open", 1],
    // the document's 65, and the 24 the patches above mark
    ["nullable", 89]
  ])("%s changes %i place(s)", (id, count) => {
    expect(applied[id]).toBe(count)
  })

  it.each([
    ["error", "#/components/schemas/InternalError", "#/components/schemas/ErrorEvent"],
    ["app_version_summary", "#/components/schemas/AppVersionSummary", "#/components/schemas/AppVersionSummaryEvent"]
  ])("DeploymentEvent's discriminator maps %s to an event", (value, before, after) => {
    expect(mapping(source, value)).toBe(before)
    expect(mapping(document, value)).toBe(after)
  })

  it("declares the tag Auth Connections, and every tag an operation uses", () => {
    const declared = new Set((document.tags ?? []).map((tag) => tag.name))
    for (const item of Object.values(document.paths)) {
      for (const method of OpenApi.methods) {
        for (const tag of item[method]?.tags ?? []) expect(declared).toContain(tag)
      }
    }
    expect((source.tags ?? []).map((tag) => tag.name)).not.toContain("Auth Connections")
  })

  it("leaves no `nullable` (3.0) in the document, and the copy of the source as it was", () => {
    expect(JSON.stringify(document.paths)).not.toContain("\"nullable\"")
    expect(JSON.stringify(document.components)).not.toContain("\"nullable\"")
    expect(JSON.stringify(source).match(/"nullable":true/g)).toHaveLength(65)
  })

  it("without it, the IR refuses the document (a discriminator mapped to a missing schema)", () => {
    const { document: nullableOnly } = applyPatches(source)
    const broken = structuredClone(nullableOnly) as unknown as {
      components: { schemas: Record<string, { discriminator: { mapping: Record<string, string> } }> }
    }
    broken.components.schemas["DeploymentEvent"]!.discriminator.mapping["error"] = "#/components/schemas/InternalError"
    expect(() => Ir.build(broken as unknown as OpenApi.Document)).toThrow(/missing InternalError/)
  })

  it("fails when a patch no longer applies (the defect is gone)", () => {
    expect(() => applyPatches(document)).toThrow(/no longer applies/)
  })
})

describe("nullable", () => {
  const property = (schema: string, name: string) => {
    const named = api.schemas.get(schema)?.schema
    if (named?.kind !== "object") throw new Error(`${schema} is not an object`)
    return named.properties.find((p) => p.name === name)?.schema
  }

  it.each([
    ["Browser", "telemetry"],
    ["DiscoveredField", "linked_mfa_type"],
    ["BrowserUpdateRequest", "telemetry"]
  ])("%s.%s is nullable in the IR and decodes null", (schema, name) => {
    expect(property(schema, name)?.kind).toBe("nullable")
    const struct = schemaOf(schema) as unknown as { readonly fields: Record<string, Schema.Schema.AnyNoContext> }
    const field = struct.fields[name]!
    expect(Either.isRight(Schema.decodeUnknownEither(Schema.Struct({ [name]: field }))({ [name]: null }))).toBe(true)
  })
})

describe("the operations", () => {
  const deprecated = Object.values(source.paths).flatMap((item) =>
    OpenApi.methods.flatMap((method) => item[method]?.deprecated === true ? [item[method]!.operationId] : [])
  )

  it("118 operations, each mapped, the 15 deprecated ones left out", () => {
    expect(api.operations).toHaveLength(118)
    expect(emittedOperations).toHaveLength(118)
    expect(table).toHaveLength(118)
    expect(deprecated).toHaveLength(15)
    expect([...api.deprecated].sort()).toEqual([...deprecated].sort())
    const emittedIds = new Set(emittedOperations.map((operation) => operation.operationId))
    for (const id of deprecated) expect(emittedIds).not.toContain(id)
    expect([...emittedIds].sort()).toEqual(Object.keys(Config.operationNames).sort())
  })

  // the official client's file of each module (`@onkernel/sdk/resources/...`)
  const officialFiles: Record<string, string> = {
    Browsers: "browsers/browsers",
    Computer: "browsers/computer",
    Replays: "browsers/replays",
    Filesystem: "browsers/fs/fs",
    FilesystemWatch: "browsers/fs/watch",
    Processes: "browsers/process",
    Playwright: "browsers/playwright",
    Logs: "browsers/logs",
    Telemetry: "browsers/telemetry",
    BrowserPools: "browser-pools",
    Profiles: "profiles",
    Extensions: "extensions",
    Proxies: "proxies",
    Deployments: "deployments",
    Apps: "apps",
    Invocations: "invocations",
    AuthConnections: "auth/connections",
    Credentials: "credentials",
    CredentialProviders: "credential-providers",
    Projects: "projects/projects",
    ProjectLimits: "projects/limits",
    ApiKeys: "api-keys"
  }
  // ours and not the official client's (0.84): the hand-written names, `delete` (the client's is
  // `deleteByID`) and `exchange` (the client has no method for POST /auth/connections/{id}/exchange)
  const extraAccessors = new Set([
    "Computer.getMousePosition",
    "Computer.setCursorVisibility",
    "Browsers.delete",
    "AuthConnections.exchange"
  ])

  it.each(
    Object.values(Config.operationNames).map((naming) => [`${naming.module}.${naming.accessor}`, naming] as const)
  )(
    "%s is the official client's method",
    (label, naming) => {
      if (extraAccessors.has(label)) return
      const file = new URL(
        `../node_modules/@onkernel/sdk/resources/${officialFiles[naming.module]}.d.ts`,
        import.meta.url
      )
      expect(fs.readFileSync(file, "utf8")).toMatch(new RegExp(`^\\s+${naming.accessor}\\(`, "m"))
    }
  )

  it("names are camelCase, a verb and a noun", () => {
    for (const operation of emittedOperations) expect(operation.name).toMatch(/^[a-z]+(?:[A-Z][a-z0-9]*)+$/)
  })

  it("names and accessors are unique", () => {
    const names = emittedOperations.map((operation) => operation.name)
    expect(new Set(names).size).toBe(names.length)
    const accessors = emittedOperations.map((operation) => `${operation.module}.${operation.accessor}`)
    expect(new Set(accessors).size).toBe(accessors.length)
  })

  it.each([
    ["downloadReplay", "Replays", "download", "GET", "/browsers/{id}/replays/{replayId}"],
    ["setCursorVisibility", "Computer", "setCursorVisibility", "POST", "/browsers/{id}/computer/cursor"],
    ["getMousePosition", "Computer", "getMousePosition", "POST", "/browsers/{id}/computer/get_mouse_position"],
    ["listBrowserPools", "BrowserPools", "list", "GET", "/browser_pools"],
    ["deleteDeployment", "Deployments", "delete", "DELETE", "/deployments/{id}"]
  ])("keeps the hand-written name %s", (name, module, accessor, method, template) => {
    const operation = emittedOperations.find((candidate) => candidate.name === name)
    expect(operation).toMatchObject({ module, accessor, method, path: template, idempotent: true })
  })

  it.each(HandWritten.table.map((definition) => [definition.name, definition] as const))(
    "the generated definition of %s agrees with the hand-written one",
    (name, handWritten) => {
      const generated = emittedOperations.find((operation) => operation.name === name)!
      expect({
        module: generated.module,
        accessor: generated.accessor,
        method: generated.method,
        path: generated.path,
        parameters: generated.parameters.filter((p) => p.in === "path").map((p) => p.field),
        errors: generated.errors,
        idempotent: generated.idempotent
      }).toEqual({
        module: handWritten.module,
        accessor: handWritten.accessor,
        method: handWritten.method,
        path: handWritten.path,
        parameters: handWritten.parameters.map((p) => p.field),
        errors: handWritten.errors,
        idempotent: handWritten.idempotent
      })
    }
  )

  it.each([
    ["listBrowsers", 200, "page"],
    ["downloadReplay", 200, "bytes"],
    ["downloadReplay", 202, "none"],
    ["captureScreenshot", 200, "bytes"],
    ["streamLogs", 200, "sse"],
    ["deleteBrowser", 204, "none"],
    ["clickMouse", 200, "none"],
    ["getBrowser", 200, "json"],
    ["acquireBrowser", 204, "none"]
  ])("%s answers %i as %s", (name, status, kind) => {
    expect(emittedOperations.find((operation) => operation.name === name)?.answers[status]?.kind).toBe(kind)
  })

  it("path parameters are camelCase fields, query parameters keep their wire names", () => {
    const status = emittedOperations.find((operation) => operation.name === "getProcessStatus")!
    expect(status.path).toBe("/browsers/{id}/process/{processId}/status")
    expect(status.parameters.map((p) => [p.field, p.name, p.in])).toEqual([
      ["id", "id", "path"],
      ["processId", "process_id", "path"]
    ])
    const list = emittedOperations.find((operation) => operation.name === "listBrowsers")!
    expect(list.parameters.map((p) => p.field)).toContain("include_deleted")
    const write = emittedOperations.find((operation) => operation.name === "writeFile")!
    expect(write.body).toEqual({ kind: "bytes", field: "contents", contentType: "application/octet-stream" })
  })

  it("a requirement the document states in prose only is in the table (logs: path when source is path)", () => {
    const logs = emittedOperations.find((operation) => operation.name === "streamLogs")!
    expect(logs.parameters.flatMap((p) => p.requiredWhen === undefined ? [] : [[p.name, p.requiredWhen]])).toEqual([
      ["path", { field: "source", value: "path" }],
      ["supervisor_process", { field: "source", value: "supervisor" }]
    ])
    // only there: every other parameter has none
    expect(emittedOperations.flatMap((o) => o.parameters).filter((p) => p.requiredWhen !== undefined)).toHaveLength(2)
    // a prose condition on a value the parameter cannot have stops the generator
    const copy = structuredClone(document) as unknown as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string; description?: string }> }>>
    }
    const parameter = copy.paths["/browsers/{id}/logs/stream"]!["get"]!.parameters.find((p) => p.name === "path")!
    parameter.description = "only required if source is file"
    expect(() => Ir.build(copy as unknown as OpenApi.Document)).toThrow(/path is required if source is file/)
  })

  it("idempotent: GET, PUT (but a move and a file's delete) and DELETE, and the listed POSTs only", () => {
    for (const name of ["movePath", "deleteFile"]) {
      expect([name, emittedOperations.find((operation) => operation.name === name)?.idempotent]).toEqual([name, false])
    }
    // the browser's server deletes a directory with os.RemoveAll: 200 where nothing is, so a second attempt is harmless
    expect(emittedOperations.find((operation) => operation.name === "deleteDirectory")?.idempotent).toBe(true)
    for (const operation of emittedOperations) {
      const expected = operation.method === "GET" ||
        (operation.method === "PUT" && !Config.nonIdempotentPuts.has(operation.name)) ||
        operation.method === "DELETE" ||
        (operation.method === "POST" && Config.idempotentPosts.has(operation.name))
      expect([operation.name, operation.idempotent]).toEqual([operation.name, expected])
    }
  })

  it("errors: the documented statuses beyond the common ones, as KernelError classes", () => {
    const proxyCheck = emittedOperations.find((operation) => operation.name === "checkProxy")!
    expect(proxyCheck.errors.map((error) => error.status)).toEqual(
      [400, 403, 404, 422]
    )
  })
})

describe("the emitted schemas", () => {
  // every example the document gives: components' own and the answers' and bodies'
  const examples = [...api.schemas.values()].flatMap((named) =>
    named.examples.map((example, i) => [`${named.name} #${i + 1}`, named.name, example] as const)
  )

  // and every property's example, decoded by the emitted field
  const propertyExamples = [...api.schemas.keys()].flatMap((name) =>
    Object.entries(document.components.schemas[name]?.properties ?? {}).flatMap(([property, schema]) =>
      schema.example === undefined ? [] : [[`${name}.${property}`, name, property, schema.example] as const]
    )
  )

  it("the document has examples to decode", () => {
    expect(examples.length + propertyExamples.length).toBeGreaterThan(200)
  })

  it.each(examples)("%s decodes its example", (_, name, example) => {
    const result = Schema.decodeUnknownEither(schemaOf(name))(example)
    if (Either.isLeft(result)) throw new Error(String(result.left))
  })

  // the document's invalid examples: a Go time layout's remnant (`Z07:00`) after the zone
  const invalidExamples = new Set(["Invocation.started_at", "Invocation.finished_at"])

  it.each(propertyExamples)("%s decodes its example", (label, name, property, example) => {
    const struct = schemaOf(name) as unknown as { readonly fields?: Record<string, Schema.Schema.AnyNoContext> }
    // a schema emitted as a union of objects (a oneOf of required fields) has its fields in each member
    const field = struct.fields?.[property]
    if (field === undefined) return
    const result = Schema.decodeUnknownEither(Schema.Struct({ [property]: field }))({ [property]: example })
    if (invalidExamples.has(label)) expect(Either.isLeft(result)).toBe(true)
    else if (Either.isLeft(result)) throw new Error(String(result.left))
  })

  it.each([...Config.redactedFields])("%s decodes as Redacted", (field) => {
    const [schema, name] = field.split(".") as [string, string]
    const struct = schemaOf(schema) as unknown as { readonly fields: Record<string, Schema.Schema.AnyNoContext> }
    const value = /^(values|fields)$/.test(name) ? { password: "hunter2" } : "secret"
    const decoded = Schema.decodeUnknownSync(Schema.Struct({ [name]: struct.fields[name]! }))({ [name]: value })
    const got = decoded[name] as unknown
    expect(Redacted.isRedacted(got) || Redacted.isRedacted((got as Record<string, unknown>)["password"])).toBe(true)
  })

  it("decodes a circular schema (BrowserCallStack.parent) through Schema.suspend", () => {
    const frame = { functionName: "f", scriptId: "1", url: "u", lineNumber: 1, columnNumber: 2 }
    const stack = { callFrames: [frame], parent: { callFrames: [], parent: { callFrames: [frame] } } }
    expect(Schema.decodeUnknownSync(schemaOf("BrowserCallStack"))(stack)).toEqual(stack)
  })

  it("decodes forward-compatibly (unknown keys ignored) and redacts the access fields", () => {
    const browser = Schema.decodeUnknownSync(schemaOf("Browser"))({
      session_id: "s",
      cdp_ws_url: "wss://cdp",
      webdriver_ws_url: "wss://webdriver",
      created_at: "2025-01-02T03:04:05Z",
      headless: true,
      stealth: false,
      timeout_seconds: 60,
      a_field_of_tomorrow: 1
    }) as { readonly cdp_ws_url: unknown }
    expect(Redacted.isRedacted(browser.cdp_ws_url)).toBe(true)
    expect(browser).not.toHaveProperty("a_field_of_tomorrow")
  })

  it("names every secret field for the error bodies to take out: the listed ones and format password", () => {
    const names = secretFieldNames(api)
    for (const field of Config.redactedFields) expect(names).toContain(field.slice(field.lastIndexOf(".") + 1))
    // `DeploymentSource.auth.token` is a `format: password` string of an inline object
    expect(names).toContain("token")
    expect(names).not.toContain("session_id")
  })

  it("names the schemas the document closes (additionalProperties: false), and only those", () => {
    const closed = closedSchemaNames(api)
    // and an allOf one of whose members is closed (`ProcessSpawnRequest`: `ProcessExecRequest`'s fields and its own)
    expect(closed).toEqual(
      expect.arrayContaining([
        "ClickMouseRequest",
        "ProcessResizeRequest",
        "CredentialReference",
        "ProcessSpawnRequest"
      ])
    )
    // open objects (no additionalProperties), and records
    for (const open of ["BrowserRequest", "ProxyRef", "BrowserPoolRequest"]) {
      expect(closed).not.toContain(open)
    }
    expect(closed).toEqual([...closed].sort())
  })
})

describe("the document's limits", () => {
  const fieldOf = (schema: string, name: string): Ir.Schema | undefined => {
    const named = api.schemas.get(schema)?.schema
    if (named?.kind !== "object") throw new Error(`${schema} is not an object`)
    return Ir.propertiesOf((n) => api.schemas.get(n)?.schema, named).find((p) => p.name === name)?.schema
  }
  const limitsOf = (schema: Ir.Schema | undefined): Ir.Limits | undefined => {
    const inner = schema?.kind === "nullable" ? schema.schema : schema
    return inner !== undefined && "limits" in inner ? inner.limits : undefined
  }

  it.each([
    ["BrowserViewport", "width", { minimum: 320, maximum: 7680 }],
    ["CreateApiKeyRequest", "name", { minLength: 1, maxLength: 255 }],
    ["CreateDirectoryRequest", "mode", { pattern: "^[0-7]{3,4}$" }],
    ["DragMouseRequest", "path", { minItems: 2 }],
    ["BatchComputerActionRequest", "actions", { minItems: 1, maxItems: 100 }],
    ["CreateApiKeyRequest", "days_to_expire", { minimum: 1, maximum: 3650 }]
  ])("%s.%s has the document's limits in the IR", (schema, name, limits) => {
    expect(limitsOf(fieldOf(schema, name))).toEqual(limits)
  })

  it("a drag path's points are arrays of exactly two items", () => {
    const path = fieldOf("DragMouseRequest", "path")
    expect(path?.kind === "array" ? limitsOf(path.items) : undefined).toEqual({ minItems: 2, maxItems: 2 })
  })

  it("a query parameter's limits are in the IR (listBrowsers limit 1..100, offset >= 0)", () => {
    const list = api.operations.find((operation) => operation.name === "listBrowsers")!
    const parameter = (name: string) => list.parameters.find((p) => p.name === name)?.schema
    expect(limitsOf(parameter("limit"))).toEqual({ minimum: 1, maximum: 100 })
    expect(limitsOf(parameter("offset"))).toEqual({ minimum: 0 })
  })

  it("a limit of the wrong type stops the generator", () => {
    expect(() => Ir.limitsOf({ type: "string", maxLength: "9" as never }, "string", "X.y")).toThrow(/X.y: maxLength/)
  })

  it("every limit of the IR is emitted with limited", () => {
    const all: Array<Ir.Limits> = []
    const collect = (schema: Ir.Schema, seen: Set<string>): void => {
      if ("limits" in schema && schema.limits !== undefined) all.push(schema.limits)
      switch (schema.kind) {
        case "ref":
          if (!seen.has(schema.name)) {
            seen.add(schema.name)
            collect(api.schemas.get(schema.name)!.schema, seen)
          }
          return
        case "nullable":
          return collect(schema.schema, seen)
        case "union":
          return schema.members.forEach((member) => collect(member, seen))
        case "array":
          return collect(schema.items, seen)
        case "object":
          return schema.properties.forEach((p) => collect(p.schema, seen))
      }
    }
    const seen = new Set<string>()
    for (const name of api.schemas.keys()) collect({ kind: "ref", name }, seen)
    for (const operation of api.operations) operation.parameters.forEach((p) => collect(p.schema, seen))
    const emitted = [...generate()].filter(([file]) => file.startsWith(`${generatedDir}/`)).map(([, text]) => text)
      .join("\n")
    const written = (limits: Ir.Limits) =>
      `{ ${Object.entries(limits).map(([keyword, value]) => `${keyword}: ${JSON.stringify(value)}`).join(", ")} }`
    expect(all.length).toBeGreaterThan(60)
    for (const limits of all) expect(emitted).toContain(written(limits))
  })
})

describe("the emitted schema files write nothing twice", () => {
  const schemaFiles = [...generate()].filter(([file]) => file.startsWith(`${generatedDir}/schemas/`))

  it.each(schemaFiles.map(([file, text]) => [file, text]))("%s: no field value written twice", (_, text) => {
    // a field's value with a call in it (`Schema.optional(Schema.String)`) is a file constant when several fields have it
    const values = [...text.matchAll(/^\s+[\w"-]+: (\/\*#__PURE__\*\/ .+?),?$/gm)].map((match) => match[1]!)
      .filter((value) => !value.endsWith("{") && !value.endsWith("("))
    const twice = values.filter((value, i) => values.indexOf(value) !== i)
    expect(twice).toEqual([])
  })

  it("a struct is written with struct(identifier, () => fields), its type beside it, fields written out", () => {
    const [, common] = schemaFiles.find(([file]) => file.endsWith("/Common.ts"))!
    expect(common).toContain(`export const BrowserViewport = /*#__PURE__*/ struct("BrowserViewport", () => ({`)
    expect(common).toMatch(/export interface BrowserViewport \{\n[\s\S]*?readonly width: number\n/)
    expect(common).not.toContain("Schema.Schema.Type<typeof")
  })

  it("a struct that uses other named schemas is declared with a type that names them", () => {
    const [, common] = schemaFiles.find(([file]) => file.endsWith("/Common.ts"))!
    expect(common).toMatch(
      /export const Browser: Schema\.Struct<\{\n[\s\S]*?viewport: Schema\.optional<typeof BrowserViewport>\n[\s\S]*?\n\}> = \/\*#__PURE__\*\/ struct\("Browser", \(\) => \(\{/
    )
  })

  it("a struct's declared type and interface name what its runtime shares, not write it again", () => {
    const text = (name: string) => schemaFiles.find(([file]) => file.endsWith(`/${name}.ts`))![1]
    // a base (allOf) of the same file: its fields type, named by the struct that spreads it; its
    // interface extended, not written again
    const pools = text("BrowserPools")
    expect(pools).toContain("export const BrowserPoolRequest: Schema.Struct<BrowserPoolRequestFields> = ")
    expect(pools).toMatch(
      /export const BrowserPoolUpdateRequest: Schema\.Struct<\n  BrowserPoolRequestFields & \{\n[\s\S]*?\n> = \/\*#__PURE__\*\/ struct\("BrowserPoolUpdateRequest", \(\) => \(\{\n  \.\.\.BrowserPoolRequest\.fields,/
    )
    const update = /export interface BrowserPoolUpdateRequest extends BrowserPoolRequest \{\n([\s\S]*?)\n\}\n/.exec(
      pools
    )
    expect(update?.[1]).toContain("readonly discard_all_idle?: boolean | undefined")
    expect(update?.[1]).not.toContain("readonly size")
    // a base of another file (Common): `typeof Base.fields`
    expect(text("Browsers")).toMatch(
      /export const BrowserViewportUpdate: Schema\.Struct<\n  typeof BrowserViewport\.fields & \{/
    )
    // a shared field group: one declared type (the constant's too) and one decoded interface
    const telemetry = text("Telemetry")
    expect(telemetry).toContain("const browserConsoleLogEventFields: () => BrowserConsoleLogEventFields = ")
    expect(telemetry).toMatch(
      /export const BrowserConsoleLogEvent: Schema\.Struct<\n  BrowserConsoleLogEventFields & \{/
    )
    expect(telemetry).toContain("export interface BrowserConsoleLogEvent extends BrowserConsoleLogEventShared {")
    // an inline object with a base: an interface of its own that extends the base's
    expect(telemetry).toContain("interface BrowserConsoleLogEventData extends BrowserEventContext {")
    expect(telemetry).toContain("readonly data?: BrowserConsoleLogEventData | null | undefined")
    expect(telemetry.match(/readonly ts: number/g)).toHaveLength(1)
  })

  it.each(schemaFiles.map(([file, text]) => [file, text]))("%s: importing it builds no schema", (_, text) => {
    // each top-level statement: an import, a named struct / union / array built on first use
    // (src/internal/struct.ts), a file constant built on first use (`once`), a type, or a schema
    // without references (a literal, a record of strings): nothing that reads another schema's AST
    // (a declared type's closing line, `}> = ...`, `]> = ...` or `> = ...`, stays with its statement)
    const statements = text.split(/\n(?=[^\s}\]>])/).filter((statement) =>
      !/^(\/\/|\/\*\*| \*|\)|}|{}|import )/.test(statement)
    )
    const eager = statements.filter((statement) =>
      !/^(export )?(interface|type) /.test(statement) &&
      !/^(export )?const \w+(: [\s\S]+?)? =\s+\/\*#__PURE__\*\/ (struct\(\s*"\w+",\s*\(\) => \(|union\(\(\) =>|exactlyOne\(\s*\[[\w",[\] ]*\],\s*\(\) =>|array\(\(\) =>|once\(\(\) =>)/
        .test(
          statement
        ) &&
      !/^export const \w+ = \/\*#__PURE__\*\/ Schema\.annotations\(\s*\/\*#__PURE__\*\/ Schema\.(Literal\(\s*"[^)]*\)|Record\(\{ key: Schema\.String, value: Schema\.\w+ \}\)),\s*\{ identifier: "\w+" \}(\s*\))?$/
        .test(statement) &&
      // a named string (`BrowserTargetType`, opened by a patch)
      !/^export const \w+ = \/\*#__PURE__\*\/ Schema\.annotations\(Schema\.String, \{ identifier: "\w+" \}\)\s*$/
        .test(statement)
    )
    expect(eager).toEqual([])
  })

  it("the identifier is the struct's (parse errors name it)", () => {
    const result = Schema.decodeUnknownEither(schemaOf("BrowserViewport"))({ width: "wide", height: 1 })
    expect(Either.isLeft(result) && String(result.left)).toContain("BrowserViewport")
  })
})

describe("the accessors' examples", () => {
  const modules = [...generate()].filter(([file]) => /^src\/[A-Z]\w*\.ts$/.test(file))

  it("an operation with no content is called, not logged (its answer is void)", () => {
    const source = modules.map(([, text]) => text).join("\n")
    expect(source).toContain("yield* Browsers.delete({ id: \"id\" })")
    expect(source).not.toMatch(/const result = yield\* Browsers\.delete\(/)
    // an answer with content is still shown
    expect(source).toMatch(/const result = yield\* Browsers\.retrieve\([^)]*\)\n\s+\*\s+yield\* Effect\.log\(result\)/)
  })

  it.each(["src/Computer.ts", "src/BrowserPools.ts", "src/Replays.ts", "src/Deployments.ts"])(
    "%s: the operations of 0.1, documented by hand, say they are retried",
    (file) => {
      const text = fs.readFileSync(path.join(import.meta.dirname, "..", file), "utf8")
      const count = file === "src/Computer.ts" ? 2 : 1
      expect(text.match(/Retried on a transient failure/g)?.length ?? 0).toBeGreaterThanOrEqual(count)
    }
  )

  // the five of 0.1 are documented by hand (all five idempotent: docs/retries.md)
  const documented = [...generate()].filter(([file]) => file.includes("/modules/") || /^src\/[A-Z]\w*\.ts$/.test(file))
    .map(([, text]) => text).join("\n")
  it.each(
    api.operations.filter((operation) => !Config.handWrittenOperations.has(operation.name)).map((operation) =>
      [operation.name, operation] as const
    )
  )(
    "%s: its documentation says whether it is retried",
    (_, operation) => {
      const text = documented
      const at = text.indexOf(`\`${operation.method} ${operation.path}\``)
      expect(at).toBeGreaterThan(0)
      const after = text.slice(at, text.indexOf("@since", at))
      expect(after).toContain(operation.idempotent ? "Retried on a transient failure" : "Not retried once sent")
      // a PATCH is never taken as harmless to repeat (an update that loads a profile fails the second time)
      if (operation.method === "PATCH") expect(operation.idempotent).toBe(false)
    }
  )
})

describe("--check", () => {
  const files = generate()

  it("the committed output is what the generator writes", () => {
    expect(check(files)).toEqual([])
  })

  it("is deterministic", () => {
    expect([...generate()]).toEqual([...files])
  })

  it("every file starts with the generated header", () => {
    for (const content of files.values()) {
      expect(content.split("\n")[0]).toBe("// Generated by scripts/generate from spec/kernel-openapi.yml. Do not edit.")
    }
  })

  it("names the stale, the missing and the extra files", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "generate-"))
    try {
      write(files, dir)
      expect(check(files, dir)).toEqual([])
      const [first, second] = [...files.keys()].sort()
      fs.appendFileSync(path.join(dir, first!), "// edited\n")
      fs.rmSync(path.join(dir, second!))
      fs.writeFileSync(path.join(dir, generatedDir, "Extra.ts"), "")
      expect(check(files, dir)).toEqual([first, second, `${generatedDir}/Extra.ts`].sort())
      write(files, dir)
      expect(check(files, dir)).toEqual([])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the mapping table", () => {
  const withOperation = (operationId: string) => {
    const copy = structuredClone(document) as unknown as {
      paths: Record<string, Record<string, unknown>>
    }
    copy.paths["/extra"] = { get: { ...copy.paths["/browsers"]!["get"] as object, operationId } }
    return copy as unknown as OpenApi.Document
  }

  it("fails on an unmapped operation", () => {
    expect(() => Ir.build(withOperation("getSomethingNew"))).toThrow(/getSomethingNew has no entry/)
  })

  it("fails on a name used twice", () => {
    expect(() => Ir.build(withOperation("getBrowsers"))).toThrow(/listBrowsers is used twice/)
  })
})
