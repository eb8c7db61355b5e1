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
import type * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
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
  /** Time-out of one attempt (until the whole JSON body, or the download's headers, arrived). */
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
  /** Default `https://api.onkernel.com`. */
  readonly baseUrl?: string | undefined
  readonly projectId?: string | undefined
  /** Per attempt. Default 60 seconds. */
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
export class KernelConfig extends Context.Tag("effect-kernel/KernelConfig")<KernelConfig, Service>() {}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

const isLoopback = (hostname: string): boolean => loopbackHosts.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname)

const parseBaseUrl = (input: string, allowInsecureHttp: boolean): Either.Either<string, ConfigError.ConfigError> => {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return Either.left(ConfigError.InvalidData(["baseUrl"], `not a URL: ${JSON.stringify(input)}`))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Either.left(ConfigError.InvalidData(["baseUrl"], `unsupported protocol ${url.protocol}`))
  }
  if (url.username !== "" || url.password !== "") {
    return Either.left(ConfigError.InvalidData(["baseUrl"], "credentials in the base URL are not allowed"))
  }
  if (url.protocol === "http:" && !allowInsecureHttp && !isLoopback(url.hostname)) {
    return Either.left(
      ConfigError.InvalidData(
        ["baseUrl"],
        `refusing to send the API key over plain http to ${url.host}; use https or set allowInsecureHttp`
      )
    )
  }
  return Either.right(url.origin + url.pathname.replace(/\/+$/, ""))
}

const checkCount = (name: string, n: number): Either.Either<number, ConfigError.ConfigError> =>
  Number.isInteger(n) && n >= 0
    ? Either.right(n)
    : Either.left(ConfigError.InvalidData([name], `expected a whole number >= 0, got ${n}`))

/**
 * Validates options into a configuration: the base URL must be http(s) (https unless loopback or
 * `allowInsecureHttp`), counts must be whole numbers.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<Service, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const baseUrl = yield* parseBaseUrl(options.baseUrl ?? defaultBaseUrl, options.allowInsecureHttp ?? false)
    const maxRetries = yield* checkCount("maxRetries", options.maxRetries ?? 2)
    return {
      apiKey: options.apiKey,
      baseUrl,
      projectId: Option.fromNullable(options.projectId).pipe(Option.filter((id) => id !== "")),
      timeout: Duration.decode(options.timeout ?? "60 seconds"),
      idleTimeout: Duration.decode(options.idleTimeout ?? "60 seconds"),
      maxRetries,
      maxRetryAfter: Duration.decode(options.maxRetryAfter ?? "60 seconds"),
      retrySchedule: Option.fromNullable(options.retrySchedule)
    }
  })

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
  /** Options that do not come from the environment (schedule, insecure http...). */
  readonly options?: Omit<Options, "apiKey" | "baseUrl" | "projectId" | "timeout" | "maxRetries"> | undefined
}

/**
 * The environment-driven configuration: `KERNEL_API_KEY` (required, redacted), `KERNEL_BASE_URL`,
 * `KERNEL_PROJECT_ID`, `KERNEL_TIMEOUT` (a duration such as `30 seconds`), `KERNEL_MAX_RETRIES`.
 *
 * @since 0.1.0
 * @category Config
 */
export const config = (configs: ConfigOptions = {}): Config.Config<Options> =>
  Config.all({
    apiKey: configs.apiKey ?? Config.redacted("KERNEL_API_KEY"),
    baseUrl: configs.baseUrl ?? Config.string("KERNEL_BASE_URL").pipe(Config.withDefault(defaultBaseUrl)),
    projectId: configs.projectId ?? Config.option(Config.string("KERNEL_PROJECT_ID")),
    timeout: configs.timeout ?? Config.duration("KERNEL_TIMEOUT").pipe(Config.withDefault(Duration.seconds(60))),
    maxRetries: configs.maxRetries ?? Config.integer("KERNEL_MAX_RETRIES").pipe(Config.withDefault(2))
  }).pipe(Config.map(({ projectId, ...rest }) => ({
    ...configs.options,
    ...rest,
    projectId: Option.getOrUndefined(projectId)
  })))

/**
 * A layer configured from the environment (see {@link config}). A missing `KERNEL_API_KEY` fails
 * the layer with a `ConfigError` naming it; no request is ever sent without credentials.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (configs?: ConfigOptions): Layer.Layer<KernelConfig, ConfigError.ConfigError> =>
  Layer.effect(KernelConfig, Effect.flatMap(config(configs), make))
