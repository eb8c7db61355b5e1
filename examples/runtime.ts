/**
 * What every example shares: the SDK configured from the environment (KERNEL_API_KEY,
 * KERNEL_BASE_URL, ...) over KernelTransport (undici), and a runner that prints typed failures.
 *
 * Try them against the simulator:
 *   npx tsx src/bin/simulator.ts --port 4010 &
 *   export KERNEL_BASE_URL=http://127.0.0.1:4010 KERNEL_API_KEY=sk_sim_demo_0123456789
 *   npx tsx examples/list-browser-pools.ts
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Kernel, KernelTransport } from "effect-kernel"

// the transport the README recommends
export const KernelLive = Kernel.layerConfig().pipe(Layer.provide(KernelTransport.layerUndici))

export const runExample = <A, E extends { readonly _tag: string }>(
  program: Effect.Effect<A, E, Layer.Layer.Success<typeof KernelLive> | Layer.Layer.Success<typeof NodeContext.layer>>
) => program.pipe(Effect.provide(KernelLive), Effect.provide(NodeContext.layer), NodeRuntime.runMain)

export const arg = (index: number, fallback: string): string => process.argv[2 + index] ?? fallback
