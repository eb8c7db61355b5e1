/**
 * Testing support for programs written with effect-kernel: `import { KernelSimulator } from
 * "effect-kernel/testing"`.
 *
 * @since 0.1.0
 */

/**
 * An embedded, stateful Kernel simulator, in memory or over loopback HTTP.
 *
 * @since 0.1.0
 */
export * as KernelSimulator from "./testing/KernelSimulator.js"
