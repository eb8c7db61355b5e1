/**
 * Configuration of the Kernel client: credentials, address, time-outs and retries.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import { isSendableHeaderValue, isSendableToken } from "./internal/credentials.js"
import type { KernelError } from "./KernelError.js"

/**
 * The default address of the service.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaultBaseUrl = "https://api.onkernel.com"

/**
 * The resolved configuration the client runs with.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  /** The API key, sent as `Authorization: Bearer <key>`. */
  readonly apiKey: Redacted.Redacted<string>
  /** Address of the service, without a trailing slash. */
  readonly baseUrl: string
  /** Sent as `X-Kernel-Project-Id` when set. */
  readonly projectId: Option.Option<string>
  /**
   * Time-out of one attempt (until the whole JSON body, or the download's headers, arrived). For a
   * streamed upload (a file on disk, a `Stream`), pushed back each time the transport takes a chunk of
   * the body: it bounds a silence of the upload, then the wait for the answer (docs/retries.md).
   */
  readonly timeout: Duration.Duration
  /** How long a download may stall between two chunks before it fails with `Timeout`. */
  readonly idleTimeout: Duration.Duration
  /** How many times a transient failure is retried. */
  readonly maxRetries: number
  /** The longest server-requested wait (`Retry-After`) that is honoured; longer ones are capped. */
  readonly maxRetryAfter: Duration.Duration
  /** Replaces the default retry policy when set. It only ever sees transient errors. */
  readonly retrySchedule: Option.Option<Schedule.Schedule<unknown, KernelError>>
}

/**
 * The options of {@link make} and {@link layer}. Only `apiKey` is required.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  readonly apiKey: Redacted.Redacted<string>
  /**
   * Default `https://api.onkernel.com`. Requests go to this URL followed by the operation's path,
   * so it may have a path but no query, no fragment and no `.`/`..` segments (nor `%2e` forms).
   */
  readonly baseUrl?: string | undefined
  readonly projectId?: string | undefined
  /**
   * Per attempt; for a streamed upload, per silence of the upload, then for the answer
   * (docs/retries.md, "Time-outs"). Default 60 seconds.
   */
  readonly timeout?: Duration.DurationInput | undefined
  /** Default 60 seconds. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** Default 2. */
  readonly maxRetries?: number | undefined
  /** Default 60 seconds. */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
  /** A custom retry schedule, replacing the default policy. */
  readonly retrySchedule?: Schedule.Schedule<unknown, KernelError> | undefined
  /**
   * Allow a plain `http:` base URL on a host other than loopback. Off by default, so the token is
   * never sent in clear text by mistake.
   */
  readonly allowInsecureHttp?: boolean | undefined
}

/**
 * The configuration of the Kernel client.
 *
 * @since 0.1.0
 * @category Tags
 */
export class KernelConfig extends Context.Tag("effect-kernel/KernelConfig")<KernelConfig, Service>() {
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/KernelConfig"
}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

const isLoopback = (hostname: string): boolean => loopbackHosts.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/**
 * The names errors use for each setting: the option's name when set in code, the environment
 * variable's when read by {@link layerConfig}.
 */
interface Names {
  readonly apiKey: string
  readonly baseUrl: string
  readonly projectId: string
  readonly timeout: string
  readonly idleTimeout: string
  readonly maxRetries: string
  readonly maxRetryAfter: string
  readonly allowInsecureHttp: string
}

const optionNames: Names = {
  apiKey: "apiKey",
  baseUrl: "baseUrl",
  projectId: "projectId",
  timeout: "timeout",
  idleTimeout: "idleTimeout",
  maxRetries: "maxRetries",
  maxRetryAfter: "maxRetryAfter",
  allowInsecureHttp: "allowInsecureHttp"
}

const invalid = (name: string, message: string) => Either.left(ConfigError.InvalidData([name], message))

// never repeats the value: it is a secret
const checkApiKey = (
  name: string,
  key: Redacted.Redacted<string>
): Either.Either<Redacted.Redacted<string>, ConfigError.ConfigError> => {
  // a plain string from a program without types (never shown: it is the key)
  if (!Redacted.isRedacted(key)) {
    return invalid(name, "expected the API key as a Redacted: wrap it in Redacted.make(key)")
  }
  const value = Redacted.value(key)
  if (value.trim() === "") return invalid(name, "expected a non-empty API key, got an empty or blank value")
  if (!isSendableToken(value)) {
    return invalid(
      name,
      "expected an API key that can be sent in an HTTP header as a bearer token (visible ASCII characters only); it contains a space, a line break, a control or a non-ASCII character"
    )
  }
  return Either.right(key)
}

const checkProjectId = (name: string, id: string): Either.Either<string, ConfigError.ConfigError> =>
  id === "" || isSendableHeaderValue(id)
    ? Either.right(id)
    : invalid(
      name,
      "expected a project id that can be sent in an HTTP header (visible ASCII characters, inner spaces); it contains a line break, a control or a non-ASCII character, or surrounding spaces"
    )

// the input is never repeated: it may carry a password (`https://user:secret@host`)
const parseUrl = (name: string, input: string): Either.Either<URL, ConfigError.ConfigError> => {
  let url: URL
  try {
    url = new URL(input.trim())
  } catch {
    return invalid(name, `expected an http(s) URL such as ${defaultBaseUrl}; the value is not a URL`)
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return invalid(name, `expected an http(s) URL such as ${defaultBaseUrl}; got the protocol ${url.protocol}`)
  }
  if (url.username !== "" || url.password !== "") {
    return invalid(name, "expected a URL without credentials (user:password@); the API key is the only credential")
  }
  // `new URL` drops what a base URL cannot keep, and resolves dot segments, without a word: the
  // requests would go elsewhere than written, so such a URL is refused (judged on the text as written)
  const written = input.trim().replace(/[\t\n\r]/g, "")
  const query = written.indexOf("?")
  const fragment = written.indexOf("#")
  if (fragment !== -1 && (query === -1 || fragment < query)) {
    return invalid(
      name,
      "expected a base URL without a fragment (#...): it would be dropped; requests go to the base URL followed by the operation's path"
    )
  }
  if (query !== -1) {
    return invalid(
      name,
      "expected a base URL without a query (?...): it would be dropped; requests go to the base URL followed by the operation's path"
    )
  }
  if (hasDotSegment(writtenPath(written))) {
    return invalid(
      name,
      "expected a base URL path without \".\" or \"..\" segments (nor their percent-encoded forms such as %2e): they would be resolved away, and requests would go to another path"
    )
  }
  return Either.right(url)
}

// The path of an http(s) URL as written, without a query or fragment: what follows the scheme, its
// slashes and the authority (for http(s), a backslash is a slash).
const writtenPath = (text: string): string => {
  const afterScheme = text.slice(text.indexOf(":") + 1).replace(/^[/\\]*/, "")
  const start = afterScheme.search(/[/\\]/)
  return start === -1 ? "" : afterScheme.slice(start)
}

// `.`, `..`, and their forms with `%2e` / `%2E`, which URL parsers treat as dots
const hasDotSegment = (path: string): boolean =>
  path.split(/[/\\]/).some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))

const parseBaseUrl = (
  names: Names,
  input: string,
  allowInsecureHttp: boolean
): Either.Either<string, ConfigError.ConfigError> =>
  Either.flatMap(
    parseUrl(names.baseUrl, input),
    (url) =>
      url.protocol === "http:" && !allowInsecureHttp && !isLoopback(url.hostname)
        ? invalid(
          names.baseUrl,
          `expected https (plain http is only allowed to loopback): refusing to send the API key in clear text to ${url.host}; use https or set ${names.allowInsecureHttp}`
        )
        : Either.right(url.origin + url.pathname.replace(/\/+$/, ""))
  )

const checkCount = (name: string, n: number): Either.Either<number, ConfigError.ConfigError> =>
  Number.isInteger(n) && n >= 0
    ? Either.right(n)
    : invalid(name, `expected a whole number >= 0, got ${n}`)

const checkDuration = (
  name: string,
  input: Duration.DurationInput,
  positive: boolean
): Either.Either<Duration.Duration, ConfigError.ConfigError> => {
  const expected = positive ? "a duration > 0" : "a duration >= 0"
  if (typeof input === "number" && !(input >= 0)) return invalid(name, `expected ${expected} such as "30 seconds"`)
  return Option.match(Duration.decodeUnknown(input), {
    onNone: () => invalid(name, `expected ${expected} such as "30 seconds"`),
    onSome: (duration) =>
      positive && Duration.isZero(duration)
        ? invalid(name, `expected ${expected} such as "30 seconds", got 0`)
        : Either.right(duration)
  })
}

const makeNamed = (options: Options, names: Names): Effect.Effect<Service, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const apiKey = yield* checkApiKey(names.apiKey, options.apiKey)
    const baseUrl = yield* parseBaseUrl(names, options.baseUrl ?? defaultBaseUrl, options.allowInsecureHttp ?? false)
    const projectId = yield* checkProjectId(names.projectId, options.projectId ?? "")
    const maxRetries = yield* checkCount(names.maxRetries, options.maxRetries ?? 2)
    const timeout = yield* checkDuration(names.timeout, options.timeout ?? "60 seconds", true)
    const idleTimeout = yield* checkDuration(names.idleTimeout, options.idleTimeout ?? "60 seconds", true)
    const maxRetryAfter = yield* checkDuration(names.maxRetryAfter, options.maxRetryAfter ?? "60 seconds", false)
    return {
      apiKey,
      baseUrl,
      projectId: projectId === "" ? Option.none() : Option.some(projectId),
      timeout,
      idleTimeout,
      maxRetries,
      maxRetryAfter,
      retrySchedule: Option.fromNullable(options.retrySchedule)
    }
  })

/**
 * Validates options into a configuration: the API key must be non-blank and fit in a header, the
 * base URL must be http(s) (https unless loopback or `allowInsecureHttp`) without credentials, a
 * query, a fragment or `.`/`..` path segments (which `new URL` would drop or resolve away), counts
 * must be whole numbers and time-outs positive durations. Each error names the option and what was
 * expected, and never repeats the key or the URL.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<Service, ConfigError.ConfigError> =>
  makeNamed(options, optionNames)

/**
 * A layer with the given configuration.
 *
 * @since 0.1.0
 * @category Layers
 * @example
 * ```ts
 * import { KernelConfig } from "effect-kernel"
 * import { Redacted } from "effect"
 *
 * const ConfigLive = KernelConfig.layer({ apiKey: Redacted.make("sk_..."), maxRetries: 5 })
 * ```
 */
export const layer = (options: Options): Layer.Layer<KernelConfig, ConfigError.ConfigError> =>
  Layer.effect(KernelConfig, make(options))

/**
 * The `Config`s that {@link layerConfig} reads; each can be replaced.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ConfigOptions {
  readonly apiKey?: Config.Config<Redacted.Redacted<string>> | undefined
  readonly baseUrl?: Config.Config<string> | undefined
  readonly projectId?: Config.Config<Option.Option<string>> | undefined
  readonly timeout?: Config.Config<Duration.Duration> | undefined
  readonly maxRetries?: Config.Config<number> | undefined
  /**
   * Default: `KERNEL_ALLOW_INSECURE_HTTP` (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`, in any
   * case; default `false`); `options.allowInsecureHttp`, when given, wins.
   *
   * @since 0.2.0
   */
  readonly allowInsecureHttp?: Config.Config<boolean> | undefined
  /** Options that do not come from the environment (schedule, insecure http...). */
  readonly options?: Omit<Options, "apiKey" | "baseUrl" | "projectId" | "timeout" | "maxRetries"> | undefined
}

/**
 * An optional variable's text: set but empty (or blank) is as unset (missing: its default applies), as a
 * compose file or a CI job writes `KERNEL_BASE_URL=${KERNEL_BASE_URL}` for a variable it does not have,
 * and as the official client reads it.
 */
const optionalVariable = (name: string): Config.Config<string> =>
  // nested last, so that what maps it further names the variable in its errors (as `Config.string(name)`)
  Config.nested(
    Config.mapOrFail(
      Config.string(),
      (text) =>
        text.trim() === "" ? Either.left(ConfigError.MissingData([], "set but empty: as unset")) : Either.right(text)
    ),
    name
  )

// The text of a variable, parsed by the SDK rather than by `Config.integer` / `Config.duration` /
// `Config.boolean`, whose messages say neither the format nor the accepted values (and whose booleans
// are case-sensitive). The error is prefixed with the variable's name by the `Config`.
const parsed = <A>(
  name: string,
  parse: (text: string) => Either.Either<A, ConfigError.ConfigError>
): Config.Config<A> =>
  Config.mapOrFail(
    optionalVariable(name),
    (text) =>
      Either.mapLeft(
        parse(text.trim()),
        (error) => ConfigError.isInvalidData(error) ? ConfigError.InvalidData([], error.message) : error
      )
  )

// what the value was, for messages about values that are not secret (cut, quoted)
const shown = (text: string): string => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)

const parseCount = (name: string, text: string): Either.Either<number, ConfigError.ConfigError> =>
  /^[+-]?\d+$/.test(text)
    ? checkCount(name, Number(text))
    : invalid(name, `expected a whole number >= 0, got ${shown(text)}`)

const parseDuration = (name: string, text: string): Either.Either<Duration.Duration, ConfigError.ConfigError> => {
  const refused = () =>
    invalid(name, `expected a duration > 0 such as "30 seconds" or "500 millis", got ${shown(text)}`)
  if (text.startsWith("-")) return refused()
  return Option.match(Duration.decodeUnknown(text), {
    onNone: refused,
    onSome: (duration) => Duration.isZero(duration) ? refused() : Either.right(duration)
  })
}

const booleans: Record<string, boolean> = {
  true: true,
  yes: true,
  on: true,
  1: true,
  false: false,
  no: false,
  off: false,
  0: false
}

const parseBoolean = (name: string, text: string): Either.Either<boolean, ConfigError.ConfigError> => {
  const normalized = text.toLowerCase()
  return Object.hasOwn(booleans, normalized)
    ? Either.right(booleans[normalized] === true)
    : invalid(name, `expected true or false (also yes/no, on/off, 1/0, in any case), got ${shown(text)}`)
}

/**
 * `self` checked inside the `Config`, so that its error is prefixed with the variable's name. A
 * caller's own `Config` for an `option` also ends its error's path with `(option)`: a `Config` that
 * is not one variable (`Config.withDefault(...)`, `Config.succeed(...)`) prefixes nothing, and
 * `explained` then names the option.
 */
const validated = <A>(
  self: Config.Config<A>,
  check: (name: string, value: A) => Either.Either<A, ConfigError.ConfigError>,
  option?: keyof ConfigOptions
): Config.Config<A> =>
  Config.mapOrFail(
    self,
    (value) =>
      Either.mapLeft(check("", value), (error) =>
        ConfigError.isInvalidData(error)
          ? ConfigError.InvalidData(option === undefined ? [] : [`(${option})`], error.message)
          : error)
  )

/** A caller's own `Config` for `option`: checked inside (see `configWith`), or as it is. */
const own = <A>(
  self: Config.Config<A>,
  check: (name: string, value: A) => Either.Either<A, ConfigError.ConfigError>,
  option: keyof ConfigOptions,
  checked: boolean
): Config.Config<A> => checked ? validated(self, check, option) : self

/** The last segment of an invalid value's path that `validated` adds for a caller's own `Config`: `(option)`. */
const optionSegment = /^\((apiKey|baseUrl|projectId|timeout|maxRetries)\)$/

/**
 * The environment-driven configuration: `KERNEL_API_KEY` (required, redacted, non-blank),
 * `KERNEL_BASE_URL`, `KERNEL_PROJECT_ID`, `KERNEL_TIMEOUT` (a duration such as `30 seconds`),
 * `KERNEL_MAX_RETRIES` (a whole number >= 0) and `KERNEL_ALLOW_INSECURE_HTTP` (a boolean). An
 * invalid value fails with a `ConfigError` naming the variable and what was expected.
 *
 * @since 0.1.0
 * @category Config
 */
export const config = (configs: ConfigOptions = {}): Config.Config<Options> => configWith(configs, false)

/**
 * {@link config}; `checked`, a caller's own `Config`s checked inside them too, so that an error names
 * the caller's variable (`MY_RETRIES`), not the option (`maxRetries`), once `explained` took off the
 * `(option)` segment that marks them (`layerConfig` does; `config`'s own errors never carry it).
 */
const configWith = (configs: ConfigOptions, checked: boolean): Config.Config<Options> =>
  Config.all({
    apiKey: configs.apiKey === undefined
      ? validated(Config.string("KERNEL_API_KEY"), (name, value) =>
        Either.map(checkApiKey(name, Redacted.make(value)), () => value)).pipe(Config.map(Redacted.make))
      : own(configs.apiKey, checkApiKey, "apiKey", checked),
    baseUrl: configs.baseUrl === undefined
      ? validated(optionalVariable("KERNEL_BASE_URL"), (name, input) =>
        Either.map(parseUrl(name, input), () => input))
        .pipe(Config.withDefault(defaultBaseUrl))
      : own(configs.baseUrl, (name, input) => Either.map(parseUrl(name, input), () => input), "baseUrl", checked),
    projectId: configs.projectId === undefined
      ? Config.option(validated(optionalVariable("KERNEL_PROJECT_ID"), checkProjectId))
      : own(
        configs.projectId,
        (name, id) => Option.isNone(id) ? Either.right(id) : Either.map(checkProjectId(name, id.value), Option.some),
        "projectId",
        checked
      ),
    timeout: configs.timeout === undefined
      ? parsed("KERNEL_TIMEOUT", (text) => parseDuration("", text)).pipe(Config.withDefault(Duration.seconds(60)))
      : own(configs.timeout, (name, duration) => checkDuration(name, duration, true), "timeout", checked),
    maxRetries: configs.maxRetries === undefined
      ? parsed("KERNEL_MAX_RETRIES", (text) => parseCount("", text)).pipe(Config.withDefault(2))
      : own(configs.maxRetries, checkCount, "maxRetries", checked),
    allowInsecureHttp: configs.allowInsecureHttp ??
      parsed("KERNEL_ALLOW_INSECURE_HTTP", (text) => parseBoolean("", text)).pipe(Config.withDefault(false))
  }).pipe(Config.map(({ allowInsecureHttp, projectId, ...rest }) => ({
    ...configs.options,
    ...rest,
    projectId: Option.getOrUndefined(projectId),
    allowInsecureHttp: configs.options?.allowInsecureHttp ?? allowInsecureHttp
  })))

const configNames = (configs: ConfigOptions): Names => ({
  apiKey: configs.apiKey === undefined ? "KERNEL_API_KEY" : "apiKey",
  baseUrl: configs.baseUrl === undefined ? "KERNEL_BASE_URL" : "baseUrl",
  projectId: configs.projectId === undefined ? "KERNEL_PROJECT_ID" : "projectId",
  timeout: configs.timeout === undefined ? "KERNEL_TIMEOUT" : "timeout",
  idleTimeout: "options.idleTimeout",
  maxRetries: configs.maxRetries === undefined ? "KERNEL_MAX_RETRIES" : "maxRetries",
  maxRetryAfter: "options.maxRetryAfter",
  allowInsecureHttp: configs.options?.allowInsecureHttp === undefined && configs.allowInsecureHttp === undefined
    ? "KERNEL_ALLOW_INSECURE_HTTP"
    : "allowInsecureHttp"
})

/**
 * A layer configured from the environment (see {@link config}). A missing `KERNEL_API_KEY` fails
 * the layer with a `ConfigError` naming it; no request is ever sent without credentials. Every
 * error names the variable and what was expected, and never repeats a secret.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (configs: ConfigOptions = {}): Layer.Layer<KernelConfig, ConfigError.ConfigError> =>
  Layer.effect(
    KernelConfig,
    Effect.flatMap(
      Effect.mapError(configWith(configs, true), explained),
      (options) => makeNamed(options, configNames(configs))
    )
  )

/**
 * A missing `KERNEL_API_KEY` says how to give one (effect's own message only says it is not there);
 * an invalid value of a caller's own `Config` is at the caller's variable, the `(option)` segment
 * `validated` adds dropped, or, at no variable (a `Config` that is not one), at the option's name;
 * the rest of the error as it is.
 */
const explained = (error: ConfigError.ConfigError): ConfigError.ConfigError => {
  switch (error._op) {
    case "And":
      return ConfigError.And(explained(error.left), explained(error.right))
    case "Or":
      return ConfigError.Or(explained(error.left), explained(error.right))
    case "InvalidData": {
      const option = optionSegment.exec(error.path[error.path.length - 1] ?? "")
      if (option === null) return error
      const path = error.path.slice(0, -1)
      return ConfigError.InvalidData(path.length > 0 ? path : [option[1]!], error.message)
    }
    case "MissingData":
      // the key's own name last: a provider nested under a prefix (`ConfigProvider.nested("APP")`)
      // looked it up under that prefix, which the message names
      return error.path[error.path.length - 1] === "KERNEL_API_KEY"
        ? ConfigError.MissingData(
          error.path,
          `KERNEL_API_KEY is not set${
            error.path.length > 1 ? ` (looked up at ${error.path.join(".")})` : ""
          }: set it to your Kernel API key, or give the key in code with ` +
            "KernelConfig.layer({ apiKey: Redacted.make(key) }) (against the simulator: one of its seed's " +
            "tokens, sk_sim_demo_0123456789 by default)"
        )
        : error
    default:
      return error
  }
}
