/**
 * A stateful, in-process stand-in for the Kernel service, faithful to its specification: the five
 * endpoints with their real statuses and Error bodies, organizations with tokens and plans,
 * browsers, replays that are still recording for a while, pools and deployments, request
 * recording and fault injection.
 *
 * Run it in memory (`layer`, no sockets, driven by the Effect clock so `TestClock` controls replay
 * readiness and injected delays) or over real HTTP on loopback (`serve`, which needs the optional
 * peer `@effect/platform-node`).
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Net from "node:net"
import type { BrowserPoolConfig } from "./BrowserPools.js"
import * as mp4 from "./internal/mp4.js"
import * as internal from "./internal/simulator.js"
import * as KernelConfig from "./KernelConfig.js"

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
 * The name of one of the five routes.
 *
 * @since 0.1.0
 * @category Models
 */
export type Route =
  | "downloadReplay"
  | "setCursorVisibility"
  | "getMousePosition"
  | "listBrowserPools"
  | "deleteDeployment"

/**
 * A replay recording. It answers 202 (with `Retry-After: retryAfter`) for its first
 * `pendingPolls` downloads and until `readyAfter` has passed on the Effect clock since the
 * simulator started, then serves `size` bytes of deterministic mp4.
 *
 * @since 0.1.0
 * @category Seed
 */
export interface ReplaySeed {
  readonly id: string
  /** Bytes; default 1 MiB, minimum 32. Any size, streamed without being held in memory. */
  readonly size?: number | undefined
  /** Seconds sent in `Retry-After` while recording; default 1. */
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
  readonly browser_pool_config?: Partial<typeof BrowserPoolConfig.Encoded> | undefined
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
 * organization (token `sk_sim_free`), three pools, and deployments in every state.
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
        { id: "dep_running", state: "running" },
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
 * `body` as text) or the real answer; `truncateAt` / `stallAt` / `resetAt` cut, stall or reset
 * its body. With `probability`, each matching request is affected with that chance.
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
}

/**
 * A request the simulator saw, with the Authorization header redacted.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RecordedRequest {
  readonly method: string
  /** As sent, percent-encoded. */
  readonly path: string
  readonly route: Route | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
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
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
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
      }
    >
  >
}

/**
 * The simulator's control service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class KernelSimulator extends Context.Tag("effect-kernel/KernelSimulator")<KernelSimulator, Control>() {}

/**
 * The byte at `offset` of a simulated replay of `size` bytes, to check downloaded content.
 *
 * @since 0.1.0
 * @category Utils
 */
export const replayByteAt: (size: number, offset: number) => number = mp4.byteAt

const encoder = new TextEncoder()

function* bodyChunks(response: internal.SimResponse): Generator<Uint8Array> {
  switch (response.body._tag) {
    case "Empty":
      return
    case "Text":
      yield encoder.encode(response.body.text)
      return
    case "Replay":
      yield* mp4.chunks(response.body.size)
  }
}

/** The body's chunks, cut after `limit` bytes. */
function* limited(chunks: Iterable<Uint8Array>, limit: number | undefined): Generator<Uint8Array> {
  if (limit === undefined) return yield* chunks
  let sent = 0
  for (const chunk of chunks) {
    if (sent >= limit) return
    const take = Math.min(chunk.length, limit - sent)
    yield take === chunk.length ? chunk : chunk.subarray(0, take)
    sent += take
  }
}

const toWeb = (response: internal.SimResponse, signal: AbortSignal): Response => {
  const ending = internal.bodyEnding(response.network)
  const iterator = limited(bodyChunks(response), ending?.at)
  const hasBody = response.body._tag !== "Empty" && response.status !== 204 && response.status !== 202
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
}

/**
 * Creates a simulator from a seed (default {@link defaultSeed}).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (seed: Seed = defaultSeed): Effect.Effect<Simulator> =>
  Effect.map(internal.make(seed), ({ control, handle }) => ({
    ...control,
    handle,
    httpClient: HttpClient.make((request, url, signal) =>
      Effect.flatMap(
        handle({
          method: request.method,
          path: url.pathname,
          headers: request.headers,
          body: request.body._tag === "Uint8Array" ? request.body.body : undefined
        }),
        (response) =>
          response.network.reset
            ? Effect.fail(
              new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error("socket hang up") })
            )
            : Effect.succeed(HttpClientResponse.fromWeb(request, toWeb(response, signal)))
      )
    )
  }))

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface LayerOptions {
  /** The token the provided `KernelConfig` uses; default the first organization's. */
  readonly token?: string | undefined
  /** Other configuration (retries, time-outs...) for the provided `KernelConfig`. */
  readonly config?: Omit<KernelConfig.Options, "apiKey" | "baseUrl"> | undefined
}

/**
 * The simulator in memory, no sockets: provides its {@link KernelSimulator} control service, an
 * `HttpClient` that talks to it, and a `KernelConfig` with a valid token. Put `Kernel.layer` on
 * top of it to test a program.
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
  Layer.unwrapEffect(Effect.map(make(seed), (simulator) => {
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
export interface ServeOptions {
  /** Default 0: any free port. */
  readonly port?: number | undefined
  /** Default 127.0.0.1. */
  readonly host?: string | undefined
  readonly seed?: Seed | undefined
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
}

/**
 * Serves a simulator over real HTTP on loopback for the life of the scope, with
 * `@effect/platform-node` (an optional peer dependency, loaded only here).
 *
 * @since 0.1.0
 * @category Constructors
 * @example
 * ```ts
 * import { KernelSimulator } from "effect-kernel/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const served = yield* KernelSimulator.serve({ port: 4010 })
 *   yield* Effect.log(`simulator on ${served.url}`)
 *   yield* Effect.never
 * }))
 * ```
 */
export const serve = (
  options: ServeOptions = {}
): Effect.Effect<Served, HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const [NodeHttpServer, NodeHttpServerRequest, Http] = yield* Effect.promise(() =>
      Promise.all([
        import("@effect/platform-node/NodeHttpServer"),
        import("@effect/platform-node/NodeHttpServerRequest"),
        import("node:http")
      ])
    )
    const simulator = yield* make(options.seed ?? defaultSeed)
    const sockets = new Set<Net.Socket>()
    const host = options.host ?? "127.0.0.1"
    const server = yield* NodeHttpServer.make(() => {
      const server = Http.createServer()
      server.on("connection", (socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      return server
    }, { port: options.port ?? 0, host })
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = yield* Effect.orElseSucceed(request.arrayBuffer, () => new ArrayBuffer(0))
      const response = yield* simulator.handle({
        method: request.method,
        path: request.url.split("?")[0]!,
        headers: request.headers,
        body: new Uint8Array(body)
      })
      const incoming = NodeHttpServerRequest.toIncomingMessage(request)
      if (response.network.reset) {
        incoming.socket.resetAndDestroy()
        return HttpServerResponse.empty({ status: 500 })
      }
      const cut = internal.bodyEnding(response.network)
      if (response.body._tag === "Empty") {
        return HttpServerResponse.empty({ status: response.status, headers: response.headers })
      }
      if (response.body._tag === "Text" && cut === undefined) {
        return HttpServerResponse.uint8Array(encoder.encode(response.body.text), {
          status: response.status,
          headers: response.headers
        })
      }
      const chunks = limited(bodyChunks(response), cut?.at)
      const ending = cut === undefined
        ? Stream.empty
        : cut.kind === "stall"
        ? Stream.never
        : Stream.execute(
          Effect.sync(() => cut.kind === "reset" ? incoming.socket.resetAndDestroy() : incoming.socket.end())
        )
      const contentLength = Number(response.headers["content-length"])
      return HttpServerResponse.stream(
        Stream.fromIteratorSucceed(chunks, 1).pipe(Stream.concat(ending)),
        {
          status: response.status,
          headers: response.headers,
          ...(Number.isFinite(contentLength) ? { contentLength } : {})
        }
      )
    })
    yield* server.serve(app)
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    return {
      requests: simulator.requests,
      clearRequests: simulator.clearRequests,
      injectFault: simulator.injectFault,
      clearFaults: simulator.clearFaults,
      deployment: simulator.deployment,
      browser: simulator.browser,
      url: `http://${host}:${port}`,
      port,
      openConnections: Effect.sync(() => sockets.size)
    }
  })
