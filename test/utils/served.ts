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
