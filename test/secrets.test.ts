/**
 * Secrets (issue 18): the fields that grant access decode as `Redacted` — a browser's `cdp_ws_url`
 * and `browser_live_view_url`, an API key's value on creation, TOTP codes, an exchanged JWT — and
 * a sentinel in them appears in no log (`Effect.log` of the value), span attribute, error message,
 * `String(value)`, `JSON.stringify(value)` or `Inspectable.format(value)`. The secrets a user SENDS
 * (a credential's `values` and `totp_secret`, a login's `fields`, a provider's `token`) appear in
 * no `InvalidInput` message and no span, and reach the wire as they are.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Inspectable, Redacted, Stream } from "effect"
import {
  ApiKeys,
  AuthConnections,
  Browsers,
  CredentialProviders,
  Credentials,
  Deployments,
  type Kernel,
  Proxies
} from "effect-kernel"
import { json, mockLayer, type Recorded } from "./utils/mock.js"
import { makeObserver, withObserver } from "./utils/observe.js"

const SENTINEL = "SENTINEL_5ecret_7f3a"
const secret = (what: string) => `${SENTINEL}_${what}`

const browserJson = (overrides: Record<string, unknown> = {}) => ({
  created_at: "2025-01-01T00:00:00Z",
  cdp_ws_url: `wss://cdp.example/?jwt=${secret("cdp")}`,
  browser_live_view_url: `https://live.example/?jwt=${secret("live")}`,
  webdriver_ws_url: "wss://bidi.example",
  headless: true,
  stealth: false,
  session_id: "b1",
  timeout_seconds: 60,
  ...overrides
})

const apiKeyJson = {
  id: "k1",
  name: "ci",
  created_at: "2025-01-01T00:00:00Z",
  created_by: { id: "u1", email: "a@example.com", name: null },
  expires_at: null,
  project_id: null,
  project_name: null,
  masked_key: "sk_****",
  key: secret("apikey")
}

const credentialJson = {
  id: "c1",
  name: "login",
  domain: "example.com",
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
  totp_code: secret("totpcode"),
  totp_code_expires_at: "2025-01-01T00:00:30Z"
}

const routes = (recorded: Recorded): Response => {
  const path = recorded.url.pathname
  if (path === "/browsers") return json(200, browserJson())
  if (path === "/browsers/bad") return json(200, browserJson({ headless: "not a boolean" }))
  if (path === "/org/api_keys") return json(201, apiKeyJson)
  // a success the operation does not document (getApiKey documents 200), with a secret in it
  if (path === "/org/api_keys/undocumented") return json(201, apiKeyJson)
  if (path === "/credentials") return json(201, credentialJson)
  if (path === "/credentials/c1") return json(200, credentialJson)
  if (path === "/credentials/c1/totp-code") {
    return json(200, { code: secret("totp"), expires_at: "2025-01-01T00:00:30Z" })
  }
  if (path === "/auth/connections/a1/exchange") return json(200, { invocation_id: "i1", jwt: secret("jwt") })
  if (path === "/auth/connections/a1/login") {
    return json(200, {
      id: "a1",
      flow_type: "LOGIN",
      hosted_url: `https://auth.example/login?code=${secret("hosted")}`,
      handoff_code: secret("handoff"),
      flow_expires_at: "2025-01-01T00:10:00Z"
    })
  }
  // an event of a known type that does not decode (a flow step the SDK does not know), and one that is not JSON
  if (path === "/auth/connections/a2/events" || path === "/auth/connections/a3/events") {
    const event = {
      event: "managed_auth_state",
      timestamp: "2025-01-01T00:00:00Z",
      live_view_url: `https://live.example/?token=${secret("eventlive")}`,
      hosted_url: `https://auth.example/?code=${secret("eventhosted")}`,
      flow_status: "IN_PROGRESS",
      flow_step: "SOMETHING_NEW"
    }
    const data = path.includes("a2") ? JSON.stringify(event) : `{not json ${secret("eventraw")}`
    return new Response(`event: managed_auth_state\ndata: ${data}\n\n`, {
      status: 200,
      headers: { "content-type": "text/event-stream" }
    })
  }
  if (path === "/proxies") {
    return json(201, { id: "p1", type: "custom", config: { host: "proxy.example", port: 8080, has_password: true } })
  }
  if (path === "/deployments") {
    return json(201, { id: "d1", status: "queued", region: "aws.us-east-1a", created_at: "2025-01-01T00:00:00Z" })
  }
  return json(200, {})
}

/** Every way a value may be shown: none may show the sentinel. */
const shown = (value: unknown): ReadonlyArray<string> => [
  String(value),
  JSON.stringify(value) ?? "",
  Inspectable.format(value),
  Inspectable.toStringUnknown(value)
]

const observe = async <A, E>(effect: Effect.Effect<A, E, Kernel.Services>) => {
  const { layer, requests } = mockLayer(routes, { maxRetries: 0 })
  const observer = makeObserver()
  const exit = await Effect.runPromiseExit(
    withObserver(
      Effect.provide(
        Effect.tap(effect, (value) => Effect.log("the value", value)),
        layer
      ),
      observer
    )
  )
  return { exit, observer, requests }
}

const expectNoSentinel = (texts: ReadonlyArray<string>) => {
  for (const text of texts) expect(text).not.toContain(SENTINEL)
}

describe("secrets the API answers decode as Redacted and are never shown", () => {
  it("a browser's cdp_ws_url and browser_live_view_url", async () => {
    const { exit, observer } = await observe(Browsers.create({}))
    if (!Exit.isSuccess(exit)) throw new Error(Cause.pretty(exit.cause))
    const browser = exit.value
    expect(Redacted.isRedacted(browser.cdp_ws_url)).toBe(true)
    expect(Redacted.value(browser.cdp_ws_url)).toContain(secret("cdp"))
    expect(browser.browser_live_view_url && Redacted.value(browser.browser_live_view_url)).toContain(secret("live"))
    expectNoSentinel([...shown(browser), ...shown(browser.cdp_ws_url), ...shown(browser.browser_live_view_url)])
    expect(observer.logs.some((line) => line.includes("the value"))).toBe(true)
    expectNoSentinel([observer.dump()])
  })

  it("an API key's value on creation", async () => {
    const { exit, observer } = await observe(ApiKeys.create({ name: "ci" }))
    if (!Exit.isSuccess(exit)) throw new Error(Cause.pretty(exit.cause))
    expect(Redacted.value(exit.value.key)).toBe(secret("apikey"))
    expectNoSentinel([...shown(exit.value), ...shown(exit.value.key), observer.dump()])
  })

  it("TOTP codes: the code of a credential, and the one answered on create", async () => {
    const totp = await observe(Credentials.totpCode({ idOrName: "c1" }))
    if (!Exit.isSuccess(totp.exit)) throw new Error(Cause.pretty(totp.exit.cause))
    expect(Redacted.value(totp.exit.value.code)).toBe(secret("totp"))
    expectNoSentinel([...shown(totp.exit.value), totp.observer.dump()])
    const created = await observe(
      Credentials.create({ name: "login", domain: "example.com", values: { password: Redacted.make("pw") } })
    )
    if (!Exit.isSuccess(created.exit)) throw new Error(Cause.pretty(created.exit.cause))
    const code = created.exit.value.totp_code
    expect(code && Redacted.value(code)).toBe(secret("totpcode"))
    expectNoSentinel([...shown(created.exit.value), created.observer.dump()])
  })

  it("an exchanged JWT", async () => {
    const { exit, observer, requests } = await observe(
      AuthConnections.exchange({ id: "a1", code: Redacted.make(secret("handoff")) })
    )
    if (!Exit.isSuccess(exit)) throw new Error(Cause.pretty(exit.cause))
    expect(Redacted.value(exit.value.jwt)).toBe(secret("jwt"))
    // the one-time code on the wire only
    expect(JSON.parse(requests[0]!.body ?? "{}").code).toBe(secret("handoff"))
    expectNoSentinel([...shown(exit.value), observer.dump()])
  })

  it("a hosted login page's address (it completes the login, as a live view does)", async () => {
    const { exit, observer } = await observe(AuthConnections.login({ id: "a1" }))
    if (!Exit.isSuccess(exit)) throw new Error(Cause.pretty(exit.cause))
    expect(Redacted.value(exit.value.hosted_url)).toContain(secret("hosted"))
    // the one-time code `exchange` trades for a JWT
    const handoff = exit.value.handoff_code
    expect(handoff && Redacted.value(handoff)).toBe(secret("handoff"))
    expectNoSentinel([...shown(exit.value), observer.dump()])
  })

  it("an undocumented success (UnexpectedStatus) does not quote its body", async () => {
    const { exit, observer } = await observe(ApiKeys.retrieve({ id: "undocumented" }))
    expect(Exit.isFailure(exit)).toBe(true)
    if (!Exit.isFailure(exit)) return
    const error = Cause.failureOption(exit.cause)
    expect(error._tag === "Some" && error.value).toMatchObject({ _tag: "UnexpectedStatus", status: 201, body: "" })
    expectNoSentinel([Cause.pretty(exit.cause), ...shown(error), observer.dump()])
  })

  it("a DecodeError of an answer that carries secrets does not quote them", async () => {
    const { exit, observer } = await observe(Browsers.retrieve({ id: "bad" }))
    expect(Exit.isFailure(exit)).toBe(true)
    if (!Exit.isFailure(exit)) return
    const error = Cause.failureOption(exit.cause)
    expect(error._tag === "Some" && error.value._tag).toBe("DecodeError")
    expectNoSentinel([Cause.pretty(exit.cause), ...shown(error), observer.dump()])
  })
})

describe("secrets the user sends", () => {
  const values = { username: Redacted.make("me"), password: Redacted.make(secret("password")) }

  it("an event that does not decode, or is not JSON, is a DecodeError that does not quote its secrets", async () => {
    for (const id of ["a2", "a3"]) {
      const { exit, observer } = await observe(Effect.flatMap(AuthConnections.follow({ id }), Stream.runCollect))
      expect(Exit.isFailure(exit)).toBe(true)
      if (!Exit.isFailure(exit)) return
      const error = Cause.failureOption(exit.cause)
      expect(error._tag === "Some" && error.value._tag).toBe("DecodeError")
      // what decodes of the event is still quoted: the field that failed, and the value it had
      if (id === "a2") expect(error._tag === "Some" && error.value.message).toContain("SOMETHING_NEW")
      expectNoSentinel([Cause.pretty(exit.cause), ...shown(error), observer.dump()])
    }
  })

  it("a credential's values reach the wire, and no span or log", async () => {
    const { exit, observer, requests } = await observe(
      Credentials.create({
        name: "login",
        domain: "example.com",
        values,
        totp_secret: Redacted.make(secret("totpsecret"))
      })
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    const body = JSON.parse(requests[0]!.body ?? "{}")
    expect(body.values).toEqual({ username: "me", password: secret("password") })
    expect(body.totp_secret).toBe(secret("totpsecret"))
    const dump = observer.dump().replaceAll(secret("totpcode"), "")
    expectNoSentinel([dump])
  })

  it("an update's values, a login's fields, a provider's token: on the wire only", async () => {
    const update = await observe(Credentials.update({ idOrName: "c1", values }))
    expect(JSON.parse(update.requests[0]!.body ?? "{}").values.password).toBe(secret("password"))
    expectNoSentinel([update.observer.dump()])
    const submit = await observe(AuthConnections.submit({ id: "a1", fields: { password: values.password } }))
    expect(JSON.parse(submit.requests[0]!.body ?? "{}").fields.password).toBe(secret("password"))
    expectNoSentinel([submit.observer.dump()])
    const provider = await observe(
      CredentialProviders.create({ provider_type: "onepassword", name: "op", token: Redacted.make(secret("token")) })
    )
    expect(JSON.parse(provider.requests[0]!.body ?? "{}").token).toBe(secret("token"))
    expectNoSentinel([provider.observer.dump()])
  })

  it("InvalidInput about a credential's params does not quote the values", async () => {
    const cases: ReadonlyArray<unknown> = [
      // another field refused, the values well-formed
      { name: 42, domain: "example.com", values },
      // the values themselves refused: given as plain strings (an untyped caller)
      { name: "login", domain: "example.com", values: { password: secret("plain") } },
      { name: "login", domain: "example.com", values: secret("whole") },
      { name: "login", domain: "example.com", values, totp_secret: secret("totpplain") }
    ]
    for (const params of cases) {
      const { exit, observer, requests } = await observe(
        Credentials.create(params as Credentials.CreateCredentialParams)
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (!Exit.isFailure(exit)) continue
      const error = Cause.failureOption(exit.cause)
      expect(error._tag === "Some" && error.value._tag).toBe("InvalidInput")
      expect(requests).toHaveLength(0)
      expectNoSentinel([Cause.pretty(exit.cause), ...shown(error), observer.dump()])
    }
    const update = await observe(
      Credentials.update({ idOrName: "c1", values: { password: secret("plain") } } as never)
    )
    expect(Exit.isFailure(update.exit)).toBe(true)
    if (Exit.isFailure(update.exit)) expectNoSentinel([Cause.pretty(update.exit.cause), update.observer.dump()])
  })

  it("a custom proxy's password and a GitHub token (format: password): on the wire only, never quoted", async () => {
    const proxy = await observe(
      Proxies.create({
        type: "custom",
        config: { host: "proxy.example", port: 8080, username: "u", password: Redacted.make(secret("proxy")) }
      })
    )
    if (!Exit.isSuccess(proxy.exit)) throw new Error(Cause.pretty(proxy.exit.cause))
    expect(JSON.parse(proxy.requests[0]!.body ?? "{}").config).toEqual({
      host: "proxy.example",
      port: 8080,
      username: "u",
      password: secret("proxy")
    })
    expectNoSentinel([proxy.observer.dump()])
    const source = {
      type: "github",
      url: "https://github.com/org/repo",
      ref: "main",
      entrypoint: "src/index.ts",
      auth: { method: "github_token", token: Redacted.make(secret("github")) }
    } as const
    const deployment = await observe(Deployments.create({ source }))
    if (!Exit.isSuccess(deployment.exit)) throw new Error(Cause.pretty(deployment.exit.cause))
    expect(deployment.requests).toHaveLength(1)
    expectNoSentinel([deployment.observer.dump()])
    // given as plain strings (an untyped caller): refused before sending, the value not quoted
    const refused: ReadonlyArray<Effect.Effect<unknown, unknown, Kernel.Services>> = [
      Proxies.create({
        type: "custom",
        config: { host: "proxy.example", port: 8080, password: secret("plainproxy") }
      } as never),
      Deployments.create({ source: { ...source, auth: { method: "github_token", token: secret("plaingh") } } } as never)
    ]
    for (const effect of refused) {
      const { exit, observer, requests } = await observe(effect)
      expect(Exit.isFailure(exit)).toBe(true)
      if (!Exit.isFailure(exit)) continue
      expect(requests).toHaveLength(0)
      expectNoSentinel([Cause.pretty(exit.cause), observer.dump()])
    }
  })
})
