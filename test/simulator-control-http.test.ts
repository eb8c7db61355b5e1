/**
 * Faults acted out over HTTP, as a hostile client injects them through the control plane (one served
 * simulator for the file).
 */
import { Cause, Effect, Exit, Fiber, Layer, Redacted, Scope, Stream } from "effect"
import { Browsers, Filesystem, FilesystemWatch, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const token = KernelSimulator.defaultToken
const scope = Effect.runSync(Scope.make())
let served: KernelSimulator.Served
let admin = ""

beforeAll(async () => {
  served = await Effect.runPromise(Scope.extend(KernelSimulator.serve({ port: 0 }), scope))
  admin = Redacted.value(served.adminToken)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

/** What comes back on one connection for one request, until the server closes or `ms` pass. */
const exchange = (path: string, ms = 1500) =>
  new Promise<string>((resolve) => {
    const target = new URL(served.url)
    const socket = Net.connect(Number(target.port), target.hostname)
    let text = ""
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve(text)
    }
    const timer = setTimeout(finish, ms)
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")))
    socket.on("close", finish)
    socket.on("error", finish)
    socket.write(`GET ${path} HTTP/1.1\r\nhost: sim\r\nauthorization: Bearer ${token}\r\n\r\n`)
  })

const inject = async (fault: Record<string, unknown>) => {
  const response = await fetch(`${served.url}/_simulator/faults`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ ...fault, times: 1 })
  })
  expect(response.status).toBe(201)
}

/** The head of an answer: its status and its headers, each name in lower case with its values. */
const headOf = (text: string) => {
  const [head = ""] = text.split("\r\n\r\n")
  const [line = "", ...fields] = head.split("\r\n")
  const headers = new Map<string, Array<string>>()
  for (const field of fields) {
    const at = field.indexOf(":")
    const name = field.slice(0, at).toLowerCase()
    headers.set(name, [...(headers.get(name) ?? []), field.slice(at + 1).trim()])
  }
  return { status: Number(line.split(" ")[1]), headers, body: text.slice(head.length + 4) }
}

describe("a body cut at 0 bytes sends the head (it sent nothing, unlike in memory)", () => {
  for (const cut of ["truncateAt", "stallAt", "resetAt"]) {
    it(`${cut}: 0`, async () => {
      await inject({ route: "listBrowsers", [cut]: 0 })
      const answer = headOf(await exchange("/browsers"))
      expect(answer.status).toBe(200)
      expect(Number(answer.headers.get("content-length")?.[0])).toBeGreaterThan(0)
      expect(answer.body).toBe("")
    })
  }
})

describe("a fault's headers", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly fault: Record<string, unknown>
    readonly check: (answer: ReturnType<typeof headOf>) => void
  }> = [
    {
      name: "replace the answer's of the same name in another case (two content-types were sent)",
      fault: { route: "listBrowsers", status: 503, headers: { "Content-Type": "text/plain" } },
      check: (answer) => expect(answer.headers.get("content-type")).toEqual(["text/plain"])
    },
    {
      name: "are added to the real answer when no status is injected (they were dropped)",
      fault: { route: "listBrowsers", headers: { "X-Extra": "1" } },
      check: (answer) => {
        expect(answer.status).toBe(200)
        expect(answer.headers.get("x-extra")).toEqual(["1"])
      }
    },
    {
      name: "an injected 204 with a body says no content-length (it said the body's length)",
      fault: { route: "listBrowsers", status: 204, body: "abc" },
      check: (answer) => {
        expect(answer.status).toBe(204)
        expect(answer.headers.has("content-length")).toBe(false)
      }
    },
    {
      // review 87: it said `content-type: application/json` (the error body it does not send)
      name: "an injected 204 says no content type, unless the fault names one",
      fault: { route: "listBrowsers", status: 204 },
      check: (answer) => {
        expect(answer.status).toBe(204)
        expect(answer.headers.has("content-type")).toBe(false)
        expect(answer.body).toBe("")
      }
    },
    {
      // RFC 9110 15.3.6: a server must not send content with a 205 (the injected body was sent)
      name: "an injected 205 with a body sends none, and says so (content-length: 0)",
      fault: { route: "listBrowsers", status: 205, body: "abc" },
      check: (answer) => {
        expect(answer.status).toBe(205)
        expect(answer.headers.get("content-length")).toEqual(["0"])
        expect(answer.body).toBe("")
      }
    },
    {
      name: "an injected 304 with a body sends none, nor the body's length (it said content-length: 3)",
      fault: { route: "listBrowsers", status: 304, body: "abc" },
      check: (answer) => {
        expect(answer.status).toBe(304)
        expect(answer.headers.has("content-length")).toBe(false)
        expect(answer.body).toBe("")
      }
    }
  ]
  for (const { check, fault, name } of cases) {
    it(name, async () => {
      await inject(fault)
      check(headOf(await exchange("/browsers")))
    })
  }
})

describe("a fault's cut acts on a live event stream, in memory and over HTTP", () => {
  // a watch's events: each directory made is an event (a frame of some 80 bytes)
  const events = (inject: (fault: KernelSimulator.Fault) => Effect.Effect<void>, fault: KernelSimulator.Fault) =>
    Effect.gen(function*() {
      const { watch_id } = yield* FilesystemWatch.start({ id: "browser_1", path: "/", recursive: true })
      yield* inject({ ...fault, times: 1 })
      const stream = yield* FilesystemWatch.events({ id: "browser_1", watchId: watch_id ?? "" })
      let received = 0
      const fiber = yield* Effect.fork(Stream.runForEach(stream, () => Effect.sync(() => received++)))
      // events for longer than the idle time-out: only a cut ends the stream while they come
      for (let i = 0; i < 20 && fiber.unsafePoll() === null; i++) {
        yield* Effect.sleep("50 millis")
        yield* Filesystem.createDirectory({ id: "browser_1", path: `/cut-${i}-${Math.random()}` })
      }
      const error = yield* Effect.flip(Fiber.join(fiber))
      return { error, received }
    })
  const config = { idleTimeout: "500 millis", maxRetries: 0 } as const
  const targets = [
    {
      name: "in memory",
      run: (fault: KernelSimulator.Fault) =>
        Effect.flatMap(KernelSimulator.KernelSimulator, (simulator) => events(simulator.injectFault, fault)).pipe(
          Effect.provide(
            Layer.provideMerge(Kernel.layer, KernelSimulator.layer(KernelSimulator.defaultSeed, { config }))
          )
        )
    },
    {
      name: "over HTTP",
      run: (fault: KernelSimulator.Fault) =>
        events(served.injectFault, fault).pipe(
          Effect.provide(
            Kernel.layer.pipe(
              Layer.provide(KernelConfig.layer({ ...config, apiKey: Redacted.make(token), baseUrl: served.url })),
              Layer.provide(KernelTransport.layerUndici),
              Layer.orDie
            )
          )
        )
    }
  ]
  const cuts: ReadonlyArray<readonly [KernelSimulator.Fault, string]> = [
    [{ route: "streamFilesystemEvents", truncateAt: 100 }, "TransportError"],
    [{ route: "streamFilesystemEvents", resetAt: 100 }, "TransportError"],
    [{ route: "streamFilesystemEvents", truncateAt: 0 }, "TransportError"],
    [{ route: "streamFilesystemEvents", stallAt: 100 }, "Timeout"]
  ]
  for (const target of targets) {
    for (const [fault, tag] of cuts) {
      it(`${target.name}: ${JSON.stringify(fault)} ends the stream with ${tag}`, async () => {
        const { error, received } = await Effect.runPromise(target.run(fault))
        expect(error).toMatchObject({ _tag: tag })
        // cut within the second event: at most the first one came through
        expect(received).toBeLessThanOrEqual(1)
      }, 10_000)
    }
  }
})

describe("an injected status that carries no content (204, 205, 304), in memory", () => {
  // a web `Response` refuses a body with these statuses: the in-memory answer made one for the fault's
  // `body` and the call died with the constructor's TypeError
  for (const status of [204, 205, 304]) {
    it(`${status} with a body is the answer's status, not a defect`, async () => {
      const exit = await Effect.runPromiseExit(
        Effect.gen(function*() {
          const simulator = yield* KernelSimulator.KernelSimulator
          yield* simulator.injectFault({ route: "listBrowsers", status, body: "abc", times: 1 })
          return yield* Browsers.list()
        }).pipe(
          Effect.provide(Layer.provideMerge(
            Kernel.layer,
            KernelSimulator.layer(KernelSimulator.defaultSeed, { config: { maxRetries: 0 } })
          ))
        )
      )
      expect(Exit.isFailure(exit) && Cause.isFailType(exit.cause) ? exit.cause.error : exit).toMatchObject({
        _tag: "UnexpectedStatus",
        status
      })
    })
  }
})
