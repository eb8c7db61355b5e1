import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigError, ConfigProvider, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { KernelConfig } from "effect-kernel"

// Every configuration error names the variable (from the environment) or the option (in code),
// says what was expected, and never repeats a secret.
const fromEnv = (vars: Record<string, string>) =>
  Effect.either(
    Effect.scoped(Layer.build(KernelConfig.layerConfig())).pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))
    )
  )

const failure = (result: Either.Either<unknown, ConfigError.ConfigError>): string => {
  expect(Either.isLeft(result)).toBe(true)
  return Either.isLeft(result) ? String(result.left) : ""
}

const key = { KERNEL_API_KEY: "sk_test_secret" }

/** The configuration `KernelConfig.layerConfig()` reads from these variables. */
const loaded = (vars: Record<string, string>) =>
  KernelConfig.KernelConfig.pipe(
    Effect.provide(KernelConfig.layerConfig()),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))
  )

// base URLs that would not be used as written: [case, url, what the message says]
const baseUrlRefusals = [
  ["with a query", "https://api.example.com/v1?hunter2=1", "without a query"],
  ["with an empty query", "https://api.example.com/v1?", "without a query"],
  ["with a query after the host", "https://api.example.com?region=eu", "without a query"],
  ["with a fragment", "https://api.example.com/v1#hunter2", "without a fragment"],
  ["with an empty fragment", "https://api.example.com/#", "without a fragment"],
  ["with a fragment holding a ?", "https://api.example.com/#a?b", "without a fragment"],
  ["with a .. segment", "https://api.example.com/v1/../v2", "\".\" or \"..\" segments"],
  ["with a trailing .. segment", "https://api.example.com/v1/..", "\".\" or \"..\" segments"],
  ["with a . segment", "https://api.example.com/./v1", "\".\" or \"..\" segments"],
  ["with a trailing . segment", "https://api.example.com/v1/.", "\".\" or \"..\" segments"],
  ["with %2e%2e", "https://api.example.com/v1/%2e%2e/v2", "\".\" or \"..\" segments"],
  ["with %2E", "https://api.example.com/v1/%2E/", "\".\" or \"..\" segments"],
  ["with .%2e", "https://api.example.com/v1/.%2e/v2", "\".\" or \"..\" segments"],
  ["with %2e.", "https://api.example.com/v1/%2E./v2", "\".\" or \"..\" segments"],
  ["with a backslash before ..", "https://api.example.com/v1\\..\\v2", "\".\" or \"..\" segments"],
  ["with a tab inside ..", "https://api.example.com/v1/.\t./v2", "\".\" or \"..\" segments"]
] as const

// dots that are not whole segments stay as written
const baseUrlAccepted = [
  ["https://api.example.com/v1/", "https://api.example.com/v1"],
  ["https://api.example.com/.well/v1...", "https://api.example.com/.well/v1..."],
  ["https://api.example.com/v%2e1/%2e%2e%2e", "https://api.example.com/v%2e1/%2e%2e%2e"],
  ["https://api.example.com./v1", "https://api.example.com./v1"]
] as const

describe("configuration errors from the environment", () => {
  it.effect.each(
    [
      ["KERNEL_BASE_URL", { KERNEL_BASE_URL: "not a url" }, "expected an http(s) URL"],
      ["KERNEL_BASE_URL", { KERNEL_BASE_URL: "ftp://example.com" }, "expected an http(s) URL"],
      ["KERNEL_BASE_URL", { KERNEL_BASE_URL: "http://api.example.com" }, "KERNEL_ALLOW_INSECURE_HTTP"],
      ["KERNEL_MAX_RETRIES", { KERNEL_MAX_RETRIES: "-1" }, "expected a whole number >= 0"],
      ["KERNEL_MAX_RETRIES", { KERNEL_MAX_RETRIES: "two" }, "expected a whole number >= 0"],
      ["KERNEL_TIMEOUT", { KERNEL_TIMEOUT: "0 seconds" }, "expected a duration > 0"],
      ["KERNEL_ALLOW_INSECURE_HTTP", { KERNEL_ALLOW_INSECURE_HTTP: "maybe" }, "expected true or false"],
      ["KERNEL_PROJECT_ID", { KERNEL_PROJECT_ID: "p\r\nX-Injected: 1" }, "HTTP header"]
    ] as const
  )("%s: %j", ([name, vars, expected]) =>
    Effect.gen(function*() {
      const message = failure(yield* fromEnv({ ...key, ...vars }))
      expect(message).toContain(name)
      expect(message).toContain(expected)
      expect(message).not.toContain("sk_test_secret")
    }))

  // Effect's own parsers say only "Expected a duration" / "Expected an integer value" / "Expected a
  // boolean value" (no format, case-sensitive booleans): every variable gets the SDK's message instead
  it.effect.each(
    [
      ["KERNEL_TIMEOUT", "10s", "expected a duration > 0 such as \"30 seconds\""],
      ["KERNEL_TIMEOUT", "abc", "expected a duration > 0 such as \"30 seconds\""],
      ["KERNEL_TIMEOUT", "-5 seconds", "expected a duration > 0 such as \"30 seconds\""],
      ["KERNEL_TIMEOUT", "30000", "expected a duration > 0 such as \"30 seconds\""],
      ["KERNEL_TIMEOUT", "0", "expected a duration > 0 such as \"30 seconds\""],
      ["KERNEL_MAX_RETRIES", "two", "expected a whole number >= 0"],
      ["KERNEL_MAX_RETRIES", "1.5", "expected a whole number >= 0"],
      ["KERNEL_ALLOW_INSECURE_HTTP", "maybe", "expected true or false"]
    ] as const
  )("%s=%j says what was expected", ([name, value, expected]) =>
    Effect.gen(function*() {
      const message = failure(yield* fromEnv({ ...key, [name]: value }))
      expect(message).toContain(`at ${name}:`)
      expect(message).toContain(expected)
      expect(message).not.toContain("sk_test_secret")
    }))

  it.effect.each(
    [
      [{ KERNEL_ALLOW_INSECURE_HTTP: "TRUE" }, true],
      [{ KERNEL_ALLOW_INSECURE_HTTP: " Yes " }, true],
      [{ KERNEL_ALLOW_INSECURE_HTTP: "On" }, true],
      [{ KERNEL_ALLOW_INSECURE_HTTP: "1" }, true],
      [{ KERNEL_ALLOW_INSECURE_HTTP: "False" }, false],
      [{ KERNEL_ALLOW_INSECURE_HTTP: "OFF" }, false]
    ] as const
  )("%j is read in any case", ([vars, allowed]) =>
    Effect.gen(function*() {
      const result = yield* fromEnv({ ...key, KERNEL_BASE_URL: "http://kernel.internal:8080", ...vars })
      expect(Either.isRight(result)).toBe(allowed)
      if (Either.isLeft(result)) expect(String(result.left)).toContain("KERNEL_ALLOW_INSECURE_HTTP")
    }))

  // a compose file or a CI job writes `KERNEL_BASE_URL=${KERNEL_BASE_URL}` for a variable it does not have
  it.effect("an optional variable set but empty or blank is as unset: its default", () =>
    Effect.gen(function*() {
      const config = yield* loaded({
        ...key,
        KERNEL_BASE_URL: "",
        KERNEL_PROJECT_ID: " ",
        KERNEL_TIMEOUT: "",
        KERNEL_MAX_RETRIES: "  ",
        KERNEL_ALLOW_INSECURE_HTTP: ""
      })
      expect(config.baseUrl).toBe("https://api.onkernel.com")
      expect(config.projectId).toEqual(Option.none())
      expect(Duration.toMillis(config.timeout)).toBe(60_000)
      expect(config.maxRetries).toBe(2)
    }))

  it.effect("KERNEL_TIMEOUT and KERNEL_MAX_RETRIES tolerate surrounding spaces", () =>
    Effect.gen(function*() {
      const config = yield* loaded({ ...key, KERNEL_TIMEOUT: " 1.5 minutes ", KERNEL_MAX_RETRIES: " 4 " })
      expect(Duration.toMillis(config.timeout)).toBe(90_000)
      expect(config.maxRetries).toBe(4)
    }))

  it.effect.each([
    ["empty", ""],
    ["blank", "   "],
    ["with a line break", "sk_test_secret\r\nX-Evil: 1"],
    ["with a NUL", "sk_test_secret\u0000"]
  ])(
    "an API key that is %s is a ConfigError naming KERNEL_API_KEY, without the key",
    ([, apiKey]) =>
      Effect.gen(function*() {
        const message = failure(yield* fromEnv({ KERNEL_API_KEY: apiKey }))
        expect(message).toContain("KERNEL_API_KEY")
        expect(message).toContain("expected")
        expect(message).not.toContain("sk_test_secret")
      })
  )

  it.effect.each([
    ["unparsable", "https://user:hunter2@exa mple.com"],
    ["parsable", "https://user:hunter2@example.com"],
    ["plain http", "http://user:hunter2@example.com"]
  ])("a password in an %s KERNEL_BASE_URL is never repeated", ([, url]) =>
    Effect.gen(function*() {
      const message = failure(yield* fromEnv({ ...key, KERNEL_BASE_URL: url }))
      expect(message).toContain("KERNEL_BASE_URL")
      expect(message).not.toContain("hunter2")
    }))

  // `new URL` drops nothing silently here: the SDK sends to base URL + path, so a query or a fragment
  // would be lost and dot segments would be resolved away (to another path) without a word
  it.effect.each(baseUrlRefusals)(
    "KERNEL_BASE_URL %s is refused, saying why",
    ([, url, expected]) =>
      Effect.gen(function*() {
        const message = failure(yield* fromEnv({ ...key, KERNEL_BASE_URL: url }))
        expect(message).toContain("at KERNEL_BASE_URL:")
        expect(message).toContain(expected)
        expect(message).not.toContain("sk_test_secret")
        expect(message).not.toContain("hunter2")
      })
  )

  it.effect.each(baseUrlAccepted)("KERNEL_BASE_URL %j is accepted as %j", ([url, expected]) =>
    Effect.gen(function*() {
      const config = yield* KernelConfig.KernelConfig.pipe(
        Effect.provide(KernelConfig.layerConfig()),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...key, KERNEL_BASE_URL: url }))))
      )
      expect(config.baseUrl).toBe(expected)
    }))

  it.effect("KERNEL_ALLOW_INSECURE_HTTP=true allows plain http to a remote host", () =>
    Effect.gen(function*() {
      const config = yield* loaded({
        ...key,
        KERNEL_BASE_URL: "http://kernel.internal:8080/",
        KERNEL_ALLOW_INSECURE_HTTP: "true"
      })
      expect(config.baseUrl).toBe("http://kernel.internal:8080")
    }))

  it.effect("the variables are read as documented", () =>
    Effect.gen(function*() {
      const config = yield* loaded({ ...key, KERNEL_TIMEOUT: "5 seconds", KERNEL_MAX_RETRIES: "0" })
      expect(config.maxRetries).toBe(0)
      expect(Duration.toMillis(config.timeout)).toBe(5000)
      expect(Redacted.value(config.apiKey)).toBe("sk_test_secret")
    }))
})

// a caller's own `Config`s: the error named the option (`maxRetries`), not the caller's variable
describe("configuration errors from a caller's own Configs", () => {
  const withConfigs = (configs: KernelConfig.ConfigOptions, vars: Record<string, string>) =>
    Effect.either(
      Effect.scoped(Layer.build(KernelConfig.layerConfig(configs))).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))
      )
    )
  const apiKey = Config.redacted("MY_KEY")
  const cases: ReadonlyArray<readonly [string, KernelConfig.ConfigOptions, Record<string, string>, string]> = [
    ["MY_RETRIES", { apiKey, maxRetries: Config.integer("MY_RETRIES") }, { MY_RETRIES: "-1" }, "a whole number >= 0"],
    ["MY_TIMEOUT", { apiKey, timeout: Config.duration("MY_TIMEOUT") }, { MY_TIMEOUT: "0 millis" }, "a duration > 0"],
    ["MY_URL", { apiKey, baseUrl: Config.string("MY_URL") }, { MY_URL: "ftp://x" }, "an http(s) URL"],
    ["APP.RETRIES", { apiKey, maxRetries: Config.nested(Config.integer("RETRIES"), "APP") }, {
      "APP.RETRIES": "-1"
    }, "a whole number >= 0"],
    // a `Config` that is not one variable: the option, as before
    ["maxRetries", { apiKey, maxRetries: Config.withDefault(Config.integer("MY_RETRIES"), 2) }, {
      MY_RETRIES: "-1"
    }, "a whole number >= 0"],
    ["maxRetries", { apiKey, maxRetries: Config.succeed(-1) }, {}, "a whole number >= 0"],
    ["apiKey", { apiKey }, { MY_KEY: "  " }, "a non-empty API key"],
    ["projectId", { apiKey, projectId: Config.option(Config.string("MY_PROJECT")) }, {
      MY_PROJECT: "p\r\nX: 1"
    }, "a project id that can be sent in an HTTP header"]
  ]
  // `config` read directly (no layer): a caller's own Config as it is, never the `(option)` mark
  it.effect("KernelConfig.config directly: the caller's own values as they are, unchecked", () =>
    Effect.gen(function*() {
      const read = yield* Effect.either(
        Effect.withConfigProvider(
          KernelConfig.config({ apiKey, maxRetries: Config.integer("MY_RETRIES") }),
          ConfigProvider.fromMap(new Map([["MY_KEY", "sk_x"], ["MY_RETRIES", "-1"]]))
        )
      )
      // read as it is (the layers would refuse -1): no check ran, so no mark can be in an error
      expect(Either.isRight(read) ? read.right.maxRetries : read.left).toBe(-1)
    }))

  // the caller's own check's message is theirs, whatever it starts with (an option's name was taken off)
  it.effect("a caller's own refusal: its message whole", () =>
    Effect.gen(function*() {
      const maxRetries = Config.mapOrFail(
        Config.integer("MY_RETRIES"),
        (n) => Either.left(ConfigError.InvalidData([], `timeout: ${n} is too many`))
      )
      const message = failure(yield* withConfigs({ apiKey, maxRetries }, { MY_KEY: "sk_x", MY_RETRIES: "7" }))
      expect(message).toContain(`at MY_RETRIES: "timeout: 7 is too many"`)
    }))

  for (const [name, configs, vars, expected] of cases) {
    it.effect(`${name}: ${expected}`, () =>
      Effect.gen(function*() {
        const message = failure(yield* withConfigs(configs, { MY_KEY: "sk_test_secret", ...vars }))
        expect(message).toContain(`at ${name}: "expected ${expected}`)
        expect(message).not.toContain("sk_test_secret")
      }))
  }
})

describe("configuration errors from options in code", () => {
  const make = (options: Partial<KernelConfig.Options>) =>
    Effect.either(KernelConfig.make({ apiKey: Redacted.make("sk_test_secret"), ...options }))

  it.effect.each(baseUrlRefusals)("baseUrl %s is refused, saying why", ([, url, expected]) =>
    Effect.gen(function*() {
      const message = failure(yield* make({ baseUrl: url }))
      expect(message).toContain("at baseUrl:")
      expect(message).toContain(expected)
      expect(message).not.toContain("hunter2")
      expect(message).not.toContain("KERNEL_")
    }))

  it.effect.each(baseUrlRefusals)(
    "baseUrl %s is refused by KernelConfig.layer",
    ([, url, expected]) =>
      Effect.gen(function*() {
        const result = yield* Effect.either(
          Effect.scoped(Layer.build(KernelConfig.layer({ apiKey: Redacted.make("sk_test_secret"), baseUrl: url })))
        )
        expect(failure(result)).toContain(expected)
      })
  )

  it.effect("an API key given as a plain string (a program without types): ConfigError saying to wrap it, the key not shown", () =>
    Effect.gen(function*() {
      const options: unknown = JSON.parse("{\"apiKey\":\"sk_plain_hunter2\"}")
      const result = yield* Effect.either(KernelConfig.make(options as KernelConfig.Options))
      const message = failure(result)
      expect(message).toContain("wrap it in Redacted.make(key)")
      expect(message).not.toContain("hunter2")
    }))

  it.effect.each(baseUrlAccepted)("baseUrl %j is accepted as %j", ([url, expected]) =>
    Effect.gen(function*() {
      const config = yield* KernelConfig.make({ apiKey: Redacted.make("sk_test_secret"), baseUrl: url })
      expect(config.baseUrl).toBe(expected)
    }))

  it.effect.each(
    [
      ["apiKey", { apiKey: Redacted.make(" ") }, "expected a non-empty API key"],
      ["apiKey", { apiKey: Redacted.make("sk_test_secret\n") }, "HTTP header"],
      ["baseUrl", { baseUrl: "https://user:hunter2@exa mple" }, "expected an http(s) URL"],
      ["baseUrl", { baseUrl: "http://api.example.com" }, "allowInsecureHttp"],
      ["maxRetries", { maxRetries: 1.5 }, "expected a whole number >= 0"],
      ["timeout", { timeout: -1 }, "expected a duration > 0"],
      ["idleTimeout", { idleTimeout: 0 }, "expected a duration > 0"],
      ["maxRetryAfter", { maxRetryAfter: Number.NaN }, "expected a duration >= 0"]
    ] as const
  )("%s: %j", ([name, options, expected]) =>
    Effect.gen(function*() {
      const message = failure(yield* make(options))
      expect(message).toContain(`at ${name}:`)
      expect(message).toContain(expected)
      expect(message).not.toContain("sk_test_secret")
      expect(message).not.toContain("hunter2")
      expect(message).not.toContain("KERNEL_")
    }))
})
