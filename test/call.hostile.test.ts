/**
 * The call pipeline against a hostile server and a hostile caller (issue 18 §4–§8), on every
 * transport and on the generic path: each test is a finding or a probe of one.
 */
import { HttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schedule, Schema, Scope, Stream } from "effect"
import { KernelClient, KernelConfig, KernelRetry } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import type * as Http from "node:http"
import * as Call from "../src/internal/call.js"
import type { Operation } from "../src/internal/definition.js"
import { createBrowser } from "../src/internal/generated/operations/Browsers.js"
import { clickMouse } from "../src/internal/generated/operations/Computer.js"
import { createCredentialProvider } from "../src/internal/generated/operations/CredentialProviders.js"
import { createCredential, updateCredential } from "../src/internal/generated/operations/Credentials.js"
import { createInvocation } from "../src/internal/generated/operations/Invocations.js"
import { execProcess } from "../src/internal/generated/operations/Processes.js"
import { base, listThings } from "./utils/definitions.js"
import { head, httpServer, rawServer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

interface Seen {
  readonly method: string
  readonly rawUrl: string
  readonly url: URL
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

interface Answer {
  readonly status: number
  /** Header values as arrays are sent as several header lines. */
  readonly headers?: Record<string, string | Array<string>>
  readonly body?: unknown
  readonly text?: string
  /** Destroys the connection once the request was read, without an answer. */
  readonly destroy?: boolean
  /** Never answers. */
  readonly hang?: boolean
  /** Sends its head (a `Content-Length` of 100) and 7 bytes of body, then nothing more. */
  readonly stall?: boolean
}

let seen: Array<Seen> = []
let respond: (request: Seen) => Answer = () => ({ status: 200, body: {} })

const handler: Http.RequestListener = (req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const request: Seen = {
      method: req.method ?? "",
      rawUrl: req.url ?? "",
      url: new URL(req.url ?? "/", "http://loopback"),
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8")
    }
    seen.push(request)
    const answer = respond(request)
    if (answer.destroy === true) return void req.socket.destroy()
    if (answer.hang === true) return
    if (answer.stall === true) {
      res.writeHead(answer.status, { "content-length": "100" })
      return void res.write("partial")
    }
    const body = answer.text ?? (answer.body === undefined ? "" : JSON.stringify(answer.body))
    // `transfer-encoding: chunked` given: the body without a length
    const chunked = answer.headers?.["transfer-encoding"] === "chunked"
    res.writeHead(answer.status, {
      "content-type": "application/json",
      ...(chunked ? {} : { "content-length": String(Buffer.byteLength(body)) }),
      ...answer.headers
    })
    res.end(body)
  })
}

const scope = Effect.runSync(Scope.make())
let baseUrl = ""
let rawUrl = ""
/** The connections the JSON server has accepted so far. */
let accepted = () => 0
beforeAll(async () => {
  const served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  baseUrl = served.url
  accepted = served.accepted
  // a 204 that carries a body anyway (the bytes then sit on the connection), JSON for the rest
  const raw = await Effect.runPromise(Scope.extend(
    rawServer(({ path, socket }) => {
      if (path.startsWith("/gone")) socket.write(head("204 No Content", { "content-length": 5 }) + "hello")
      else {
        socket.write(
          head("200 OK", { "content-type": "application/json", "content-length": 11 }) + "{\"ok\":true}"
        )
      }
    }),
    scope
  ))
  rawUrl = `http://127.0.0.1:${raw.port}`
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const reset = (answer: (request: Seen) => Answer) => {
  seen = []
  respond = answer
}

const getItem = {
  ...base,
  name: "getItem",
  method: "GET",
  path: "/items/{id}/sub",
  parameters: [{ field: "id", name: "id", in: "path", required: true, schema: Schema.String }],
  answers: { 200: { kind: "json", schema: Schema.Struct({ ok: Schema.Boolean }) } }
} as const satisfies Operation

const headerParams = {
  ...base,
  name: "headerParams",
  method: "POST",
  path: "/h",
  parameters: [
    { field: "authorization", name: "authorization", in: "header", required: false, schema: Schema.String },
    { field: "x-kernel-project-id", name: "x-kernel-project-id", in: "header", required: false, schema: Schema.String },
    { field: "accept", name: "accept", in: "header", required: false, schema: Schema.String },
    { field: "content-type", name: "content-type", in: "header", required: false, schema: Schema.String }
  ],
  body: { kind: "json", schema: Schema.Struct({ name: Schema.String }), required: true },
  answers: { 200: { kind: "json", schema: Schema.Struct({ ok: Schema.Boolean }) } }
} as const satisfies Operation

const strictBody = {
  ...base,
  name: "strictBody",
  method: "POST",
  path: "/strict/{id}",
  parameters: [{ field: "id", name: "id", in: "path", required: true, schema: Schema.String }],
  body: { kind: "json", schema: Schema.Struct({ name: Schema.String }), required: true },
  answers: { 200: { kind: "json", schema: Schema.Struct({ ok: Schema.Boolean }) } }
} as const satisfies Operation

const union = {
  ...base,
  name: "union",
  method: "GET",
  path: "/union",
  parameters: [],
  answers: {
    200: {
      kind: "json",
      schema: Schema.Union(
        Schema.Struct({ kind: Schema.Literal("a"), a: Schema.Number }),
        Schema.Struct({ kind: Schema.Literal("b"), b: Schema.String })
      )
    }
  }
} as const satisfies Operation

const runtimeOf = (layer: Layer.Layer<HttpClient.HttpClient>, generic: boolean, url?: string) =>
  ManagedRuntime.make(
    Layer.effect(
      KernelClient.KernelClient,
      Effect.map(KernelClient.make, (client) =>
        generic ? { ...client, httpClient: HttpClient.mapRequest(client.httpClient, (r) => r) } : client)
    ).pipe(
      Layer.provide(KernelConfig.layer({
        apiKey: Redacted.make("sk_hostile_test"),
        projectId: "proj_hostile",
        baseUrl: url ?? baseUrl,
        timeout: "2 seconds",
        retrySchedule: Schedule.recurs(2)
      })),
      Layer.provide(layer),
      Layer.orDie
    )
  )

const variants = [
  ...transports.map((t) => ({ name: t.name, layer: t.layer, generic: false })),
  { name: "undici, generic path", layer: transports[0]!.layer, generic: true }
]

type Result<A, E> = { _tag: "Left"; left: E } | { _tag: "Right"; right: A }
const value = <A, E>(result: Result<A, E>): A => {
  if (result._tag === "Left") throw new Error(`expected a success, got ${JSON.stringify(result.left)}`)
  return result.right
}
const failure = <A, E>(result: Result<A, E>): E => {
  if (result._tag === "Right") throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe.each(variants)("hostile calls on $name", (variant) => {
  let runtime: ManagedRuntime.ManagedRuntime<KernelClient.KernelClient, never>
  beforeAll(() => {
    runtime = runtimeOf(variant.layer, variant.generic)
  })
  afterAll(() => runtime.dispose())

  const run = <A, E>(call: (client: KernelClient.Service) => Effect.Effect<A, E>) =>
    runtime.runPromise(Effect.either(Effect.flatMap(KernelClient.KernelClient, call)))

  const collect = (params: { readonly limit?: number; readonly offset?: number }) => {
    const items: Array<number> = []
    return run((client) =>
      Stream.runForEach(Call.paginate(listThings)(client)(params), (item) => Effect.sync(() => items.push(item.n)))
    ).then((result) => ({ result, items }))
  }

  it("a path parameter is exactly one segment whatever it holds", async () => {
    reset(() => ({ status: 200, body: { ok: true } }))
    const ids = [
      "%2F",
      "a%2Fb",
      "../x",
      "a/../../b",
      "?q=1",
      "#frag",
      "..%2F",
      "%2e%2e",
      ".%2e",
      "é😀",
      "a;b=c",
      "a\\b",
      " ",
      "x".repeat(4000)
    ]
    for (const id of ids) value(await run((client) => Call.make(getItem)(client)({ id })))
    expect(seen).toHaveLength(ids.length)
    seen.forEach((s, k) => {
      expect(s.url.search).toBe("")
      const parts = s.rawUrl.split("/")
      expect(parts).toHaveLength(4)
      expect(parts[1]).toBe("items")
      expect(parts[3]).toBe("sub")
      expect(decodeURIComponent(parts[2]!)).toBe(ids[k])
    })
  })

  it("a lone surrogate, `.`, `..` and empty ids are InvalidInput, nothing sent", async () => {
    reset(() => ({ status: 200, body: { ok: true } }))
    for (const id of ["\ud800", ".", "..", ""]) {
      expect(failure(await run((client) => Call.make(getItem)(client)({ id })))).toMatchObject({
        _tag: "InvalidInput",
        field: "id"
      })
    }
    expect(seen).toHaveLength(0)
  })

  it("header parameters never replace authorization, the project header, accept or content-type", async () => {
    reset(() => ({ status: 200, body: { ok: true } }))
    value(
      await run((client) =>
        Call.make(headerParams)(client)({
          name: "n",
          authorization: "Bearer stolen",
          "x-kernel-project-id": "other_project",
          accept: "text/html",
          "content-type": "text/plain"
        })
      )
    )
    expect(seen).toHaveLength(1)
    expect(seen[0]!.headers["authorization"]).toBe("Bearer sk_hostile_test")
    expect(seen[0]!.headers["x-kernel-project-id"]).toBe("proj_hostile")
    expect(seen[0]!.headers["accept"]).toBe("application/json")
    expect(seen[0]!.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(seen[0]!.body)).toEqual({ name: "n" })
  })

  it("a body's unknown keys (and the path parameters) are not sent: the schema's fields only", async () => {
    reset(() => ({ status: 200, body: { ok: true } }))
    const params = { id: "s1", name: "n", extra: "x", __proto__: { inherited: 1 } }
    value(await run((client) => Call.make(strictBody)(client)(params)))
    expect(seen).toHaveLength(1)
    expect(JSON.parse(seen[0]!.body)).toEqual({ name: "n" })
  })

  it("a 200 whose JSON fits no branch of a union is DecodeError", async () => {
    reset(() => ({ status: 200, body: { kind: "c", a: 1 } }))
    expect(failure(await run((client) => Call.make(union)(client)()))).toMatchObject({ _tag: "DecodeError" })
  })

  it("a page answer that is not an array is DecodeError (`null` is the empty page: a Go server's empty list)", async () => {
    for (const body of [{ items: [] }, "[]", 3]) {
      reset(() => ({ status: 200, body }))
      expect(failure(await run((client) => Call.make(listThings)(client)()))).toMatchObject({ _tag: "DecodeError" })
    }
    reset(() => ({ status: 200, body: null, headers: { "x-has-more": "false" } }))
    const { items, result } = await collect({ limit: 1 })
    expect(result._tag).toBe("Right")
    expect(items).toEqual([])
  })

  it("X-Next-Offset null (the document marks the header nullable) on a last page ends the stream", async () => {
    reset(() => ({ status: 200, body: [{ n: 0 }], headers: { "x-has-more": "false", "x-next-offset": "null" } }))
    const { items, result } = await collect({ limit: 1 })
    expect(result._tag).toBe("Right")
    expect(items).toEqual([0])
    expect(seen).toHaveLength(1)
  })

  it.each([
    ["-1"],
    ["1e3"],
    ["0x10"],
    ["1.5"],
    ["99999999999999999999"],
    [["10", "20"]],
    [["10", "10"]]
  ])("X-Next-Offset %j is DecodeError", async (next) => {
    reset(() => ({ status: 200, body: [{ n: 0 }], headers: { "x-has-more": "true", "x-next-offset": next } }))
    const { items, result } = await collect({ limit: 1 })
    expect(failure(result)).toMatchObject({ _tag: "DecodeError" })
    expect(items).toEqual([])
    expect(seen).toHaveLength(1)
  })

  it("two X-Has-More headers is DecodeError", async () => {
    reset(() => ({ status: 200, body: [{ n: 0 }], headers: { "x-has-more": ["false", "true"] } }))
    const { result } = await collect({})
    expect(failure(result)).toMatchObject({ _tag: "DecodeError" })
  })

  it("a next offset inside the page just answered (items would repeat) is DecodeError, no second request", async () => {
    // 10 items from offset 0, then "the next page starts at 5": items 5..9 would come twice
    reset((request) => {
      const offset = Number(request.url.searchParams.get("offset") ?? "0")
      const items = Array.from({ length: 10 }, (_, k) => ({ n: offset + k }))
      return { status: 200, body: items, headers: { "x-has-more": "true", "x-next-offset": String(offset + 5) } }
    })
    const { items, result } = await collect({ limit: 10 })
    expect(failure(result)).toMatchObject({ _tag: "DecodeError" })
    expect(items).toEqual(Array.from({ length: 10 }, (_, k) => k))
    expect(seen).toHaveLength(1)
  })

  it("empty pages that say more follow (moving on by one each) are DecodeError, not requests forever", async () => {
    reset((request) => {
      const offset = Number(request.url.searchParams.get("offset") ?? "0")
      return { status: 200, body: [], headers: { "x-has-more": "true", "x-next-offset": String(offset + 1) } }
    })
    const { items, result } = await collect({ limit: 10 })
    expect(failure(result)).toMatchObject({ _tag: "DecodeError" })
    expect(items).toEqual([])
    expect(seen).toHaveLength(1)
  })

  it("a next offset that loops back to an earlier page is DecodeError", async () => {
    reset((request) => {
      const offset = Number(request.url.searchParams.get("offset") ?? "0")
      return {
        status: 200,
        body: [{ n: offset }],
        headers: { "x-has-more": "true", "x-next-offset": offset === 0 ? "1" : "0" }
      }
    })
    const { items, result } = await collect({ limit: 1 })
    expect(failure(result)).toMatchObject({ _tag: "DecodeError" })
    expect(items).toEqual([0, 1])
    expect(seen).toHaveLength(2)
  })

  it("InvalidInput about a credential's values never quotes them", async () => {
    reset(() => ({ status: 201, body: {} }))
    const secret = "hunter2-SECRET"
    const inputs: ReadonlyArray<unknown> = [
      { name: "n", domain: "d", values: { password: secret } },
      { name: "n", domain: "d", values: secret },
      { name: "n", domain: "d", values: [secret] },
      { name: "n", domain: "d", values: { password: Redacted.make(secret) }, totp_secret: secret },
      { name: 1, domain: "d", values: { password: Redacted.make(secret) } }
    ]
    for (const input of inputs) {
      // an untyped caller (JavaScript, or data from elsewhere)
      const error = failure(await run((client) => Call.make(createCredential)(client)(input as never)))
      expect(error).toMatchObject({ _tag: "InvalidInput" })
      const texts = [String(error), JSON.stringify(error), error instanceof Error ? error.message : "", String(error)]
      for (const text of texts) expect(text).not.toContain(secret)
    }
    expect(seen).toHaveLength(0)
  })
})

const queries = {
  ...base,
  name: "queries",
  method: "GET",
  path: "/q",
  parameters: [
    { field: "n", name: "n", in: "query", required: false, schema: Schema.Number },
    { field: "s", name: "a b&c=d[]", in: "query", required: false, schema: Schema.String },
    { field: "b", name: "b", in: "query", required: false, schema: Schema.Boolean }
  ],
  answers: { 200: { kind: "none" } }
} as const satisfies Operation

describe.each(variants)("hostile calls (2) on $name", (variant) => {
  let runtime: ManagedRuntime.ManagedRuntime<KernelClient.KernelClient, never>
  beforeAll(() => {
    runtime = runtimeOf(variant.layer, variant.generic)
  })
  afterAll(() => runtime.dispose())
  const run = <A, E>(call: (client: KernelClient.Service) => Effect.Effect<A, E>) =>
    runtime.runPromise(Effect.either(Effect.flatMap(KernelClient.KernelClient, call)))

  const unrepeatable: ReadonlyArray<
    readonly [string, (client: KernelClient.Service) => Effect.Effect<unknown, unknown>]
  > = [
    ["Browsers.create", (client) => Call.make(createBrowser)(client)()],
    ["Computer.clickMouse", (client) => Call.make(clickMouse)(client)({ id: "b1", x: 1, y: 2 })],
    ["Processes.exec", (client) => Call.make(execProcess)(client)({ id: "b1", command: "rm" })],
    [
      "Invocations.create",
      (client) => Call.make(createInvocation)(client)({ app_name: "a", version: "1", action_name: "x" })
    ]
  ]

  it.each(unrepeatable)(
    "%s: a 5xx or a connection reset after the request was written is not retried",
    async (_, call) => {
      for (const answer of [{ status: 503 }, { status: 500 }, { status: 502 }, { status: 200, destroy: true }]) {
        reset(() => ({ ...answer, body: { code: "x", message: "y" } }))
        const result = await run(call)
        expect(result._tag).toBe("Left")
        expect(seen).toHaveLength(1)
      }
    }
  )

  it("an answer without content is void whatever it carries; its connection is reused when it is small", async () => {
    // (on KernelTransport read before the response is handed over, as a JSON answer is: one step)
    const click = unrepeatable[1]![1]
    for (
      const [text, headers, reused] of [
        ["", {}, true],
        ["{\"ok\":true}", {}, true],
        // past 64 KiB: not read whole (its connection may go with it)
        ["x".repeat(100 * 1024), {}, false],
        ["{}", { "transfer-encoding": "chunked" }, true]
      ] as const
    ) {
      reset(() => ({ status: 200, text, headers }))
      // a first call opens (or takes) a connection; the next ones take it again when the body was read
      value(await run(click))
      const before = accepted()
      for (let i = 0; i < 4; i++) expect(value(await run(click))).toBeUndefined()
      expect(seen).toHaveLength(5)
      // (a call that follows at once may find the connection still busy: one more, then both reused)
      if (reused) expect(accepted() - before, `${text.length} bytes`).toBeLessThanOrEqual(1)
    }
  })

  it("an answer without content whose body stalls is a Timeout at the deadline, not a success", async () => {
    // (on KernelTransport the discarded read, cancelled by the deadline, succeeded as void)
    reset(() => ({ status: 200, stall: true }))
    expect(failure(await run(unrepeatable[1]![1]))).toMatchObject({ _tag: "Timeout" })
    expect(seen).toHaveLength(1)
  })

  it("Browsers.create: a time-out once the request was sent is not retried", async () => {
    reset(() => ({ status: 200, hang: true }))
    expect(failure(await run(unrepeatable[0]![1]))).toMatchObject({ _tag: "Timeout" })
    expect(seen).toHaveLength(1)
  })

  it.each(unrepeatable)("%s: opted in with KernelRetry.retryNonIdempotent, a 5xx is retried", async (_, call) => {
    reset(() => seen.length === 1 ? { status: 503, body: { code: "x", message: "y" } } : { status: 500 })
    await run((client) => KernelRetry.retryNonIdempotent(call(client)))
    expect(seen.length).toBeGreaterThan(1)
  })

  it.each(unrepeatable)("%s: a 429 is retried", async (_, call) => {
    reset(() => seen.length === 1 ? { status: 429, body: { code: "rate_limited", message: "slow" } } : { status: 500 })
    await run(call)
    expect(seen.length).toBeGreaterThan(1)
  })

  it("query numbers: NaN, Infinity are InvalidInput; -0 is 0; null is InvalidInput; odd names encoded", async () => {
    reset(() => ({ status: 200 }))
    for (const n of [NaN, Infinity, -Infinity, null]) {
      expect(failure(await run((client) => Call.make(queries)(client)({ n } as never)))).toMatchObject({
        _tag: "InvalidInput",
        field: "n"
      })
    }
    expect(seen).toHaveLength(0)
    value(await run((client) => Call.make(queries)(client)({ n: -0, s: "x&y=z", b: false })))
    expect([...seen[0]!.url.searchParams]).toEqual([["n", "0"], ["a b&c=d[]", "x&y=z"], ["b", "false"]])
  })

  it("a documented 204 that carries a body: a success, and the next call on the connection too", async () => {
    const gone = {
      ...base,
      name: "gone",
      method: "DELETE",
      path: "/gone/{id}",
      parameters: [{ field: "id", name: "id", in: "path", required: true, schema: Schema.String }],
      answers: { 204: { kind: "none" } }
    } as const satisfies Operation
    const okAnswer = {
      ...gone,
      name: "ok",
      method: "GET",
      path: "/ok",
      parameters: [],
      answers: { 200: { kind: "json", schema: Schema.Struct({ ok: Schema.Boolean }) } }
    } as const satisfies Operation
    const raw = runtimeOf(variant.layer, variant.generic, rawUrl)
    try {
      for (let k = 0; k < 3; k++) {
        const first = await raw.runPromise(
          Effect.either(Effect.flatMap(KernelClient.KernelClient, (client) => Call.make(gone)(client)({ id: "d1" })))
        )
        expect(first._tag).toBe("Right")
        const second = await raw.runPromise(
          Effect.either(Effect.flatMap(KernelClient.KernelClient, (client) => Call.make(okAnswer)(client)()))
        )
        expect(value(second)).toEqual({ ok: true })
      }
    } finally {
      await raw.dispose()
    }
  })

  it("a `none` answer with a large body, and an undocumented 2xx", async () => {
    reset(() => ({ status: 200, text: "x".repeat(1024 * 1024) }))
    value(await run((client) => Call.make(queries)(client)()))
    reset(() => ({ status: 203, body: {} }))
    expect(failure(await run((client) => Call.make(queries)(client)()))).toMatchObject({ _tag: "UnexpectedStatus" })
  })
})

describe("the simulator's request log", () => {
  it("never records a request body's secrets (credential values, TOTP secret, provider token)", async () => {
    const secret = (name: string) => `SECRET-${name}-0123456789`
    const totpSecret = "SECRETTOTPJBSWY3DP"
    const program = Effect.gen(function*() {
      const client = yield* KernelClient.KernelClient
      const simulator = yield* KernelSimulator.KernelSimulator
      yield* Call.make(createCredential)(client)({
        name: "c-hostile",
        domain: "example.com",
        values: { password: Redacted.make(secret("password")) },
        // base32, as a TOTP secret must be
        totp_secret: Redacted.make(totpSecret)
      })
      yield* Call.make(updateCredential)(client)({
        idOrName: "c-hostile",
        values: { password: Redacted.make(secret("updated")) }
      })
      yield* Effect.either(
        Call.make(createCredentialProvider)(client)({
          name: "p-hostile",
          provider_type: "onepassword",
          token: Redacted.make(secret("token"))
        } as never)
      )
      return yield* simulator.requests
    })
    const requests = await Effect.runPromise(
      program.pipe(Effect.provide(KernelClient.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))))
    )
    expect(requests.map((r) => r.route)).toEqual(["createCredential", "updateCredential", "createCredentialProvider"])
    const log = JSON.stringify(requests)
    for (const name of ["password", "updated", "token"]) expect(log).not.toContain(secret(name))
    expect(log).not.toContain(totpSecret)
    // what is not secret is still shown
    expect(log).toContain("c-hostile")
  })
})
