/**
 * effect-kernel: an Effect-native SDK for Kernel, the cloud service that runs web browsers for
 * AI agents.
 *
 * @since 0.1.0
 */

/**
 * Browser pools: pools of identically configured browsers (list, create, retrieve, update, delete, acquire,
 * release, flush; `acquireScoped` releases its lease when its scope closes).
 *
 * @since 0.1.0
 */
export * as BrowserPools from "./BrowserPools.js"

/**
 * Computer controls of a browser: the mouse (position, move, click, drag, scroll), the keyboard, the cursor's
 * visibility, screenshots, the clipboard and batches of actions.
 *
 * @since 0.1.0
 */
export * as Computer from "./Computer.js"

/**
 * Deployments of apps: create (a multipart upload), list, retrieve, follow as they run, delete.
 *
 * @since 0.1.0
 */
export * as Deployments from "./Deployments.js"

/**
 * The shared client and every operation service of the API as one layer.
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

/**
 * Browsers (generated from the OpenAPI document): create and manage browser sessions.
 *
 * @since 0.2.0
 */
export * as Browsers from "./Browsers.js"

/**
 * Filesystem (generated from the OpenAPI document): read, write, and manage files on the browser instance.
 *
 * @since 0.2.0
 */
export * as Filesystem from "./Filesystem.js"

/**
 * FilesystemWatch (generated from the OpenAPI document): read, write, and manage files on the browser instance.
 *
 * @since 0.2.0
 */
export * as FilesystemWatch from "./FilesystemWatch.js"

/**
 * Processes (generated from the OpenAPI document): execute and manage processes on the browser instance.
 *
 * @since 0.2.0
 */
export * as Processes from "./Processes.js"

/**
 * Playwright (generated from the OpenAPI document): execute Playwright code against the browser instance.
 *
 * @since 0.2.0
 */
export * as Playwright from "./Playwright.js"

/**
 * Logs (generated from the OpenAPI document): stream logs from the browser instance.
 *
 * @since 0.2.0
 */
export * as Logs from "./Logs.js"

/**
 * Telemetry (generated from the OpenAPI document): stream live telemetry events from a browser session.
 *
 * @since 0.2.0
 */
export * as Telemetry from "./Telemetry.js"

/**
 * Profiles (generated from the OpenAPI document): create, list, retrieve, and delete browser profiles.
 *
 * @since 0.2.0
 */
export * as Profiles from "./Profiles.js"

/**
 * Extensions (generated from the OpenAPI document): create, list, retrieve, and delete browser extensions.
 *
 * @since 0.2.0
 */
export * as Extensions from "./Extensions.js"

/**
 * Proxies (generated from the OpenAPI document): create and manage proxy configurations for routing browser traffic.
 *
 * @since 0.2.0
 */
export * as Proxies from "./Proxies.js"

/**
 * Apps (generated from the OpenAPI document): list applications and versions.
 *
 * @since 0.2.0
 */
export * as Apps from "./Apps.js"

/**
 * Invocations (generated from the OpenAPI document): invoke actions and stream or query invocation status and events.
 *
 * @since 0.2.0
 */
export * as Invocations from "./Invocations.js"

/**
 * AuthConnections (generated from the OpenAPI document): create and manage auth connections for automated credential capture and login.
 *
 * @since 0.2.0
 */
export * as AuthConnections from "./AuthConnections.js"

/**
 * Credentials (generated from the OpenAPI document): create and manage credentials for authentication.
 *
 * @since 0.2.0
 */
export * as Credentials from "./Credentials.js"

/**
 * CredentialProviders (generated from the OpenAPI document): configure external credential providers like 1Password.
 *
 * @since 0.2.0
 */
export * as CredentialProviders from "./CredentialProviders.js"

/**
 * Projects (generated from the OpenAPI document): create and manage projects for resource isolation within an organization.
 *
 * @since 0.2.0
 */
export * as Projects from "./Projects.js"

/**
 * ProjectLimits (generated from the OpenAPI document): create and manage projects for resource isolation within an organization.
 *
 * @since 0.2.0
 */
export * as ProjectLimits from "./ProjectLimits.js"

/**
 * ApiKeys (generated from the OpenAPI document): create and manage API keys for organization and project-scoped access.
 *
 * @since 0.2.0
 */
export * as ApiKeys from "./ApiKeys.js"

/**
 * The values of the event streams: unknown event types, a process's output.
 *
 * @since 0.2.0
 */
export * as KernelEvents from "./KernelEvents.js"

/**
 * Downloads to files (atomic, with progress) and files to upload.
 *
 * @since 0.2.0
 */
export * as KernelFiles from "./KernelFiles.js"
