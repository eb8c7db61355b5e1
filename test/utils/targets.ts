import { NodeHttpClient } from "@effect/platform-node"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Effect, Layer, Redacted } from "effect"
import { Kernel, KernelConfig, KernelTransport } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

export type TargetServices = Kernel.Services | KernelSimulator.KernelSimulator

export interface TargetOptions {
  readonly seed?: KernelSimulator.Seed
  readonly token?: string
  readonly config?: Omit<KernelConfig.Options, "apiKey" | "baseUrl">
}

/** Where the contract suite runs: the same tests against each. */
export interface Target {
  readonly name: string
  readonly layer: (options?: TargetOptions) => Layer.Layer<TargetServices>
}

export const inMemory: Target = {
  name: "in-memory",
  layer: (options = {}) =>
    Kernel.layer.pipe(
      Layer.provideMerge(KernelSimulator.layer(options.seed, { token: options.token, config: options.config }))
    )
}

const overHttpWith = (name: string, transport: Layer.Layer<HttpClient.HttpClient>): Target => ({
  name,
  layer: (options = {}) =>
    Layer.unwrapScoped(
      Effect.map(KernelSimulator.serve({ seed: options.seed }), (served) =>
        Kernel.layer.pipe(
          Layer.provide(
            KernelConfig.layer({
              ...options.config,
              apiKey: Redacted.make(options.token ?? KernelSimulator.defaultToken),
              baseUrl: served.url
            })
          ),
          Layer.provide(transport),
          Layer.merge(Layer.succeed(KernelSimulator.KernelSimulator, served))
        ))
    ).pipe(Layer.orDie)
})

export const overHttp: Target = overHttpWith("loopback HTTP", NodeHttpClient.layerUndici)

export const overHttpKernelTransport: Target = overHttpWith(
  "loopback HTTP, KernelTransport",
  KernelTransport.layerUndici
)

export const targets: ReadonlyArray<Target> = [inMemory, overHttp, overHttpKernelTransport]
