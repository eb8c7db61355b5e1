/**
 * Review 76: every error of an operation names its call (`at Kernel.<operation> (...)` in its stack) and
 * holds no API key a server echoed, on every path a stream takes (a download refused at its head, a
 * profile's download, a list's pages), and a salvaged Error body's excerpt keeps its own code.
 * Each case failed before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as Sdk from "effect-kernel"
import { Browsers, Computer, type Kernel, KernelTransport, Profiles } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import { examples } from "./generated/examples.js"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"

const served = fileHttpServer((request, response) => {
  request.resume()
  const authorization = String(request.headers.authorization)
  if (request.url?.includes("/computer/screenshot")) {
    // a download refused at its head, its content type echoing the key
    response.writeHead(200, { "content-type": `text/html; echo="${authorization}"` }).end("<p>no</p>")
    return
  }
  if (request.url?.startsWith("/profiles/")) {
    // a profile whose body goes silent after its first bytes
    response.writeHead(200, { "content-type": "application/octet-stream" })
    response.write(new Uint8Array([1, 2, 3]))
    return
  }
  if (request.url?.startsWith("/browsers?")) {
    // a page that says more follow, without where
    response.writeHead(200, { "content-type": "application/json", "x-has-more": "true" }).end("[]")
    return
  }
  // an Error body whose details do not fit, salvaged: its code and message
  response.writeHead(418, { "content-type": "application/json" }).end(
    JSON.stringify({ code: "quota_exceeded", message: "too many browsers", details: "see dashboard" })
  )
})

const layer = () => loopbackLayer(served.port(), KernelTransport.layerUndici, { idleTimeout: "300 millis" })
const secondLine = (error: unknown) => error instanceof Error ? error.stack?.split("\n")[1] : undefined

describe("a stream's failures name their call, without the key", () => {
  it.effect("a download refused at its head", () =>
    Effect.gen(function*() {
      const error = yield* Computer.captureScreenshot({ id: "b1" }).pipe(
        Effect.flatMap(Stream.runDrain),
        Effect.flip
      )
      expect(error._tag).toBe("DecodeError")
      expect(`${error.message}\n${error.stack}`).not.toContain("SENTINEL")
      expect(secondLine(error)).toBe("    at Kernel.captureScreenshot (POST /browsers/b1/computer/screenshot)")
    }).pipe(Effect.provide(layer())))

  it.live("a profile's download gone silent", () =>
    Effect.gen(function*() {
      const outcome = yield* Profiles.download({ idOrName: "p1" })
      const error = yield* outcome._tag === "Ok" ? Effect.flip(Stream.runDrain(outcome.value)) : Effect.die("no body")
      expect(error._tag).toBe("Timeout")
      expect(secondLine(error)).toBe("    at Kernel.downloadProfile (GET /profiles/p1/download)")
    }).pipe(Effect.provide(layer())), 10_000)

  it.effect("a list's pages that cannot go on", () =>
    Effect.gen(function*() {
      const error = yield* Browsers.listAll({ limit: 2 }).pipe(Stream.runDrain, Effect.flip)
      expect(error._tag).toBe("DecodeError")
      expect(secondLine(error)).toBe("    at Kernel.listBrowsers (GET /browsers)")
    }).pipe(Effect.provide(layer())))
})

describe("an undocumented status's excerpt", () => {
  it.effect("of a salvaged Error body keeps its own code", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "b1" }))
      expect(error).toMatchObject({ _tag: "UnexpectedStatus", code: "quota_exceeded" })
      expect(error._tag === "UnexpectedStatus" ? error.body : "").toBe(
        JSON.stringify({ code: "quota_exceeded", message: "too many browsers", details: "see dashboard" })
      )
    }).pipe(Effect.provide(layer())))
})

// the API reference's examples are the generated params: those of an archive's upload run as written
describe("the examples of an archive's upload", () => {
  const seed = { organizations: [{ id: "o", token: KernelSimulator.defaultToken, browsers: [{ id: "id" }] }] }
  for (const name of ["uploadExtension", "uploadZip", "loadBrowserExtensions"]) {
    it.effect(`${name}, as generated: answered`, () =>
      Effect.gen(function*() {
        const example = examples.find((each) => each.name === name)!
        const accessor: unknown = Reflect.get(Reflect.get(Sdk, example.module) as object, example.accessor)
        if (typeof accessor !== "function") throw new Error(`${example.module}.${example.accessor}`)
        const exit = yield* Effect.exit(accessor(example.params) as Effect.Effect<unknown, unknown, Kernel.Services>)
        expect(exit._tag, String(exit)).toBe("Success")
      }).pipe(Effect.provide(Sdk.Kernel.layer.pipe(Layer.provide(KernelSimulator.layer(seed))))))
  }
})
