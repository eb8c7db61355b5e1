/**
 * Review of the served simulator driven over plain HTTP (helper 72): state a program would notice
 * (pools renamed, a seed's leased browsers, a proxy's check and password), the request log's nested
 * secrets, ids in URLs. Each case failed before its fix. One served simulator for the file.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import { handleJson, raw, sendJson, servedForFile } from "./utils/served.js"

const adminToken = "adm_review_72_0123456789"
const admin = { authorization: `Bearer ${adminToken}` }
const served = servedForFile({
  adminToken,
  seed: {
    organizations: [
      ...(KernelSimulator.defaultSeed.organizations ?? []),
      { id: "org_ids", token: "sk_review_72_ids_0123", browsers: [{ id: "a b?c#d/e" }] }
    ]
  }
})
const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  sendJson(served.url, method, path, body, headers)

describe("pools", () => {
  it("a renamed pool's browsers (leased, and reused after a release) carry its new name", async () => {
    await send("POST", "/browser_pools", { name: "qpool", size: 1 })
    const first = (await send("POST", "/browser_pools/qpool/acquire", {})).json
    expect(first.pool.name).toBe("qpool")
    await send("PATCH", "/browser_pools/qpool", { size: 1, name: "qpool-renamed" })
    expect((await send("GET", `/browsers/${first.session_id}`)).json.pool.name).toBe("qpool-renamed")
    expect((await send("POST", "/browser_pools/qpool-renamed/release", { session_id: first.session_id })).status)
      .toBe(204)
    const again = (await send("POST", "/browser_pools/qpool-renamed/acquire", {})).json
    expect(again.pool).toMatchObject({ name: "qpool-renamed" })
    const found = (await send("GET", "/browsers?query=qpool-renamed")).json as unknown as ReadonlyArray<unknown>
    expect(found).toHaveLength(1)
  })

  it("a seeded pool's acquired browsers exist: listed, released, and the pool then deleted", async () => {
    const small = (await send("GET", "/browser_pools/pool_small")).json
    expect(small.acquired_count).toBe(1)
    const listed = (await send("GET", "/browsers?query=small")).json as unknown as ReadonlyArray<
      { readonly session_id: string; readonly pool: { readonly id: string } }
    >
    const leased = listed.filter((browser) => browser.pool.id === "pool_small")
    expect(leased).toHaveLength(1)
    const released = await send("POST", "/browser_pools/pool_small/release", { session_id: leased[0]!.session_id })
    expect(released.status).toBe(204)
    expect((await send("GET", "/browser_pools/pool_small")).json.acquired_count).toBe(0)
    expect((await send("DELETE", "/browser_pools/pool_small")).status).toBe(204)
  })
})

describe("proxies", () => {
  it("a custom proxy created with a password says so (has_password), and a missing port is named", async () => {
    const created = await send("POST", "/proxies", {
      type: "custom",
      config: { host: "10.0.0.1", port: 3128, username: "u", password: "pw" }
    })
    expect(created.status).toBe(201)
    expect(created.json.config).toEqual({ host: "10.0.0.1", port: 3128, username: "u", has_password: true })
    const missing = await send("POST", "/proxies", { type: "custom", config: { host: "10.0.0.1" } })
    expect(missing.status).toBe(400)
    expect(missing.json.message).toContain("config.port: is required")
  })

  it("a check's URL must be a public http(s) URL (the document)", async () => {
    const created = (await send("POST", "/proxies", { type: "datacenter", config: {} })).json
    for (
      const url of [
        "http://a b",
        "http://:80",
        "https://example.com\nfoo",
        "http://127.0.0.1/",
        "http://localhost:8080",
        "http://[::1]/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        // review 75: IPv4-mapped IPv6, a last dot, other forms of an IPv4 address
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:192.168.1.1]/",
        "http://localhost./",
        "http://LocalHost./",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://127.1/"
      ]
    ) {
      expect((await send("POST", `/proxies/${created.id}/check`, { url })).status, url).toBe(400)
    }
    // public, however the name starts
    for (
      const url of [
        "https://example.com/a?b",
        "http://0.pool.ntp.org/",
        "http://10.example.com/",
        "http://[2606:4700::1111]/"
      ]
    ) {
      expect((await send("POST", `/proxies/${created.id}/check`, { url })).status, url).toBe(200)
    }
  })

  it("a check of a URL leaves the proxy's health as it was, and takes http(s) only", async () => {
    const created = (await send("POST", "/proxies", { type: "datacenter", config: {} })).json
    const before = (await send("GET", `/proxies/${created.id}`)).json
    const checked = await send("POST", `/proxies/${created.id}/check`, { url: "https://example.com/" })
    expect(checked.status).toBe(200)
    expect((await send("GET", `/proxies/${created.id}`)).json).toEqual(before)
    const ftp = await send("POST", `/proxies/${created.id}/check`, { url: "ftp://example.com/file" })
    expect(ftp.status).toBe(400)
    expect((await send("POST", `/proxies/${created.id}/check`, {})).json.status).toBe("available")
  })
})

describe("the request log", () => {
  it("keeps no value of a field named as a secret, however deep (a nested password, a policy's token)", async () => {
    await fetch(`${served.url}/_simulator/requests`, { method: "DELETE", headers: admin })
    await send("POST", "/browser_pools", {
      name: "with-policy",
      size: 1,
      chrome_policy: { ProxySettings: { token: "POLICY_TOKEN_72" } }
    })
    await send("POST", "/proxies", {
      type: "custom",
      config: { host: "h", port: 1, password: "NESTED_PW_72" }
    })
    const log = await (await fetch(`${served.url}/_simulator/requests`, { headers: admin })).text()
    expect(log).toContain("with-policy")
    expect(log).not.toContain("POLICY_TOKEN_72")
    expect(log).not.toContain("NESTED_PW_72")
  })
})

/** The bodies the request log keeps of what `send` sends (the log cleared before). */
const logOf = async (send: () => Promise<unknown>): Promise<string> => {
  await fetch(`${served.url}/_simulator/requests`, { method: "DELETE", headers: admin })
  await send()
  return (await (await fetch(`${served.url}/_simulator/requests`, { headers: admin })).json() as ReadonlyArray<
    { readonly body?: string }
  >).map((entry) => entry.body ?? "").join("\n")
}

describe("the request log, however a secret is written (review 74)", () => {
  const raw = (method: string, path: string, body: string, contentType: string) =>
    fetch(`${served.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": contentType },
      body
    })
  const cases: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
    ["an escaped key", () => raw("POST", "/browsers", `{"pass\\u0077ord":"SECRET_74_1"}`, "application/json")],
    ["keys in other cases", () => send("POST", "/browsers", { Password: "SECRET_74_2", TOKEN: "SECRET_74_3" })],
    ["a credential's suffix", () => send("POST", "/browsers", { api_key: "SECRET_74_4", access_token: "SECRET_74_5" })],
    [
      "an exec's environment",
      () =>
        send("POST", "/browsers/browser_1/process/exec", {
          command: "echo",
          env: { API_KEY: "SECRET_74_6", GITHUB_TOKEN: "SECRET_74_7" }
        })
    ],
    ["a body an operation does not take", () => send("DELETE", "/browsers/nonexistent", { token: "SECRET_74_8" })],
    ["a form-encoded text", () => raw("POST", "/browsers", "password=SECRET_74_9&headless=true", "application/json")],
    [
      "a body past the log's bound",
      () => send("POST", "/browsers", { password: "SECRET_74_10", tags: { a: "x".repeat(5000) } })
    ]
  ]
  for (const [name, call] of cases) {
    it(`${name}: not kept`, async () => {
      const log = await logOf(call)
      expect(log.length).toBeGreaterThan(0)
      expect(log).not.toMatch(/SECRET_74/)
    })
  }

  // review 75: however the key is spelt, whatever shape the body has, in its headers and query too
  const more: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
    [
      "a key spelt with separators, in a body without a u",
      () => send("POST", "/browsers/browser_1/process/exec", { command: "ls", env: { DB_PASS_WORD: "XQZ_75_1" } })
    ],
    [
      "a listed field of another shape",
      () => send("POST", "/browsers/browser_1/curl", { url: { password: "SECRET_75_2" } })
    ],
    [
      "a listed field of another shape, beside secrets",
      () => send("POST", "/credentials", { name: { password: "SECRET_75_3" }, domain: "a.com", values: { u: "v" } })
    ],
    ["a credential header in a secret-holding body", () =>
      send("POST", "/proxies", {
        name: "p",
        type: "custom",
        config: { host: "h", port: 1, password: "pw" },
        Authorization: "Bearer SECRET_75_4"
      })],
    [
      "an untyped body that is not JSON",
      () => raw("DELETE", "/browsers/nonexistent", `{"GITHUB_TOKEN":"SECRET_75_5",}`, "application/json")
    ]
  ]
  for (const [name, call] of more) {
    it(`${name}: not kept`, async () => {
      const log = await logOf(call)
      expect(log.length).toBeGreaterThan(0)
      expect(log).not.toMatch(/SECRET_75|XQZ_75/)
    })
  }

  it("a header or a query parameter named as a secret: not kept", async () => {
    await fetch(`${served.url}/_simulator/requests`, { method: "DELETE", headers: admin })
    await fetch(`${served.url}/browsers?jwt=SECRET_75_6&cdpWsUrl=SECRET_75_7`, {
      headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "x-goog-api-key": "SECRET_75_8" }
    })
    const log = await (await fetch(`${served.url}/_simulator/requests`, { headers: admin })).text()
    expect(log).toContain("x-goog-api-key")
    expect(log).not.toMatch(/SECRET_75/)
  })

  // a URL's credentials in a header that is not a credential header (a `Referer`, an `Origin`) were kept
  it("a URL's credentials in any header, a bare user name's too: not kept", async () => {
    await fetch(`${served.url}/_simulator/requests`, { method: "DELETE", headers: admin })
    await fetch(`${served.url}/browsers`, {
      headers: {
        authorization: `Bearer ${KernelSimulator.defaultToken}`,
        referer: "https://u:SECRET_75_10@example.com/page?access_token=SECRET_75_11&lang=fr",
        "x-forwarded-from": "https://ghp_SECRET_75_12@github.com/org/repo",
        // past the 1,024 characters a header is cut at: taken out before the cut
        "x-trace": `${"p".repeat(1_000)} https://u:SECRET_75_13@example.com/`,
        // an `@` in a URL's query is no user name: the host stays
        "x-next": "https://app.example?next=me@example.com"
      }
    })
    const log = await (await fetch(`${served.url}/_simulator/requests`, { headers: admin })).text()
    expect(log).toContain("example.com/page?access_token=<redacted>&lang=fr")
    expect(log).toContain("https://<redacted>@github.com/org/repo")
    expect(log).toContain("https://app.example?next=me@example.com")
    expect(log).not.toMatch(/SECRET_75|SECRET_7|https:\/\/u:S/)
  })

  it("a __proto__ key of an untyped body is a member like any other", async () => {
    const log = await logOf(() =>
      raw(
        "DELETE",
        "/browsers/zz",
        `{"__proto__":{"password":"SECRET_75_9","keep":"visible"},"token":"x"}`,
        "application/json"
      )
    )
    expect(log).toContain("visible")
    expect(log).not.toMatch(/SECRET_75/)
  })

  it("a field the schema lists is kept as it is (Playwright's code)", async () => {
    const log = await logOf(() =>
      send("POST", "/browsers/browser_1/playwright/execute", { code: "await page.goto('https://a.b')" })
    )
    expect(log).toContain("await page.goto")
  })

  it("a deployment's env_vars named as secrets", async () => {
    const boundary = "----review74"
    const body = [
      `--${boundary}\r\ncontent-disposition: form-data; name="entrypoint_rel_path"\r\n\r\napp.ts\r\n`,
      `--${boundary}\r\ncontent-disposition: form-data; name="env_vars[password]"\r\n\r\nSECRET_74_11\r\n`,
      `--${boundary}\r\ncontent-disposition: form-data; name="env_vars[REGION]"\r\n\r\neu\r\n`,
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.zip"\r\n`,
      "content-type: application/zip\r\n\r\nPK\u0005\u0006" + "\0".repeat(18) + "\r\n",
      `--${boundary}--\r\n`
    ].join("")
    const log = await logOf(() => raw("POST", "/deployments", body, `multipart/form-data; boundary=${boundary}`))
    expect(log).toContain("REGION")
    expect(log).not.toMatch(/SECRET_74/)
  })
})

describe("the request log, credentials URLs and environments carry (review 80)", () => {
  const cases: ReadonlyArray<readonly [string, () => Promise<unknown>, string]> = [
    [
      "a proxy's password in a pool's Chrome policy, and a passwd",
      () =>
        send("POST", "/browser_pools", {
          name: "policy-80",
          size: 1,
          chrome_policy: {
            ProxySettings: { ProxyServer: "http://user:XPW_80_1@proxy.example:8080" },
            passwd: "XPW_80_2"
          }
        }),
      "proxy.example"
    ],
    [
      "an exec's proxy and PGPASS",
      () =>
        send("POST", "/browsers/browser_1/process/exec", {
          command: "ls",
          env: { HTTPS_PROXY: "http://user:XPW_80_3@proxy.example", PGPASS: "XPW_80_4" }
        }),
      "HTTPS_PROXY"
    ],
    [
      "a curl's URL with a password and a token",
      () =>
        send("POST", "/browsers/browser_1/curl", {
          url: "https://user:XPW_80_5@example.com/cb?access_token=XPW_80_6&page=2"
        }),
      "page=2"
    ],
    [
      "a start URL's password parameter",
      () => send("POST", "/browsers", { start_url: "https://example.com/login?user=me&password=XPW_80_7" }),
      "user=me"
    ],
    // review 83
    [
      "a token in a URL's fragment, a URL and a token inside another's query",
      () =>
        send("POST", "/browsers/browser_1/process/exec", {
          command: "open",
          args: [
            "https://app/cb#access_token=XPW_83_1&state=s1",
            "https://login/?next=http://u:XPW_83_2@h2/&view=v2",
            "https://login/?redirect_uri=https://app/cb?access_token=XPW_83_3"
          ]
        }),
      "state=s1"
    ],
    [
      "JSON-escaped slashes, a password holding an @, credential-like names (auth, sig)",
      () =>
        fetch(`${served.url}/browsers/browser_1/curl`, {
          method: "POST",
          headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": "application/json" },
          body: `{"url":"https:\\/\\/u:XPW_83_4@h\\/?auth=XPW_83_5&X-Amz-Signature=XPW_83_6&page=3"}`
        }).then(() => send("POST", "/browsers/browser_1/curl", { url: "http://u:p@XPW_83_7@h/" })),
      "page=3"
    ],
    [
      "a file's bytes cut at the log's bound through a URL's password",
      () =>
        fetch(`${served.url}/browsers/browser_1/fs/write_file?path=${encodeURIComponent("/tmp/cut-83.txt")}`, {
          method: "PUT",
          headers: {
            authorization: `Bearer ${KernelSimulator.defaultToken}`,
            "content-type": "application/octet-stream"
          },
          body: `${"#".repeat(4096 - 24)}postgres://app:XPW_83_8_LONG_PASSWORD@db:5432/x`
        }),
      "postgres://app:"
    ]
  ]
  for (const [name, call, kept] of cases) {
    it(`${name}: not kept`, async () => {
      const log = await logOf(call)
      expect(log).toContain(kept)
      expect(log).not.toMatch(/XPW_8/)
    })
  }
})

describe("ids in URLs", () => {
  it("a seeded id with reserved characters is one encoded segment of its URLs", async () => {
    const browser = (await send("GET", `/browsers/${encodeURIComponent("a b?c#d/e")}`, undefined, {
      token: "sk_review_72_ids_0123"
    })).json
    expect(browser.session_id).toBe("a b?c#d/e")
    expect(browser.cdp_ws_url).toBe("wss://sim.kernel.local/browsers/a%20b%3Fc%23d%2Fe/cdp")
    expect(new URL(browser.base_url).pathname).toBe("/browsers/a%20b%3Fc%23d%2Fe")
  })

  it("curl with HEAD answers no body", async () => {
    const answer = await send("POST", "/browsers/browser_1/curl", { url: "https://example.com/", method: "HEAD" })
    expect(answer.status).toBe(200)
    expect(answer.json.body).toBe("")
  })
})

describe("processes", () => {
  it("spawn's body is closed as exec's is (its allOf member allows no other field), its own fields taken", async () => {
    const unknown = await send("POST", "/browsers/browser_1/process/spawn", { command: "echo", unknown: 1 })
    expect(unknown.status).toBe(400)
    expect(unknown.json.message).toContain("unknown")
    const tty = await send("POST", "/browsers/browser_1/process/spawn", {
      command: "echo",
      allocate_tty: true,
      rows: 24,
      cols: 80
    })
    expect(tty.status).toBe(200)
  })
})

describe("replays", () => {
  it("a resize while recording is refused unless forced, which records the new size as a new segment", async () => {
    const id = (await send("POST", "/browsers", {})).json.session_id
    const started = await send("POST", `/browsers/${id}/replays`, {})
    expect(started.status).toBe(201)
    const refused = await send("PATCH", `/browsers/${id}`, { viewport: { width: 1280, height: 720 } })
    expect(refused.status).toBe(400)
    expect(refused.json.message).toContain("force")
    // the same size is no resize
    expect((await send("PATCH", `/browsers/${id}`, { viewport: { width: 1920, height: 1080 } })).status).toBe(200)
    const forced = await send("PATCH", `/browsers/${id}`, { viewport: { width: 1280, height: 720, force: true } })
    expect(forced.status).toBe(200)
    expect(forced.json.viewport).toMatchObject({ width: 1280, height: 720 })
    const segments = (await send("GET", `/browsers/${id}/replays`)).json as unknown as ReadonlyArray<
      { readonly replay_id: string; readonly finished_at?: string | null }
    >
    expect(segments).toHaveLength(2)
    expect(segments[0]!.replay_id).toBe(started.json.replay_id)
    expect(typeof segments[0]!.finished_at).toBe("string")
    expect(segments[1]!.finished_at ?? null).toBeNull()
  })
})

describe("messages", () => {
  it("the cursor route's 400 names its field in its message, as every route's does", async () => {
    const answer = await send("POST", "/browsers/browser_1/computer/cursor", { hidden: "yes" })
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({
      code: "bad_request",
      message: "invalid input: hidden: must be a boolean",
      details: [{ code: "invalid_input", message: "hidden: must be a boolean" }]
    })
  })
})

describe("seeds (review 74)", () => {
  const decoded = (seed: unknown) => Effect.runPromise(Effect.either(KernelSimulator.decodeSeed(seed)))
  it("an id that is no path segment (`.`, `..`, a lone surrogate) is a SeedError naming it", async () => {
    for (const id of [".", "..", "x\uD800y"]) {
      const result = await decoded({ organizations: [{ id: "o", token: "t", browsers: [{ id }] }] })
      expect(Either.isLeft(result) ? String(result.left.message) : "", id).toContain("organizations[0].browsers[0].id")
    }
  })

  it("more browsers acquired from its pools than an organization holds is a SeedError", async () => {
    const result = await decoded({
      organizations: [{
        id: "o",
        token: "t",
        browsers: [{ id: "b" }],
        pools: [{ id: "p", available_count: 0, acquired_count: 1000, browser_pool_config: { size: 1000 } }]
      }]
    })
    expect(Either.isLeft(result) ? String(result.left.message) : "").toContain("organizations[0].pools")
  })

  it.effect("seeded leases: ids new across organizations, and, as seeded browsers, they never time out", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.make({
        organizations: [
          {
            id: "a",
            token: "sk_seed_a_0123456789",
            pools: [{ id: "p", available_count: 0, acquired_count: 2, browser_pool_config: { size: 2 } }]
          },
          { id: "b", token: "sk_seed_b_0123456789", browsers: [{ id: "browser_00001" }, { id: "browser_00003" }] }
        ]
      })
      const list = (token: string) =>
        handleJson(simulator, token)("GET", "/browsers").pipe(
          Effect.map((answer) =>
            (answer.json as ReadonlyArray<{ readonly session_id: string }>).map((b) => b.session_id)
          )
        )
      const leased = yield* list("sk_seed_a_0123456789")
      expect(leased).toHaveLength(2)
      const seeded = yield* list("sk_seed_b_0123456789")
      expect(seeded.filter((id) => leased.includes(id))).toEqual([])
      yield* TestClock.adjust("2 hours")
      expect(yield* list("sk_seed_a_0123456789")).toEqual(leased)
    }))
})

describe("messages of a 400 (review 72)", () => {
  it("an enum names every value it takes, and a string parameter is read as text", async () => {
    const spawned = (await send("POST", "/browsers/browser_1/process/spawn", { command: "cat" })).json
    const kill = await send("POST", `/browsers/browser_1/process/${spawned.process_id}/kill`, { signal: "term" })
    expect(kill.status).toBe(400)
    expect(kill.json.message).toContain(`signal: Expected "TERM" | "KILL" | "INT" | "HUP", actual "term"`)
    const mode = await fetch(`${served.url}/browsers/browser_1/fs/write_file?path=%2Fa.txt&mode=999`, {
      method: "PUT",
      headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, "content-type": "application/octet-stream" },
      body: "x"
    })
    expect(mode.status).toBe(400)
    const message = ((await mode.json()) as { readonly message: string }).message
    expect(message).toContain(`mode: "999" is not valid`)
    expect(message).not.toContain("Expected string")
  })
})

describe("a query that is not percent-encoded UTF-8", () => {
  // `?path=/%FF` was read as the path "/\uFFFD" (a file not found): the simulator refuses a query that is
  // not UTF-8, as it refuses such a path (the browser's Go server would look up the byte 0xFF)
  it.each(["path=/%FF", "path=/x%zz", "path=/x%", "path=/x&limit%E0=1"])(
    "?%s: a 400 naming the query",
    async (query) => {
      const browser = (await send("POST", "/browsers", {})).json
      const answer = await send("GET", `/browsers/${browser.session_id}/fs/file_info?${query}`)
      expect(answer.status).toBe(400)
      expect(answer.json.message).toBe("invalid input: the query is not percent-encoded UTF-8")
      // a good escape is read as it says
      const good = await send("GET", `/browsers/${browser.session_id}/fs/file_info?path=%2Fnone%C3%A9`)
      expect(good.status).toBe(404)
    }
  )
})

describe("a multipart text part that is not UTF-8", () => {
  // a JSON body that is not UTF-8 was refused, a form's text part was read leniently (U+FFFD) and stored
  const form = (name: string, text: Uint8Array) => {
    const boundary = "b0undary"
    const head = (part: string, file: boolean) =>
      `--${boundary}\r\ncontent-disposition: form-data; name="${part}"${file ? `; filename="f"` : ""}\r\n\r\n`
    const body = Buffer.concat([
      Buffer.from(head("files[0][file]", true)),
      Buffer.from("data"),
      Buffer.from(`\r\n${head(name, false)}`),
      text,
      Buffer.from(`\r\n--${boundary}--\r\n`)
    ])
    return { body, contentType: `multipart/form-data; boundary=${boundary}` }
  }
  it.each(
    [
      ["bytes that are no UTF-8", Uint8Array.of(0x2f, 0x78, 0xff), 400],
      ["a surrogate encoded (CESU-8)", Uint8Array.of(0x2f, 0xed, 0xa0, 0x80), 400],
      ["UTF-8 text", new TextEncoder().encode("/tmp/é"), 201]
    ] as const
  )("files[0][dest_path] as %s", async (_, text, status) => {
    const browser = (await send("POST", "/browsers", {})).json
    const { body, contentType } = form("files[0][dest_path]", text)
    const answer = await raw(served.url, {
      method: "POST",
      path: `/browsers/${browser.session_id}/fs/upload`,
      headers: {
        authorization: `Bearer ${KernelSimulator.defaultToken}`,
        "content-type": contentType,
        "content-length": String(body.length)
      },
      body
    })
    expect(answer.status, answer.body).toBe(status)
    if (status === 400) {
      expect(JSON.parse(answer.body).message).toBe("invalid input: files.0.dest_path: is not UTF-8 text")
    }
  })
})
