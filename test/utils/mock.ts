import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Effect, Layer, Redacted } from "effect"
import { Kernel, KernelConfig } from "effect-kernel"

export const token = "sk_test_SENTINEL_9f8e7d6c5b4a"

export interface Recorded {
  readonly method: string
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

export type Handler = (
  recorded: Recorded,
  request: HttpClientRequest.HttpClientRequest,
  attempt: number,
  signal: AbortSignal
) => Response | Effect.Effect<Response, HttpClientError.HttpClientError>

/** A transport that answers with `handler` and records every request it sees. */
export const mockTransport = (handler: Handler) => {
  const requests: Array<Recorded> = []
  const client = HttpClient.make((request, url, signal) =>
    Effect.suspend(() => {
      const recorded: Recorded = {
        method: request.method,
        url,
        headers: request.headers,
        body: request.body._tag === "Uint8Array" ? new TextDecoder().decode(request.body.body) : undefined
      }
      requests.push(recorded)
      const answer = handler(recorded, request, requests.length, signal)
      return Effect.map(
        Effect.isEffect(answer) ? answer : Effect.succeed(answer),
        (response) => HttpClientResponse.fromWeb(request, response)
      )
    })
  )
  return { client, requests }
}

/** `Kernel.layer` over a mock transport. */
export const mockLayer = (handler: Handler, options: Partial<KernelConfig.Options> = {}) => {
  const { client, requests } = mockTransport(handler)
  const layer = Kernel.layer.pipe(
    Layer.provide(
      KernelConfig.layer({ apiKey: Redacted.make(token), baseUrl: "https://kernel.test", ...options })
    ),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client)),
    Layer.orDie
  )
  return { layer, requests }
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

export const errorBody = (code: string, message: string) => ({ code, message })

export const connectionRefused = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.fail(
    new HttpClientError.RequestError({
      request,
      reason: "Transport",
      cause: new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })
      })
    })
  )

export const pool = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: `pool-${id}`,
  available_count: 3,
  acquired_count: 1,
  created_at: "2026-01-02T03:04:05Z",
  browser_pool_config: {
    size: 4,
    name: `pool-${id}`,
    fill_rate_per_minute: 10,
    timeout_seconds: 600,
    stealth: true,
    headless: false,
    profile: { id: "prof", name: "profile", save_changes: false },
    extensions: [{ id: "ext", name: "extension" }],
    proxy_id: "proxy",
    viewport: { width: 1920, height: 1080, refresh_rate: 25 },
    kiosk_mode: false,
    chrome_policy: { HomepageLocation: "https://example.com", Nested: { a: [1, 2] } }
  },
  ...extra
})

/** Lets forked fibers run until they block on the (test) clock. */
export const settle = Effect.repeatN(Effect.yieldNow(), 50)
