/**
 * A review of request encoding and status mapping over every operation's public accessor, against
 * a loopback server that records what it is sent: each test is a finding.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import * as Sdk from "effect-kernel"
import {
  AuthConnections,
  BrowserPools,
  Browsers,
  Computer,
  CredentialProviders,
  Credentials,
  Deployments,
  Invocations,
  Kernel,
  KernelConfig,
  KernelTransport,
  Proxies
} from "effect-kernel"
import type * as Http from "node:http"
import * as OpenApi from "../scripts/generate/openapi.js"
import { operations } from "../src/internal/generated/table.js"
import { examples } from "./generated/examples.js"
import { paramsOf } from "./utils/exampleParams.js"
import { httpServer } from "./utils/loopback.js"

interface Seen {
  readonly method: string
  readonly url: string
  readonly body: string
}

/** A loopback server answering every request with `answer`'s status and body, and the requests it was sent. */
const serve = (answer: { readonly status: number; readonly body: string }) =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const handler: Http.RequestListener = (req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") })
        res.writeHead(answer.status, {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(answer.body))
        })
        res.end(answer.body)
      })
    }
    const served = yield* httpServer(handler)
    const context = yield* Layer.build(
      Kernel.layer.pipe(
        Layer.provide(KernelConfig.layer({
          apiKey: Redacted.make("sk_review_encoding"),
          baseUrl: served.url,
          maxRetries: 0,
          timeout: "5 seconds",
          idleTimeout: "5 seconds"
        })),
        Layer.provide(KernelTransport.layerUndici),
        Layer.orDie
      )
    )
    return { seen, context }
  })

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u

/** What `Kernel.layer` provides: every accessor's service. */
type Services = Layer.Layer.Success<typeof Kernel.layer>

/** An accessor's call with its params, a stream answer read to its end. */
const callOf = (module: string, accessor: string, params: unknown): Effect.Effect<unknown, unknown, Services> => {
  const area: unknown = Reflect.get(Sdk, module)
  const fn: unknown = typeof area === "object" && area !== null ? Reflect.get(area, accessor) : undefined
  if (typeof fn !== "function") return Effect.dieMessage(`no accessor ${module}.${accessor}`)
  const result: unknown = fn(params)
  if (isStream(result)) return Stream.runDrain(result) as Effect.Effect<void, unknown, Services>
  if (!Effect.isEffect(result)) return Effect.dieMessage(`${module}.${accessor}: neither an Effect nor a Stream`)
  // (an accessor found by its name: its requirement is one of `Kernel.layer`'s services)
  return Effect.flatMap(
    result,
    (value) => isStream(value) ? Stream.runDrain(value) : Effect.succeed(value)
  ) as Effect.Effect<
    unknown,
    unknown,
    Services
  >
}

/** The error a call failed with, or a description of how it did not fail with one. */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  if (Exit.isSuccess(exit)) return { succeeded: exit.value }
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) ? failure.value : { defect: Cause.pretty(exit.cause) }
}

const tagOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "_tag" in error ? error._tag : error

/** Each operation of the document (deprecated ones left out) by operationId: its method, path and statuses. */
const documented = (() => {
  const document = OpenApi.load(new URL("../spec/kernel-openapi.yml", import.meta.url).pathname)
  const byId = new Map<string, { readonly method: string; readonly path: string; readonly statuses: Array<number> }>()
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of OpenApi.methods) {
      const operation = item[method]
      if (operation === undefined || operation.deprecated === true) continue
      byId.set(operation.operationId, {
        method: method.toUpperCase(),
        path,
        statuses: Object.keys(operation.responses).map(Number)
      })
    }
  }
  return byId
})()

/** The tag of each error status, as issue 18 names them; the common ones on every operation. */
const statusTags: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Gone",
  422: "UnprocessableEntity",
  429: "RateLimited",
  500: "InternalServerError",
  502: "BadGateway",
  529: "Overloaded"
}
const commonStatuses = new Set([401, 409, 429, 500])

/** The 0.1 operations whose success status their authority does not show (endpoints 2 to 5). */
const anyTwoHundred: ReadonlySet<string> = new Set([
  "setCursorVisibility",
  "getMousePosition",
  "listBrowserPools",
  "deleteDeployment"
])

describe("status mapping of every operation", () => {
  it.scoped(
    "each error status, from the document: its tagged error, or UnexpectedStatus; the document's route",
    () =>
      Effect.gen(function*() {
        const wrong: Array<string> = []
        for (const status of [...Object.keys(statusTags).map(Number), 418, 503]) {
          const { context, seen } = yield* serve({ status, body: "{\"code\":\"c\",\"message\":\"m\"}" })
          for (const example of examples) {
            const operationId = operations.find((definition) => definition.name === example.name)?.operationId
            const doc = operationId === undefined ? undefined : documented.get(operationId)
            if (doc === undefined) {
              wrong.push(`${example.name}: not in the document`)
              continue
            }
            seen.length = 0
            const exit = yield* Effect.exit(
              Effect.provide(callOf(example.module, example.accessor, paramsOf(example.name, example.params)), context)
            )
            const expected = (doc.statuses.includes(status) || commonStatuses.has(status)) && statusTags[status]
              ? statusTags[status]
              : "UnexpectedStatus"
            const got = tagOf(failureOf(exit))
            if (got !== expected) wrong.push(`${example.name} ${status}: ${JSON.stringify(got)}, not ${expected}`)
            const route = new RegExp(`^${doc.path.replace(/\{[^}]+\}/g, "[^/?]+")}(\\?|$)`)
            const sent = seen.map((s) => `${s.method} ${s.url}`)
            if (seen.length !== 1 || seen[0]!.method !== doc.method || !route.test(seen[0]!.url)) {
              wrong.push(`${example.name} ${status}: sent ${sent.join(", ")}, not ${doc.method} ${doc.path}`)
            }
          }
        }
        expect(wrong).toEqual([])
      }),
    120_000
  )

  it.scoped("an undocumented 2xx is UnexpectedStatus, but for the 0.1 operations whose success status is not shown", () =>
    Effect.gen(function*() {
      // a body every answer's schema could read (an object, an array's worth for none of them): it
      // must not be decoded, whatever it is
      const { context, seen } = yield* serve({ status: 203, body: "{\"x\":1,\"y\":2,\"ok\":true}" })
      const wrong: Array<string> = []
      for (const example of examples) {
        if (anyTwoHundred.has(example.name)) continue
        seen.length = 0
        const exit = yield* Effect.exit(
          Effect.provide(callOf(example.module, example.accessor, paramsOf(example.name, example.params)), context)
        )
        const error = failureOf(exit)
        if (tagOf(error) !== "UnexpectedStatus" || seen.length !== 1) {
          wrong.push(`${example.name}: ${JSON.stringify(error)?.slice(0, 200)} after ${seen.length} requests`)
        }
      }
      expect(wrong).toEqual([])
    }))

  // browser-cloud-service.md, the authority for the 0.1 operations, leaves their success statuses "not
  // shown" (endpoints 2 to 5): any 2xx is their success, the body read as their answer (a delete answered
  // 200 with a body succeeds: test/hardening.test.ts)
  it.scoped("the 0.1 operations whose success status is not shown take any 2xx", () =>
    Effect.gen(function*() {
      const ok = yield* serve({ status: 203, body: "{\"x\":1,\"y\":2,\"ok\":true}" })
      const position = yield* Effect.provide(Computer.getMousePosition({ id: "b1" }), ok.context)
      expect({ x: position.x, y: position.y }).toEqual({ x: 1, y: 2 })
      const cursor = yield* Effect.provide(Computer.setCursorVisibility({ id: "b1", hidden: true }), ok.context)
      expect(cursor.ok).toBe(true)
      yield* Effect.provide(Deployments.delete({ id: "d1" }), ok.context)
      const pools = yield* serve({ status: 203, body: "[]" })
      expect(yield* Effect.provide(BrowserPools.list(), pools.context)).toEqual([])
    }))

  it.scoped("the hand-written operations still succeed on their documented status", () =>
    Effect.gen(function*() {
      const ok = yield* serve({ status: 200, body: "{\"x\":1,\"y\":2,\"ok\":true}" })
      const position = yield* Effect.provide(Computer.getMousePosition({ id: "b1" }), ok.context)
      expect({ x: position.x, y: position.y }).toEqual({ x: 1, y: 2 })
      const cursor = yield* Effect.provide(Computer.setCursorVisibility({ id: "b1", hidden: true }), ok.context)
      expect(cursor.ok).toBe(true)
      const pools = yield* serve({ status: 200, body: "[]" })
      expect(yield* Effect.provide(BrowserPools.list(), pools.context)).toEqual([])
      const gone = yield* serve({ status: 204, body: "" })
      yield* Effect.provide(Deployments.delete({ id: "d1" }), gone.context)
      expect(gone.seen.map((s) => `${s.method} ${s.url}`)).toEqual(["DELETE /deployments/d1"])
    }))
})

describe("BrowserPools.list (hand-written) and BrowserPools.retrieve (generated)", () => {
  it.scoped("decode the same documented fields of a pool's configuration (start_url included)", () =>
    Effect.gen(function*() {
      const pool = {
        id: "p1",
        available_count: 1,
        acquired_count: 0,
        created_at: "2025-01-02T03:04:05Z",
        browser_pool_config: { size: 2, kiosk_mode: true, start_url: "https://example.com/" }
      }
      const one = yield* serve({ status: 200, body: JSON.stringify(pool) })
      const retrieved = yield* Effect.provide(BrowserPools.retrieve({ idOrName: "p1" }), one.context)
      const all = yield* serve({ status: 200, body: JSON.stringify([pool]) })
      const listed = yield* Effect.provide(BrowserPools.list(), all.context)
      expect(retrieved.browser_pool_config).toEqual(pool.browser_pool_config)
      expect(listed.map((each) => each.browser_pool_config)).toEqual([pool.browser_pool_config])
    }))
})

describe("secrets in InvalidInput", () => {
  const secret = 987654
  const text = String(secret)
  // a secret given as a `Redacted` of what is not a string (a numeric PIN, an object): the encoding's
  // issue is about the secret's content, "Expected string, actual 987654"
  // (label, the field named, or `undefined` where the issue reported is another branch's: a deployment
  // from a source is refused first for the `file` the other branch requires)
  const cases: ReadonlyArray<readonly [string, string | undefined, Effect.Effect<unknown, unknown, Services>]> = [
    [
      "Credentials.create values",
      "values.pin",
      Credentials.create({ name: "n", domain: "d.com", values: { pin: Redacted.make(secret) } } as never)
    ],
    [
      "Credentials.create values (an object)",
      "values.pin",
      Credentials.create({ name: "n", domain: "d.com", values: { pin: Redacted.make({ pin: text }) } } as never)
    ],
    [
      "Credentials.create totp_secret",
      "totp_secret",
      Credentials.create({ name: "n", domain: "d.com", values: {}, totp_secret: Redacted.make(secret) } as never)
    ],
    [
      "Credentials.update values",
      "values.pin",
      Credentials.update({ idOrName: "c", values: { pin: Redacted.make(secret) } } as never)
    ],
    [
      "CredentialProviders.create token",
      "token",
      CredentialProviders.create({ name: "n", provider_type: "onepassword", token: Redacted.make(secret) } as never)
    ],
    [
      "AuthConnections.submit fields",
      "fields.pin",
      AuthConnections.submit({ id: "a", fields: { pin: Redacted.make(secret) } } as never)
    ],
    [
      "Proxies.create config.password",
      "config.password",
      Proxies.create({ type: "custom", config: { host: "h", port: 1, password: Redacted.make(secret) } } as never)
    ],
    [
      "Deployments.create source.auth.token (multipart)",
      undefined,
      Deployments.create(
        {
          source: {
            type: "github",
            url: "https://github.com/o/r",
            ref: "main",
            entrypoint: "index.ts",
            auth: { method: "github_token", token: Redacted.make(secret) }
          }
        } as never
      )
    ]
  ]

  it.scoped("a Redacted holding a value of the wrong type: InvalidInput naming the field, never quoting it", () =>
    Effect.gen(function*() {
      const { context, seen } = yield* serve({ status: 500, body: "{}" })
      for (const [label, field, call] of cases) {
        const error = failureOf(yield* Effect.exit(Effect.provide(call, context)))
        expect(error, label).toMatchObject({ _tag: "InvalidInput" })
        const texts = [String(error), JSON.stringify(error), error instanceof Error ? error.message : ""]
        for (const each of texts) expect(each, label).not.toContain(text)
        if (field !== undefined) expect(error, label).toMatchObject({ field })
      }
      expect(seen).toEqual([])
    }))
})

describe("InvalidInput names the field of the shape meant", () => {
  // (a body whose schema is a union: each branch reports its first issue)
  const cases: ReadonlyArray<readonly [string, string, Effect.Effect<unknown, unknown, Services>]> = [
    [
      "a deployment from a source whose ref is not a string",
      "source.ref",
      Deployments.create({ source: { type: "github", url: "https://g/o/r", ref: 5, entrypoint: "e" } } as never)
    ],
    [
      "a deployment from a source without its entrypoint",
      "source.entrypoint",
      Deployments.create({ source: { type: "github", url: "https://g/o/r", ref: "main" } } as never)
    ],
    [
      "a deployment of a file whose force is not a boolean",
      "force",
      Deployments.create({ file: new Uint8Array([1]), entrypoint_rel_path: "a.ts", force: "yes" } as never)
    ],
    ["a profile by a name that breaks its pattern", "profile.name", Browsers.create({ profile: { name: "a b" } })],
    ["a profile by an id that is not a string", "profile.id", Browsers.create({ profile: { id: 5 } } as never)],
    [
      "a custom proxy's password given as a plain string",
      "config.password",
      Proxies.create({ type: "custom", config: { host: "h", port: 1, password: "p" } } as never)
    ]
  ]

  it.scoped("a union's branch that went furthest, a wrong value before a missing one; nothing sent", () =>
    Effect.gen(function*() {
      const { context, seen } = yield* serve({ status: 500, body: "{}" })
      for (const [label, field, call] of cases) {
        const error = failureOf(yield* Effect.exit(Effect.provide(call, context)))
        expect(error, label).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(seen).toEqual([])
    }))
})

// a body's string with a lone surrogate was sent (JSON: escaped as `\ud800`, which the server reads as
// U+FFFD; multipart: as U+FFFD's UTF-8): another value than the one given, while a path or query
// parameter holding one was refused
describe("bodies", () => {
  it.scoped("a string that is not well-formed Unicode is InvalidInput naming its field, nothing sent", () =>
    Effect.gen(function*() {
      const { context, seen } = yield* serve({ status: 200, body: "{}" })
      const file = new Uint8Array([1])
      const refused: ReadonlyArray<readonly [string, string, Effect.Effect<unknown, unknown, Services>]> = [
        ["text", "text", Computer.typeText({ id: "b", text: "a\uD800b" })],
        ["text", "text", Computer.writeClipboard({ id: "b", text: "\uDC00" })],
        ["args.1", "args.1", Sdk.Processes.exec({ id: "b", command: "echo", args: ["ok", "x\uDBFF"] })],
        [
          "actions.0.type_text.text",
          "actions.0.type_text.text",
          Computer.batch({ id: "b", actions: [{ type: "type_text", type_text: { text: "\uD83D" } }] })
        ],
        // a multipart body's field by its name (it was "body")
        [
          "entrypoint_rel_path",
          "entrypoint_rel_path is not well-formed Unicode",
          Deployments.create({ file, entrypoint_rel_path: "a\uD800.ts" })
        ],
        [
          "env_vars.K\uD800",
          "env_vars[K\uD800] is not well-formed Unicode",
          Deployments.create({ file, entrypoint_rel_path: "a.ts", env_vars: { "K\uD800": "v" } })
        ],
        // a key a part's name cannot carry as it is: it was sent escaped (another name) or ambiguous
        [
          "env_vars.K\"\r\nX",
          "cannot be sent as a part's name",
          Deployments.create({ file, entrypoint_rel_path: "a.ts", env_vars: { "K\"\r\nX": "v" } })
        ],
        [
          "env_vars.A]B[C",
          "cannot be sent as a part's name",
          Deployments.create({ file, entrypoint_rel_path: "a.ts", env_vars: { "A]B[C": "v" } })
        ],
        // a required array of a form, empty: no part at all, the field missing where the service reads it
        ["files", "files: at least one item is required", Sdk.Filesystem.upload({ id: "b", files: [] })],
        [
          "extensions",
          "extensions: at least one item is required",
          Sdk.Browsers.loadExtensions({ id: "b", extensions: [] })
        ],
        // a file's name (it was sent as U+FFFD)
        [
          "file",
          "file: its file name is not well-formed Unicode",
          Deployments.create({
            file: Sdk.KernelFiles.file(import.meta.filename, { name: "report\uD800.ts" }),
            entrypoint_rel_path: "a.ts"
          })
        ]
      ]
      for (const [field, message, call] of refused) {
        const error = failureOf(yield* Effect.exit(Effect.provide(call, context)))
        expect(error, field).toMatchObject({ _tag: "InvalidInput", field })
        expect(error, field).toHaveProperty("message", expect.stringContaining(message))
      }
      expect(seen).toEqual([])
      // a pair is a character like any other, and a backslash before `ud` is text: both sent as given
      yield* Effect.provide(Computer.typeText({ id: "b", text: "\\ud800 \uD83D\uDE00" }), context)
      expect(seen.map((s) => JSON.parse(s.body))).toEqual([{ text: "\\ud800 \uD83D\uDE00" }])
    }))
})

describe("query parameters", () => {
  it.scoped("a string that is not well-formed Unicode is InvalidInput, never sent as U+FFFD", () =>
    Effect.gen(function*() {
      const { context, seen } = yield* serve({ status: 200, body: "[]" })
      const refused: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, Services>]> = [
        ["query", Browsers.list({ query: "a\uD800b" })],
        ["query", Browsers.list({ query: "\uDC00" })],
        ["app_name", Invocations.list({ app_name: "x\uDBFF" })]
      ]
      for (const [field, call] of refused) {
        const error = failureOf(yield* Effect.exit(Effect.provide(call, context)))
        expect(error).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(seen).toEqual([])
      // a pair is a character like any other: sent as its UTF-8
      yield* Effect.provide(Browsers.list({ query: "a\uD83D\uDE00b" }), context)
      expect(seen.map((s) => s.url)).toEqual(["/browsers?query=a%F0%9F%98%80b"])
    }))
})
