/**
 * Everything at once: the shared client and the five operation services as one layer.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as BrowserPools from "./BrowserPools.js"
import * as Computer from "./Computer.js"
import * as Deployments from "./Deployments.js"
import * as KernelClient from "./KernelClient.js"
import * as KernelConfig from "./KernelConfig.js"
import * as Replays from "./Replays.js"

/**
 * The services {@link layer} provides.
 *
 * @since 0.1.0
 * @category Models
 */
export type Services =
  | KernelClient.KernelClient
  | Replays.DownloadReplay
  | Computer.SetCursorVisibility
  | Computer.GetMousePosition
  | BrowserPools.ListBrowserPools
  | Deployments.DeleteDeployment

/**
 * The five operation services and the shared client. Needs a `KernelConfig` and the transport
 * (`HttpClient`) of your choice.
 *
 * @since 0.1.0
 * @category Layers
 * @example
 * ```ts
 * import { Kernel, KernelConfig } from "effect-kernel"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Layer, Redacted } from "effect"
 *
 * const KernelLive = Kernel.layer.pipe(
 *   Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_...") })),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 */
export const layer: Layer.Layer<Services, never, KernelConfig.KernelConfig | HttpClient.HttpClient> = Layer.mergeAll(
  Replays.layerDownload,
  Computer.layerSetCursorVisibility,
  Computer.layerGetMousePosition,
  BrowserPools.layerList,
  Deployments.layerDelete
).pipe(Layer.provideMerge(KernelClient.layer))

/**
 * The log level asked for by `KERNEL_LOG` (`debug`, `info`, `warn`, `error` or `off`) as a layer
 * setting Effect's minimum log level; no change when the variable is not set.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerLogLevelConfig: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(
    Config.option(Config.literal("debug", "info", "warn", "error", "off")("KERNEL_LOG")),
    Option.match({
      onNone: () => Layer.empty,
      onSome: (level) => Logger.minimumLogLevel(logLevels[level])
    })
  )
)

const logLevels = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  off: LogLevel.None
}

/**
 * {@link layer} configured from the environment: `KERNEL_API_KEY` (required), `KERNEL_BASE_URL`,
 * `KERNEL_PROJECT_ID`, `KERNEL_TIMEOUT`, `KERNEL_MAX_RETRIES`, and `KERNEL_LOG` (e.g. `debug` to
 * see each retry and replay wait). Needs the transport.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  configs?: KernelConfig.ConfigOptions
): Layer.Layer<Services | KernelConfig.KernelConfig, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.provideMerge(layer, KernelConfig.layerConfig(configs)).pipe(Layer.merge(layerLogLevelConfig))
