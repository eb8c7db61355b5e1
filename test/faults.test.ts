import { FetchHttpClient, type FileSystem } from "@effect/platform"
import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
import type { PlatformError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import {
  BrowserPools,
  Computer,
  Deployments,
  Kernel,
  KernelClient,
  KernelConfig,
  type KernelError,
  Replays
} from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as util from "node:util"
import { type Operation, renderTable, type Row, rows } from "./utils/faultMatrix.js"
import { makeObserver } from "./utils/observe.js"
import { transports } from "./utils/transports.js"

const sentinel = "sk_SENTINEL_d41d8cd98f00b204e9800998ecf8427e"

const seed: KernelSimulator.Seed = {
  organizations: [{
    id: "org_matrix",
    token: sentinel,
    browsers: [{
      id: "browser_1",
      mouse: { x: 3, y: 4 },
      replays: [{ id: "ready", size: 256 * 1024 }, { id: "forever", pendingPolls: 1e9, retryAfter: 1 }]
    }],
    pools: [{ id: "pool_1" }, { id: "pool_2" }],
    deployments: [{ id: "dep_1", state: "running" }]
  }]
}

const run = (
  operation: Operation,
  row: Row,
  file: string
): Effect.Effect<unknown, KernelError.KernelError | PlatformError, Kernel.Services | FileSystem.FileSystem> => {
  switch (operation) {
    case "downloadReplay":
      return Replays.downloadToFile(
        { id: "browser_1", replayId: row.replay ?? "ready" },
        file,
        row.download?.maxWait === undefined ? {} : { maxWait: row.download.maxWait }
      )
    case "getMousePosition":
      return Computer.getMousePosition({ id: "browser_1" })
    case "setCursorVisibility":
      return Computer.setCursorVisibility({ id: "browser_1", hidden: true })
    case "listBrowserPools":
      return BrowserPools.list()
    case "deleteDeployment":
      return Deployments.delete({ id: "dep_1" })
  }
}

const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 1
      server.close(() => resolve(port))
    })
  })

const headerValue = (value: string): string => {
  const date = /^HTTP-DATE\+(\d+)$/.exec(value)
  return date ? new Date(Date.now() + Number(date[1]) * 1000).toUTCString() : value
}

describe("fault matrix (over loopback HTTP, sentinel token)", () => {
  it("has at least 25 distinct faults", () => {
    expect(new Set(rows.map((r) => r.fault)).size).toBe(rows.length)
    expect(rows.length).toBeGreaterThanOrEqual(25)
  })

  it("docs/reliability.md shows exactly this matrix", () => {
    const doc = fs.readFileSync("docs/reliability.md", "utf8")
    const table = /<!-- faults:start -->\n([\s\S]*?)\n?<!-- faults:end -->/.exec(doc)?.[1]
    expect(table, "run `npm run docs:faults` to regenerate the table").toBe(renderTable())
  })

  // every row on every transport (the redirect rows name theirs)
  const cases = transports.flatMap((transport) =>
    rows.flatMap((row, i) =>
      row.special === "redirect-undici" || row.special === "redirect-fetch"
        ? transport === transports[0] ? [[i + 1, `${row.fault}`, row, transport.layer] as const] : []
        : [[i + 1, `${row.fault} [${transport.name}]`, row, transport.layer] as const]
    )
  )
  it.live.each(cases)("%i. %s", ([, , row, transportLayer]) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kernel-fault-"))
    const file = path.join(dir, "replay.mp4")
    const observer = makeObserver()
    return Effect.gen(function*() {
      const served = yield* KernelSimulator.serve({ seed })
      const other = yield* KernelSimulator.serve({ seed })
      for (const fault of row.faults ?? []) {
        const headers = Object.fromEntries(Object.entries(fault.headers ?? {}).map(([k, v]) => [k, headerValue(v)]))
        yield* served.injectFault({ ...fault, headers })
      }
      let baseUrl = served.url
      if (row.special === "refused") baseUrl = `http://127.0.0.1:${yield* Effect.promise(closedPort)}`
      if (row.special === "redirect-undici" || row.special === "redirect-fetch") {
        yield* served.injectFault({
          route: "getMousePosition",
          status: 307,
          headers: { location: `${other.url}/browsers/browser_1/computer/get_mouse_position` }
        })
      }
      const transport = row.special === "redirect-fetch"
        ? FetchHttpClient.layer
        : row.special === "redirect-undici"
        ? NodeHttpClient.layerUndici
        : transportLayer
      const config = KernelConfig.layer({ ...row.config, apiKey: Redacted.make(sentinel), baseUrl })
      const KernelLive = Kernel.layer.pipe(Layer.provide(config), Layer.provide(transport))

      const started = Date.now()
      const exit = yield* run(row.operation, row, file).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => "hang" as const }),
        Effect.provide(KernelLive),
        Effect.provide(NodeFileSystem.layer),
        Effect.provide(observer.layer),
        Effect.exit
      )
      const elapsed = Date.now() - started

      // never a defect, never a hang, exactly the promised outcome
      if (Exit.isFailure(exit)) {
        expect(Cause.isDie(exit.cause), Cause.pretty(exit.cause)).toBe(false)
        expect(Cause.isInterruptedOnly(exit.cause)).toBe(false)
      }
      const outcome = Exit.match(exit, {
        onSuccess: () => "success",
        onFailure: (cause) =>
          Option.match(Cause.failureOption(cause), {
            onNone: () => "no failure",
            onSome: (error) => typeof error === "string" ? error : error._tag
          })
      })
      expect(outcome).toBe(row.outcome)
      if (Exit.isFailure(exit)) {
        const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
        if (row.fields !== undefined) expect(error).toMatchObject(row.fields)
        for (const [field, text] of Object.entries(row.contains ?? {})) {
          expect(error).toHaveProperty(field, expect.stringContaining(text))
        }
      }
      if (row.requests !== undefined) expect((yield* served.requests).length).toBe(row.requests)
      if (row.atLeastMs !== undefined) expect(elapsed).toBeGreaterThanOrEqual(row.atLeastMs)

      // downloadToFile: the file is complete, or absent; never a partial file
      if (row.operation === "downloadReplay") {
        const left = fs.readdirSync(dir)
        if (Exit.isSuccess(exit)) {
          expect(left).toEqual(["replay.mp4"])
          expect(fs.statSync(file).size).toBe(256 * 1024)
        } else {
          expect(left).toEqual([])
        }
      }

      const seen = yield* other.requests
      // no transport follows a redirect: the other origin sees nothing, token or not
      if (row.special === "redirect-undici" || row.special === "redirect-fetch") expect(seen).toHaveLength(0)

      // the token leaks nowhere: errors, their printing and serialisation, logs, spans
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      const texts = [observer.dump(), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""]
      if (Option.isSome(failure)) {
        const error = failure.value
        texts.push(String(error), JSON.stringify(error), util.inspect(error, { depth: 10 }))
        if (typeof error !== "string") texts.push(error.message)
        if (error !== "hang" && "message" in error) expect(error.message.length).toBeLessThan(70_000)
      }
      for (const text of texts) {
        const at = text.indexOf(sentinel)
        expect(at, `token found in: ${text.slice(Math.max(0, at - 1500), at + 60)}`).toBe(-1)
      }
      expect(observer.spans.some((s) => s.name.startsWith("Kernel."))).toBe(true)
    }).pipe(
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    )
  }, 30_000)
})

describe("secrets", () => {
  it.live("inspecting the configuration and the client never shows the token", () =>
    Effect.gen(function*() {
      const client = yield* KernelClient.KernelClient
      for (
        const text of [util.inspect(client, { depth: 10 }), String(client.config.apiKey), JSON.stringify(client.config)]
      ) {
        expect(text).not.toContain(sentinel)
      }
    }).pipe(
      Effect.provide(
        Kernel.layer.pipe(
          Layer.provide(KernelConfig.layer({ apiKey: Redacted.make(sentinel) })),
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
    ))
})
