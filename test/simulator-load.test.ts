/**
 * What the bin's load (test/load/mixed-driver.ts, `npm run load`) found in the simulator, each
 * fixed with its own check here.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, ParseResult, Schema, SchemaAST } from "effect"
import { Apps, Browsers, Deployments, Kernel } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { closedSchemaNames } from "../src/internal/generated/closedSchemas.js"
import { operations } from "../src/internal/generated/table.js"
import { limited } from "../src/internal/limits.js"
import * as engine from "../src/testing/internal/engine.js"
import {
  accepts,
  decodes,
  fill,
  fillForStore,
  fillStored,
  firstIssue,
  passesStrictGuard,
  png,
  sample
} from "../src/testing/internal/values.js"

/** The SDK against the in-memory simulator of the default seed. */
const simulated = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer(KernelSimulator.defaultSeed)))

describe("the simulator under load", () => {
  it("a screenshot of a size already served is not made again (bounded cache of PNGs)", () => {
    // deflating 1920 × 1080 pixels per screenshot was an eighth of the bin's CPU under the mixed load
    const first = png(1920, 1080)
    expect(png(1920, 1080)).toBe(first)
    expect(png(1920, 1080, [0, 0, 0])).not.toBe(first)
    // bounded: sixteen other sizes later, the first is made anew (same bytes, another array)
    for (let i = 1; i <= 16; i++) png(10 + i, 10)
    const again = png(1920, 1080)
    expect(again).not.toBe(first)
    expect(again).toEqual(first)
  })
})

describe("the simulator's bounded collections under load", () => {
  it.effect(
    "deleted browsers beyond the limit are evicted before a live one created earlier",
    () =>
      Effect.gen(function*() {
        // the mixed load creates and deletes a browser per flow: the deleted ones (kept for
        // include_deleted) filled /browsers and evicted the seed's browser_1, still in use (404)
        for (let i = 0; i <= KernelSimulator.collectionLimit; i++) {
          const { session_id } = yield* Browsers.create({})
          yield* Browsers.delete({ id: session_id })
        }
        expect((yield* Browsers.retrieve({ id: "browser_1" })).session_id).toBe("browser_1")
        const evictions = yield* Effect.flatMap(KernelSimulator.KernelSimulator, (s) => s.evictions)
        expect(evictions.length).toBeGreaterThan(0)
        expect(evictions.map((e) => e.id)).not.toContain("browser_1")
      }).pipe(Effect.provide(simulated)),
    60_000
  )
})

describe("the simulator's deployments under load", () => {
  it.effect(
    "deployments deleted (stopped, still listed) beyond the limit are evicted before a live one",
    () =>
      Effect.gen(function*() {
        // the mixed load deploys and deletes an app per flow: a deleted deployment stays (stopped,
        // marked for deletion), they filled /deployments and evicted the seed's deployments (404)
        const zip = new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)])
        for (let i = 0; i <= KernelSimulator.collectionLimit; i++) {
          const { id } = yield* Deployments.create({ entrypoint_rel_path: "index.ts", file: zip })
          yield* Deployments.delete({ id })
        }
        yield* Deployments.delete({ id: "dep_stopped" })
        expect((yield* Deployments.retrieve({ id: "dep_running" })).status).toBe("running")
      }).pipe(Effect.provide(simulated)),
    60_000
  )
})

/** Every schema node of the table's operations (parameters, bodies, answers), each once. */
const schemasOfTheTable = (): Array<SchemaAST.AST> => {
  const all = new Set<SchemaAST.AST>()
  const walk = (ast: SchemaAST.AST): void => {
    if (all.has(ast)) return
    all.add(ast)
    switch (ast._tag) {
      case "Refinement":
        return walk(ast.from)
      case "Transformation":
        walk(ast.from)
        return walk(ast.to)
      case "Declaration":
        return ast.typeParameters.forEach(walk)
      case "TypeLiteral":
        for (const ps of ast.propertySignatures) walk(ps.type)
        for (const is of ast.indexSignatures) walk(is.type)
        return
      case "Union":
        return ast.types.forEach(walk)
      case "TupleType":
        ast.elements.forEach((e) => walk(e.type))
        return ast.rest.forEach((r) => walk(r.type))
      case "Suspend":
        return walk(ast.f())
    }
  }
  for (const operation of operations) {
    for (const parameter of operation.parameters) walk(parameter.schema.ast)
    if (operation.body !== undefined && "schema" in operation.body) walk(operation.body.schema.ast)
    for (const answer of Object.values(operation.answers)) if ("schema" in answer) walk(answer.schema.ast)
  }
  return [...all]
}

/** Every refinement and transformation in the schemas of the table's operations. */
const guardedOfTheTable = (): Array<SchemaAST.AST> =>
  schemasOfTheTable().filter((ast) => ast._tag === "Refinement" || ast._tag === "Transformation")

describe("the simulator's checks and stores, made cheaper for the load", () => {
  it("a type-only schema is checked by its type guard, with the parser's answer", () => {
    // keywords, literals, unions of them and refinements of those skip the parser (path parameters,
    // answer fields); the answer must not change, for any value
    const asts = [
      Schema.String,
      Schema.Number,
      Schema.Boolean,
      Schema.Null,
      Schema.Undefined,
      Schema.Unknown,
      Schema.Literal("a", 1, true),
      Schema.Union(Schema.String, Schema.Null),
      Schema.NullOr(Schema.Literal("x")),
      // refinements of those: the type's guard and the filters
      Schema.NonEmptyString,
      Schema.Int,
      Schema.String.pipe(Schema.maxLength(3), Schema.pattern(/^[a-z]*$/)),
      Schema.NullOr(Schema.Number.pipe(Schema.between(0, 100))),
      // with the document's limits (checked on encoding: decoding is the type's)
      limited(Schema.String, { maxLength: 3, pattern: "^[a-z]*$" }),
      limited(Schema.Number, { minimum: 0, maximum: 100 }),
      // not type-only: still the parser's
      Schema.Struct({ a: Schema.Int }),
      Schema.NumberFromString
    ].map((schema) => schema.ast).concat(guardedOfTheTable())
    const samples = [
      "",
      "a",
      "x",
      "abcd",
      "A",
      "2026-01-01T00:00:00Z",
      "https://example.com/",
      "x".repeat(300),
      0,
      1,
      -1,
      1.5,
      100,
      101,
      2 ** 53,
      Number.NaN,
      true,
      false,
      null,
      undefined,
      {},
      [],
      [1]
    ]
    for (const ast of asts) {
      const schema = Schema.make(ast)
      for (const value of samples) {
        const decoded = Either.isRight(ParseResult.decodeUnknownEither(schema)(value))
        expect(decodes(ast, value), `${String(ast)} decodes ${String(value)}`).toBe(decoded)
        const accepted = decoded && Either.isRight(
          Either.flatMap(ParseResult.decodeUnknownEither(schema)(value), ParseResult.encodeEither(schema))
        )
        expect(accepts(ast, value), `${String(ast)} accepts ${String(value)}`).toBe(accepted)
      }
    }
  })

  it("every schema of the table decodes by its guard as the parser decodes it (structs, unions, timestamps...)", () => {
    // the answers are filled field by field, each field's value checked: structs, records, arrays, unions,
    // timestamps and `Redacted` values are told by guards now; for every schema node of the table, and
    // values made for it and broken from those, the verdict must be the parser's
    const all = schemasOfTheTable()
    const broken = (value: unknown): Array<unknown> => {
      if (Array.isArray(value)) return [value, [...value, null], [...value, "x"], value.length > 0 ? [] : [{}]]
      if (typeof value !== "object" || value === null) return [value]
      const record: Record<string, unknown> = { ...value }
      const out: Array<unknown> = [value, { ...record, extra_field: 1 }, Object.values(record)]
      for (const key of Object.keys(record)) {
        const { [key]: _, ...rest } = record
        out.push(rest)
        for (const wrong of [undefined, "", "x", "2026-13-01T00:00:00Z", -1, 1.5, true, null, {}, [], [1]]) {
          out.push({ ...record, [key]: wrong })
        }
      }
      return out
    }
    const basics = [
      "",
      "x",
      "2026-01-01T00:00:00Z",
      "2026-01-01T00:00:00.5+02:00",
      0,
      1,
      -1,
      1.5,
      true,
      null,
      undefined,
      {},
      [],
      [
        1
      ],
      { a: 1 }
    ]
    let checked = 0
    for (const ast of all) {
      const parse = ParseResult.decodeUnknownEither(Schema.make(ast))
      const made = [sample(ast), fill(ast, {}), fill(ast, { status: "running", event: "log" })]
      for (const value of [...basics, ...made.flatMap(broken)]) {
        const decoded = Either.isRight(parse(value))
        expect(decodes(ast, value), `${String(ast)} decodes ${JSON.stringify(value)}`).toBe(decoded)
        checked++
      }
    }
    expect(all.length).toBeGreaterThan(500)
    expect(checked).toBeGreaterThan(20_000)
  })

  it("a created resource is filled once: its answer is the fill of the fields it is stored with", () => {
    // the create's fill of the request's fields is remembered as the stored fields' fill (it used to be
    // made again from them): for every answer schema of the table and fields made for it, given whole, in
    // part or wrong, the remembered answer is what a fresh fill of the stored fields gives
    let checked = 0
    for (const operation of operations) {
      const [, answer] = engine.mainAnswer(operation)
      if (answer.kind !== "json") continue
      const ast = answer.schema.ast
      const whole = sample(ast)
      const given: Array<Record<string, unknown>> = [{}, { name: "n", status: "running", size: 3 }]
      if (typeof whole === "object" && whole !== null && !Array.isArray(whole)) {
        const record: Record<string, unknown> = { ...whole }
        given.push(record)
        for (const key of Object.keys(record)) {
          const { [key]: _, ...rest } = record
          given.push(rest, { ...record, [key]: null }, { ...record, [key]: "x" }, { ...record, [key]: 1 })
        }
      }
      for (const fields of given) {
        const stored = fillForStore(
          ast,
          { ...fields, id: "res_00001", created_at: "2026-01-01T00:00:00.000Z" },
          "res_00001"
        )
        const answered = fillStored(ast, stored)
        expect(JSON.stringify(answered), `${operation.name}: ${JSON.stringify(fields)}`).toBe(
          JSON.stringify(fill(ast, stored))
        )
        checked++
      }
    }
    expect(checked).toBeGreaterThan(500)
  })

  it("a JSON body the strict guard passes is one the strict check passes; the check still words every refusal", () => {
    // the guard spares valid bodies the parser's run (decode, then encode; no extra field where the
    // document closes the object, `additionalProperties: false`): it may only say "valid" where the
    // strict check does; anything else is left to the check
    const variants = (body: unknown): Array<unknown> => {
      if (typeof body !== "object" || body === null || Array.isArray(body)) return [body]
      const record: Record<string, unknown> = { ...body }
      const out: Array<unknown> = [body, { ...record, extra_field: 1 }]
      for (const key of Object.keys(record)) {
        const { [key]: _, ...rest } = record
        out.push(rest)
        for (const wrong of ["", "x".repeat(300), -1, 1.5, 2 ** 53, true, null, {}, [], [1], { a: 1 }]) {
          out.push({ ...record, [key]: wrong })
        }
      }
      return out
    }
    let guarded = 0
    let bodies = 0
    for (const operation of operations) {
      if (operation.body?.kind !== "json") continue
      const schema: Schema.Schema.AnyNoContext = operation.body.schema
      // the oracle: a body whose objects the document closes all takes no extra field anywhere, one
      // whose objects it closes none takes them anywhere (a body of both kinds is checked by the
      // table-driven test below)
      const closedness = new Set(structsOf(schema.ast).map(isClosedStruct))
      const strict = (u: unknown) =>
        Either.isRight(
          Either.flatMap(
            ParseResult.decodeUnknownEither(schema, { onExcessProperty: closedness.has(false) ? "ignore" : "error" })(
              u
            ),
            ParseResult.encodeEither(schema)
          )
        )
      if (closedness.size > 1) continue
      bodies++
      const valid = sample(schema.ast, "body")
      if (passesStrictGuard(schema.ast, valid)) guarded++
      for (const value of variants(valid)) {
        const passed = passesStrictGuard(schema.ast, value)
        if (passed) expect(strict(value), `${operation.name}: ${JSON.stringify(value)}`).toBe(true)
        // the verdict of firstIssue is the strict check's, guarded or not
        expect(firstIssue(schema, value) === undefined, `${operation.name}: ${JSON.stringify(value)}`).toBe(
          strict(value)
        )
      }
    }
    // most bodies of the table are plain structs of type-only fields (or with the document's limits)
    expect(bodies).toBeGreaterThan(20)
    expect(guarded / bodies).toBeGreaterThan(0.6)
  })

  it("an extra field is refused where the document closes the object, and only there", () => {
    const body = (name: string) => {
      const operation = operations.find((o) => o.name === name)!
      if (operation.body?.kind !== "json") throw new Error(name)
      return operation.body.schema
    }
    // [operation, body, the field refused or undefined]
    const cases: ReadonlyArray<readonly [string, unknown, string | undefined]> = [
      // BrowserRequest is open: a newer client's fields are taken (the service's `name`, `tags`)
      ["createBrowser", { headless: true, name: "checkout-bot", tags: { team: "agents" } }, undefined],
      // ClickMouseRequest is closed
      ["clickMouse", { x: 1, y: 2, extra: true }, "extra"],
      ["clickMouse", { x: 1, y: 2 }, undefined],
      // ManagedAuthCreateRequest is closed, its proxy (ProxyRef) open, its credential (CredentialReference) closed
      ["createAuthConnection", { domain: "a.com", profile_name: "p", extra: 1 }, "extra"],
      ["createAuthConnection", { domain: "a.com", profile_name: "p", proxy: { id: "x", extra: 1 } }, undefined],
      [
        "createAuthConnection",
        { domain: "a.com", profile_name: "p", credential: { name: "c", extra: 1 } },
        "credential.extra"
      ],
      // ProcessSpawnRequest is an allOf of exec's closed request and its terminal fields: those taken, no other
      ["spawnProcess", { command: "cat", allocate_tty: true, rows: 24 }, undefined],
      ["spawnProcess", { command: "cat", allocate_tty: true, extra: 1 }, "extra"],
      // an open pool request with a closed-free nesting
      ["createBrowserPool", { size: 1, extra: 1 }, undefined]
    ]
    expect(cases.map(([name, value]) => firstIssue(body(name), value))).toEqual(
      cases.map(([, , field]) => field === undefined ? undefined : `${field}: is not allowed (additional property)`)
    )
  })

  it("an evicted resource's collections go with it, and only its own", () => {
    const store = engine.emptyStore()
    const resource = (id: string): engine.Resource => ({ id, project: undefined, deleted: false, fields: { id } })
    engine.put(store, "/browsers", resource("b1"))
    engine.put(store, "/browsers", resource("b10"))
    engine.put(store, "/browsers/b1/replays", resource("r1"))
    engine.put(store, "/browsers/b1/processes/p1/x", resource("x1"))
    engine.put(store, "/browsers/b10/replays", resource("r2"))
    engine.dropNested(store, "/browsers/b1")
    expect([...store.collections.keys()].sort()).toEqual(["/browsers", "/browsers/b10/replays"])
    // a collection made again after the drop is dropped with the next one
    engine.put(store, "/browsers/b1/replays", resource("r3"))
    engine.dropNested(store, "/browsers/b1")
    expect(store.collections.has("/browsers/b1/replays")).toBe(false)
  })

  it("a page read only as far as it needs: the same items and X-Has-More as a filter of the whole", () => {
    const op = operations.find((o) => o.name === "listDeployments")!
    const items = Array.from({ length: 7 }, (_, i) => ({ id: `d${i}`, keep: i % 3 !== 1 }))
    const kept = items.filter((i) => i.keep)
    for (const [limit, offset] of [[2, 0], [2, 2], [2, 4], [5, 0], [3, 2], [1, 9]] as const) {
      const reply = engine.list(
        op,
        items,
        new URLSearchParams({ limit: String(limit), offset: String(offset) }),
        (i) => ({
          id: i.id
        }),
        (i) => i.keep
      )
      if (reply._tag !== "Json") throw new Error(`a list answered ${reply._tag}`)
      const page = kept.slice(offset, offset + limit)
      expect((reply.value as ReadonlyArray<{ id: string }>).map((d) => d.id)).toEqual(page.map((i) => i.id))
      const more = offset + limit < kept.length
      const made = { "x-limit": String(limit), "x-offset": String(offset) }
      expect(reply.headers).toEqual(
        more
          ? { "x-has-more": "true", "x-next-offset": String(offset + limit), ...made }
          : { "x-has-more": "false", ...made }
      )
    }
  })
})

describe("the simulator's current resources (what a list of the current ones walks)", () => {
  it.effect(
    "browsers deleted among active ones: each status lists exactly its own, in creation order",
    () =>
      Effect.gen(function*() {
        const made: Array<string> = []
        for (let i = 0; i < 24; i++) made.push((yield* Browsers.create({})).session_id)
        const deleted = made.filter((_, i) => i % 3 === 1)
        for (const id of deleted) yield* Browsers.delete({ id })
        const ids = (items: ReadonlyArray<{ readonly session_id: string }>) =>
          items.map((b) => b.session_id).filter((id) => made.includes(id))
        const active = yield* Browsers.list({ limit: 100 })
        expect(ids(active.items)).toStrictEqual(made.filter((id) => !deleted.includes(id)))
        expect(ids((yield* Browsers.list({ limit: 100, status: "deleted" })).items)).toStrictEqual(deleted)
        expect(ids((yield* Browsers.list({ limit: 100, status: "all" })).items)).toStrictEqual(made)
        // paged: the offsets count the active ones only
        const second = yield* Browsers.list({ limit: 5, offset: 5 })
        const activeIds = active.items.map((b) => b.session_id)
        expect(second.items.map((b) => b.session_id)).toStrictEqual(activeIds.slice(5, 10))
      }).pipe(Effect.provide(simulated))
  )

  it.effect(
    "apps: a deleted (retired) deployment serves none; the others are listed in deployment order",
    () =>
      Effect.gen(function*() {
        const zip = new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)])
        const ids: Array<string> = []
        for (const name of ["a1", "a2", "a3", "a4"]) {
          ids.push((yield* Deployments.create({ entrypoint_rel_path: `src/${name}.ts`, file: zip })).id)
        }
        yield* Deployments.delete({ id: ids[1]! })
        const apps = (yield* Apps.list({ limit: 100 })).items.map((app) => app.app_name)
        expect(apps.filter((name) => name.startsWith("a") && name.length === 2)).toStrictEqual(["a1", "a3", "a4"])
      }).pipe(Effect.provide(simulated))
  )

  it("a full collection with nothing deleted evicts its oldest; the current ones stay those not deleted", () => {
    const store = engine.emptyStore()
    const made = (id: string): engine.Resource => ({ id, project: undefined, fields: { id }, deleted: false })
    for (let i = 0; i <= engine.collectionLimit; i++) engine.put(store, "/invocations", made(`i${i}`))
    expect(store.evictions.map((e) => e.id)).toStrictEqual(["i0"])
    // one deleted, one retired: the next two puts evict them (the oldest of those), not the oldest
    engine.markDeleted(store, "/invocations", store.collections.get("/invocations")!.get("i500")!)
    engine.retire(store, "/invocations", store.collections.get("/invocations")!.get("i7")!)
    engine.put(store, "/invocations", made("x1"))
    engine.put(store, "/invocations", made("x2"))
    expect(store.evictions.map((e) => e.id)).toStrictEqual(["i0", "i7", "i500"])
    const items = [...store.collections.get("/invocations")!.values()]
    expect([...engine.currentOf(store, "/invocations")]).toStrictEqual(
      items.filter((r) => !r.deleted && r.retired !== true)
    )
    engine.markDeleted(store, "/invocations", items[3]!)
    engine.remove(store, "/invocations", items[4]!.id)
    expect([...engine.currentOf(store, "/invocations")]).toStrictEqual(
      [...store.collections.get("/invocations")!.values()].filter((r) => !r.deleted && r.retired !== true)
    )
  })
})

/** The structs (objects without an index signature) a schema's body can hold. */
const structsOf = (ast: SchemaAST.AST, seen = new Set<SchemaAST.AST>()): Array<SchemaAST.TypeLiteral> => {
  if (seen.has(ast)) return []
  seen.add(ast)
  switch (ast._tag) {
    case "Refinement":
    case "Transformation":
      return structsOf(ast.from, seen)
    case "Suspend":
      return structsOf(ast.f(), seen)
    case "Union":
      return ast.types.flatMap((member) => structsOf(member, seen))
    case "TupleType":
      return [...ast.elements, ...ast.rest].flatMap((element) => structsOf(element.type, seen))
    case "TypeLiteral":
      return [
        ...(ast.indexSignatures.length === 0 ? [ast] : []),
        ...ast.propertySignatures.flatMap((ps) => structsOf(ps.type, seen)),
        ...ast.indexSignatures.flatMap((is) => structsOf(is.type, seen))
      ]
    default:
      return []
  }
}

/** The document's closed schemas, by the identifier of their struct. */
const isClosedStruct = (ast: SchemaAST.TypeLiteral): boolean =>
  SchemaAST.getIdentifierAnnotation(ast).pipe((o) => o._tag === "Some" && closedSchemaNames.has(o.value))
