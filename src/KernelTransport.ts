/**
 * The SDK's own HTTP transport: an `HttpClient` built directly on an undici `Agent` that the layer
 * owns (destroyed when the layer is released). It is the fastest of the supported transports, and
 * its response-body handling is immune to the undici 7 crash `assert(!this.paused)` (a paused body
 * whose peer closes the connection): see docs/transports.md.
 *
 * `undici` is an optional peer dependency: install it (`npm install undici`) to use this module.
 *
 * @since 0.2.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Tls from "node:tls"
import * as internal from "./internal/transport.js"

/**
 * The `tls` option: node's TLS connection options (`ca`, `cert`, `key`, `rejectUnauthorized`,
 * `servername`, ...) and undici's connector options, as undici's `buildConnector.BuildOptions` has
 * them (written here so that the SDK's declarations do not load undici's for programs that never use
 * this module).
 *
 * @since 0.2.0
 * @category Models
 */
export type TlsOptions = Tls.ConnectionOptions & {
  allowH2?: boolean
  maxCachedSessions?: number | null
  socketPath?: string | null
  timeout?: number | null
  port?: number
  keepAlive?: boolean | null
  keepAliveInitialDelay?: number | null
  typeOfService?: number | null
}

/**
 * A dispatcher of undici (an `Agent`, a `Pool`, a `ProxyAgent`, a `MockAgent`, ...): what
 * {@link fromDispatcher} sends with. Written structurally, so that the SDK's declarations do not load
 * undici's; any undici `Dispatcher` is one.
 *
 * @since 0.2.0
 * @category Models
 */
export interface Dispatcher {
  /** undici's `Dispatcher.dispatch(options, handler)`. */
  dispatch(options: object, handler: object): boolean
}

/**
 * Options of the owned undici `Agent` and of the response bodies.
 *
 * @since 0.2.0
 * @category Models
 */
export interface Options {
  /**
   * Connections per origin, at most (default 128). Calls beyond it wait in undici's queue for a
   * free connection instead of opening a socket (a file descriptor) each: a fan-out of thousands
   * of calls stays within the process's descriptor limit. Raise it for a large fan-out to a
   * server that is slow to answer, lower it under a tight `ulimit -n`; `Infinity`: no limit (one
   * socket per call in flight). A whole number of at least 1, else building the layer fails with
   * a `ConfigError` naming `connections`.
   */
  readonly connections?: number | undefined
  /**
   * How long an idle connection is kept when the server gives no `Keep-Alive` hint (undici: 4 s).
   * At least 1 ms; `Duration.infinity`: the longest a timer holds (about 24.8 days).
   */
  readonly keepAliveTimeout?: Duration.DurationInput | undefined
  /**
   * The upper bound for a server's `Keep-Alive: timeout=` hint (undici: 10 min). At least 1 ms;
   * `Duration.infinity`: the longest a timer holds (about 24.8 days).
   */
  readonly keepAliveMaxTimeout?: Duration.DurationInput | undefined
  /** Time-out for establishing a connection (undici: 10 s); `0` or `Duration.infinity`: none. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /**
   * TLS options of the connections (`ca`, `cert`, `key`, `rejectUnauthorized`, `servername`, ...).
   * Options no connection can be made with (a certificate or key that is not PEM, a key that does not
   * match its certificate, an unknown protocol version) fail the layer with a `ConfigError` naming `tls`.
   */
  readonly tls?: TlsOptions | undefined
  /**
   * Bytes of a response body buffered ahead of its reader before the connection stops reading
   * (back-pressure). Default 1 MiB.
   */
  readonly bodyBufferSize?: number | undefined
  /**
   * A response body larger than `bodyBufferSize` that nobody reads for this long is released: its
   * connection is closed, and a later read fails with a `ResponseError`. Default 10 seconds;
   * `Duration.infinity` keeps it (and its connection) until it is read. A body that fits in the
   * buffer is always read to its end in the background and never holds a connection.
   */
  readonly abandonedBodyTimeout?: Duration.DurationInput | undefined
}

/**
 * An `HttpClient` on a new undici `Agent` with the given options; the agent is destroyed when the
 * scope closes. An option that cannot work (a negative, NaN or fractional `connections`, a
 * negative or zero keep-alive, an unparsable duration) fails with a `ConfigError` naming it.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const makeWith: (
  options: Options
) => Effect.Effect<HttpClient.HttpClient, ConfigError.ConfigError, Scope.Scope> = internal.scoped

/**
 * An `HttpClient` on a new undici `Agent` with the default options; the agent is destroyed when
 * the scope closes.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const make: Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> = Effect.suspend(() =>
  Effect.orDie(internal.scoped())
)

/**
 * An `HttpClient` on a dispatcher you own (an `Agent`, a `Pool`, a `ProxyAgent`, ...). Bodies on a
 * dispatcher not built by this module are never paused (so the undici 7 crash cannot happen), which
 * means no back-pressure: a body is buffered as fast as it arrives. Prefer `layerUndiciWith`.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const fromDispatcher = (
  dispatcher: Dispatcher,
  options: Pick<Options, "bodyBufferSize" | "abandonedBodyTimeout"> = {}
): HttpClient.HttpClient => internal.make(dispatcher, internal.optionsOf(options))

/**
 * The transport as a layer with the given options, checked when the layer is built: an option
 * that cannot work fails the layer with a `ConfigError` naming it (see {@link Options}).
 *
 * @example
 * ```ts
 * import { Duration, Effect, Redacted } from "effect"
 * import { Computer, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
 *
 * const program = Computer.getMousePosition({ id: "browser-id" }).pipe(
 *   Effect.provide(Kernel.layer),
 *   Effect.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_...") })),
 *   Effect.provide(KernelTransport.layerUndiciWith({ connections: 16, keepAliveTimeout: Duration.seconds(30) }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerUndiciWith = (options: Options): Layer.Layer<HttpClient.HttpClient, ConfigError.ConfigError> =>
  Layer.scoped(HttpClient.HttpClient, internal.scoped(options))

/**
 * The transport as a layer, with the default options.
 *
 * @example
 * ```ts
 * import { Effect, Redacted } from "effect"
 * import { Computer, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
 *
 * const program = Computer.getMousePosition({ id: "browser-id" }).pipe(
 *   Effect.provide(Kernel.layer),
 *   Effect.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_...") })),
 *   Effect.provide(KernelTransport.layerUndici)
 * )
 * ```
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerUndici: Layer.Layer<HttpClient.HttpClient> = Layer.suspend(() => Layer.orDie(layerUndiciWith({})))
