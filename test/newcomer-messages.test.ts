/**
 * The messages a newcomer meets on a common mistake say what happened and where: an undocumented
 * status names itself and its request (a stray `/v1` in the base URL shows), a secret given as plain
 * text says to wrap it, and a body gone silent names `idleTimeout`, not `timeout`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Stream } from "effect"
import { BrowserPools, Computer, Credentials, KernelError, KernelTransport, Replays } from "effect-kernel"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"

const served = fileHttpServer((request, response) => {
  request.resume()
  if (request.url?.startsWith("/v1/")) {
    response.writeHead(404, { "content-type": "application/json" })
    response.end(JSON.stringify({ code: "not_found", message: "no such route in the Kernel API" }))
    return
  }
  // a screenshot whose body stops after its first bytes
  response.writeHead(200, { "content-type": "image/png" })
  response.write(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))
})

const layer = (path = "") =>
  loopbackLayer(served.port(), KernelTransport.layerUndici, {
    baseUrl: `http://127.0.0.1:${served.port()}${path}`,
    idleTimeout: "300 millis"
  })

describe("messages a newcomer meets", () => {
  // the message is the server's; the stack (what Cause.pretty and an uncaught error's report print under it)
  // names the call, without tracing
  it.effect("a documented error's report names the call that failed", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Computer.getMousePosition({ id: "browser_typo" }))
      expect(Exit.isFailure(exit)).toBe(true)
      const pretty = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
      expect(pretty).toBe(
        "NotFound: no such route in the Kernel API\n" +
          "    at Kernel.getMousePosition (POST /v1/browsers/browser_typo/computer/get_mouse_position)"
      )
    }).pipe(Effect.provide(layer("/v1"))))

  it.effect("an undocumented status says which, on which request", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(BrowserPools.list())
      expect(error).toBeInstanceOf(KernelError.UnexpectedStatus)
      expect(error.message).toBe("HTTP 404 on GET /v1/browser_pools: no such route in the Kernel API")
    }).pipe(Effect.provide(layer("/v1"))))

  it.effect("a secret given as plain text: InvalidInput that says to wrap it, without the value", () =>
    Effect.gen(function*() {
      const params: unknown = JSON.parse(
        "{\"name\":\"c\",\"domain\":\"d.com\",\"values\":{\"password\":\"plain-secret\"}}"
      )
      const error = yield* Effect.flip(Credentials.create(params as Credentials.CreateCredentialParams))
      expect(error).toBeInstanceOf(KernelError.InvalidInput)
      expect(error.message).toContain("wrap the secret in Redacted.make(...)")
      expect(String(error)).not.toContain("plain-secret")
    }).pipe(Effect.provide(layer())))

  // live: the idle timer runs on the real clock
  it.live("a body gone silent names idleTimeout", () =>
    Effect.gen(function*() {
      const error = yield* Computer.captureScreenshot({ id: "b1" }).pipe(
        Effect.flatMap((bytes) => Stream.runDrain(bytes)),
        Effect.flip
      )
      expect(error).toBeInstanceOf(KernelError.Timeout)
      expect(error).toMatchObject({ _tag: "Timeout", idle: true })
      expect(error.message).toBe("POST /browsers/b1/computer/screenshot received no byte for 300ms (idleTimeout)")
      // a failure of the body, after the head, names its call too
      expect(error.stack).toBe(
        `Timeout: ${error.message}\n    at Kernel.captureScreenshot (POST /browsers/b1/computer/screenshot)`
      )
      // and a replay's, whose body goes silent alike
      const replay = yield* Replays.download({ id: "b1", replayId: "r1" }).pipe(Stream.runDrain, Effect.flip)
      expect(replay.stack?.split("\n")[1]).toBe("    at Kernel.downloadReplay (GET /browsers/b1/replays/r1)")
    }).pipe(Effect.provide(layer())), 10_000)
})
