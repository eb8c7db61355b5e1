/**
 * Secrets the caller sends (`Redacted` input: a credential's values and TOTP secret, a proxy's
 * password, ...) that a server echoes in its answer never reach the caller's errors; and a body
 * that is not JSON is refused without quoting the part of it around the syntax error (V8's
 * `JSON.parse` message quotes up to ten characters each side, which can be part of a secret).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, Stream } from "effect"
import { ApiKeys, AuthConnections, BrowserPools, Browsers, Credentials, Logs } from "effect-kernel"
import * as util from "node:util"
import { headersShown } from "../src/internal/redact.js"
import { json, mockLayer } from "./utils/mock.js"

const password = "hunter2-PASSWORD-echoed"
const totp = "JBSWY3DPEHPK3PXP"

const everything = (error: unknown) => `${String(error)} ${JSON.stringify(error)} ${util.inspect(error, { depth: 10 })}`

describe("secrets the caller sent, echoed by the server", () => {
  const cases: ReadonlyArray<readonly [string, number, string]> = [
    [
      "a 400's message and details",
      400,
      JSON.stringify({
        code: "bad_request",
        message: `password ${password} is too weak`,
        details: [{ code: "totp", message: `totp secret ${totp} is invalid` }]
      })
    ],
    ["a 500 body that is not an error body", 500, `upstream said {"values":{"password":"${password}"}}`],
    ["an undocumented status", 418, JSON.stringify({ code: "teapot", message: `got ${password} and ${totp}` })]
  ]
  for (const [name, status, body] of cases) {
    it.effect(`are not in the error: ${name}`, () => {
      const { layer } = mockLayer(
        () => new Response(body, { status, headers: { "content-type": "application/json" } }),
        { maxRetries: 0 }
      )
      return Effect.gen(function*() {
        const error = yield* Effect.flip(
          Credentials.create({
            name: "n",
            domain: "example.com",
            values: { password: Redacted.make(password) },
            totp_secret: Redacted.make(totp)
          })
        )
        const text = everything(error)
        expect(text).not.toContain(password)
        expect(text).not.toContain(totp)
        expect(text).toMatch(/<redacted>|not shown/)
      }).pipe(Effect.provide(layer))
    })
  }
})

describe("a body that is not JSON", () => {
  it.effect("is refused without quoting the text around the syntax error", () => {
    // an API key's value sent unquoted: V8 quotes `{"key": sk_live_ab` in its message
    const { layer } = mockLayer(() =>
      new Response(`{"key": sk_live_SECRETKEYVALUE, "id": "k1"}`, {
        status: 201,
        headers: { "content-type": "application/json" }
      })
    )
    return Effect.gen(function*() {
      const error = yield* Effect.flip(ApiKeys.create({ name: "k" }))
      expect(error._tag).toBe("DecodeError")
      expect(error.message).toContain("not JSON")
      expect(everything(error)).not.toContain("sk_live")
    }).pipe(Effect.provide(layer))
  })

  it.effect("an event that is not JSON is refused without quoting its text", () => {
    const { layer } = mockLayer(() =>
      new Response(`data: {"type":"x","hosted_url": SECRETURLVALUE}\n\n`, {
        status: 200,
        headers: { "content-type": "text/event-stream" }
      })
    )
    return Effect.gen(function*() {
      const stream = yield* AuthConnections.follow({ id: "a1" })
      const error = yield* Effect.flip(Stream.runDrain(stream))
      expect(error._tag).toBe("DecodeError")
      expect(everything(error)).not.toContain("SECRETURL")
    }).pipe(Effect.provide(layer))
  })
})

describe("a secret of the answer that does not decode", () => {
  it.effect("a TOTP code sent as a number is not quoted", () => {
    const { layer } = mockLayer(() => json(200, { code: 482913, expires_at: "2026-01-02T03:04:05Z" }))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Credentials.totpCode({ idOrName: "c1" }))
      expect(error._tag).toBe("DecodeError")
      expect(error.message).toContain(`["code"]`)
      expect(everything(error)).not.toContain("482913")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a live-view URL (optional, nullable) of the wrong type is not quoted", () => {
    const { layer } = mockLayer(() =>
      json(200, {
        id: "a1",
        domain: "example.com",
        profile_name: "p",
        status: "NEEDS_AUTH",
        live_view_url: 4829130017
      })
    )
    return Effect.gen(function*() {
      const error = yield* Effect.flip(AuthConnections.retrieve({ id: "a1" }))
      expect(error._tag).toBe("DecodeError")
      expect(everything(error)).not.toContain("4829130017")
    }).pipe(Effect.provide(layer))
  })
})

describe("a resource's secrets in an error body", () => {
  // a server (or a proxy in front of it) that answers an error status with a resource in its body:
  // the values of the API's secret fields are not quoted, whichever resource it is
  const sentinel = "SENTINEL-secret-7f3a"
  const browser = {
    session_id: "b1",
    cdp_ws_url: `wss://cdp.example/${sentinel}`,
    browser_live_view_url: `https://live.example/${sentinel}`,
    nested: [{ key: `sk_${sentinel}`, values: { password: sentinel } }]
  }
  const cases: ReadonlyArray<readonly [string, number, string]> = [
    ["a 409 with the browser as its body", 409, JSON.stringify(browser)],
    ["a 500 with an array of browsers", 500, JSON.stringify([browser, browser])],
    ["an undocumented status", 418, JSON.stringify(browser)],
    ["a body cut short", 502, JSON.stringify(browser).slice(0, 60)],
    ["a page quoting the JSON", 503, `<html><pre>${JSON.stringify(browser)}</pre></html>`]
  ]
  for (const [name, status, body] of cases) {
    it.effect(name, () => {
      const { layer } = mockLayer(
        () => new Response(body, { status, headers: { "content-type": "application/json" } }),
        { maxRetries: 0 }
      )
      return Effect.gen(function*() {
        const error = yield* Effect.flip(Browsers.create({}))
        expect(everything(error)).not.toContain(sentinel)
        // what is not a secret is still quoted
        expect(everything(error)).toContain("b1")
      }).pipe(Effect.provide(layer))
    })
  }
})

// an excerpt bounded before it was searched kept all of a secret but its last characters: the start
// a cut leaves (before its `…`) is redacted too, wherever the cut falls
describe("a secret an excerpt's cut falls inside", () => {
  const token = "sk_live_SENTINEL_cut_0123"
  const sent = "CorrectHorseBatteryStaple-42"
  const layerOf = (respond: (request: { readonly body: string | undefined }) => Response) =>
    mockLayer((recorded) => respond(recorded), { maxRetries: 0, apiKey: Redacted.make(token) }).layer
  // every cut point inside the secret: the secret placed so that the cut leaves 4 to length - 1 of it
  const cuts = (secret: string, at: number) =>
    Array.from({ length: secret.length - 4 }, (_, i) => "x".repeat(at - (4 + i)) + secret + " and more")
  // any start of the secret (its first 6 characters: the padding around it is `x`s), cut or whole
  const leaks = (error: unknown, secret: string) => {
    const text = everything(error)
    const at = text.indexOf(secret.slice(0, 6))
    return at === -1 ? undefined : text.slice(at, at + secret.length + 1)
  }

  it.effect("a DecodeError's preview of a field that echoes the API key (cut at 120)", () =>
    Effect.gen(function*() {
      for (const value of cuts(token, 120)) {
        const body = JSON.stringify([{ id: "p", available_count: 1, acquired_count: 0, created_at: value }])
        const error = yield* Effect.flip(BrowserPools.list()).pipe(
          Effect.provide(layerOf(() => new Response(body, { headers: { "content-type": "application/json" } })))
        )
        expect(error._tag).toBe("DecodeError")
        expect(leaks(error, token)).toBeUndefined()
      }
    }))

  it.effect("an event stream's excerpt of data that echoes the API key (cut at 200)", () =>
    Effect.gen(function*() {
      for (const value of cuts(token, 200)) {
        const error = yield* Logs.stream({ id: "b1", source: "path", path: "/var/log/app.log" }).pipe(
          Effect.flatMap(Stream.runDrain),
          Effect.flip,
          Effect.provide(
            layerOf(() => new Response(`data: ${value}\n\n`, { headers: { "content-type": "text/event-stream" } }))
          )
        )
        expect(error._tag).toBe("DecodeError")
        expect(leaks(error, token)).toBeUndefined()
      }
    }))

  it.effect("a status error's message, code and details that echo a secret the call sent (cut at each bound)", () =>
    Effect.gen(function*() {
      // [what, where the cut falls, the Error body around the echoed secret]
      const fields: ReadonlyArray<readonly [string, number, (echo: string) => unknown]> = [
        ["message", 2048, (echo) => ({ code: "bad_request", message: echo })],
        ["code", 200, (echo) => ({ code: echo, message: "m" })],
        ["a detail's message", 256, (echo) => ({ code: "c", message: "m", details: [{ message: echo }] })]
      ]
      for (const [what, at, bodyOf] of fields) {
        for (const echo of cuts(sent, at)) {
          const error = yield* Effect.flip(
            Credentials.create({ name: "n", domain: "example.com", values: { password: Redacted.make(sent) } })
          ).pipe(
            Effect.provide(
              layerOf(() =>
                new Response(JSON.stringify(bodyOf(echo)), {
                  status: 400,
                  headers: { "content-type": "application/json" }
                })
              )
            )
          )
          expect([what, leaks(error, sent)]).toEqual([what, undefined])
        }
      }
    }))
})

describe("a secret with whitespace, echoed where an excerpt squeezes it", () => {
  it.effect("a non-JSON error body quoting a password with a line break and a tab", () =>
    Effect.gen(function*() {
      const password = "hunter2\npass\tword99"
      const { layer } = mockLayer(
        () =>
          new Response(`upstream said: ${password} tail`, { status: 502, headers: { "content-type": "text/plain" } }),
        { maxRetries: 0 }
      )
      const error = yield* Effect.flip(
        Credentials.create({ name: "n", domain: "example.com", values: { password: Redacted.make(password) } })
      ).pipe(Effect.provide(layer))
      const text = everything(error)
      expect(text).toContain("upstream said")
      expect(text).not.toContain("word99")
    }))

  it("a short token (4 characters or more) echoed in a response header is not shown", () => {
    const shown = headersShown({ "www-authenticate": `Bearer token="sk_ab1"`, other: "sk_ab" }, "Bearer sk_ab1")
    expect(shown).toEqual({ "www-authenticate": `Bearer token="<redacted>"`, other: "sk_ab" })
  })
})
