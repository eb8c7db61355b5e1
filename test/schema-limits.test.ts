/**
 * The document's value limits (`minLength` / `maxLength`, `pattern`, `minimum` / `maximum`,
 * `minItems` / `maxItems`) on what the SDK sends: every limited field of every operation's request
 * (query parameters, body fields at any depth), found in the generator's IR, gets a value breaking
 * each of its limits through its operation, and must fail as `InvalidInput` naming the field with
 * nothing sent; a value on the bound is sent. Answers are not checked against the limits: a
 * server's value out of a documented range still decodes.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, ManagedRuntime, Redacted, Schedule, Schema, Stream } from "effect"
import { KernelClient, KernelConfig } from "effect-kernel"
import * as Ir from "../scripts/generate/ir.js"
import { load } from "../scripts/generate/main.js"
import * as Call from "../src/internal/call.js"
import type { Operation } from "../src/internal/definition.js"
import * as Common from "../src/internal/generated/schemas/Common.js"
import { operations } from "../src/internal/generated/table.js"
import { examples } from "./generated/examples.js"

const { api } = load()

// ---------------------------------------------------------------------------------------------
// the limited sites of every request, from the IR
// ---------------------------------------------------------------------------------------------

const resolve = (schema: Ir.Schema): Ir.Schema =>
  schema.kind === "ref" ? resolve(api.schemas.get(schema.name)!.schema) : schema

const fieldsOf = (object: Extract<Ir.Schema, { kind: "object" }>) =>
  Ir.propertiesOf((name) => api.schemas.get(name)?.schema, object)

/** A valid value of a schema (required fields only; arrays with as many items as they need). */
const sample = (schema: Ir.Schema, depth = 0): unknown => {
  const s = resolve(schema)
  switch (s.kind) {
    case "string":
      return Ir.within(s, "text")
    case "number":
    case "integer":
      return Ir.within(s, 1)
    case "boolean":
      return true
    case "literal":
      return s.values[0]
    case "binary":
      return new Uint8Array([1])
    case "redacted":
      return Redacted.make("secret")
    case "nullable":
      return sample(s.schema, depth)
    case "union":
      return sample(s.members[0]!, depth)
    case "array":
      return Array.from({ length: s.limits?.minItems ?? 0 }, () => sample(s.items, depth + 1))
    case "object":
      return depth > 6 ? {} : Object.fromEntries(
        fieldsOf(s).filter((p) => p.required).map((p) => [p.name, sample(p.schema, depth + 1)])
      )
    default:
      return "value"
  }
}

/** A step down to a limited value: the key, and the value the container there is made of when missing. */
interface Step {
  readonly key: string | number
  readonly make: () => unknown
  /**
   * Keys taken out of the container before this step: the fields of the other members of a `oneOf`
   * that asks for exactly one (a profile by `id` or by `name`), whose value would be refused for that.
   */
  readonly drop?: ReadonlyArray<string>
}

interface Site {
  readonly operation: string
  /** The params' path to the value (a query parameter: its name; a body field: its path in the body). */
  readonly steps: ReadonlyArray<Step>
  readonly schema: Ir.Schema & { readonly limits?: Ir.Limits }
}

const sitesOf = (
  operation: string,
  schema: Ir.Schema,
  steps: ReadonlyArray<Step>,
  into: Array<Site>,
  seen: ReadonlySet<string> = new Set(),
  drop: ReadonlyArray<string> = []
): Array<Site> => {
  if (schema.kind === "ref") {
    if (seen.has(schema.name)) return into
    return sitesOf(operation, api.schemas.get(schema.name)!.schema, steps, into, new Set([...seen, schema.name]), drop)
  }
  if ("limits" in schema && schema.limits !== undefined) into.push({ operation, steps, schema })
  switch (schema.kind) {
    case "nullable":
      return sitesOf(operation, schema.schema, steps, into, seen, drop)
    case "union": {
      const groups = schema.exactlyOne
      schema.members.forEach((member, i) => {
        // exactly one member's fields: this member's, the others' left out (and taken out of the value)
        const others = groups === undefined
          ? []
          : groups.flatMap((fields, j) => j === i ? [] : fields).filter((field) => !groups[i]!.includes(field))
        const own = member.kind === "object" && others.length > 0
          ? { ...member, properties: member.properties.filter((p) => !others.includes(p.name)) }
          : member
        sitesOf(operation, own, steps, into, seen, others)
      })
      return into
    }
    case "array": {
      const items = schema.items
      const count = Math.max(1, schema.limits?.minItems ?? 0)
      // the value is the first item; the others (as many as needed) valid ones
      const step: Step = { key: 0, make: () => sample(items) }
      sitesOf(operation, items, [...steps.slice(0, -1), withArray(steps.at(-1)!, items, count), step], into, seen)
      return into
    }
    case "object":
      for (const property of fieldsOf(schema)) {
        sitesOf(
          operation,
          property.schema,
          [...steps, { key: property.name, make: () => sample(property.schema), drop }],
          into,
          seen
        )
      }
      return into
    default:
      return into
  }
}

// an array's step makes it with `count` valid items
const withArray = (step: Step, items: Ir.Schema, count: number): Step => ({
  key: step.key,
  make: () => Array.from({ length: count }, () => sample(items))
})

const sites: Array<Site> = api.operations.flatMap((operation) => {
  const into: Array<Site> = []
  for (const parameter of operation.parameters) {
    sitesOf(operation.name, parameter.schema, [{ key: parameter.field, make: () => sample(parameter.schema) }], into)
  }
  if (operation.body !== undefined && operation.body.kind !== "bytes" && operation.method !== "GET") {
    // the body's fields are the params' (a union body: each member's)
    sitesOf(operation.name, operation.body.schema, [], into)
  }
  return into
})

// ---------------------------------------------------------------------------------------------
// values breaking each limit, and values on the bounds
// ---------------------------------------------------------------------------------------------

interface Case {
  readonly limit: string
  readonly value: unknown
  /** What the message says. */
  readonly says: string
}

const patternMisses = ["relative", "bad name!", "99999", "-"]

const breaking = (site: Site): Array<Case> => {
  const limits = site.schema.limits!
  const item = () => site.schema.kind === "array" ? sample(site.schema.items) : undefined
  const cases: Array<Case> = []
  if (limits.minLength !== undefined && limits.minLength > 0) {
    cases.push({ limit: "minLength", value: "x".repeat(limits.minLength - 1), says: "at least" })
  }
  if (limits.maxLength !== undefined) {
    cases.push({ limit: "maxLength", value: "x".repeat(limits.maxLength + 1), says: "at most" })
  }
  if (limits.pattern !== undefined) {
    const { pattern: _, ...lengths } = limits
    const miss = patternMisses.find((value) =>
      !new RegExp(limits.pattern!, "u").test(value) && Ir.within({ kind: "string", limits: lengths }, value) === value
    )
    if (miss === undefined) throw new Error(`no value misses ${limits.pattern}: add one`)
    cases.push({ limit: "pattern", value: miss, says: `match the pattern ${limits.pattern}` })
  }
  if (limits.format === "uuid") cases.push({ limit: "format", value: "not-a-uuid", says: "must be a UUID" })
  if (limits.minimum !== undefined) {
    cases.push({ limit: "minimum", value: limits.minimum - 1, says: `>= ${limits.minimum}` })
  }
  if (limits.maximum !== undefined) {
    cases.push({ limit: "maximum", value: limits.maximum + 1, says: `<= ${limits.maximum}` })
  }
  if (limits.minItems !== undefined && limits.minItems > 0) {
    cases.push({ limit: "minItems", value: Array.from({ length: limits.minItems - 1 }, item), says: "at least" })
  }
  if (limits.maxItems !== undefined) {
    cases.push({ limit: "maxItems", value: Array.from({ length: limits.maxItems + 1 }, item), says: "at most" })
  }
  return cases
}

const onBounds = (site: Site): Array<Case> => {
  const limits = site.schema.limits!
  const item = () => site.schema.kind === "array" ? sample(site.schema.items) : undefined
  const fill = (n: number) => limits.pattern?.startsWith("^/") ? `/${"x".repeat(n - 1)}` : "x".repeat(n)
  const cases: Array<Case> = []
  if (limits.format === "uuid") cases.push({ limit: "format", value: "3F1C2A4E-5B6D-4E7F-8A9B-0C1D2E3F4A5B", says: "" })
  if (limits.minLength !== undefined) cases.push({ limit: "minLength", value: fill(limits.minLength), says: "" })
  if (limits.maxLength !== undefined) cases.push({ limit: "maxLength", value: fill(limits.maxLength), says: "" })
  if (limits.minimum !== undefined) cases.push({ limit: "minimum", value: limits.minimum, says: "" })
  if (limits.maximum !== undefined) cases.push({ limit: "maximum", value: limits.maximum, says: "" })
  if (limits.minItems !== undefined) {
    cases.push({ limit: "minItems", value: Array.from({ length: limits.minItems }, item), says: "" })
  }
  if (limits.maxItems !== undefined) {
    cases.push({ limit: "maxItems", value: Array.from({ length: limits.maxItems }, item), says: "" })
  }
  return cases
}

/** The operation's minimal params (test/generated/examples.ts) with `value` at the site's path. */
const paramsWith = (site: Site, value: unknown): Record<string, unknown> => {
  const example = examples.find((e) => e.name === site.operation)
  if (example === undefined) throw new Error(`no example for ${site.operation}`)
  const params: Record<string, unknown> = structuredClone({
    ...(example.params as Record<string, unknown> | undefined)
  })
  let container: Record<string | number, unknown> = params
  site.steps.forEach((step, i) => {
    for (const key of step.drop ?? []) delete container[key]
    if (i === site.steps.length - 1) {
      container[step.key] = value
      return
    }
    const next = container[step.key]
    if (typeof next !== "object" || next === null) container[step.key] = step.make()
    container = container[step.key] as Record<string | number, unknown>
  })
  return params
}

const fieldOf = (site: Site): string => site.steps.map((step) => String(step.key)).join(".")

// ---------------------------------------------------------------------------------------------
// the calls: a client that counts what is sent
// ---------------------------------------------------------------------------------------------

let sent = 0
const counting = HttpClient.make((request) =>
  Effect.sync(() => {
    sent++
    return HttpClientResponse.fromWeb(request, new Response("{\"message\":\"teapot\"}", { status: 418 }))
  })
)
const runtime = ManagedRuntime.make(
  KernelClient.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make("sk_limits"),
      baseUrl: "https://kernel.test",
      retrySchedule: Schedule.stop
    })),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, counting))
  )
)

const definitions = new Map<string, Operation>(operations.map((operation) => [operation.name, operation]))

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u

const call = (site: Site, value: unknown) => {
  const definition = definitions.get(site.operation)!
  sent = 0
  return runtime.runPromise(
    Effect.either(Effect.flatMap(KernelClient.KernelClient, (client) => {
      const result = Call.make(definition)(client)(paramsWith(site, value) as never) as Effect.Effect<unknown, unknown>
      // a streamed answer is a stream that sends its request when it runs: run it
      return Effect.flatMap(result, (value) => isStream(value) ? Stream.runDrain(value) : Effect.void)
    }))
  )
}

// ---------------------------------------------------------------------------------------------

const breakingCases = sites.flatMap((site) =>
  breaking(site).map((c) => ({ ...c, site, name: `${site.operation} ${fieldOf(site)} ${c.limit}` }))
)
const boundCases = sites.flatMap((site) =>
  onBounds(site).map((c) => ({ ...c, site, name: `${site.operation} ${fieldOf(site)} ${c.limit}` }))
)

describe("the document's limits on requests", () => {
  it("finds the limited fields of the requests (every limit keyword the document uses on one)", () => {
    const keywords = new Set(sites.flatMap((site) => Object.keys(site.schema.limits!)))
    expect([...keywords].sort()).toEqual(
      ["format", "maxItems", "maxLength", "minItems", "minLength", "minimum", "maximum", "pattern"].sort()
    )
    // each operation of the document whose request has a limited field
    expect(new Set(sites.map((site) => site.operation)).size).toBeGreaterThanOrEqual(30)
  })

  it.each(breakingCases)("$name: InvalidInput naming the field, nothing sent", async ({ says, site, value }) => {
    const result = await call(site, value)
    expect(sent).toBe(0)
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.isLeft(result) ? result.left : undefined
    expect(error).toMatchObject({ _tag: "InvalidInput", field: fieldOf(site) })
    const message = (error as { readonly message: string }).message
    expect(message).toContain(fieldOf(site))
    expect(message).toContain(says)
  })

  it.each(boundCases)("$name: a value on the bound is sent", async ({ site, value }) => {
    const result = await call(site, value)
    const error = Either.isLeft(result) ? result.left : undefined
    expect(error, JSON.stringify(error)).not.toMatchObject({ _tag: "InvalidInput" })
    expect(sent).toBe(1)
  })
})

describe("the document's limits on answers", () => {
  it("a value out of a documented range still decodes (forward compatible)", () => {
    // width 320..7680 and height 240..4320 in the document
    const viewport = { width: 99_999, height: 1 }
    expect(Schema.decodeUnknownSync(Common.BrowserViewport)(viewport)).toEqual(viewport)
  })

  it("encoding the same value is refused (what the SDK sends)", () => {
    const encoded = Schema.encodeUnknownEither(Common.BrowserViewport)({ width: 99_999, height: 240 })
    expect(Either.isLeft(encoded) && encoded.left.message).toContain("<= 7680")
  })
})
