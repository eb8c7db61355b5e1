import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import {
  BrowserPools,
  Computer,
  Deployments,
  Kernel,
  KernelClient,
  KernelConfig,
  type KernelError,
  Replays
} from "effect-kernel"
import * as util from "node:util"
import { errorBody, json, mockLayer, mockTransport, token } from "./utils/mock.js"

describe("path parameters", () => {
  const hostile = [
    "a/b",
    "../deployments/x",
    "a?b=c",
    "a#b",
    "100%",
    "%2F",
    "%2e%2e",
    "...",
    " spaced id ",
    "ünïcødé-🦊",
    "x".repeat(10_000)
  ]

  it.effect.each(hostile)("sends %j as exactly one path segment", (id) => {
    const { layer, requests } = mockLayer(() => json(200, { x: 0, y: 0 }))
    return Effect.gen(function*() {
      yield* Computer.getMousePosition({ id })
      const segments = requests[0]!.url.pathname.split("/")
      expect(segments).toHaveLength(5)
      expect(segments[1]).toBe("browsers")
      expect(decodeURIComponent(segments[2]!)).toBe(id)
      expect(segments.slice(3)).toEqual(["computer", "get_mouse_position"])
      expect(requests[0]!.url.search).toBe("")
      expect(requests[0]!.url.hash).toBe("")
    }).pipe(Effect.provide(layer))
  })

  it.effect.each(["", ".", "..", "\ud800"])("refuses %j as InvalidInput before sending", (id) => {
    const { layer, requests } = mockLayer(() => json(200, {}))
    return Effect.gen(function*() {
      const errors = [
        yield* Effect.flip(Computer.getMousePosition({ id })),
        yield* Effect.flip(Computer.setCursorVisibility({ id, hidden: false })),
        yield* Effect.flip(Deployments.delete({ id })),
        yield* Effect.flip(Stream.runDrain(Replays.download({ id, replayId: "r" }))),
        yield* Effect.flip(Stream.runDrain(Replays.download({ id: "b", replayId: id })))
      ]
      expect(errors.map((e) => e._tag)).toEqual(Array(5).fill("InvalidInput"))
      expect(errors[4]).toMatchObject({ field: "replayId" })
      expect(requests).toHaveLength(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses a non-boolean hidden as InvalidInput", () => {
    const { layer, requests } = mockLayer(() => json(200, {}))
    const untyped: { id: string; hidden: boolean } = JSON.parse("{\"id\":\"b\",\"hidden\":\"yes\"}")
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Computer.setCursorVisibility(untyped))
      expect(error).toMatchObject({ _tag: "InvalidInput", field: "hidden" })
      expect(requests).toHaveLength(0)
    }).pipe(Effect.provide(layer))
  })
})

describe("layers", () => {
  it.effect("replaces exactly one operation with Layer.succeed", () => {
    const { layer, requests } = mockLayer(() => json(200, []))
    const FakeMouse = Layer.succeed(Computer.GetMousePosition, {
      getMousePosition: () => Effect.succeed(new Computer.MousePosition({ x: 7, y: 9 }))
    })
    return Effect.gen(function*() {
      const position = yield* Computer.getMousePosition({ id: "b1" })
      const pools = yield* BrowserPools.list()
      expect(position).toEqual({ x: 7, y: 9 })
      expect(pools).toEqual([])
      // only the real list operation reached the transport
      expect(requests.map((r) => r.url.pathname)).toEqual(["/browser_pools"])
    }).pipe(Effect.provide(Layer.merge(layer, FakeMouse)))
  })

  it.effect("exposes the authenticated client for other endpoints", () => {
    const { layer, requests } = mockLayer(() => json(200, { ok: true }))
    return Effect.gen(function*() {
      const { httpClient } = yield* KernelClient.KernelClient
      yield* httpClient.get("/profiles")
      expect(requests[0]!.url.href).toBe("https://kernel.test/profiles")
      expect(requests[0]!.headers["authorization"]).toBe(`Bearer ${token}`)
    }).pipe(Effect.provide(layer))
  })
})

describe("configuration", () => {
  const withEnv = (env: Record<string, string>) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  const transport = Layer.succeed(HttpClient.HttpClient, mockTransport(() => json(200, [])).client)

  it.effect("reads KERNEL_API_KEY, KERNEL_BASE_URL and KERNEL_PROJECT_ID", () =>
    Effect.gen(function*() {
      const config = yield* KernelConfig.KernelConfig
      expect(Redacted.value(config.apiKey)).toBe("env-key")
      expect(config.baseUrl).toBe("http://127.0.0.1:4010")
      expect(config.projectId).toEqual(Option.some("proj"))
      expect(config.maxRetries).toBe(2)
    }).pipe(
      Effect.provide(
        Kernel.layerConfig().pipe(
          Layer.provide(transport),
          Layer.provide(
            withEnv({
              KERNEL_API_KEY: "env-key",
              KERNEL_BASE_URL: "http://127.0.0.1:4010/",
              KERNEL_PROJECT_ID: "proj"
            })
          )
        )
      )
    ))

  it.effect("defaults the base URL to https://api.onkernel.com", () =>
    Effect.gen(function*() {
      const config = yield* KernelConfig.make({ apiKey: Redacted.make("k") })
      expect(config.baseUrl).toBe("https://api.onkernel.com")
      expect(config.timeout).toEqual(config.idleTimeout)
    }))

  it.effect("fails with a ConfigError naming KERNEL_API_KEY when it is missing", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Layer.build(Kernel.layerConfig().pipe(Layer.provide(transport), Layer.provide(withEnv({}))))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("KERNEL_API_KEY")
      // and says how to give one
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain(
        "KERNEL_API_KEY is not set: set it to your Kernel API key, or give the key in code with KernelConfig.layer"
      )
    }).pipe(Effect.scoped))

  it.effect("explains a missing KERNEL_API_KEY under a nested ConfigProvider too, with where it looked", () =>
    Effect.gen(function*() {
      const nested = Layer.setConfigProvider(
        ConfigProvider.fromMap(new Map([["APP.KERNEL_BASE_URL", "http://127.0.0.1:4010"]])).pipe(
          ConfigProvider.nested("APP")
        )
      )
      const exit = yield* Effect.exit(
        Layer.build(Kernel.layerConfig().pipe(Layer.provide(transport), Layer.provide(nested)))
      )
      const shown = String(Exit.isFailure(exit) ? exit.cause : "")
      expect(shown).toContain(
        "KERNEL_API_KEY is not set (looked up at APP.KERNEL_API_KEY): set it to your Kernel API key"
      )
    }).pipe(Effect.scoped))

  it.effect.each([
    ["plain http to a remote host", "http://api.example.com"],
    ["not a URL", "not a url"],
    ["another protocol", "ftp://example.com"],
    ["credentials in the URL", "https://user:pass@example.com"]
  ])("refuses a base URL that is %s", ([, baseUrl]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(KernelConfig.make({ apiKey: Redacted.make("k"), baseUrl }))
      expect(error._op).toBe("InvalidData")
    }))

  it.effect("allows plain http to a remote host when asked to", () =>
    Effect.gen(function*() {
      const config = yield* KernelConfig.make({
        apiKey: Redacted.make("k"),
        baseUrl: "http://kernel.internal:8080/api/",
        allowInsecureHttp: true
      })
      expect(config.baseUrl).toBe("http://kernel.internal:8080/api")
    }))
})

describe("secrets", () => {
  it.effect("the token appears in no error, string or inspection", () => {
    const { layer } = mockLayer((_r, _q, n) => json(n % 2 === 0 ? 401 : 500, errorBody("x", "y")), { maxRetries: 0 })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "b1" }))
      const client = yield* KernelClient.KernelClient
      const config = client.config
      for (
        const text of [
          String(error),
          JSON.stringify(error),
          util.inspect(error),
          util.inspect(config),
          util.inspect(client)
        ]
      ) {
        expect(text).not.toContain(token)
      }
    }).pipe(Effect.provide(layer))
  })
})

describe("error unions", () => {
  it("each operation's error channel is exactly what it can produce", () => {
    type TagOf<E> = E extends { readonly _tag: infer T } ? T : never
    type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? TagOf<E>
      : T extends Stream.Stream<infer _A, infer E, infer _R> ? TagOf<E>
      : never
    type Common =
      | "Unauthorized"
      | "Conflict"
      | "RateLimited"
      | "InternalServerError"
      | "UnexpectedStatus"
      | "TransportError"
      | "Timeout"
    expectTypeOf<ErrorOf<ReturnType<typeof BrowserPools.list>>>().toEqualTypeOf<
      Common | "Forbidden" | "DecodeError" | "InvalidInput"
    >()
    expectTypeOf<ErrorOf<ReturnType<typeof Computer.getMousePosition>>>().toEqualTypeOf<
      Common | "BadRequest" | "NotFound" | "DecodeError" | "InvalidInput"
    >()
    expectTypeOf<ErrorOf<ReturnType<typeof Computer.setCursorVisibility>>>().toEqualTypeOf<
      Common | "BadRequest" | "NotFound" | "DecodeError" | "InvalidInput"
    >()
    expectTypeOf<ErrorOf<ReturnType<typeof Deployments.delete>>>().toEqualTypeOf<Common | "NotFound" | "InvalidInput">()
    expectTypeOf<ErrorOf<ReturnType<typeof Replays.download>>>().toEqualTypeOf<
      Common | "BadRequest" | "Forbidden" | "NotFound" | "DecodeError" | "InvalidInput" | "ReplayNotReady"
    >()
    expectTypeOf<KernelError.KernelError["_tag"]>().toEqualTypeOf<
      (typeof import("effect-kernel").KernelError.tags)[number]
    >()
  })

  it.effect("catchTags over an operation's union is exhaustive", () => {
    const { layer } = mockLayer(() => json(404, errorBody("not_found", "no such deployment")), { maxRetries: 0 })
    return Deployments.delete({ id: "gone" }).pipe(
      Effect.as("deleted"),
      Effect.catchTags({
        NotFound: () => Effect.succeed("already gone"),
        InvalidInput: () => Effect.succeed("bad id"),
        Unauthorized: () => Effect.succeed("check KERNEL_API_KEY"),
        Conflict: () => Effect.succeed("busy"),
        RateLimited: () => Effect.succeed("later"),
        InternalServerError: () => Effect.succeed("server"),
        UnexpectedStatus: () => Effect.succeed("unexpected"),
        TransportError: () => Effect.succeed("network"),
        Timeout: () => Effect.succeed("slow")
      }),
      Effect.tap((result) => {
        expectTypeOf(result).toEqualTypeOf<string>()
        expect(result).toBe("already gone")
      }),
      Effect.provide(layer)
    )
  })
})
