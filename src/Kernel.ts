/**
 * Everything at once: the shared client and the five operation services as one layer.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import * as BrowserPools from "./BrowserPools.js"
import * as Computer from "./Computer.js"
import * as Deployments from "./Deployments.js"
import * as Log from "./internal/log.js"
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
 * Which transport: `KernelTransport.layerUndici` (recommended on Node). `NodeHttpClient.layerUndici`
 * (undici 7) and `FetchHttpClient.layer` in Node (whose global `fetch` runs on npm undici 7 once
 * `@effect/platform-node` is loaded) are exposed to undici 7's uncatchable
 * `AssertionError: assert(!this.paused)`: a response body under back-pressure whose server closes
 * the connection (a replay consumed slowly, then cut) kills the process, whatever `catchTags` you
 * have. What fixes it: `KernelTransport.layerUndici`, or undici >= 8 (Node >= 22.19). See
 * docs/transports.md.
 *
 * @since 0.1.0
 * @category Layers
 * @example
 * ```ts
 * import { Kernel, KernelConfig, KernelTransport } from "effect-kernel"
 * import { Layer, Redacted } from "effect"
 *
 * const KernelLive = Kernel.layer.pipe(
 *   Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_...") })),
 *   Layer.provide(KernelTransport.layerUndici)
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
 * The level of the SDK's own log lines (each retry, each replay wait): `debug` shows them even when
 * the program's minimum log level is higher, `info` / `warn` / `error` show only the SDK's lines at
 * that level or above, `off` drops them. The program's own log lines and its minimum log level are
 * never changed.
 *
 * @since 0.2.0
 * @category Models
 */
export type LogSetting = Log.Setting

/**
 * Sets the level of the SDK's own log lines in code (see {@link LogSetting}); `KERNEL_LOG` does
 * the same from the environment.
 *
 * @since 0.2.0
 * @category Layers
 * @example
 * ```ts
 * import { Kernel } from "effect-kernel"
 * import { Effect } from "effect"
 *
 * // the SDK's debug lines, without turning on the program's own
 * const program = Effect.logInfo("hello").pipe(Effect.provide(Kernel.layerLogLevel("debug")))
 * ```
 */
export const layerLogLevel = (setting: LogSetting): Layer.Layer<never> => Log.layer(setting)

/**
 * `KERNEL_LOG` (`debug`, `info`, `warn`, `error` or `off`, in any case) as a layer setting the level
 * of the SDK's own log lines (see {@link LogSetting}); no change when the variable is not set. An
 * invalid value is reported once with a warning and otherwise ignored. The program's minimum log
 * level is never changed.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerLogLevelConfig: Layer.Layer<never, ConfigError.ConfigError> = Log.layerConfig("KERNEL_LOG")

/**
 * {@link layer} configured from the environment: `KERNEL_API_KEY` (required), `KERNEL_BASE_URL`,
 * `KERNEL_PROJECT_ID`, `KERNEL_TIMEOUT`, `KERNEL_MAX_RETRIES`, `KERNEL_ALLOW_INSECURE_HTTP`, and
 * `KERNEL_LOG` (e.g. `debug` to see each retry and replay wait, `off` to drop the SDK's lines). Needs the transport.
 *
 * Which transport: `KernelTransport.layerUndici` (recommended on Node). `NodeHttpClient.layerUndici`
 * (undici 7) and `FetchHttpClient.layer` in Node (whose global `fetch` runs on npm undici 7 once
 * `@effect/platform-node` is loaded) are exposed to undici 7's uncatchable
 * `AssertionError: assert(!this.paused)`: a response body under back-pressure whose server closes
 * the connection (a replay consumed slowly, then cut) kills the process, whatever `catchTags` you
 * have. What fixes it: `KernelTransport.layerUndici`, or undici >= 8 (Node >= 22.19). See
 * docs/transports.md.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  configs?: KernelConfig.ConfigOptions
): Layer.Layer<Services | KernelConfig.KernelConfig, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.provideMerge(layer, KernelConfig.layerConfig(configs)).pipe(Layer.merge(layerLogLevelConfig))
