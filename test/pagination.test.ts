/**
 * The generated `<accessor>All` streams (issue 18): every item of a paged list, following
 * `X-Next-Offset` as given and stopping on `X-Has-More: false`, built from the service's one-page
 * method (so a service swapped in with `Layer.succeed` is paged the same way). Against a loopback
 * server (`Kernel.layer` over the default transport) and through swapped services.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, DateTime, Effect, Exit, Layer, Redacted, Scope, Stream } from "effect"
import { ApiKeys, Apps, Browsers, Deployments, Kernel, KernelConfig, KernelError, Projects } from "effect-kernel"
import type * as Http from "node:http"
import { httpServer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const browserJson = (n: number) => ({
  created_at: "2025-01-01T00:00:00Z",
  cdp_ws_url: `wss://cdp.example/${n}`,
  webdriver_ws_url: `wss://bidi.example/${n}`,
  headless: true,
  stealth: false,
  session_id: `s${n}`,
  timeout_seconds: 60
})

interface Seen {
  readonly path: string
  readonly query: URLSearchParams
}

let seen: Array<Seen> = []
/** The total of items; `repeatAt`: from that offset on, the next offset is the page's own. */
let server = {
  total: 250,
  repeatAt: undefined as number | undefined,
  noNext: false,
  hasMore: undefined as string | undefined
}

const handler: Http.RequestListener = (req, res) => {
  const url = new URL(req.url ?? "/", "http://loopback")
  seen.push({ path: url.pathname, query: url.searchParams })
  const offset = Number(url.searchParams.get("offset") ?? "0")
  const limit = Number(url.searchParams.get("limit") ?? "20")
  const count = Math.max(0, Math.min(limit, server.total - offset))
  const items = Array.from({ length: count }, (_, k) => browserJson(offset + k))
  const next = offset + count
  const hasMore = next < server.total
  const nextOffset = server.repeatAt !== undefined && offset >= server.repeatAt ? offset : next
  const body = JSON.stringify(items)
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-has-more": server.hasMore ?? String(hasMore),
    ...(hasMore && !server.noNext ? { "x-next-offset": String(nextOffset) } : {})
  })
  res.end(body)
}

const key = "sk_Pages_MixedCase_Key"
const scope = Effect.runSync(Scope.make())
let layer: Layer.Layer<Kernel.Services> = Layer.empty as never

beforeAll(async () => {
  const served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
  layer = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make(key),
      baseUrl: served.url,
      maxRetries: 0,
      timeout: "5 seconds"
    })),
    Layer.provide(transports[0]!.layer),
    Layer.orDie
  )
})

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const reset = (options: Partial<typeof server> = {}) => {
  seen = []
  server = { total: 250, repeatAt: undefined, noNext: false, hasMore: undefined, ...options }
}

const ids = (browsers: Chunk.Chunk<Browsers.Browser>) => Chunk.toArray(browsers).map((b) => b.session_id)
const expected = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `s${from + k}`)

describe("paged lists as streams (<accessor>All)", () => {
  it.each([100, 7])("250 items in pages of %i over the loopback server: none skipped or repeated", async (limit) => {
    reset()
    const items = await Effect.runPromise(
      Stream.runCollect(Browsers.listAll({ limit })).pipe(Effect.provide(layer))
    )
    expect(ids(items)).toEqual(expected(0, 250))
    const pages = Math.ceil(250 / limit)
    expect(seen).toHaveLength(pages)
    expect(seen.every((s) => s.path === "/browsers" && s.query.get("limit") === String(limit))).toBe(true)
    expect(seen.map((s) => s.query.get("offset"))).toEqual(
      Array.from({ length: pages }, (_, k) => k === 0 ? null : String(k * limit))
    )
    // the secrets of every item stay redacted
    expect(Redacted.isRedacted(Chunk.unsafeGet(items, 0).cdp_ws_url)).toBe(true)
  })

  it("from the caller's own offset, and pages asked only as the stream needs them", async () => {
    reset()
    const items = await Effect.runPromise(
      Stream.runCollect(Browsers.listAll({ limit: 7, offset: 200 })).pipe(Effect.provide(layer))
    )
    expect(ids(items)).toEqual(expected(200, 250))
    reset()
    const first = await Effect.runPromise(
      Stream.runCollect(Stream.take(Browsers.listAll({ limit: 7 }), 10)).pipe(Effect.provide(layer))
    )
    expect(ids(first)).toEqual(expected(0, 10))
    expect(seen).toHaveLength(2)
  })

  it("a server that gives the same offset twice is a typed DecodeError, not an endless stream", async () => {
    reset({ repeatAt: 100 })
    const collected: Array<string> = []
    const decoded = await Effect.runPromise(
      Effect.flip(
        Stream.runForEach(Browsers.listAll({ limit: 50 }), (b) => Effect.sync(() => collected.push(b.session_id)))
      ).pipe(Effect.provide(layer))
    )
    expect(decoded).toBeInstanceOf(KernelError.DecodeError)
    expect(decoded).toMatchObject({ _tag: "DecodeError", method: "GET", path: "/browsers", status: 200 })
    expect(decoded.message).toContain("X-Next-Offset 100 does not move past the offset 100")
    // the items of the pages before, each once
    expect(collected).toEqual(expected(0, 150))
  })

  it("more pages said but no next offset is a typed DecodeError", async () => {
    reset({ noNext: true })
    const error = await Effect.runPromise(
      Effect.flip(Stream.runDrain(Browsers.listAll({ limit: 100 }))).pipe(Effect.provide(layer))
    )
    expect(error).toMatchObject({ _tag: "DecodeError" })
    expect(seen).toHaveLength(1)
  })

  it("a paging header that is not valid is quoted as sent when short (an echoed key is scrubbed), else not quoted", async () => {
    for (
      const [hasMore, shows] of [["maybe", "\"maybe\""], [key, "<redacted>"], ["x".repeat(12_000), "12000 characters"]]
    ) {
      reset({ hasMore })
      const error = await Effect.runPromise(
        Effect.flip(Stream.runDrain(Browsers.listAll({ limit: 100 }))).pipe(Effect.provide(layer))
      )
      expect(error).toMatchObject({ _tag: "DecodeError" })
      expect(error.message).toContain(shows)
      expect(error.message.toLowerCase()).not.toContain(key.toLowerCase())
      expect(error.message.length).toBeLessThan(200)
    }
  })

  it("every paged area has its stream accessor", () => {
    for (
      const all of [
        Browsers.listAll,
        Apps.listAll,
        ApiKeys.listAll,
        Deployments.listAll,
        Projects.listAll
      ]
    ) expect(typeof all).toBe("function")
  })
})

describe("through a service swapped in with Layer.succeed", () => {
  const created = DateTime.unsafeMake("2025-01-01T00:00:00Z")
  const fake = (total: number, options: { readonly stuckAt?: number } = {}) => {
    const calls: Array<number | undefined> = []
    const service: Browsers.ListBrowsersService = {
      listBrowsers: (params) =>
        Effect.sync(() => {
          calls.push(params.offset)
          const offset = params.offset ?? 0
          const limit = params.limit ?? 20
          const count = Math.max(0, Math.min(limit, total - offset))
          const next = offset + count
          return {
            items: Array.from({ length: count }, (_, k) => ({
              created_at: created,
              cdp_ws_url: Redacted.make(`wss://cdp/${offset + k}`),
              webdriver_ws_url: Redacted.make("wss://bidi"),
              headless: true,
              stealth: false,
              session_id: `s${offset + k}`,
              timeout_seconds: 60
            })),
            hasMore: next < total,
            nextOffset: options.stuckAt !== undefined && offset >= options.stuckAt ? offset : next
          }
        })
    }
    return { calls, layer: Layer.succeed(Browsers.ListBrowsers, service) }
  }

  it.each([100, 7])("250 items in pages of %i", async (limit) => {
    const { calls, layer } = fake(250)
    const items = await Effect.runPromise(
      Stream.runCollect(Browsers.listAll({ limit })).pipe(Effect.provide(layer))
    )
    expect(ids(items)).toEqual(expected(0, 250))
    expect(calls).toEqual(Array.from({ length: Math.ceil(250 / limit) }, (_, k) => k === 0 ? undefined : k * limit))
  })

  it("the same offset twice is DecodeError after the items before it", async () => {
    const { calls, layer } = fake(250, { stuckAt: 14 })
    const collected: Array<string> = []
    const error = await Effect.runPromise(
      Effect.flip(
        Stream.runForEach(Browsers.listAll({ limit: 7 }), (b) => Effect.sync(() => collected.push(b.session_id)))
      ).pipe(Effect.provide(layer))
    )
    expect(error).toMatchObject({ _tag: "DecodeError", method: "GET", path: "/browsers" })
    expect(collected).toEqual(expected(0, 21))
    expect(calls).toEqual([undefined, 7, 14])
  })
})
