import type { HttpClient } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { Kernel, KernelConfig } from "effect-kernel"
import * as Http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll } from "vitest"

/** What the loopback server saw of one request, and the socket to answer on. */
export interface Exchange {
  readonly head: string
  readonly path: string
  readonly socket: net.Socket
}

/**
 * A raw TCP server on 127.0.0.1 (ephemeral port): `answer` writes whatever bytes it wants for
 * each request head. Connections are tracked so tests can count them.
 */
export const rawServer = (answer: (exchange: Exchange) => void) =>
  Effect.acquireRelease(
    Effect.async<
      { readonly port: number; readonly server: net.Server; readonly open: () => number; readonly opened: () => number }
    >((resume) => {
      const sockets = new Set<net.Socket>()
      let opened = 0
      const server = net.createServer((socket) => {
        opened++
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => {})
        let seen = ""
        socket.on("data", (data) => {
          seen += data.toString("latin1")
          const end = seen.indexOf("\r\n\r\n")
          if (end < 0) return
          const head = seen.slice(0, end)
          seen = seen.slice(end + 4)
          const path = head.split(" ")[1] ?? ""
          answer({ head, path, socket })
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        resume(Effect.succeed({ port, server, open: () => sockets.size, opened: () => opened }))
      })
      ;(server as net.Server & { sockets?: Set<net.Socket> }).sockets = sockets
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        ;(server as net.Server & { sockets?: Set<net.Socket> }).sockets?.forEach((s) => s.destroy())
        server.close(() => resume(Effect.void))
      })
  )

export const head = (status: string, headers: Record<string, string | number> = {}): string =>
  `HTTP/1.1 ${status}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`

/** `Kernel.layer` (and a file system) over a transport, against the loopback server. */
export const loopbackLayer = (
  port: number,
  transport: Layer.Layer<HttpClient.HttpClient>,
  options: Partial<KernelConfig.Options> = {}
) =>
  Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make("sk_SENTINEL_loopback_4242"),
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 0,
      timeout: "5 seconds",
      idleTimeout: "5 seconds",
      ...options
    })),
    Layer.provide(transport),
    Layer.merge(NodeFileSystem.layer),
    Layer.orDie
  )

/**
 * Polls `condition` until it holds or ~10 s have passed (a loaded CI machine may take a while to
 * deliver a close), returning whether it holds.
 */
export const waitUntil = (condition: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500 && !condition(); i++) yield* Effect.sleep("20 millis")
    return condition()
  })

/** What a loopback `node:http` server saw: its URL, the sockets it accepted, those still open, the requests. */
export interface Served {
  readonly url: string
  readonly accepted: () => number
  readonly open: () => number
  readonly requests: () => number
}

/** A `node:http` server on 127.0.0.1 (ephemeral port) answering with `handler`, closed with the scope. */
export const httpServer = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.async<{ server: Http.Server; served: Served }>((resume) => {
      const sockets = new Set<net.Socket>()
      let requests = 0
      let accepted = 0
      const server = Http.createServer((req, res) => {
        requests++
        handler(req, res)
      })
      server.on("connection", (socket) => {
        accepted++
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({
          server,
          served: {
            url: `http://127.0.0.1:${port}`,
            open: () => sockets.size,
            accepted: () => accepted,
            requests: () => requests
          }
        }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ served }) => served))

/**
 * One `httpServer` for a whole test file: started before its tests, closed after them. `port()`
 * is its port once started, `open()` how many of its connections are open.
 */
export const fileHttpServer = (
  handler: Http.RequestListener
): { readonly port: () => number; readonly open: () => number } => {
  const scope = Effect.runSync(Scope.make())
  let port = 0
  let open = () => 0
  beforeAll(async () => {
    const served = await Effect.runPromise(Scope.extend(httpServer(handler), scope))
    port = Number(new URL(served.url).port)
    open = served.open
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return { port: () => port, open: () => open() }
}
