import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Sim from "../KernelSimulator.js"

/** What a transport hands the simulator. */
export interface SimRequest {
  readonly method: string
  /** The path as sent, still percent-encoded, without query. */
  readonly path: string
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array | undefined
}

/** What the simulator answers; the transports turn it into bytes on the wire (or in memory). */
export interface SimResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body:
    | { readonly _tag: "Empty" }
    | { readonly _tag: "Text"; readonly text: string }
    | { readonly _tag: "Replay"; readonly size: number }
  /** Network-level misbehaviour the transport must act out. */
  readonly network: {
    readonly reset: boolean
    /** Stop the body after this many bytes and close the connection. */
    readonly truncateAt: number | undefined
    /** Stop sending the body after this many bytes, keeping the connection open. */
    readonly stallAt: number | undefined
    /** Reset the connection (RST) after this many body bytes. */
    readonly resetAt: number | undefined
  }
}

const normal: SimResponse["network"] = { reset: false, truncateAt: undefined, stallAt: undefined, resetAt: undefined }

/** How a body ends early, if it does: the first of the cut-offs, and where. */
export const bodyEnding = (
  network: SimResponse["network"]
): { readonly kind: "truncate" | "stall" | "reset"; readonly at: number } | undefined => {
  const candidates = [
    { kind: "truncate" as const, at: network.truncateAt },
    { kind: "stall" as const, at: network.stallAt },
    { kind: "reset" as const, at: network.resetAt }
  ].filter((c): c is { kind: "truncate" | "stall" | "reset"; at: number } => c.at !== undefined)
  return candidates.reduce<{ kind: "truncate" | "stall" | "reset"; at: number } | undefined>(
    (first, c) => first === undefined || c.at < first.at ? c : first,
    undefined
  )
}

const jsonResponse = (status: number, value: unknown, headers: Record<string, string> = {}): SimResponse => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: { _tag: "Text", text: JSON.stringify(value) },
  network: normal
})

const errorResponse = (
  status: number,
  code: string,
  message: string,
  detail?: { readonly code: string; readonly message: string }
): SimResponse => jsonResponse(status, detail === undefined ? { code, message } : { code, message, details: [detail] })

interface Replay {
  readonly id: string
  readonly size: number
  readonly retryAfter: number
  pollsLeft: number
  readonly readyAt: number
}

interface Browser {
  readonly id: string
  mouse: { x: number; y: number }
  cursorHidden: boolean
  readonly replays: Map<string, Replay>
}

interface Deployment {
  readonly id: string
  state: Sim.DeploymentState
  markedForDeletion: boolean
}

interface Organization {
  readonly id: string
  readonly token: string
  readonly plan: Sim.Plan
  readonly browsers: Map<string, Browser>
  readonly pools: ReadonlyArray<Sim.PoolSeed>
  readonly deployments: Map<string, Deployment>
}

interface ActiveFault {
  readonly fault: Sim.Fault
  remaining: number
}

const routeOf = (method: string, segments: ReadonlyArray<string>): Sim.Route | "wrong-method" | undefined => {
  const [first, id, third, fourth, ...rest] = segments
  const is = (expected: string, route: Sim.Route) => method === expected ? route : "wrong-method"
  if (first === "browser_pools" && segments.length === 1) return is("GET", "listBrowserPools")
  if (first === "deployments" && segments.length === 2) return is("DELETE", "deleteDeployment")
  if (first === "browsers" && id !== undefined && rest.length === 0) {
    if (third === "replays" && fourth !== undefined) return is("GET", "downloadReplay")
    if (third === "computer" && fourth === "cursor") return is("POST", "setCursorVisibility")
    if (third === "computer" && fourth === "get_mouse_position") return is("POST", "getMousePosition")
  }
  return undefined
}

const redactHeaders = (headers: SimRequest["headers"]): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out[name] = name === "authorization" ? (value.startsWith("Bearer ") ? "Bearer <redacted>" : "<redacted>") : value
  }
  return out
}

const decodeSegments = (path: string): Option.Option<ReadonlyArray<string>> => {
  try {
    return Option.some(path.split("/").slice(1).map(decodeURIComponent))
  } catch {
    return Option.none()
  }
}

/** The whole simulated service: state, faults, recording, and the request handler. */
export const make = (seed: Sim.Seed) =>
  Effect.map(Clock.currentTimeMillis, (startedAt) => {
    const organizations = new Map<string, Organization>()
    for (const org of seed.organizations ?? []) {
      organizations.set(org.token, {
        id: org.id,
        token: org.token,
        plan: org.plan ?? "paid",
        pools: org.pools ?? [],
        browsers: new Map(
          (org.browsers ?? []).map((b) => [b.id, {
            id: b.id,
            mouse: { x: b.mouse?.x ?? 0, y: b.mouse?.y ?? 0 },
            cursorHidden: b.cursorHidden ?? false,
            replays: new Map(
              (b.replays ?? []).map((r) => [r.id, {
                id: r.id,
                size: r.size ?? 1024 * 1024,
                retryAfter: r.retryAfter ?? 1,
                pollsLeft: r.pendingPolls ?? 0,
                readyAt: startedAt + (r.readyAfter === undefined ? 0 : Duration.toMillis(r.readyAfter))
              }])
            )
          }])
        ),
        deployments: new Map(
          (org.deployments ?? []).map((d) => [d.id, { id: d.id, state: d.state, markedForDeletion: false }])
        )
      })
    }
    const faults: Array<ActiveFault> = []
    const recorded: Array<Sim.RecordedRequest> = []

    const takeFault = (route: Sim.Route | undefined, draw: number): Sim.Fault | undefined => {
      const index = faults.findIndex((f) =>
        (f.fault.route === "*" || f.fault.route === route) && draw < (f.fault.probability ?? 1)
      )
      if (index < 0) return undefined
      const active = faults[index]!
      active.remaining--
      if (active.remaining <= 0) faults.splice(index, 1)
      return active.fault
    }

    const applyFault = (fault: Sim.Fault, answer: Effect.Effect<SimResponse>): Effect.Effect<SimResponse> => {
      const delayed = fault.delay === undefined ? Effect.void : Effect.sleep(fault.delay)
      if (fault.reset === true) {
        return Effect.as(delayed, {
          status: 0,
          headers: {},
          body: { _tag: "Empty" },
          network: { ...normal, reset: true }
        })
      }
      const status = fault.status
      const base: Effect.Effect<SimResponse> = status !== undefined
        ? Effect.succeed(
          fault.body !== undefined
            ? {
              status,
              headers: { "content-type": "text/plain", ...fault.headers },
              body: { _tag: "Text", text: fault.body },
              network: normal
            }
            : {
              ...errorResponse(status, codeFor(status), `injected ${status}`),
              headers: { "content-type": "application/json", ...fault.headers }
            }
        )
        : answer
      return Effect.zipRight(
        delayed,
        Effect.map(base, (response) => ({
          ...response,
          network: {
            ...response.network,
            truncateAt: fault.truncateAt,
            stallAt: fault.stallAt,
            resetAt: fault.resetAt
          }
        }))
      )
    }

    const route = (request: SimRequest, org: Organization, route: Sim.Route, segments: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        switch (route) {
          case "listBrowserPools": {
            if (org.plan === "free") return errorResponse(403, "forbidden", "your plan does not include browser pools")
            return jsonResponse(200, org.pools.map((p) => encodePool(p)))
          }
          case "deleteDeployment": {
            const deployment = org.deployments.get(segments[1]!)
            if (deployment === undefined) return errorResponse(404, "not_found", `deployment ${segments[1]} not found`)
            if (deployment.state !== "stopped" && deployment.state !== "failed") {
              deployment.state = "stopped"
              deployment.markedForDeletion = true
            }
            return { status: 204, headers: {}, body: { _tag: "Empty" }, network: normal } satisfies SimResponse
          }
          case "getMousePosition": {
            const browser = org.browsers.get(segments[1]!)
            if (browser === undefined) return errorResponse(404, "not_found", `browser ${segments[1]} not found`)
            return jsonResponse(200, { x: browser.mouse.x, y: browser.mouse.y })
          }
          case "setCursorVisibility": {
            const body = parseJson(request.body)
            if (Option.isNone(body)) {
              return errorResponse(400, "bad_request", "request body is not valid JSON", {
                code: "invalid_input",
                message: "body must be a JSON object"
              })
            }
            const hidden = typeof body.value === "object" && body.value !== null && "hidden" in body.value
              ? body.value.hidden
              : undefined
            if (typeof hidden !== "boolean") {
              return errorResponse(400, "bad_request", "invalid input", {
                code: "invalid_input",
                message: hidden === undefined ? "hidden is required" : "hidden must be a boolean"
              })
            }
            const browser = org.browsers.get(segments[1]!)
            if (browser === undefined) return errorResponse(404, "not_found", `browser ${segments[1]} not found`)
            browser.cursorHidden = hidden
            return jsonResponse(200, { ok: true })
          }
          case "downloadReplay": {
            if (org.plan === "free") return errorResponse(403, "forbidden", "your plan does not include replays")
            const browser = org.browsers.get(segments[1]!)
            if (browser === undefined) return errorResponse(404, "not_found", `browser ${segments[1]} not found`)
            const replay = browser.replays.get(segments[3]!)
            if (replay === undefined) return errorResponse(404, "not_found", `replay ${segments[3]} not found`)
            const now = yield* Clock.currentTimeMillis
            if (replay.pollsLeft > 0 || now < replay.readyAt) {
              if (replay.pollsLeft > 0) replay.pollsLeft--
              return {
                status: 202,
                headers: { "retry-after": String(replay.retryAfter) },
                body: { _tag: "Empty" },
                network: normal
              } satisfies SimResponse
            }
            return {
              status: 200,
              headers: { "content-type": "video/mp4", "content-length": String(replay.size) },
              body: { _tag: "Replay", size: replay.size },
              network: normal
            } satisfies SimResponse
          }
        }
      })

    const answer = (request: SimRequest, draw: number): Effect.Effect<SimResponse> => {
      const segments = decodeSegments(request.path)
      if (Option.isNone(segments)) {
        return Effect.succeed(errorResponse(400, "bad_request", "malformed path", {
          code: "invalid_input",
          message: "a path segment is not valid percent-encoding"
        }))
      }
      const which = routeOf(request.method, segments.value)
      if (which === undefined) return Effect.succeed(errorResponse(404, "not_found", `no route ${request.path}`))
      if (which === "wrong-method") {
        return Effect.succeed(errorResponse(405, "method_not_allowed", `${request.method} not allowed`))
      }
      const fault = takeFault(which, draw)
      const authorization = request.headers["authorization"]
      const org = authorization?.startsWith("Bearer ") ? organizations.get(authorization.slice(7)) : undefined
      const real = org === undefined
        ? Effect.succeed(errorResponse(401, "unauthorized", "missing or invalid authorization token"))
        : route(request, org, which, segments.value)
      return fault === undefined ? real : applyFault(fault, real)
    }

    const handle = (request: SimRequest): Effect.Effect<SimResponse> =>
      Effect.suspend(() => {
        // recorded on arrival, so a request that is never answered is seen too
        const segments = decodeSegments(request.path)
        const record: { -readonly [K in keyof Sim.RecordedRequest]: Sim.RecordedRequest[K] } = {
          method: request.method,
          path: request.path,
          route: Option.isSome(segments) ? routeOrUndefined(request.method, segments.value) : undefined,
          headers: redactHeaders(request.headers),
          body: request.body === undefined || request.body.length === 0
            ? undefined
            : new TextDecoder().decode(request.body),
          status: undefined
        }
        recorded.push(record)
        return Effect.tap(Effect.flatMap(Random.next, (draw) => answer(request, draw)), (response) =>
          Effect.sync(() => {
            record.status = response.network.reset ? undefined : response.status
          }))
      })

    const control: Sim.Control = {
      requests: Effect.sync(() => recorded.slice()),
      clearRequests: Effect.sync(() => {
        recorded.length = 0
      }),
      injectFault: (fault) =>
        Effect.sync(() => {
          faults.push({ fault, remaining: fault.times ?? Infinity })
        }),
      clearFaults: Effect.sync(() => {
        faults.length = 0
      }),
      deployment: (id) =>
        Effect.sync(() => {
          for (const org of organizations.values()) {
            const d = org.deployments.get(id)
            if (d !== undefined) {
              return Option.some({ id: d.id, state: d.state, markedForDeletion: d.markedForDeletion })
            }
          }
          return Option.none()
        }),
      browser: (id) =>
        Effect.sync(() => {
          for (const org of organizations.values()) {
            const b = org.browsers.get(id)
            if (b !== undefined) return Option.some({ id: b.id, mouse: { ...b.mouse }, cursorHidden: b.cursorHidden })
          }
          return Option.none()
        })
    }
    return { handle, control }
  })

const routeOrUndefined = (method: string, segments: ReadonlyArray<string>): Sim.Route | undefined => {
  const route = routeOf(method, segments)
  return route === "wrong-method" ? undefined : route
}

const parseJson = (body: Uint8Array | undefined): Option.Option<unknown> => {
  if (body === undefined || body.length === 0) return Option.none()
  try {
    return Option.some(JSON.parse(new TextDecoder().decode(body)))
  } catch {
    return Option.none()
  }
}

const codeFor = (status: number): string => {
  switch (status) {
    case 400:
      return "bad_request"
    case 401:
      return "unauthorized"
    case 403:
      return "forbidden"
    case 404:
      return "not_found"
    case 409:
      return "conflict"
    case 429:
      return "rate_limited"
    default:
      return status >= 500 ? "internal_error" : "error"
  }
}

const encodePool = (pool: Sim.PoolSeed) => ({
  id: pool.id,
  ...(pool.name === undefined ? {} : { name: pool.name }),
  available_count: pool.available_count ?? pool.browser_pool_config?.size ?? 1,
  acquired_count: pool.acquired_count ?? 0,
  created_at: pool.created_at ?? "2026-01-01T00:00:00Z",
  browser_pool_config: { size: 1, ...pool.browser_pool_config }
})
