import { afterAll, beforeAll } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import * as Http from "node:http"

/** Runs `f` against a served simulator, closed afterwards. */
export const withServed = async <A>(
  options: KernelSimulator.ServeOptions,
  f: (served: KernelSimulator.Served & { readonly admin: string }) => Promise<A>
): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const served = await Effect.runPromise(Scope.extend(KernelSimulator.serve(options), scope))
    return await f({ ...served, admin: Redacted.value(served.adminToken) })
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export interface RawResponse {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
  /** Whether the server closed the connection after answering. */
  readonly closed: boolean
}

/** One request over a fresh connection, with `node:http` (no client-side checks on the path). */
export const raw = (
  url: string,
  options: {
    readonly method?: string
    readonly path: string
    readonly headers?: Record<string, string>
    readonly body?: string | Uint8Array
    /** Sends this many bytes of body in 64 KiB chunks, as fast as the server takes them. */
    readonly streamBytes?: number
  }
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const request = Http.request({
      host: target.hostname,
      port: target.port,
      method: options.method ?? "GET",
      path: options.path,
      headers: options.headers,
      agent: false
    })
    request.on("error", reject)
    request.on("response", (response) => {
      const parts: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => parts.push(chunk))
      response.on("end", () => {
        const closed = response.headers.connection === "close"
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(parts).toString(),
          closed
        })
        request.destroy()
      })
      response.on("error", reject)
    })
    if (options.streamBytes !== undefined) {
      const chunk = new Uint8Array(64 * 1024).fill(0x61)
      let left = options.streamBytes
      const pump = () => {
        while (left > 0 && !request.destroyed) {
          left -= chunk.length
          if (!request.write(chunk)) return void request.once("drain", pump)
        }
        if (!request.destroyed) request.end()
      }
      request.on("error", () => {})
      pump()
    } else {
      request.end(options.body)
    }
  })

/**
 * A JSON request to a simulator at `url` with the default token (or `headers.token`), its body framed by
 * its length (Node sends a DELETE's body unframed otherwise), the answer's JSON parsed (`undefined` when
 * empty). `headers` are sent as given, but for `token`.
 */
export const sendJson = async (
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
  // the answers' JSON, read field by field by the tests
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ readonly status: number; readonly json: Record<string, any> }> => {
  const text = body === undefined ? undefined : JSON.stringify(body)
  const answer = await raw(url, {
    method,
    path,
    headers: {
      authorization: `Bearer ${headers["token"] ?? KernelSimulator.defaultToken}`,
      ...(text === undefined
        ? {}
        : { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }),
      ...Object.fromEntries(Object.entries(headers).filter(([name]) => name !== "token"))
    },
    ...(text === undefined ? {} : { body: text })
  })
  return { status: answer.status, json: answer.body === "" ? undefined : JSON.parse(answer.body) }
}

/**
 * A JSON request to a simulator in memory (`KernelSimulator.make`, so on the `TestClock`) with the
 * default token; `path` may carry a query. The answer's status, text (a JSON or event-stream text, ""
 * for another body) and JSON (`undefined` when the text is empty or an event stream).
 */
export const handleJson = (simulator: KernelSimulator.Simulator, token = KernelSimulator.defaultToken) =>
(
  method: string,
  path: string,
  body?: unknown
) =>
  Effect.map(
    simulator.handle({
      method,
      path: path.split("?")[0]!,
      query: path.split("?")[1],
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      readBody: () =>
        Effect.succeed({
          _tag: "Read" as const,
          bytes: new TextEncoder().encode(body === undefined ? "" : JSON.stringify(body))
        })
    }),
    (response) => {
      const text = response.body._tag === "Text" ? response.body.text : ""
      const json = text === "" || !/^[[{"]/.test(text) ? undefined : JSON.parse(text)
      return { status: response.status, text, json }
    }
  )

/**
 * One served simulator (default seed, unless `options` give one) for a test file: started before its tests, stopped after them.
 * Its `url` is read in the tests (it is set once the file's `beforeAll` ran).
 */
export const servedForFile = (options: KernelSimulator.ServeOptions = {}): { readonly url: string } => {
  const served = { url: "" }
  let scope: Scope.CloseableScope | undefined
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    served.url = (await Effect.runPromise(Scope.extend(KernelSimulator.serve(options), scope))).url
  })
  afterAll(() => scope === undefined ? undefined : Effect.runPromise(Scope.close(scope, Exit.void)))
  return served
}
