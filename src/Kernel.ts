/**
 * Everything at once: the shared client and every operation service of the API as one layer.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ApiKeys from "./ApiKeys.js"
import * as Apps from "./Apps.js"
import * as AuthConnections from "./AuthConnections.js"
import * as BrowserPools from "./BrowserPools.js"
import * as Browsers from "./Browsers.js"
import * as Computer from "./Computer.js"
import * as CredentialProviders from "./CredentialProviders.js"
import * as Credentials from "./Credentials.js"
import * as Deployments from "./Deployments.js"
import * as Extensions from "./Extensions.js"
import * as Filesystem from "./Filesystem.js"
import * as FilesystemWatch from "./FilesystemWatch.js"
import type * as Call from "./internal/call.js"
import * as Log from "./internal/log.js"
import * as Invocations from "./Invocations.js"
import * as KernelClient from "./KernelClient.js"
import * as KernelConfig from "./KernelConfig.js"
import * as Logs from "./Logs.js"
import * as Playwright from "./Playwright.js"
import * as Processes from "./Processes.js"
import * as Profiles from "./Profiles.js"
import * as ProjectLimits from "./ProjectLimits.js"
import * as Projects from "./Projects.js"
import * as Proxies from "./Proxies.js"
import * as Replays from "./Replays.js"
import * as Telemetry from "./Telemetry.js"

/**
 * The services {@link layer} provides.
 *
 * @since 0.1.0
 * @category Models
 */
export type Services =
  | KernelClient.KernelClient
  | Layer.Layer.Success<typeof Browsers.layer>
  | Layer.Layer.Success<typeof Computer.layer>
  | Layer.Layer.Success<typeof Replays.layer>
  | Layer.Layer.Success<typeof Filesystem.layer>
  | Layer.Layer.Success<typeof FilesystemWatch.layer>
  | Layer.Layer.Success<typeof Processes.layer>
  | Layer.Layer.Success<typeof Playwright.layer>
  | Layer.Layer.Success<typeof Logs.layer>
  | Layer.Layer.Success<typeof Telemetry.layer>
  | Layer.Layer.Success<typeof BrowserPools.layer>
  | Layer.Layer.Success<typeof Profiles.layer>
  | Layer.Layer.Success<typeof Extensions.layer>
  | Layer.Layer.Success<typeof Proxies.layer>
  | Layer.Layer.Success<typeof Deployments.layer>
  | Layer.Layer.Success<typeof Apps.layer>
  | Layer.Layer.Success<typeof Invocations.layer>
  | Layer.Layer.Success<typeof AuthConnections.layer>
  | Layer.Layer.Success<typeof Credentials.layer>
  | Layer.Layer.Success<typeof CredentialProviders.layer>
  | Layer.Layer.Success<typeof Projects.layer>
  | Layer.Layer.Success<typeof ProjectLimits.layer>
  | Layer.Layer.Success<typeof ApiKeys.layer>

/**
 * Every operation of the API (each its own service) and the shared client, built as one context
 * (every area's `make`, not a merge of a layer per operation). Needs a `KernelConfig` and the
 * transport (`HttpClient`) of your choice. A program that needs a few operations can provide their
 * areas' layers instead (`Browsers.layer`, `Computer.layer`, ...).
 *
 * Which transport: `KernelTransport.layerUndici` (recommended on Node). `NodeHttpClient.layerUndici`
 * (undici 7) and `FetchHttpClient.layer` in Node (whose global `fetch` runs on undici: npm's 7
 * once `@effect/platform-node` is loaded, or Node's bundled copy, depending on the Node version and
 * the load order) are exposed to undici's uncatchable
 * `AssertionError: assert(!this.paused)`: a response body under back-pressure whose server closes
 * the connection (a replay consumed slowly, then cut) kills the process, whatever `catchTags` you
 * have. What fixes it: `KernelTransport.layerUndici`, or undici >= 8 (Node >= 22.19, and an npm
 * `overrides` entry, as `@effect/platform-node` depends on undici 7 itself). See docs/transports.md.
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
export const layer: Layer.Layer<Services, never, KernelConfig.KernelConfig | HttpClient.HttpClient> =
  /*#__PURE__*/ Layer.effectContext(
    Effect.map(
      Effect.all([
        Browsers.make,
        Computer.make,
        Replays.make,
        Filesystem.make,
        FilesystemWatch.make,
        Processes.make,
        Playwright.make,
        Logs.make,
        Telemetry.make,
        BrowserPools.make,
        Profiles.make,
        Extensions.make,
        Proxies.make,
        Deployments.make,
        Apps.make,
        Invocations.make,
        AuthConnections.make,
        Credentials.make,
        CredentialProviders.make,
        Projects.make,
        ProjectLimits.make,
        ApiKeys.make
      ]),
      (
        [
          browsers,
          computer,
          replays,
          filesystem,
          filesystemWatch,
          processes,
          playwright,
          logs,
          telemetry,
          browserPools,
          profiles,
          extensions,
          proxies,
          deployments,
          apps,
          invocations,
          authConnections,
          credentials,
          credentialProviders,
          projects,
          projectLimits,
          apiKeys
        ]
      ) =>
        Context.merge(
          browsers.pipe(
            Context.merge(computer),
            Context.merge(replays),
            Context.merge(filesystem),
            Context.merge(filesystemWatch),
            Context.merge(processes),
            Context.merge(playwright),
            Context.merge(logs),
            Context.merge(telemetry),
            Context.merge(browserPools),
            Context.merge(profiles)
          ),
          extensions.pipe(
            Context.merge(proxies),
            Context.merge(deployments),
            Context.merge(apps),
            Context.merge(invocations),
            Context.merge(authConnections),
            Context.merge(credentials),
            Context.merge(credentialProviders),
            Context.merge(projects),
            Context.merge(projectLimits),
            Context.merge(apiKeys)
          )
        )
    )
  ).pipe(Layer.provideMerge(KernelClient.layer))

/**
 * One page of a paged list (`Browsers.list`, `Invocations.list`, ...): its items, whether more
 * follow (`X-Has-More`) and the offset of the next page (`X-Next-Offset`; `undefined` on the last
 * page, where the service sends `0`, and when the server sent none). Every item of every page, as
 * one `Stream`: the `<list>All` accessors (`Browsers.listAll`, ...).
 *
 * @since 0.2.0
 * @category Models
 * @example
 * ```ts
 * import type { Browsers, Kernel } from "effect-kernel"
 *
 * const ids = (page: Kernel.Page<Browsers.Browser>): ReadonlyArray<string> =>
 *   page.items.map((browser) => browser.session_id)
 * ```
 */
export type Page<A> = Call.Page<A>

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
export const layerLogLevelConfig: Layer.Layer<never, ConfigError.ConfigError> = /*#__PURE__*/ Layer.suspend(() =>
  // made when built, not when the module is imported
  Log.layerConfig("KERNEL_LOG")
)

/**
 * {@link layer} configured from the environment: `KERNEL_API_KEY` (required), `KERNEL_BASE_URL`,
 * `KERNEL_PROJECT_ID`, `KERNEL_TIMEOUT`, `KERNEL_MAX_RETRIES`, `KERNEL_ALLOW_INSECURE_HTTP`, and
 * `KERNEL_LOG` (e.g. `debug` to see each retry and replay wait, `off` to drop the SDK's lines). Needs the transport.
 *
 * Which transport: `KernelTransport.layerUndici` (recommended on Node). `NodeHttpClient.layerUndici`
 * (undici 7) and `FetchHttpClient.layer` in Node (whose global `fetch` runs on undici: npm's 7
 * once `@effect/platform-node` is loaded, or Node's bundled copy, depending on the Node version and
 * the load order) are exposed to undici's uncatchable
 * `AssertionError: assert(!this.paused)`: a response body under back-pressure whose server closes
 * the connection (a replay consumed slowly, then cut) kills the process, whatever `catchTags` you
 * have. What fixes it: `KernelTransport.layerUndici`, or undici >= 8 (Node >= 22.19, and an npm
 * `overrides` entry, as `@effect/platform-node` depends on undici 7 itself). See docs/transports.md.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  configs?: KernelConfig.ConfigOptions
): Layer.Layer<Services | KernelConfig.KernelConfig, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.provideMerge(layer, KernelConfig.layerConfig(configs)).pipe(Layer.merge(layerLogLevelConfig))
