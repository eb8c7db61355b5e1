/**
 * A server (or a proxy) that echoes the request's `Authorization`: into an answer the transport
 * cannot parse (undici keeps those bytes in its error's `data`, which the `TransportError` keeps as
 * its cause), or into response headers the platform's `http.client` span records by name (a debug
 * header, a `Location`). The token must not be in any way a program shows the failure, nor in an
 * exported span attribute, on any transport.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { Browsers, Kernel, KernelConfig } from "effect-kernel"
import * as util from "node:util"
import { afterAll, beforeAll } from "vitest"
import { httpServer, rawServer } from "./utils/loopback.js"
import { makeObserver } from "./utils/observe.js"
import { transports } from "./utils/transports.js"

const TOKEN = "sk_SENTINEL_echoed_4711"
let port = 0
let echoPort = 0
const scope = Effect.runSync(Scope.make())
beforeAll(async () => {
  const served = await Effect.runPromise(Scope.extend(
    Effect.zip(
      rawServer(({ head, socket }) => {
        const authorization = /^authorization: (.*)$/im.exec(head)?.[1] ?? ""
        // a status line no parser takes, quoting what the request carried
        socket.end(`HTTP/1.1 2x0 ${authorization}\r\n\r\n`)
      }),
      httpServer((request, response) => {
        const authorization = String(request.headers.authorization)
        response.writeHead(409, {
          "content-type": "application/json",
          "x-debug-echo": authorization,
          "retry-after": authorization
        }).end(JSON.stringify({ code: "conflict", message: "echo" }))
      })
    ),
    scope
  ))
  port = served[0].port
  echoPort = Number(new URL(served[1].url).port)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

/** Every way a program shows a failure: the exit's, and the error's own `util.inspect` (its `cause` too). */
const shown = (exit: Exit.Exit<unknown, unknown>): string => {
  const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
  return [
    String(exit),
    JSON.stringify(exit),
    util.inspect(exit, { depth: 20, showHidden: true }),
    Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "",
    util.inspect(error),
    util.inspect(error, { depth: 20, showHidden: true })
  ].join("\n")
}

describe("a token echoed into an answer no parser takes", () => {
  it.effect.each([...transports, { name: "node", layer: NodeHttpClient.layer }])(
    "$name: a TransportError, the token nowhere in it",
    ({ layer }) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Browsers.retrieve({ id: "b1" }))
        expect(exit).toMatchObject({ _tag: "Failure" })
        expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toMatchObject({
          value: { _tag: "TransportError" }
        })
        expect(shown(exit)).not.toContain("SENTINEL")
      }).pipe(
        Effect.provide(Kernel.layer.pipe(
          Layer.provide(KernelConfig.layer({
            apiKey: Redacted.make(TOKEN),
            baseUrl: `http://127.0.0.1:${port}`,
            maxRetries: 0
          })),
          Layer.provide(layer)
        ))
      )
  )
})

describe("a token echoed into response headers", () => {
  it.effect.each([...transports, { name: "node", layer: NodeHttpClient.layer }])(
    "$name: no span attribute holds it (the header still recorded, its value redacted)",
    ({ layer }) => {
      const observer = makeObserver()
      return Effect.gen(function*() {
        const exit = yield* Effect.exit(Browsers.retrieve({ id: "b1" }))
        expect(exit).toMatchObject({ _tag: "Failure" })
        const http = observer.spans.find((span) => span.name.startsWith("http.client"))
        expect(http?.attributes.get("http.response.header.x-debug-echo")).toBe("Bearer <redacted>")
        expect(observer.dump()).not.toContain("SENTINEL")
      }).pipe(
        Effect.provide(Kernel.layer.pipe(
          Layer.provide(KernelConfig.layer({
            apiKey: Redacted.make(TOKEN),
            baseUrl: `http://127.0.0.1:${echoPort}`,
            maxRetries: 0
          })),
          Layer.provide(layer)
        )),
        Effect.provide(observer.layer)
      )
    }
  )
})
