/**
 * Issue 18 as an independent harness sees it: the public API against ONE hostile loopback server
 * (node:http, started once for the file) whose answer each case sets, counting what reached it.
 *
 * - secrets: every address the document shows carrying a token (`?jwt=...`) decodes as `Redacted`
 *   and a sentinel in it appears in no `String`, `JSON.stringify`, `util.inspect` or `Effect.log`
 *   line — `webdriver_ws_url`, a replay's `replay_view_url` and an auth connection's
 *   `live_view_url` were plain strings (found by this harness);
 * - retries: a non-idempotent call reaches the server once after a 5xx or a time-out, three times
 *   (maxRetries 2) after a 429 or with `KernelRetry.retryNonIdempotent`;
 * - path parameters are one encoded segment, an empty one is `InvalidInput` with nothing sent;
 *   a GET carries no body; an invalid JSON body is `InvalidInput` with nothing sent;
 * - typed success statuses (`acquire` 204, `Invocations.create` 202) and the new error statuses.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Logger, Redacted, Stream } from "effect"
import {
  AuthConnections,
  BrowserPools,
  Browsers,
  Computer,
  Deployments,
  Invocations,
  Kernel,
  KernelConfig,
  KernelRetry,
  KernelTransport,
  Logs,
  Processes,
  Replays
} from "effect-kernel"
import * as Http from "node:http"
import * as util from "node:util"
import { makeObserver, withObserver } from "./utils/observe.js"

const TOKEN = "sk_SENTINEL_harness18_0123456789"
const SECRET = "SECRET_SENTINEL_h18"

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}
type Answer = (seen: Seen, res: Http.ServerResponse) => void

const seen: Array<Seen> = []
let answer: Answer = (_seen, res) => res.writeHead(404).end()
let server: Http.Server
let baseUrl = ""

beforeAll(() =>
  new Promise<void>((resolve) => {
    server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const one = {
          method: req.method ?? "",
          url: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString()
        }
        seen.push(one)
        answer(one, res)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      baseUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
      resolve()
    })
  })
)
afterAll(() =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
)

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (_seen, res) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))

/** Sets the server's answer and forgets what it saw. */
const serve = (next: Answer) => {
  answer = next
  seen.length = 0
}

/** Runs `effect` on `Kernel.layer` over `KernelTransport` against the loopback server, capturing log lines. */
const run = <A, E>(
  effect: Effect.Effect<A, E, Kernel.Services>,
  options: Partial<KernelConfig.Options> = {}
) => {
  const lines: Array<string> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => {
      lines.push(util.inspect(message, { depth: 20 }))
    })
  )
  const live = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make(TOKEN),
      baseUrl,
      maxRetries: 2,
      timeout: "300 millis",
      maxRetryAfter: "10 millis",
      ...options
    })),
    Layer.provide(KernelTransport.layerUndici),
    Layer.orDie
  )
  return effect.pipe(
    Effect.provide(Layer.merge(live, capture)),
    Effect.exit,
    Effect.map((exit) => ({ exit, lines }))
  )
}

/** Every printed form of `value` (and the log lines), to look for a sentinel in. */
const printed = (value: unknown, lines: ReadonlyArray<string>) => [
  String(value),
  JSON.stringify(value) ?? "",
  util.inspect(value, { depth: 20 }),
  ...lines
]

const pretty = <A, E>(exit: Exit.Exit<A, E>) => Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "success"

const browserJson = (id: string) => ({
  created_at: "2026-01-01T00:00:00Z",
  cdp_ws_url: `wss://proxy.example:8443/browser/cdp?jwt=${SECRET}`,
  webdriver_ws_url: `wss://proxy.example:8443/browser/webdriver/session?jwt=${SECRET}`,
  browser_live_view_url: `https://proxy.example:8443/browser/live?jwt=${SECRET}`,
  headless: false,
  stealth: false,
  session_id: id,
  timeout_seconds: 60,
  a_key_of_a_later_version: { nested: true }
})

describe("harness18: secrets the document shows carrying a token", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly body: unknown
    readonly call: Effect.Effect<unknown, unknown, Kernel.Services>
    readonly field: (value: unknown) => unknown
  }> = [
    {
      name: "Browsers.retrieve: webdriver_ws_url (and cdp_ws_url, browser_live_view_url)",
      body: browserJson("b1"),
      call: Browsers.retrieve({ id: "b1" }),
      field: (value) => Reflect.get(Object(value), "webdriver_ws_url")
    },
    {
      name: "Replays.list: replay_view_url",
      body: [{ replay_id: "r1", started_at: null, finished_at: null, replay_view_url: `https://x/r?jwt=${SECRET}` }],
      call: Replays.list({ id: "b1" }),
      field: (value) => Array.isArray(value) ? Reflect.get(Object(value[0]), "replay_view_url") : undefined
    },
    {
      name: "AuthConnections.retrieve: live_view_url",
      body: {
        id: "ma_1",
        profile_name: "p",
        domain: "example.com",
        status: "NEEDS_AUTH",
        save_credentials: false,
        record_session: false,
        live_view_url: `https://live.example/?jwt=${SECRET}`
      },
      call: AuthConnections.retrieve({ id: "ma_1" }),
      field: (value) => Reflect.get(Object(value), "live_view_url")
    },
    {
      name: "AuthConnections.login: live_view_url",
      body: {
        id: "ma_1",
        flow_type: "LOGIN",
        hosted_url: "https://hosted.example/login",
        flow_expires_at: "2026-01-01T00:00:00Z",
        live_view_url: `https://live.example/?jwt=${SECRET}`
      },
      call: AuthConnections.login({ id: "ma_1" }),
      field: (value) => Reflect.get(Object(value), "live_view_url")
    }
  ]
  for (const c of cases) {
    it.effect(c.name, () =>
      Effect.gen(function*() {
        serve(json(200, c.body))
        const { exit, lines } = yield* run(c.call.pipe(Effect.tap((value) => Effect.log("answer", value))))
        if (Exit.isFailure(exit)) expect.fail(pretty(exit))
        const field = c.field(exit.value)
        expect(Redacted.isRedacted(field)).toBe(true)
        expect(Redacted.isRedacted(field) ? Redacted.value(field) : "").toContain(SECRET)
        for (const form of printed(exit.value, lines)) expect(form).not.toContain(SECRET)
      }))
  }
})

describe("harness18: a DecodeError does not quote an answer's secrets", () => {
  // a proxy that double-encodes JSON answers the browser as one string: the whole answer, tokens included
  it.effect("Browsers.retrieve answered with the browser as a JSON string", () =>
    Effect.gen(function*() {
      serve(json(200, JSON.stringify(browserJson("b1"))))
      const { exit, lines } = yield* run(Browsers.retrieve({ id: "b1" }).pipe(Effect.tapErrorCause(Effect.logError)))
      if (Exit.isSuccess(exit)) return expect.fail("succeeded")
      const error = Cause.squash(exit.cause)
      expect(Reflect.get(Object(error), "_tag")).toBe("DecodeError")
      expect(String(Reflect.get(Object(error), "message"))).toMatch(/a string of \d+ characters/)
      for (const form of [Cause.pretty(exit.cause), ...printed(error, lines)]) expect(form).not.toContain(SECRET)
    }))
})

describe("harness18: a non-idempotent call is never done twice", () => {
  const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, Kernel.Services>]> = [
    ["Browsers.create", Browsers.create({})],
    ["Computer.clickMouse", Computer.clickMouse({ id: "b1", x: 1, y: 2 })],
    ["Computer.typeText", Computer.typeText({ id: "b1", text: "hi" })],
    ["Computer.pressKey", Computer.pressKey({ id: "b1", keys: ["a"] })],
    ["Processes.exec", Processes.exec({ id: "b1", command: "ls" })],
    ["Invocations.create", Invocations.create({ app_name: "a", version: "1", action_name: "x" })],
    ["Deployments.create", Deployments.create({ entrypoint_rel_path: "index.ts", file: new Uint8Array([1, 2, 3]) })]
  ]
  const silent: Answer = () => {}
  const attempts: ReadonlyArray<readonly [string, Answer, boolean, number]> = [
    ["500", json(500, { code: "internal", message: "boom" }), false, 1],
    ["502", json(502, { code: "bad_gateway", message: "boom" }), false, 1],
    ["503", json(503, { code: "unavailable", message: "boom" }), false, 1],
    ["a time-out", silent, false, 1],
    ["429", json(429, { code: "rate_limited", message: "slow" }, { "retry-after": "0" }), false, 3],
    ["500 with retryNonIdempotent", json(500, { code: "internal", message: "boom" }), true, 3]
  ]
  for (const [name, call] of calls) {
    for (const [after, reply, optIn, expected] of attempts) {
      it.live(`${name} after ${after}: ${expected} request(s)`, () =>
        Effect.gen(function*() {
          serve(reply)
          const { exit } = yield* run(optIn ? KernelRetry.retryNonIdempotent(call) : call)
          expect(Exit.isFailure(exit)).toBe(true)
          expect(seen.length).toBe(expected)
        }))
    }
  }
})

describe("harness18: requests", () => {
  for (const id of ["../x", "a/b", "%2F", "ünï code", "?q=1", "#h"]) {
    it.effect(`path parameter ${JSON.stringify(id)} is one encoded segment`, () =>
      Effect.gen(function*() {
        serve(json(200, { x: 1, y: 2 }))
        const { exit } = yield* run(Computer.getMousePosition({ id }))
        expect(pretty(exit)).toBe("success")
        const parts = (seen[0]?.url ?? "").split("/")
        expect(parts.length).toBe(5)
        expect(decodeURIComponent(parts[2] ?? "")).toBe(id)
      }))
  }

  it.effect("an empty path parameter is InvalidInput, nothing sent", () =>
    Effect.gen(function*() {
      serve(json(200, { x: 1, y: 2 }))
      const { exit } = yield* run(Computer.getMousePosition({ id: "" }))
      expect(pretty(exit)).toContain("InvalidInput")
      expect(seen.length).toBe(0)
    }))

  it.effect("a GET carries its query and no body", () =>
    Effect.gen(function*() {
      serve(json(200, [], { "x-has-more": "false" }))
      const { exit } = yield* run(Browsers.list({ limit: 5, offset: 3 }))
      expect(pretty(exit)).toBe("success")
      expect(seen[0]?.body).toBe("")
      expect(seen[0]?.headers["content-length"]).toBeUndefined()
      expect(seen[0]?.headers["transfer-encoding"]).toBeUndefined()
      expect(seen[0]?.url).toContain("limit=5")
    }))

  it.effect("acquire's 204 is the typed NoContent, Invocations.create's 202 is Accepted", () =>
    Effect.gen(function*() {
      serve((_seen, res) => res.writeHead(204).end())
      const acquired = yield* run(BrowserPools.acquire({ idOrName: "p" }))
      expect(Exit.isSuccess(acquired.exit) && acquired.exit.value._tag).toBe("NoContent")
      serve(
        json(202, { id: "i1", app_name: "a", action_name: "x", status: "queued", started_at: "2026-01-01T00:00:00Z" })
      )
      const invoked = yield* run(Invocations.create({ app_name: "a", version: "1", action_name: "x" }))
      expect(Exit.isSuccess(invoked.exit) ? invoked.exit.value._tag : pretty(invoked.exit)).toBe("Accepted")
    }))
})

describe("harness18: a server that echoes the API key does not put it into the error", () => {
  const authorization = (seen: Seen) => String(seen.headers.authorization)
  const bare = (seen: Seen) => authorization(seen).replace(/^Bearer /, "")
  const echoes: ReadonlyArray<readonly [string, string, Answer]> = [
    [
      "409 message",
      "Conflict",
      (s, res) => json(409, { code: "bad", message: `bad auth ${authorization(s)}` })(s, res)
    ],
    [
      "401 message, bare key",
      "Unauthorized",
      (s, res) => json(401, { code: "no", message: `key ${bare(s)} invalid` })(s, res)
    ],
    [
      "404 details and inner_error",
      "NotFound",
      (s, res) =>
        json(404, {
          code: `c ${bare(s)}`,
          message: "m",
          details: [{ code: "d", message: bare(s) }],
          inner_error: { code: "i", message: authorization(s) }
        })(s, res)
    ],
    ["500 message", "InternalServerError", (s, res) => json(500, { code: "x", message: authorization(s) })(s, res)],
    ["418 text body", "UnexpectedStatus", (s, res) => res.writeHead(418).end(`your header: ${authorization(s)}`)],
    ["200 whose field quotes it", "DecodeError", (s, res) => json(200, { x: bare(s), y: 2 })(s, res)]
  ]
  const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, Kernel.Services>]> = [
    ["Computer.getMousePosition", Computer.getMousePosition({ id: "b1" })],
    ["Browsers.retrieve", Browsers.retrieve({ id: "b1" })]
  ]
  for (const [name, call] of calls) {
    for (const [what, tag, reply] of echoes) {
      it.effect(`${name}, ${what}: ${tag} without the key`, () =>
        Effect.gen(function*() {
          serve(reply)
          const observer = makeObserver()
          const { exit, lines } = yield* run(
            withObserver(call.pipe(Effect.tapErrorCause(Effect.logError)), observer),
            { maxRetries: 0 }
          )
          if (Exit.isSuccess(exit)) return expect.fail("succeeded")
          const error = Cause.squash(exit.cause)
          expect(Reflect.get(Object(error), "_tag")).toBe(tag)
          expect(observer.spans.some((span) => span.name.startsWith("Kernel."))).toBe(true)
          for (const form of [Cause.pretty(exit.cause), observer.dump(), ...printed(error, lines)]) {
            expect(form).not.toContain(TOKEN)
          }
        }))
    }
  }

  it.effect("a short key (5 characters) echoed in an error body: neither it nor its Bearer form is quoted", () =>
    Effect.gen(function*() {
      const short = "k7Zq9"
      serve((s, res) => json(409, { code: "bad", message: `bad auth ${authorization(s)} (${bare(s)})` })(s, res))
      const { exit, lines } = yield* run(
        Computer.getMousePosition({ id: "b1" }).pipe(Effect.tapErrorCause(Effect.logError)),
        { maxRetries: 0, apiKey: Redacted.make(short) }
      )
      if (Exit.isSuccess(exit)) return expect.fail("succeeded")
      const error = Cause.squash(exit.cause)
      expect(Reflect.get(Object(error), "_tag")).toBe("Conflict")
      for (const form of [Cause.pretty(exit.cause), ...printed(error, lines)]) expect(form).not.toContain(short)
    }))

  it.effect("Logs.stream, an event that quotes the key: DecodeError without the key", () =>
    Effect.gen(function*() {
      serve((s, res) =>
        res.writeHead(200, { "content-type": "text/event-stream" }).end(`data: {"x": "${authorization(s)}"\n\n`)
      )
      const { exit, lines } = yield* run(
        Logs.stream({ id: "b1", source: "path", path: "/var/log/x" }).pipe(
          Effect.flatMap(Stream.runDrain),
          Effect.tapErrorCause(Effect.logError)
        ),
        { maxRetries: 0 }
      )
      if (Exit.isSuccess(exit)) return expect.fail("succeeded")
      const error = Cause.squash(exit.cause)
      expect(Reflect.get(Object(error), "_tag")).toBe("DecodeError")
      for (const form of [Cause.pretty(exit.cause), ...printed(error, lines)]) expect(form).not.toContain(TOKEN)
    }))
})
