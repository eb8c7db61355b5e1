import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Stream, TestClock } from "effect"
import { AuthConnections, BrowserPools, Computer, Deployments, type KernelError, Replays } from "effect-kernel"
import { connectionRefused, errorBody, json, mockLayer, pool, token } from "./utils/mock.js"

// the smallest replay: an ftyp box and an mdat box (a replay has media)
const mp4 = new Uint8Array([0, 0, 0, 12, 0x66, 0x74, 0x79, 0x70, 1, 2, 3, 4, 0, 0, 0, 10, 0x6d, 0x64, 0x61, 0x74, 5, 6])

interface Case {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly requestBody: string | undefined
  readonly run: Effect.Effect<
    unknown,
    KernelError.KernelError,
    | Replays.DownloadReplay
    | Computer.SetCursorVisibility
    | Computer.GetMousePosition
    | BrowserPools.ListBrowserPools
    | Deployments.DeleteDeployment
  >
  readonly documented: ReadonlyArray<number>
  readonly success: () => Response
  readonly expected: (value: unknown) => void
  readonly malformed: (() => Response) | undefined
  readonly malformedField: string
}

const cases: ReadonlyArray<Case> = [
  {
    name: "downloadReplay",
    method: "GET",
    path: "/browsers/b1/replays/r1",
    requestBody: undefined,
    run: Replays.download({ id: "b1", replayId: "r1" }).pipe(
      Stream.runCollect,
      Effect.map((chunks) => Chunk.toReadonlyArray(chunks).flatMap((chunk) => Array.from(chunk)))
    ),
    documented: [400, 401, 403, 404, 500],
    success: () => new Response(mp4, { status: 200, headers: { "content-type": "video/mp4" } }),
    expected: (bytes) => expect(bytes).toEqual(Array.from(mp4)),
    malformed: () => new Response("<html>oops</html>", { status: 200, headers: { "content-type": "text/html" } }),
    malformedField: "content-type text/html"
  },
  {
    name: "setCursorVisibility",
    method: "POST",
    path: "/browsers/b1/computer/cursor",
    requestBody: JSON.stringify({ hidden: true }),
    run: Computer.setCursorVisibility({ id: "b1", hidden: true }),
    documented: [400, 401, 404, 500],
    success: () => json(200, { ok: true }),
    expected: (value) => expect(value).toEqual(new Computer.Ok({ ok: true })),
    malformed: () => json(200, { ok: "yes" }),
    malformedField: "[\"ok\"]"
  },
  {
    name: "getMousePosition",
    method: "POST",
    path: "/browsers/b1/computer/get_mouse_position",
    requestBody: undefined,
    run: Computer.getMousePosition({ id: "b1" }),
    documented: [400, 401, 404, 500],
    success: () => json(200, { x: 12, y: 34, extra: "ignored" }),
    expected: (value) => expect(value).toEqual(new Computer.MousePosition({ x: 12, y: 34 })),
    malformed: () => json(200, { x: 1 }),
    malformedField: "[\"y\"]"
  },
  {
    name: "listBrowserPools",
    method: "GET",
    path: "/browser_pools",
    requestBody: undefined,
    run: BrowserPools.list(),
    documented: [401, 403, 500],
    success: () => json(200, [pool("p1", { unknown_field: 1 }), pool("p2")]),
    expected: (value) => {
      const pools = value as ReadonlyArray<BrowserPools.BrowserPool>
      expect(pools.map((p) => p.id)).toEqual(["p1", "p2"])
      expect(pools[0]!.created_at.epochMillis).toBe(Date.UTC(2026, 0, 2, 3, 4, 5))
      expect(pools[0]!.browser_pool_config.chrome_policy).toEqual({
        HomepageLocation: "https://example.com",
        Nested: { a: [1, 2] }
      })
      expect(pools[0]!.browser_pool_config.viewport?.width).toBe(1920)
    },
    malformed: () => json(200, [pool("p1", { created_at: "yesterday" })]),
    malformedField: "created_at"
  },
  {
    name: "deleteDeployment",
    method: "DELETE",
    path: "/deployments/d1",
    requestBody: undefined,
    run: Deployments.delete({ id: "d1" }),
    documented: [401, 404, 500],
    success: () => new Response(null, { status: 204 }),
    expected: (value) => expect(value).toBeUndefined(),
    malformed: undefined,
    malformedField: ""
  }
]

const tagOf: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  429: "RateLimited",
  500: "InternalServerError"
}

describe.each(cases)("$name", (c) => {
  it.effect("decodes success and sends an authenticated request", () => {
    const { layer, requests } = mockLayer(() => c.success(), { projectId: "proj-1" })
    return Effect.gen(function*() {
      const value = yield* c.run
      c.expected(value)
      expect(requests).toHaveLength(1)
      const [request] = requests
      expect(request!.method).toBe(c.method)
      expect(request!.url.origin + request!.url.pathname).toBe(`https://kernel.test${c.path}`)
      expect(request!.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(request!.headers["x-kernel-project-id"]).toBe("proj-1")
      expect(request!.body).toBe(c.requestBody)
    }).pipe(Effect.provide(layer))
  })

  it.effect.each(c.documented)("maps documented status %i to its tag with the Error fields", (status) => {
    const body = {
      code: status === 400 ? "bad_request" : "some_code",
      message: `failed with ${status}`,
      details: [{ code: "invalid_input", message: "id is wrong" }],
      inner_error: { code: "inner", message: "deeper" }
    }
    const { layer } = mockLayer(() => json(status, body), { maxRetries: 0 })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(c.run)
      expect(error._tag).toBe(tagOf[status])
      expect(error).toMatchObject({
        status,
        code: body.code,
        message: body.message,
        details: body.details,
        innerError: body.inner_error,
        method: c.method,
        path: c.path
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("maps an undocumented status to UnexpectedStatus with a body excerpt", () => {
    const undocumented = [400, 403, 404, 418].find((s) => !c.documented.includes(s))!
    const { layer } = mockLayer(() => new Response("<h1>nope</h1>", { status: undocumented }), { maxRetries: 0 })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(c.run)
      expect(error._tag).toBe("UnexpectedStatus")
      expect(error).toMatchObject({ status: undocumented, code: "unknown", body: "<h1>nope</h1>" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("maps 429 and 409 on any route to RateLimited and Conflict", () => {
    const { layer } = mockLayer(
      (_r, _q, attempt) => json(attempt === 1 ? 429 : 409, errorBody("busy", "slow down")),
      { maxRetries: 0 }
    )
    return Effect.gen(function*() {
      expect((yield* Effect.flip(c.run))._tag).toBe("RateLimited")
      expect((yield* Effect.flip(c.run))._tag).toBe("Conflict")
    }).pipe(Effect.provide(layer))
  })

  if (c.malformed !== undefined) {
    const malformed = c.malformed
    it.effect("fails a malformed success body with DecodeError naming the problem", () => {
      const { layer } = mockLayer(() => malformed(), { maxRetries: 0 })
      return Effect.gen(function*() {
        const error = yield* Effect.flip(c.run)
        expect(error._tag).toBe("DecodeError")
        expect(error.message).toContain(c.malformedField)
      }).pipe(Effect.provide(layer))
    })
  }

  it.effect("fails a transport failure with TransportError after the retries", () => {
    const { layer, requests } = mockLayer((_r, request) => connectionRefused(request), {
      maxRetries: 2,
      retrySchedule: undefined
    })
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.flip(c.run))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("TransportError")
      expect(error.message).toContain("ECONNREFUSED")
      expect(requests).toHaveLength(3)
    }).pipe(Effect.provide(layer))
  })
})

// the document's 409 of AuthConnections.create names the connection that exists (`existing_id`): kept as the
// Conflict's first detail when it is a string, before the body's own details; nothing added otherwise
describe("a 409 with existing_id", () => {
  const own = [{ code: "d", message: "m" }]
  const cases = [
    ["a string, before the body's details", { existing_id: "conn_1", details: own }, [
      { code: "existing_id", message: "conn_1" },
      ...own
    ]],
    ["a string, no details", { existing_id: "conn_1" }, [{ code: "existing_id", message: "conn_1" }]],
    ["a number: not an id", { existing_id: 7, details: own }, own],
    ["absent", { details: own }, own]
  ] as const
  it.effect.each(cases)("%s", ([, extra, details]) => {
    const { layer } = mockLayer(() => json(409, { code: "already_exists", message: "exists", ...extra }), {
      maxRetries: 0
    })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(AuthConnections.create({ profile_name: "p", domain: "example.com" }))
      expect(error).toMatchObject({ _tag: "Conflict", code: "already_exists" })
      expect("details" in error ? error.details?.map((d) => ({ code: d.code, message: d.message })) : undefined)
        .toEqual(details)
    }).pipe(Effect.provide(layer))
  })
})
