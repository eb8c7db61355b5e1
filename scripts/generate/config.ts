import * as KernelError from "../../src/KernelError.js"

/**
 * The generator's hand-kept knowledge of the API that the document does not carry: the public
 * names of every operation, which POSTs are harmless to repeat, which fields grant access, and the
 * error class of every documented status.
 */

/** An operation's public module, accessor and name (span `Kernel.<name>`, tag `effect-kernel/<Name>`). */
export interface OperationName {
  readonly module: string
  readonly accessor: string
  readonly name: string
}

const op = (module: string, accessor: string, name: string): OperationName => ({ module, accessor, name })

/**
 * operationId → the official client's name of an accessor whose own name differs (`client.browsers.deleteByID`
 * is `Browsers.delete`): exported under both names, so that a migrated call keeps its name.
 */
export const officialAliases: Readonly<Record<string, string>> = {
  deleteBrowsersById: "deleteByID"
}

/**
 * operationId → public module, accessor (the official client's, `@onkernel/sdk`) and name. Every
 * non-deprecated operation of the document must be here, and no name twice: the generator fails
 * otherwise.
 */
export const operationNames: Readonly<Record<string, OperationName>> = {
  // Browsers
  postBrowsers: op("Browsers", "create", "createBrowser"),
  getBrowsers: op("Browsers", "list", "listBrowsers"),
  getBrowsersById: op("Browsers", "retrieve", "getBrowser"),
  patchBrowsersById: op("Browsers", "update", "updateBrowser"),
  deleteBrowsersById: op("Browsers", "delete", "deleteBrowser"),
  browserCurl: op("Browsers", "curl", "curlBrowser"),
  uploadExtensionsToBrowser: op("Browsers", "loadExtensions", "loadBrowserExtensions"),
  // Computer
  clickMouse: op("Computer", "clickMouse", "clickMouse"),
  moveMouse: op("Computer", "moveMouse", "moveMouse"),
  dragMouse: op("Computer", "dragMouse", "dragMouse"),
  scroll: op("Computer", "scroll", "scrollMouseWheel"),
  typeText: op("Computer", "typeText", "typeText"),
  pressKey: op("Computer", "pressKey", "pressKey"),
  takeScreenshot: op("Computer", "captureScreenshot", "captureScreenshot"),
  batchComputerAction: op("Computer", "batch", "batchComputerActions"),
  readClipboard: op("Computer", "readClipboard", "readClipboard"),
  writeClipboard: op("Computer", "writeClipboard", "writeClipboard"),
  getMousePosition: op("Computer", "getMousePosition", "getMousePosition"),
  setCursor: op("Computer", "setCursorVisibility", "setCursorVisibility"),
  // Replays
  getBrowsersReplaysById: op("Replays", "download", "downloadReplay"),
  startBrowserReplayRecording: op("Replays", "start", "startReplay"),
  listBrowsersReplays: op("Replays", "list", "listReplays"),
  stopBrowserReplayRecording: op("Replays", "stop", "stopReplay"),
  // Filesystem
  readFile: op("Filesystem", "readFile", "readFile"),
  writeFile: op("Filesystem", "writeFile", "writeFile"),
  listFiles: op("Filesystem", "listFiles", "listFiles"),
  fileInfo: op("Filesystem", "fileInfo", "getFileInfo"),
  createDirectory: op("Filesystem", "createDirectory", "createDirectory"),
  deleteFile: op("Filesystem", "deleteFile", "deleteFile"),
  deleteDirectory: op("Filesystem", "deleteDirectory", "deleteDirectory"),
  setFilePermissions: op("Filesystem", "setFilePermissions", "setFilePermissions"),
  movePath: op("Filesystem", "move", "movePath"),
  uploadFiles: op("Filesystem", "upload", "uploadFiles"),
  uploadZip: op("Filesystem", "uploadZip", "uploadZip"),
  downloadDirZip: op("Filesystem", "downloadDirZip", "downloadDirZip"),
  // FilesystemWatch
  startFsWatch: op("FilesystemWatch", "start", "startFilesystemWatch"),
  streamFsEvents: op("FilesystemWatch", "events", "streamFilesystemEvents"),
  stopFsWatch: op("FilesystemWatch", "stop", "stopFilesystemWatch"),
  // Processes
  processExec: op("Processes", "exec", "execProcess"),
  processSpawn: op("Processes", "spawn", "spawnProcess"),
  processStatus: op("Processes", "status", "getProcessStatus"),
  processStdoutStream: op("Processes", "stdoutStream", "streamProcessStdout"),
  processStdin: op("Processes", "stdin", "writeProcessStdin"),
  processKill: op("Processes", "kill", "killProcess"),
  processResize: op("Processes", "resize", "resizeProcess"),
  // Playwright, Logs, Telemetry
  executePlaywrightCode: op("Playwright", "execute", "executePlaywrightCode"),
  logsStream: op("Logs", "stream", "streamLogs"),
  streamBrowserTelemetry: op("Telemetry", "stream", "streamTelemetry"),
  // BrowserPools
  getBrowserPools: op("BrowserPools", "list", "listBrowserPools"),
  postBrowserPools: op("BrowserPools", "create", "createBrowserPool"),
  getBrowserPoolsByIdOrName: op("BrowserPools", "retrieve", "getBrowserPool"),
  updateBrowserPoolsByIdOrName: op("BrowserPools", "update", "updateBrowserPool"),
  deleteBrowserPoolsByIdOrName: op("BrowserPools", "delete", "deleteBrowserPool"),
  acquireFromBrowserPoolByIdOrName: op("BrowserPools", "acquire", "acquireBrowser"),
  releaseToBrowserPoolByIdOrName: op("BrowserPools", "release", "releaseBrowser"),
  flushBrowserPoolByIdOrName: op("BrowserPools", "flush", "flushBrowserPool"),
  // Profiles
  postProfiles: op("Profiles", "create", "createProfile"),
  getProfiles: op("Profiles", "list", "listProfiles"),
  getProfileByIdOrName: op("Profiles", "retrieve", "getProfile"),
  deleteProfileByIdOrName: op("Profiles", "delete", "deleteProfile"),
  downloadProfileByIdOrName: op("Profiles", "download", "downloadProfile"),
  // Extensions
  postExtensions: op("Extensions", "upload", "uploadExtension"),
  getExtensions: op("Extensions", "list", "listExtensions"),
  getExtensionByIdOrName: op("Extensions", "download", "downloadExtension"),
  deleteExtensionByIdOrName: op("Extensions", "delete", "deleteExtension"),
  getExtensionsFromChromeStore: op("Extensions", "downloadFromChromeStore", "downloadChromeStoreExtension"),
  // Proxies
  postProxies: op("Proxies", "create", "createProxy"),
  getProxies: op("Proxies", "list", "listProxies"),
  getProxiesById: op("Proxies", "retrieve", "getProxy"),
  deleteProxiesById: op("Proxies", "delete", "deleteProxy"),
  postProxiesByIdCheck: op("Proxies", "check", "checkProxy"),
  // Deployments
  deleteDeploymentsById: op("Deployments", "delete", "deleteDeployment"),
  postDeployments: op("Deployments", "create", "createDeployment"),
  getDeployments: op("Deployments", "list", "listDeployments"),
  getDeploymentsById: op("Deployments", "retrieve", "getDeployment"),
  getDeploymentsEventsById: op("Deployments", "follow", "followDeployment"),
  // Apps
  getApps: op("Apps", "list", "listApps"),
  // Invocations
  postInvocations: op("Invocations", "create", "createInvocation"),
  getInvocations: op("Invocations", "list", "listInvocations"),
  getInvocationsById: op("Invocations", "retrieve", "getInvocation"),
  patchInvocationsById: op("Invocations", "update", "updateInvocation"),
  getInvocationsBrowsersById: op("Invocations", "listBrowsers", "listInvocationBrowsers"),
  deleteInvocationsBrowsersById: op("Invocations", "deleteBrowsers", "deleteInvocationBrowsers"),
  getInvocationsEventsById: op("Invocations", "follow", "followInvocation"),
  // AuthConnections
  postAuthConnections: op("AuthConnections", "create", "createAuthConnection"),
  getAuthConnections: op("AuthConnections", "list", "listAuthConnections"),
  getAuthConnectionsById: op("AuthConnections", "retrieve", "getAuthConnection"),
  patchAuthConnectionsById: op("AuthConnections", "update", "updateAuthConnection"),
  deleteAuthConnectionsById: op("AuthConnections", "delete", "deleteAuthConnection"),
  postAuthConnectionsLogin: op("AuthConnections", "login", "loginAuthConnection"),
  postAuthConnectionsSubmit: op("AuthConnections", "submit", "submitAuthConnection"),
  getAuthConnectionsEventsById: op("AuthConnections", "follow", "followAuthConnection"),
  postAuthConnectionsExchange: op("AuthConnections", "exchange", "exchangeAuthConnection"),
  // Credentials
  postCredentials: op("Credentials", "create", "createCredential"),
  getCredentials: op("Credentials", "list", "listCredentials"),
  getCredentialByIdOrName: op("Credentials", "retrieve", "getCredential"),
  patchCredentialByIdOrName: op("Credentials", "update", "updateCredential"),
  deleteCredentialByIdOrName: op("Credentials", "delete", "deleteCredential"),
  getCredentialTotpCodeByIdOrName: op("Credentials", "totpCode", "getCredentialTotpCode"),
  // CredentialProviders
  postCredentialProviders: op("CredentialProviders", "create", "createCredentialProvider"),
  getCredentialProviders: op("CredentialProviders", "list", "listCredentialProviders"),
  getCredentialProvidersById: op("CredentialProviders", "retrieve", "getCredentialProvider"),
  patchCredentialProvidersById: op("CredentialProviders", "update", "updateCredentialProvider"),
  deleteCredentialProvidersById: op("CredentialProviders", "delete", "deleteCredentialProvider"),
  testCredentialProviderById: op("CredentialProviders", "test", "testCredentialProvider"),
  getCredentialProviderItems: op("CredentialProviders", "listItems", "listCredentialProviderItems"),
  // Projects, ProjectLimits
  postOrgProjects: op("Projects", "create", "createProject"),
  getOrgProjects: op("Projects", "list", "listProjects"),
  getOrgProjectsId: op("Projects", "retrieve", "getProject"),
  patchOrgProjectsId: op("Projects", "update", "updateProject"),
  deleteOrgProjectsId: op("Projects", "delete", "deleteProject"),
  getOrgProjectLimits: op("ProjectLimits", "retrieve", "getProjectLimits"),
  patchOrgProjectLimits: op("ProjectLimits", "update", "updateProjectLimits"),
  // ApiKeys
  postApiKeys: op("ApiKeys", "create", "createApiKey"),
  listApiKeys: op("ApiKeys", "list", "listApiKeys"),
  getApiKeysById: op("ApiKeys", "retrieve", "getApiKey"),
  patchApiKeysById: op("ApiKeys", "update", "updateApiKey"),
  deleteApiKeysById: op("ApiKeys", "delete", "deleteApiKey")
}

/** The public modules in the order of the docs. */
export const modules: ReadonlyArray<string> = [
  "Browsers",
  "Computer",
  "Replays",
  "Filesystem",
  "FilesystemWatch",
  "Processes",
  "Playwright",
  "Logs",
  "Telemetry",
  "BrowserPools",
  "Profiles",
  "Extensions",
  "Proxies",
  "Deployments",
  "Apps",
  "Invocations",
  "AuthConnections",
  "Credentials",
  "CredentialProviders",
  "Projects",
  "ProjectLimits",
  "ApiKeys"
]

/**
 * The modules written by hand (`src/<Module>.ts`): the generator writes a companion
 * (`src/internal/generated/modules/<Module>.ts`) that the hand-written module re-exports.
 */
export const handWrittenModules: ReadonlySet<string> = new Set(["Computer", "Replays", "BrowserPools", "Deployments"])

/**
 * The generated modules with a hand-written companion, `src/internal/handwritten/<Module>.ts`,
 * that the generated module re-exports (what the document does not describe: e.g.
 * `Browsers.scoped`, a browser deleted when its scope closes). Hand-written code never goes into a
 * generated file.
 */
export const handWrittenCompanions: ReadonlySet<string> = new Set(["Browsers"])

/** The operations written by hand today: their definitions are generated, their services are not. */
export const handWrittenOperations: ReadonlySet<string> = new Set([
  "downloadReplay",
  "setCursorVisibility",
  "getMousePosition",
  "listBrowserPools",
  "deleteDeployment"
])

/**
 * The POSTs that are harmless to repeat (GET, PUT, DELETE are idempotent by method, PATCH and
 * other POSTs are not): reads that POST, and settings that end in the same state.
 */
export const idempotentPosts: ReadonlySet<string> = new Set([
  "getMousePosition", // a read
  "setCursorVisibility", // sets a state: twice is once
  "readClipboard", // a read
  "captureScreenshot", // a read
  "moveMouse", // to an absolute position: twice is once
  "writeClipboard", // sets the clipboard's content: twice is once
  "checkProxy", // a health check: reads the proxy
  "testCredentialProvider", // a connection test: reads the provider
  "flushBrowserPool" // empties the pool's idle browsers: twice is once
])

/**
 * The resource a path parameter names, by the path's segment before it (`/browsers/{id}`: a
 * browser): its span attribute is `kernel.<resource>.id` (`.id_or_name` for an `id_or_name`), as
 * the five operations of 0.1.0 had (`kernel.browser.id`, `kernel.replay.id`, `kernel.deployment.id`).
 * The generator fails on a path parameter after a segment missing here.
 */
export const spanResources: Readonly<Record<string, string>> = {
  api_keys: "api_key",
  browser_pools: "browser_pool",
  browsers: "browser",
  connections: "auth_connection",
  credential_providers: "credential_provider",
  credentials: "credential",
  deployments: "deployment",
  extensions: "extension",
  invocations: "invocation",
  process: "process",
  profiles: "profile",
  projects: "project",
  proxies: "proxy",
  replays: "replay",
  watch: "filesystem_watch"
}

/**
 * The PUTs that are not harmless to repeat (PUT is idempotent by method, but these act on what the
 * first attempt changed): retried after the first attempt did its work, they find their path gone and
 * would report a move or a delete that happened as `NotFound`. `deleteDirectory` is not one: the
 * browser's server deletes with Go's `os.RemoveAll`, which answers 200 where nothing is.
 */
export const nonIdempotentPuts: ReadonlySet<string> = new Set([
  "movePath", // moves what is at `src_path`: a second attempt finds it gone
  "deleteFile" // a second attempt finds no file: 404
])

/**
 * The fields that grant access to something (a browser, the API, a credential): decoded as
 * `Redacted<string>` so they are not logged or printed by accident: `Schema.field`, the schema a
 * component or an operation's hoisted inline schema (`<OperationName>Body` / `Response` / …). The
 * generator fails on an entry that names no field.
 */
export const redactedFields: ReadonlySet<string> = new Set([
  "Browser.cdp_ws_url",
  "Browser.browser_live_view_url",
  // the WebDriver BiDi address carries the same token as `cdp_ws_url` (the document's example:
  // `wss://.../browser/webdriver/session?jwt=...`), and so does a replay's viewing address
  "Browser.webdriver_ws_url",
  "BrowserReplay.replay_view_url",
  // a managed auth session's live view of its browser, as `Browser.browser_live_view_url`
  "ManagedAuth.live_view_url",
  "LoginResponse.live_view_url",
  "ManagedAuthStateEvent.live_view_url",
  "CreatedApiKey.key",
  "CreateCredentialRequest.values",
  "UpdateCredentialRequest.values",
  "GetCredentialTotpCodeResponse.code",
  // a TOTP code answered on create / update, and the TOTP secret the user sends
  "Credential.totp_code",
  "CreateCredentialRequest.totp_secret",
  "UpdateCredentialRequest.totp_secret",
  // the values (passwords, ...) submitted to a login flow
  "SubmitFieldsRequest.fields",
  // a credential provider's service account token (e.g. 1Password's)
  "CreateCredentialProviderRequest.token",
  "UpdateCredentialProviderRequest.token",
  // a JWT that grants access to an invocation, and the one-time code a login answers that `exchange`
  // trades for it (whoever holds the code gets the JWT)
  "ManagedAuthExchangeResponse.jwt",
  "LoginResponse.handoff_code",
  "ManagedAuthExchangeRequest.code",
  // the password of a custom proxy, sent on create
  "CreateCustomProxyConfig.password",
  // the address of a hosted login page: whoever holds it can complete the login (as a live view URL)
  "ManagedAuth.hosted_url",
  "LoginResponse.hosted_url",
  "ManagedAuthStateEvent.hosted_url"
])

/**
 * Every string the document marks `format: password` is redacted too, listed here or not (today one:
 * `DeploymentSource.auth.token`, a GitHub token).
 */
export const redactedFormat = "password"

/**
 * The error class of each status: the classes of `src/KernelError.ts` that answer one (a static
 * `status`), by their export name.
 */
export const statusErrors: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(KernelError).flatMap(([name, value]) =>
    typeof value === "function" && "status" in value && typeof value.status === "number" ? [[value.status, name]] : []
  )
)

/** The statuses every operation can answer (`KernelError.CommonError`): not listed per operation. */
export const commonStatuses: ReadonlySet<number> = new Set([401, 409, 429, 500])

/** The input field of a raw request body (`application/octet-stream`). */
export const bytesBodyField = "contents"

/**
 * Named schemas whose name would clash with a generated export (a schema `ListFiles` and the tag
 * of the operation `listFiles`): the name they are emitted under.
 */
export const schemaRenames: Readonly<Record<string, string>> = {
  ListFiles: "FileInfoList"
}

/**
 * Example values of parameters the document gives none for, where its type's sample (`"text"`)
 * would read as nonsense in an accessor's example: by `<operation name>.<parameter>`.
 */
export const parameterExamples: Readonly<Record<string, string>> = {
  "streamLogs.path": "/var/log/app.log",
  "streamLogs.supervisor_process": "chromium"
}
