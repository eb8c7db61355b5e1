/**
 * A stateful, in-process stand-in for the Kernel service, faithful to its specification: every
 * operation of the API (the 118 of the generated table) with its documented statuses and Error
 * bodies, organizations with tokens, plans and projects, request recording and fault injection
 * by operation name.
 *
 * Routing is a method map per path template (a known path asked with another method is 405 with
 * `Allow` listing its methods; an unknown one 404); requests are validated by the operations'
 * definitions (path and query parameters, JSON bodies by their schemas: 400 naming the field, 415
 * for another media type, 413 over the body limit; multipart bodies are read). Resources are
 * stateful by convention (create → an id, the request's fields and the schema's defaults;
 * retrieve, or 404; lists paged with `limit` / `offset` / `X-Has-More` / `X-Next-Offset`; update
 * merges; delete → then 404) in bounded collections ({@link collectionLimit}, evictions recorded),
 * scoped by the `X-Kernel-Project-Id` header, and every answer decodes with the SDK's schemas.
 * Real behaviours: browsers (ids, CDP and live-view URLs, status filter), the computer (mouse,
 * cursor, keys, clipboard, a real PNG screenshot of the viewport, batches), a per-browser
 * filesystem, processes (`echo`, `cat`, `ls`), replays still recording for a while, pools
 * (acquire / release / flush), real TOTP codes, deployments and invocations reaching their
 * terminal state, and event streams with a few frames of each event kind.
 *
 * Run it in memory (`layer`, no sockets, driven by the Effect clock so `TestClock` controls replay
 * readiness and injected delays) or over real HTTP on loopback (`serve`, on `node:http`), where a
 * control plane under `/_simulator/` lets a client in any language inject faults, reset the state
 * and read the request log.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Net from "node:net"
import type { BrowserTelemetryConfig } from "../internal/generated/schemas/Common.js"
import type { operations as operationsTable } from "../internal/generated/table.js"
import * as KernelConfig from "../KernelConfig.js"
import * as engine from "./internal/engine.js"
import * as live from "./internal/live.js"
import * as mp4 from "./internal/mp4.js"
import * as schemas from "./internal/schema.js"
import * as server from "./internal/server.js"
import * as internal from "./internal/simulator.js"

/**
 * The state a deployment can be in.
 *
 * @since 0.1.0
 * @category Models
 */
export type DeploymentState = "queued" | "in_progress" | "running" | "stopped" | "failed"

/**
 * An organization's plan: `"free"` has no access to replays and browser pools (403 there).
 *
 * @since 0.1.0
 * @category Models
 */
export type Plan = "paid" | "free"

/**
 * The name of an operation of the Kernel API (every one of the generated table, e.g.
 * `"createBrowser"`, `"getMousePosition"`): what a {@link Fault} targets and a
 * {@link RecordedRequest} names.
 *
 * @since 0.1.0
 * @category Models
 */
export type Route = (typeof operationsTable)[number]["name"]

/**
 * A replay recording. It answers 202 (with `Retry-After: retryAfter`) for its first
 * `pendingPolls` downloads and until `readyAfter` has passed on the Effect clock since the
 * simulator started, then serves `size` bytes of deterministic, structurally valid mp4: the
 * top-level boxes `ftyp`, `moov` and `mdat` (64-bit size when over 4 GiB), adding up exactly.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface ReplaySeed {
  readonly id: string
  /**
   * Bytes; default 1 MiB, minimum {@link minimumReplaySize} (the boxes). Any size, streamed
   * without being held in memory.
   */
  readonly size?: number | undefined
  /** Seconds sent in `Retry-After` while recording, an integer >= 1; default 1. */
  readonly retryAfter?: number | undefined
  /** How many downloads answer 202 first; default 0. */
  readonly pendingPolls?: number | undefined
  /** Clock time after the start before it is ready; default at once. */
  readonly readyAfter?: Duration.DurationInput | undefined
}

/**
 * A browser session.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface BrowserSeed {
  readonly id: string
  readonly mouse?: { readonly x: number; readonly y: number } | undefined
  readonly cursorHidden?: boolean | undefined
  readonly replays?: ReadonlyArray<ReplaySeed> | undefined
  /**
   * The viewport (default 1920×1080): the size of `Computer.captureScreenshot`'s PNG.
   *
   * @since 0.2.0
   */
  readonly viewport?:
    | { readonly width: number; readonly height: number; readonly refresh_rate?: number | undefined }
    | undefined
  /** @since 0.2.0 */
  readonly headless?: boolean | undefined
  /** @since 0.2.0 */
  readonly stealth?: boolean | undefined
  /**
   * The project it belongs to (`X-Kernel-Project-Id`); without, every project sees it.
   *
   * @since 0.2.0
   */
  readonly project?: string | undefined
  /**
   * Its telemetry configuration (`Browsers.BrowserTelemetryConfig`): omitted, `{}`, every category
   * captured; `null`, none, so its telemetry stream opens but delivers no event (as the service's
   * for a session created without one).
   *
   * @since 0.2.0
   */
  readonly telemetry?: typeof BrowserTelemetryConfig.Type | null | undefined
}

/**
 * A credential. With `totp_secret` (base32), `Credentials.totpCode` answers the real RFC 6238
 * code (HMAC-SHA1, 30 seconds, 6 digits) on the Effect clock.
 *
 * @since 0.2.0
 * @category Seed
 */
export interface CredentialSeed {
  readonly id: string
  readonly name?: string | undefined
  readonly domain?: string | undefined
  readonly totp_secret?: string | undefined
  readonly project?: string | undefined
}

/**
 * A browser pool, in its wire shape; omitted counts and dates get defaults.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface PoolSeed {
  readonly id: string
  readonly name?: string | undefined
  readonly available_count?: number | undefined
  readonly acquired_count?: number | undefined
  readonly created_at?: string | undefined
  readonly browser_pool_config?:
    | {
      readonly [K in keyof typeof schemas.PoolConfigSeed.Encoded]?:
        | (typeof schemas.PoolConfigSeed.Encoded)[K]
        | undefined
    }
    | undefined
  /**
   * The project (`X-Kernel-Project-Id`) the pool belongs to: callers naming another project do not
   * see it. Default: none (every caller sees it).
   *
   * @since 0.2.0
   */
  readonly project?: string | undefined
}

/**
 * A deployment.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface DeploymentSeed {
  readonly id: string
  readonly state: DeploymentState
  /**
   * The project (`X-Kernel-Project-Id`) the deployment belongs to: callers naming another project
   * do not see it (nor delete it). Default: none.
   *
   * @since 0.2.0
   */
  readonly project?: string | undefined
  /**
   * The app the deployment serves (listed by `Apps.list`, invocable by `Invocations.create` with
   * this name and {@link DeploymentSeed.version}). Default: none (the deployment serves no app).
   *
   * @since 0.2.0
   */
  readonly app_name?: string | undefined
  /**
   * The version of its app. Default: `"latest"`.
   *
   * @since 0.2.0
   */
  readonly version?: string | undefined
  /**
   * The actions its app registers (listed by `Apps.list`; `Invocations.create` of another is 404). Default:
   * none named, and then any action is taken. A deployment created in the simulator reads them from its
   * zip's source files (`app.action("name", ...)`, `@app.action("name")`).
   *
   * @since 0.2.0
   */
  readonly actions?: ReadonlyArray<string> | undefined
}

/**
 * An organization: its bearer token, plan and resources. Resources are visible only to its token.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface OrganizationSeed {
  readonly id: string
  readonly token: string
  /** Default `"paid"`. */
  readonly plan?: Plan | undefined
  readonly browsers?: ReadonlyArray<BrowserSeed> | undefined
  readonly pools?: ReadonlyArray<PoolSeed> | undefined
  readonly deployments?: ReadonlyArray<DeploymentSeed> | undefined
  /** @since 0.2.0 */
  readonly credentials?: ReadonlyArray<CredentialSeed> | undefined
}

/**
 * Everything the simulator starts with.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface Seed {
  readonly organizations?: ReadonlyArray<OrganizationSeed> | undefined
}

/**
 * The token of {@link defaultSeed}'s organization.
 *
 * @since 0.1.0
 * @category Seed
 */
export const defaultToken = "sk_sim_demo_0123456789"

/**
 * A ready-made world: one organization (token {@link defaultToken}) with browser `browser_1`
 * (mouse at 640,360) whose replay `replay_1` (4 MiB) is still recording for two polls, a free
 * organization (token `sk_sim_free`), three pools, and deployments in every state (`dep_running`
 * serves the app `my-app` version `1.0.0`, the one the documented examples invoke).
 *
 * @since 0.1.0
 * @category Seed
 */
export const defaultSeed: Seed = {
  organizations: [
    {
      id: "org_demo",
      token: defaultToken,
      browsers: [{
        id: "browser_1",
        mouse: { x: 640, y: 360 },
        replays: [{ id: "replay_1", size: 4 * 1024 * 1024, pendingPolls: 2, retryAfter: 1 }]
      }],
      pools: [
        {
          id: "pool_small",
          name: "small",
          available_count: 2,
          acquired_count: 1,
          created_at: "2026-11-01T09:00:00Z",
          browser_pool_config: { size: 3, headless: true, stealth: false, timeout_seconds: 600 }
        },
        {
          id: "pool_stealth",
          name: "stealth",
          available_count: 8,
          acquired_count: 2,
          created_at: "2026-11-02T10:30:00Z",
          browser_pool_config: {
            size: 10,
            stealth: true,
            viewport: { width: 1920, height: 1080, refresh_rate: 25 },
            chrome_policy: { HomepageLocation: "https://example.com" }
          }
        },
        {
          id: "pool_kiosk",
          available_count: 1,
          acquired_count: 0,
          created_at: "2026-11-03T12:00:00Z",
          browser_pool_config: { size: 1, kiosk_mode: true }
        }
      ],
      deployments: [
        { id: "dep_running", state: "running", app_name: "my-app", version: "1.0.0" },
        { id: "dep_stopped", state: "stopped" },
        { id: "dep_failed", state: "failed" },
        { id: "dep_queued", state: "queued" },
        { id: "dep_in_progress", state: "in_progress" }
      ]
    },
    { id: "org_free", token: "sk_sim_free", plan: "free", pools: [{ id: "pool_free" }] }
  ]
}

/**
 * Misbehaviour injected on a route (or every route, `"*"`), for the next `times` requests
 * (default: until cleared). Combine as needed: `delay` before anything else; then either `reset`
 * (the connection is dropped before headers), or an answer with `status` (an Error body, or
 * `body` as text, or with `gateway` a production gateway's HTML page; `retryAfter` adds a
 * `Retry-After` header) or the real answer; `truncateAt` / `stallAt` / `resetAt` cut, stall or
 * reset its body. With `probability`, each matching request is affected with that chance.
 *
 * Over HTTP, `POST /_simulator/faults` takes the same fields as JSON (`delay` in milliseconds or
 * as a string such as `"2 seconds"`), validated by {@link FaultSchema}.
 *
 * @since 0.1.0
 * @category Faults
 */
export interface Fault {
  readonly route: Route | "*"
  readonly times?: number | undefined
  readonly delay?: Duration.DurationInput | undefined
  readonly reset?: boolean | undefined
  readonly status?: number | undefined
  readonly body?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Close the connection after this many body bytes (the declared length stays the full one). */
  readonly truncateAt?: number | undefined
  /** Stop sending after this many body bytes, keeping the connection open. */
  readonly stallAt?: number | undefined
  /** Reset the connection (TCP RST) after this many body bytes. */
  readonly resetAt?: number | undefined
  /** The chance, from 0 to 1, that a matching request is affected; default 1. */
  readonly probability?: number | undefined
  /**
   * Seconds sent in a `Retry-After` header with the injected `status` (e.g. `429`, `503`).
   *
   * @since 0.2.0
   */
  readonly retryAfter?: number | undefined
  /**
   * Answer the injected `status` as a production gateway (a load balancer in front of the
   * service) does: a `text/html` page instead of the service's Error JSON.
   *
   * @since 0.2.0
   */
  readonly gateway?: boolean | undefined
}

/**
 * A request the simulator saw, with the Authorization header redacted.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RecordedRequest {
  readonly method: string
  /** As sent, percent-encoded, without the query (see `query`). */
  readonly path: string
  /**
   * The query string as sent, percent-encoded, without the `?` (`limit=3&offset=2`); undefined when
   * the request had none. Cut like the path.
   *
   * @since 0.2.0
   */
  readonly query?: string | undefined
  readonly route: Route | undefined
  readonly headers: Readonly<Record<string, string>>
  /**
   * The body as text, cut after `recordedBodyBytes` (then ending with `…`); undefined when empty
   * or not read (the request was refused before its body was needed).
   */
  readonly body: string | undefined
  /**
   * The body's full length in bytes, when it was read.
   *
   * @since 0.2.0
   */
  readonly bodyBytes?: number | undefined
  /** The status answered; undefined while unanswered, or when the connection was reset. */
  readonly status: number | undefined
}

/**
 * Inspection and control of a running simulator.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Control {
  /** The request log: the most recent `requestLogSize` requests (default 1000), oldest first. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /**
   * How many requests the log dropped (its oldest, past `requestLogSize` or `requestLogBytes`) since it
   * was last cleared: `GET /_simulator/requests` says it in `X-Simulator-Requests-Dropped`.
   */
  readonly requestsDropped: Effect.Effect<number>
  readonly clearRequests: Effect.Effect<void>
  readonly injectFault: (fault: Fault) => Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  readonly deployment: (id: string) => Effect.Effect<
    Option.Option<{ readonly id: string; readonly state: DeploymentState; readonly markedForDeletion: boolean }>
  >
  readonly browser: (id: string) => Effect.Effect<
    Option.Option<
      {
        readonly id: string
        readonly mouse: { readonly x: number; readonly y: number }
        readonly cursorHidden: boolean
        /** @since 0.2.0 */
        readonly viewport: { readonly width: number; readonly height: number }
        /** @since 0.2.0 */
        readonly clipboard: string
        /** Text typed (`typeText`) and keys pressed (`pressKey`, as `<key>`), in order. @since 0.2.0 */
        readonly typed: ReadonlyArray<string>
      }
    >
  >
  /**
   * The resources dropped to keep a collection under its limit ({@link collectionLimit}), the
   * most recent 100 per organization, oldest first.
   *
   * @since 0.2.0
   */
  readonly evictions: Effect.Effect<
    ReadonlyArray<{ readonly organization: string; readonly collection: string; readonly id: string }>
  >
  /**
   * Starts over from `seed` (default: the seed it was created with): a new world, no faults, an
   * empty request log. The seed is validated like at creation.
   *
   * @since 0.2.0
   */
  readonly reset: (seed?: Seed) => Effect.Effect<void, SeedError>
}

/**
 * The most resources one collection of an organization holds (browsers, profiles, the watches of
 * one browser...); creating more evicts the oldest deleted one (deleted browsers are kept for
 * `include_deleted`), else the oldest, recorded in {@link Control.evictions}.
 *
 * @since 0.2.0
 * @category Limits
 */
export const collectionLimit: number = engine.collectionLimit

/**
 * The most entries (files and directories) of one browser's simulated filesystem; a write beyond
 * it is 400.
 *
 * @since 0.2.0
 * @category Limits
 */
export const filesystemLimit: number = engine.fsLimit

/**
 * The longest path of a browser's simulated filesystem, in UTF-8 bytes (Linux's `PATH_MAX`); a
 * request naming a longer one, or a move that would make one, is 400.
 *
 * @since 0.2.0
 * @category Limits
 */
export const filesystemPathBytes: number = engine.fsPathBytes

/**
 * The simulator's control service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class KernelSimulator extends Context.Tag("effect-kernel/KernelSimulator")<KernelSimulator, Control>() {
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/KernelSimulator"
}

/**
 * The byte at `offset` of a simulated replay of `size` bytes, to check downloaded content.
 *
 * @since 0.1.0
 * @category Utils
 */
export const replayByteAt: (size: number, offset: number) => number = mp4.byteAt

/**
 * The smallest replay size a seed accepts: the `ftyp`, `moov` and an empty `mdat` box.
 *
 * @since 0.2.0
 * @category Utils
 */
export const minimumReplaySize: number = mp4.minimumSize

/**
 * A seed that does not follow {@link SeedSchema}: `issues` name each field by its path (e.g.
 * `organizations[0].browsers[0].mouse.x`), and `message` lists them on one line.
 *
 * @since 0.2.0
 * @category Errors
 */
export class SeedError extends Schema.TaggedError<SeedError>()("SeedError", {
  message: Schema.String,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {}

/**
 * The schema of a {@link Seed} (its type is assignable to `Seed`): integer mouse positions and counts, `retryAfter` an integer
 * >= 1, replay sizes that hold the mp4 boxes, `created_at` in ISO 8601 UTC, deployment states and
 * pool configurations within the service's document, unique tokens, and no unknown fields.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const SeedSchema = schemas.Seed

/**
 * The schema of a {@link Fault} as JSON (`POST /_simulator/faults`): `delay` in milliseconds or
 * as a string such as `"2 seconds"`. Decode with `{ onExcessProperty: "error" }` to refuse unknown
 * fields, as the control plane does.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const FaultSchema = schemas.Fault

const seedError = (issues: ReadonlyArray<{ readonly path: string; readonly message: string }>) =>
  new SeedError({ message: `invalid seed: ${schemas.summary(issues)}`, issues })

/**
 * Validates a seed (parsed JSON, or a value built in code) against {@link SeedSchema}.
 *
 * @since 0.2.0
 * @category Seed
 * @example
 * ```ts
 * import { KernelSimulator } from "effect-kernel/testing"
 * import { Effect } from "effect"
 *
 * const program = KernelSimulator.decodeSeed(JSON.parse("{\"organizations\":[]}")).pipe(
 *   Effect.catchTag("SeedError", (error) => Effect.logError(error.message))
 * )
 * ```
 */
export const decodeSeed = (input: unknown): Effect.Effect<Seed, SeedError> =>
  Either.match(schemas.decodeSeed(input), {
    onLeft: (issues) => Effect.fail(seedError(issues)),
    onRight: Effect.succeed
  })

/**
 * A live stream's bytes within a fault's cut, as over HTTP: up to `truncateAt` / `resetAt` bytes then
 * the connection's error, or up to `stallAt` then nothing more (until the request is aborted).
 */
const cutLive = (
  bytes: Stream.Stream<Uint8Array>,
  response: internal.SimResponse
): Stream.Stream<Uint8Array, Error> => {
  const ending = internal.bodyEnding(response.network)
  if (ending === undefined) return bytes
  const within = ending.at === 0 ? Stream.empty : Stream.suspend(() => {
    let left = ending.at
    return bytes.pipe(
      Stream.map((chunk) => {
        const part = chunk.length <= left ? chunk : chunk.subarray(0, left)
        left -= part.length
        return part
      }),
      Stream.takeUntil(() => left <= 0)
    )
  })
  return Stream.concat(
    within,
    ending.kind === "stall"
      ? Stream.never
      : Stream.fail(new Error(ending.kind === "truncate" ? "other side closed" : "read ECONNRESET"))
  )
}

const toWeb = (response: internal.SimResponse, signal: AbortSignal, runtime: Runtime.Runtime<never>): Response => {
  if (response.body._tag === "Live") {
    // run on the caller's runtime (its clock: the TestClock in tests); it stops when the reader
    // cancels or the request is aborted, and leaves no listener on the signal either way
    const aborted = Effect.async<void>((resume) => {
      const abort = () => resume(Effect.void)
      if (signal.aborted) return resume(Effect.void)
      signal.addEventListener("abort", abort, { once: true })
      return Effect.sync(() => signal.removeEventListener("abort", abort))
    })
    return new Response(
      Stream.toReadableStreamRuntime(
        Stream.interruptWhen(
          cutLive(Stream.encodeText(live.withKeepAlives(response.body.frames, response.body.keepAlive)), response),
          aborted
        ),
        runtime
      ),
      { status: response.status, headers: response.headers }
    )
  }
  const ending = internal.bodyEnding(response.network)
  const iterator = server.limited(server.bodyChunks(response), ending?.at)
  // statuses that carry no content (a web `Response` refuses a body with them): an injected fault's
  // `body` is dropped, as the bin drops it
  const hasBody = response.body._tag !== "Empty" && !server.noContent.has(response.status)
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = iterator.next()
        if (!next.done) return controller.enqueue(next.value)
        if (ending?.kind === "stall") {
          // like a socket: nothing more arrives, until the client aborts
          return new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => {
              controller.error(new Error("aborted"))
              resolve()
            }, { once: true })
          )
        }
        if (ending?.kind === "truncate") return controller.error(new Error("other side closed"))
        if (ending?.kind === "reset") return controller.error(new Error("read ECONNRESET"))
        controller.close()
      }
    }, { highWaterMark: 0 })
    : null
  return new Response(body, { status: response.status, headers: response.headers })
}

/**
 * Limits of a simulator, in memory and over HTTP.
 *
 * @since 0.2.0
 * @category Models
 */
export interface Limits {
  /**
   * JSON request bodies longer than this are answered 413 (not read whole); default 65536 (64 KiB).
   */
  readonly maxBodyBytes?: number | undefined
  /**
   * The same for uploads, the operations whose body is multipart or raw bytes (`writeFile`,
   * `upload`, `uploadZip`, `Extensions.upload`, `loadExtensions`, `Deployments.create`...);
   * default {@link defaultMaxUploadBytes} (16 MiB). Over HTTP, a body too large is answered 413
   * and up to four times its limit is still read and discarded, so a client sending it reads the
   * 413 rather than a reset.
   *
   * @since 0.2.0
   */
  readonly maxUploadBytes?: number | undefined
  /**
   * The most bytes the simulator stores, all organizations together: the contents of the
   * browsers' files and the bytes kept by resources (uploaded extensions, saved profiles);
   * default {@link defaultMaxStoredBytes} (256 MiB). A write that would take it beyond is 400, as
   * a write beyond {@link filesystemLimit} is (nothing is evicted for it); deleting files, browsers
   * or resources frees their bytes.
   *
   * @since 0.2.0
   */
  readonly maxStoredBytes?: number | undefined
  /** How many requests the log keeps, the oldest dropped first; default 1000 (0: none). */
  readonly requestLogSize?: number | undefined
  /** Recorded bodies are cut after this many bytes; default 4096. */
  readonly recordedBodyBytes?: number | undefined
  /**
   * The log's total size in characters (paths, headers, bodies), the oldest dropped first beyond
   * it, so the largest requests the server accepts cannot make it big; default
   * {@link defaultRequestLogBytes} (8 MiB).
   *
   * @since 0.2.0
   */
  readonly requestLogBytes?: number | undefined
}

/**
 * The default budget of the request log: 8 MiB of paths, headers and bodies.
 *
 * @since 0.2.0
 * @category Limits
 */
export const defaultRequestLogBytes: number = internal.defaultLimits.requestLogBytes

/**
 * The default limit of an upload's body (multipart or raw bytes): 16 MiB.
 *
 * @since 0.2.0
 * @category Limits
 */
export const defaultMaxUploadBytes: number = internal.defaultLimits.maxUploadBytes

/**
 * The default budget of the bytes a simulator stores (files, uploads, saved profiles): 256 MiB.
 *
 * @since 0.2.0
 * @category Limits
 */
export const defaultMaxStoredBytes: number = internal.defaultLimits.maxStoredBytes

const limitsOf = (options: Limits): internal.Limits => ({
  maxBodyBytes: options.maxBodyBytes ?? internal.defaultLimits.maxBodyBytes,
  maxUploadBytes: options.maxUploadBytes ?? internal.defaultLimits.maxUploadBytes,
  maxStoredBytes: options.maxStoredBytes ?? internal.defaultLimits.maxStoredBytes,
  requestLogSize: options.requestLogSize ?? internal.defaultLimits.requestLogSize,
  recordedBodyBytes: options.recordedBodyBytes ?? internal.defaultLimits.recordedBodyBytes,
  requestLogBytes: options.requestLogBytes ?? internal.defaultLimits.requestLogBytes
})

const readInMemory = (body: Uint8Array | undefined) => (limit: number): Effect.Effect<internal.BodyRead> =>
  Effect.succeed(
    body !== undefined && body.length > limit
      ? { _tag: "TooLarge" }
      : { _tag: "Read", bytes: body ?? new Uint8Array(0) }
  )

/**
 * A request body as bytes (a multipart form is encoded with its boundary, as `fetch` does). A `Stream`
 * body that fails is the request failing, as on a transport that sends it (its error the cause), never
 * an empty body sent.
 */
const inMemoryBody = (
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<
  { readonly bytes: Uint8Array | undefined; readonly contentType: string | undefined },
  HttpClientError.RequestError
> => {
  const body = request.body
  switch (body._tag) {
    case "Uint8Array":
      return Effect.succeed({ bytes: body.body, contentType: undefined })
    case "FormData":
      return Effect.promise(async () => {
        const encoded = new Response(body.formData)
        return {
          bytes: new Uint8Array(await encoded.arrayBuffer()),
          contentType: encoded.headers.get("content-type") ?? undefined
        }
      })
    case "Stream":
      return Effect.mapBoth(Stream.runCollect(body.stream), {
        onFailure: (cause) => new HttpClientError.RequestError({ request, reason: "Transport", cause }),
        onSuccess: (chunks) => ({ bytes: new Uint8Array(Buffer.concat([...chunks])), contentType: undefined })
      })
    default:
      return Effect.succeed({ bytes: undefined, contentType: undefined })
  }
}

const makeUnsafe = (seed: Seed, limits: Limits) =>
  Effect.map(internal.make(seed, limitsOf(limits)), ({ control, handle }) => {
    const { resetTo, ...rest } = control
    const reset = (next?: Seed): Effect.Effect<void, SeedError> =>
      next === undefined ? resetTo(seed) : Effect.flatMap(decodeSeed(next), resetTo)
    return { control: { ...rest, reset }, handle, resetTo, seed }
  })

/**
 * A simulator: the handler plus its {@link Control}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Simulator extends Control {
  /** The in-memory transport talking to this simulator. */
  readonly httpClient: HttpClient.HttpClient
  /** @internal */
  readonly handle: (request: internal.SimRequest) => Effect.Effect<internal.SimResponse>
  /** @internal how many open event streams are subscribed (0 once their clients are gone) */
  readonly liveSubscribers: Effect.Effect<number>
}

/**
 * Creates a simulator from a seed (default {@link defaultSeed}).
 *
 * @since 0.1.0
 * @category Constructors
 *
 * An invalid seed is a defect carrying a {@link SeedError} that names the field; validate seeds
 * from outside the program first with {@link decodeSeed}.
 */
export const make = (seed: Seed = defaultSeed, limits: Limits = {}): Effect.Effect<Simulator> =>
  Effect.map(Effect.orDie(Effect.flatMap(decodeSeed(seed), (valid) => makeUnsafe(valid, limits))), ({
    control,
    handle
  }) => ({
    ...control,
    handle,
    httpClient: HttpClient.make((request, url, signal) =>
      Effect.flatMap(
        Effect.flatMap(inMemoryBody(request), (body) =>
          handle({
            method: request.method,
            path: url.pathname,
            query: url.search.slice(1),
            headers: body.contentType === undefined
              ? request.headers
              : { ...request.headers, "content-type": body.contentType },
            readBody: readInMemory(body.bytes)
          })),
        (response) =>
          response.network.reset
            ? Effect.fail(
              new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error("socket hang up") })
            )
            : Effect.map(
              Effect.runtime<never>(),
              (runtime) => HttpClientResponse.fromWeb(request, toWeb(response, signal, runtime))
            )
      )
    )
  }))

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface LayerOptions extends Limits {
  /** The token the provided `KernelConfig` uses; default the first organization's. */
  readonly token?: string | undefined
  /** Other configuration (retries, time-outs...) for the provided `KernelConfig`. */
  readonly config?: Omit<KernelConfig.Options, "apiKey" | "baseUrl"> | undefined
}

/**
 * The simulator in memory, no sockets: provides its {@link KernelSimulator} control service, an
 * `HttpClient` that talks to it, and a `KernelConfig` with a valid token. Put `Kernel.layer` on
 * top of it to test a program. The seed is validated with {@link SeedSchema}: an invalid one is a
 * defect whose {@link SeedError} names the field.
 *
 * @since 0.1.0
 * @category Layers
 * @example
 * ```ts
 * import { Kernel } from "effect-kernel"
 * import { KernelSimulator } from "effect-kernel/testing"
 * import { Layer } from "effect"
 *
 * const TestKernel = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))
 * ```
 */
export const layer = (
  seed: Seed = defaultSeed,
  options: LayerOptions = {}
): Layer.Layer<KernelSimulator | HttpClient.HttpClient | KernelConfig.KernelConfig> =>
  Layer.unwrapEffect(Effect.map(make(seed, options), (simulator) => {
    const token = options.token ?? seed.organizations?.[0]?.token ?? defaultToken
    return Layer.mergeAll(
      Layer.succeed(KernelSimulator, simulator),
      Layer.succeed(HttpClient.HttpClient, simulator.httpClient),
      KernelConfig.layer({ ...options.config, apiKey: Redacted.make(token), baseUrl: "http://localhost" }).pipe(
        Layer.orDie
      )
    )
  }))

/**
 * Options of {@link serve}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ServeOptions extends Limits {
  /** Default 0: any free port. */
  readonly port?: number | undefined
  /** Default 127.0.0.1. */
  readonly host?: string | undefined
  readonly seed?: Seed | undefined
  /**
   * The bearer token of the control plane (`/_simulator/...`); default a random one, see
   * {@link Served.adminToken}. It must differ from every organization's token.
   *
   * @since 0.2.0
   */
  readonly adminToken?: string | undefined
}

/**
 * A simulator served over HTTP.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Served extends Control {
  readonly url: string
  readonly port: number
  /** How many TCP connections are open right now. */
  readonly openConnections: Effect.Effect<number>
  /** @internal how many open event streams are subscribed (0 once their clients are gone) */
  readonly liveSubscribers: Effect.Effect<number>
  /**
   * The control plane's bearer token.
   *
   * @since 0.2.0
   */
  readonly adminToken: Redacted.Redacted<string>
}

/**
 * The largest request line plus headers `serve` accepts (so ids of up to about 60 KB reach the
 * routes); beyond it the answer is 431 with the Error JSON.
 *
 * @since 0.2.0
 * @category Limits
 */
export const maxHeaderBytes = 64 * 1024

/**
 * Serves a simulator over real HTTP on loopback for the life of the scope, on `node:http`.
 *
 * Besides every operation of the API, a control plane under `/_simulator/` on the same port,
 * guarded by its own bearer token (`adminToken`), serves `POST /_simulator/faults` (a
 * {@link Fault} as JSON, on any operation by its name), `DELETE /_simulator/faults`,
 * `POST /_simulator/reset` (optionally with a seed as JSON), `GET /_simulator/requests` (the log
 * as JSON), `DELETE /_simulator/requests`, `GET /_simulator/evictions` and `GET /_simulator/operations`
 * (the operations a fault may name, with their method and path). A service token
 * does not open it, and the admin token opens none of the service's routes.
 *
 * Bounded: request bodies over `maxBodyBytes` (uploads: `maxUploadBytes`) are answered 413 without
 * being read whole (the connection is then closed, after discarding up to four times the limit so
 * a client still sending reads the answer); bodies are read only after authentication and routing; the log is
 * a ring of `requestLogSize` entries; responses are written with backpressure.
 *
 * @since 0.1.0
 * @category Constructors
 * @example
 * ```ts
 * import { KernelSimulator } from "effect-kernel/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const served = yield* KernelSimulator.serve({ port: 4010, adminToken: "admin_secret" })
 *   yield* Effect.log(`simulator on ${served.url}`)
 *   yield* Effect.never
 * }))
 * ```
 */
export const serve = (
  options: ServeOptions = {}
): Effect.Effect<Served, HttpServerError.ServeError | SeedError, Scope.Scope> =>
  Effect.gen(function*() {
    const seed = yield* decodeSeed(options.seed ?? defaultSeed)
    const adminToken = options.adminToken ?? `sk_sim_admin_${randomHex()}`
    const adminIssue = Either.isLeft(schemas.decodeToken(adminToken))
      ? "1 to 512 visible ASCII characters, no spaces"
      : (seed.organizations ?? []).some((o) => o.token === adminToken)
      ? "must differ from every organization's token"
      : undefined
    if (adminIssue !== undefined) {
      return yield* Effect.fail(
        new SeedError({ message: `adminToken: ${adminIssue}`, issues: [{ path: "adminToken", message: adminIssue }] })
      )
    }
    const simulator = yield* makeUnsafe(seed, options)
    const Http = yield* Effect.promise(() => import("node:http"))
    const run = yield* FiberSet.makeRuntime<never>()
    const sockets = new Set<Net.Socket>()
    const host = options.host ?? "127.0.0.1"
    const httpServer = Http.createServer({
      maxHeaderSize: maxHeaderBytes,
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 1_000,
      // a request without Host (a hand-written client) reaches the routes and their token check, not a bare 400
      requireHostHeader: false
    })
    const attached = server.attach(
      httpServer,
      {
        ...simulator.control,
        handle: simulator.handle,
        resetTo: simulator.resetTo,
        initialSeed: simulator.seed
      },
      { adminToken, run, maxHeaderBytes },
      sockets
    )
    yield* Effect.acquireRelease(
      Effect.async<void, HttpServerError.ServeError>((resume) => {
        const onError = (cause: unknown) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
        httpServer.once("error", onError)
        httpServer.listen(options.port ?? 0, host, () => {
          httpServer.off("error", onError)
          resume(Effect.void)
        })
      }),
      // open event streams are ended, every other connection closed: nothing waits for a client
      () => attached.close
    )
    const address = httpServer.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    // a reset never gives an organization the admin token: the two tokens never cross
    const reset = (next?: Seed): Effect.Effect<void, SeedError> =>
      next === undefined ? simulator.control.reset() : Effect.flatMap(decodeSeed(next), (valid) => {
        const clash = schemas.adminTokenClash(valid, adminToken)
        return clash.length > 0 ? Effect.fail(seedError(clash)) : simulator.resetTo(valid)
      })
    return {
      ...simulator.control,
      reset,
      url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
      port,
      openConnections: Effect.sync(() => sockets.size),
      adminToken: Redacted.make(adminToken)
    }
  })

const randomHex = (): string => {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}
