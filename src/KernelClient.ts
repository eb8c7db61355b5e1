/**
 * The authenticated HTTP client that every operation service is built on.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/client.js"
import { KernelConfig } from "./KernelConfig.js"
import type * as KernelConfigNs from "./KernelConfig.js"

/**
 * The shared client: the resolved configuration and the transport with the base URL, the
 * `Authorization: Bearer` header (redacted in spans and logs), the project header and
 * `Accept: application/json` applied. Use `httpClient` to reach endpoints this SDK does not cover:
 * its requests keep their url params (`HttpClientRequest.setUrlParam`), and a response body its
 * reader stops early (`Stream.take`, an interruption) has its request aborted and socket freed.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  readonly config: KernelConfigNs.Service
  readonly httpClient: HttpClient.HttpClient
}

/**
 * The shared, authenticated Kernel client.
 *
 * @since 0.1.0
 * @category Tags
 */
export class KernelClient extends Context.Tag("effect-kernel/KernelClient")<KernelClient, Service>() {
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/KernelClient"
}

/**
 * Builds the client from the configuration and the user's transport.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<Service, never, KernelConfig | HttpClient.HttpClient> = Effect.gen(function*() {
  const config = yield* KernelConfig
  const httpClient = internal.authenticate(config)(yield* HttpClient.HttpClient)
  return { config, httpClient }
})

/**
 * The client as a layer. It needs a `KernelConfig` and an `HttpClient` (the transport of your
 * choice: `KernelTransport.layerUndici`, `NodeHttpClient.layerUndici` or `FetchHttpClient.layer`).
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
export const layer: Layer.Layer<KernelClient, never, KernelConfig | HttpClient.HttpClient> = Layer.effect(
  KernelClient,
  make
)
