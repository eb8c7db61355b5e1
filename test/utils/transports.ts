import { FetchHttpClient, type HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import type { Layer } from "effect"
import { KernelTransport } from "effect-kernel"

/**
 * Every transport the SDK documents, in one list: the hostile-server stress test, the socket-level
 * property test and the fault matrix run on each. Adding a transport is one line here.
 */
export interface Transport {
  readonly name: string
  readonly layer: Layer.Layer<HttpClient.HttpClient>
}

export const transports: ReadonlyArray<Transport> = [
  { name: "undici", layer: NodeHttpClient.layerUndici },
  { name: "fetch", layer: FetchHttpClient.layer },
  { name: "kernel", layer: KernelTransport.layerUndici }
]
