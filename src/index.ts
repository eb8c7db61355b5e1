/**
 * effect-kernel: an Effect-native SDK for Kernel, the cloud service that runs web browsers for
 * AI agents.
 *
 * @since 0.1.0
 */

/**
 * Browser pools: listing the pools of the caller's organization.
 *
 * @since 0.1.0
 */
export * as BrowserPools from "./BrowserPools.js"

/**
 * Computer controls: mouse position and cursor visibility.
 *
 * @since 0.1.0
 */
export * as Computer from "./Computer.js"

/**
 * Deployments: deleting a deployment.
 *
 * @since 0.1.0
 */
export * as Deployments from "./Deployments.js"

/**
 * The shared client and the five operation services as one layer.
 *
 * @since 0.1.0
 */
export * as Kernel from "./Kernel.js"

/**
 * The shared, authenticated HTTP client.
 *
 * @since 0.1.0
 */
export * as KernelClient from "./KernelClient.js"

/**
 * Configuration: credentials, address, time-outs and retries.
 *
 * @since 0.1.0
 */
export * as KernelConfig from "./KernelConfig.js"

/**
 * The typed errors.
 *
 * @since 0.1.0
 */
export * as KernelError from "./KernelError.js"

/**
 * The retry policy as schedules.
 *
 * @since 0.1.0
 */
export * as KernelRetry from "./KernelRetry.js"

/**
 * Replay recordings: waiting, streaming, downloading to a file.
 *
 * @since 0.1.0
 */
export * as Replays from "./Replays.js"

/**
 * The SDK's own undici transport (`KernelTransport.layerUndici`).
 *
 * @since 0.2.0
 */
export * as KernelTransport from "./KernelTransport.js"
