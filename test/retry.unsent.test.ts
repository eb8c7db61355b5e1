/**
 * A connection that fails before the request was written is "never reached the server" whatever its
 * error code: a TLS handshake reset (`ECONNRESET` before a byte of HTTP was written) on an operation
 * that is not idempotent. `KernelTransport` knows undici never took the request (its `onConnect`,
 * called as it starts writing, never came) and retries it like a refused connection; it did not
 * (only the codes of a connection never made were). The platform's transports cannot tell a reset in
 * the handshake from a reset after the request was written: one attempt, never a second action.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { Browsers, Computer, Kernel, KernelConfig } from "effect-kernel"
import * as net from "node:net"
import { transports } from "./utils/transports.js"

/** A TCP server that resets every connection as soon as it is made (in the client's TLS handshake). */
const resetting = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly server: net.Server; readonly connections: () => number }>(
    (resume) => {
      let connections = 0
      const server = net.createServer((socket) => {
        connections++
        socket.on("error", () => {})
        socket.resetAndDestroy()
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ port, server, connections: () => connections }))
      })
    }
  ),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

const calls: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, Kernel.Services>]> = [
  ["Browsers.create", Browsers.create({})],
  ["Computer.clickMouse", Computer.clickMouse({ id: "b1", x: 1, y: 2 })]
]

describe.each(transports)("a TLS handshake reset on $name", (transport) => {
  const attempts = transport.name === "kernel" ? 3 : 1
  for (const [name, call] of calls) {
    it.live(`${name} (not idempotent): ${attempts} attempt(s)`, () =>
      Effect.gen(function*() {
        const server = yield* resetting
        const layer = Kernel.layer.pipe(
          Layer.provide(KernelConfig.layer({
            apiKey: Redacted.make("sk_unsent_test"),
            baseUrl: `https://127.0.0.1:${server.port}`,
            maxRetries: 2,
            timeout: "5 seconds"
          })),
          Layer.provide(transport.layer),
          Layer.orDie
        )
        const exit = yield* Effect.exit(Effect.provide(call, layer))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(server.connections()).toBe(attempts)
      }).pipe(Effect.scoped), 20_000)
  }
})
