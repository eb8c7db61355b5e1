/**
 * The document's `oneOf` of `required` lists ("provide either id or name"): a request that gives both
 * is `InvalidInput`, nothing sent (the service refuses it; the union alone took its first member and
 * sent both), while an answer holding both still decodes (answers are read as they come).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AuthConnections,
  BrowserPools,
  Browsers,
  Deployments,
  Kernel,
  KernelError,
  KernelTransport
} from "effect-kernel"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"

let received: Array<string> = []
const pool = {
  id: "pool_1",
  available_count: 1,
  acquired_count: 0,
  created_at: "2026-01-01T00:00:00Z",
  browser_pool_config: { size: 1, profile: { id: "prof_1", name: "shared" }, extensions: [{ id: "e", name: "e" }] }
}
const served = fileHttpServer((request, response) => {
  received.push(`${request.method} ${request.url}`)
  request.resume()
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify(pool))
  })
})

const layer = () => loopbackLayer(served.port(), KernelTransport.layerUndici)

type Services = Layer.Layer.Success<typeof Kernel.layer>
interface Row {
  readonly call: string
  readonly run: Effect.Effect<unknown, unknown, Services>
  readonly message?: string
}

const zip = new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)])
const source = { type: "github", url: "https://github.com/a/b", ref: "main", entrypoint: "index.ts" } as const

describe("oneOf: exactly one of id or name", () => {
  it.effect.each<Row>([
    {
      call: "Browsers.create, a profile by id and name",
      run: Browsers.create({ profile: { id: "prof_1", name: "shared" } }),
      message: "profile: exactly one of id or name"
    },
    {
      call: "Browsers.create, an extension by id and name",
      run: Browsers.create({ extensions: [{ id: "ext_1" }, { id: "ext_2", name: "two" }] }),
      message: "extensions.1: exactly one of id or name"
    },
    {
      call: "Browsers.update, a profile by id and name",
      run: Browsers.update({ id: "b1", profile: { id: "prof_1", name: "shared" } }),
      message: "profile: exactly one of id or name"
    },
    {
      call: "BrowserPools.create, a profile by id and name",
      run: BrowserPools.create({ size: 1, profile: { id: "prof_1", name: "shared" } }),
      message: "profile: exactly one of id or name"
    },
    {
      call: "AuthConnections.create, a proxy by id and name",
      run: AuthConnections.create({ domain: "example.com", profile_name: "p", proxy: { id: "px", name: "px" } }),
      message: "proxy: exactly one of id or name"
    },
    {
      call: "AuthConnections.login, a proxy by id and name",
      run: AuthConnections.login({ id: "c1", proxy: { id: "px", name: "px" } }),
      message: "proxy: exactly one of id or name"
    },
    {
      call: "Deployments.create, a file and a source",
      run: Deployments.create({ file: zip, entrypoint_rel_path: "index.ts", source }),
      message: "exactly one of file with entrypoint_rel_path or source"
    }
  ])("$call: InvalidInput, nothing sent", ({ message, run }) =>
    Effect.gen(function*() {
      received = []
      const error = yield* Effect.flip(run)
      expect(error).toBeInstanceOf(KernelError.InvalidInput)
      expect(String(error)).toContain(message ?? "")
      expect(received).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.effect.each<Row>([
    { call: "a profile by id", run: Browsers.create({ profile: { id: "prof_1" } }) },
    { call: "a profile by name", run: Browsers.create({ profile: { name: "shared", save_changes: true } }) },
    { call: "extensions each by one", run: Browsers.create({ extensions: [{ id: "ext_1" }, { name: "two" }] }) },
    { call: "a deployment's source alone", run: Deployments.create({ source, entrypoint_rel_path: "index.ts" }) },
    { call: "a deployment's file alone", run: Deployments.create({ file: zip, entrypoint_rel_path: "index.ts" }) }
  ])("$call: sent", ({ run }) =>
    Effect.gen(function*() {
      received = []
      yield* Effect.either(run)
      expect(received).toHaveLength(1)
    }).pipe(Effect.provide(layer())))

  it.effect("an answer with both (a pool's configuration) decodes as it comes", () =>
    Effect.gen(function*() {
      const answer = yield* BrowserPools.retrieve({ idOrName: "pool_1" })
      expect(answer.browser_pool_config.profile).toEqual({ id: "prof_1", name: "shared" })
      expect(answer.browser_pool_config.extensions).toEqual([{ id: "e", name: "e" }])
    }).pipe(Effect.provide(layer())))
})
