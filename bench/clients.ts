/**
 * The clients the benchmark compares, each doing the same work against the same server.
 * The Effect SDK runs its loops inside Effect (as its users do), on a runtime built once.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import Kernel from "@onkernel/sdk"
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { fork } from "node:child_process"
import { request } from "undici"
import { inFlight } from "./inFlight.js"
import { loadSdk } from "./sdk.js"

// the built package, as users run it (bench/sdk.ts)
const { BrowserPools, Browsers, Computer, Kernel: EffectKernel, KernelConfig, KernelTransport, Replays } =
  await loadSdk()

export interface Client {
  readonly name: string
  /** `n` mouse-position calls, one after the other. */
  readonly sequential: (n: number) => Promise<void>
  /** `n` mouse-position calls, `inFlight` at a time. */
  readonly concurrent: (n: number, inFlight: number) => Promise<void>
  /**
   * `n` calls of a generated operation, `inFlight` at a time, by operation (see {@link generatedOps}).
   * (The rows that measure only the mouse call have none.)
   */
  readonly generated?: { readonly [Op in GeneratedOp]?: (n: number, inFlight: number) => Promise<void> }
  /** One list of pools, decoded; returns how many. (Floor rows that only measure calls have none.) */
  readonly pools?: () => Promise<number>
  /** Streams a replay of `bytes` bytes and discards it; returns the bytes received. */
  readonly stream?: (bytes: number) => Promise<number>
  readonly close: () => Promise<void>
}

/**
 * The generated operations of the per-call rows, one of each shape, by their row's name: a JSON answer
 * with secrets and a timestamp (`GET /browsers/:id`), a JSON body and no content in answer (`POST
 * .../click_mouse`, not idempotent), a page and its headers (`GET /browsers`, 5 browsers). `listRedacted`
 * is raw undici's list with each browser's three URLs wrapped in `Redacted` and its time parsed, as the
 * SDK answers them: the floor of what the SDK's list does.
 */
export const generatedOps = {
  retrieve: "browsers.retrieve",
  clickMouse: "computer.clickMouse",
  list: "browsers.list, a page of 5",
  listRedacted: "browsers.list, a page of 5, secrets as Redacted"
} as const

export type GeneratedOp = keyof typeof generatedOps

const token = "sk_bench"
const headers = { authorization: `Bearer ${token}` }

const drain = async (body: ReadableStream<Uint8Array>) => {
  const reader = body.getReader()
  let received = 0
  while (true) {
    const { done, value } = await reader.read()
    if (done) return received
    received += value.length
  }
}

const pooled = async (n: number, inFlight: number, call: () => Promise<unknown>) => {
  let next = 0
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next++ < n) await call()
  }))
}

export const rawUndici = (base: string): Client => {
  const mouse = async () => {
    const response = await request(`${base}/browsers/b1/computer/get_mouse_position`, { method: "POST", headers })
    return response.body.json()
  }
  const retrieve = async () => {
    const response = await request(`${base}/browsers/b1`, { headers })
    return response.body.json()
  }
  const clickMouse = async () => {
    const response = await request(`${base}/browsers/b1/computer/click_mouse`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ x: 10, y: 20 })
    })
    return response.body.dump()
  }
  const list = async () => {
    const response = await request(`${base}/browsers?limit=5`, { headers })
    return response.body.json()
  }
  const listRedacted = async () => {
    const browsers: unknown = await list()
    if (!Array.isArray(browsers)) throw new Error("not a list")
    return browsers.map((browser: Record<string, string>) => ({
      ...browser,
      created_at: new Date(browser.created_at!),
      cdp_ws_url: Redacted.make(browser.cdp_ws_url),
      webdriver_ws_url: Redacted.make(browser.webdriver_ws_url),
      browser_live_view_url: Redacted.make(browser.browser_live_view_url)
    }))
  }
  return {
    name: "raw undici.request",
    sequential: async (n) => {
      for (let i = 0; i < n; i++) await mouse()
    },
    concurrent: (n, k) => pooled(n, k, mouse),
    generated: {
      retrieve: (n, k) => pooled(n, k, retrieve),
      clickMouse: (n, k) => pooled(n, k, clickMouse),
      list: (n, k) => pooled(n, k, list),
      listRedacted: (n, k) => pooled(n, k, listRedacted)
    },
    pools: async () => {
      const response = await request(`${base}/browser_pools`, { headers })
      const pools: unknown = JSON.parse(await response.body.text())
      return Array.isArray(pools) ? pools.length : 0
    },
    stream: async (bytes) => {
      const response = await request(`${base}/browsers/b1/replays/${bytes}`, { headers })
      let received = 0
      for await (const chunk of response.body) received += (chunk as Buffer).length
      return received
    },
    close: async () => {}
  }
}

export const rawFetch = (base: string): Client => {
  const mouse = async () => {
    const response = await fetch(`${base}/browsers/b1/computer/get_mouse_position`, { method: "POST", headers })
    return response.json()
  }
  return {
    name: "global fetch",
    sequential: async (n) => {
      for (let i = 0; i < n; i++) await mouse()
    },
    concurrent: (n, k) => pooled(n, k, mouse),
    pools: async () => {
      const pools: unknown = await (await fetch(`${base}/browser_pools`, { headers })).json()
      return Array.isArray(pools) ? pools.length : 0
    },
    stream: async (bytes) => {
      const response = await fetch(`${base}/browsers/b1/replays/${bytes}`, { headers })
      return drain(response.body!)
    },
    close: async () => {}
  }
}

export const official = (base: string): Client => {
  const client = new Kernel({ apiKey: token, baseURL: base, maxRetries: 0, logLevel: "off" })
  const mouse = () => client.browsers.computer.getMousePosition("b1")
  return {
    name: "@onkernel/sdk",
    sequential: async (n) => {
      for (let i = 0; i < n; i++) await mouse()
    },
    concurrent: (n, k) => pooled(n, k, mouse),
    generated: {
      retrieve: (n, k) => pooled(n, k, () => client.browsers.retrieve("b1")),
      clickMouse: (n, k) => pooled(n, k, () => client.browsers.computer.clickMouse("b1", { x: 10, y: 20 })),
      list: (n, k) => pooled(n, k, async () => (await client.browsers.list({ limit: 5 })).getPaginatedItems())
    },
    pools: async () => {
      // the official client pages; the server answers the whole list in one page
      const page = await client.browserPools.list()
      return page.getPaginatedItems().length
    },
    stream: async (bytes) => {
      const response = await client.browsers.replays.download(String(bytes), { id: "b1" })
      return drain(response.body!)
    },
    close: async () => {}
  }
}

/** The same raw undici call, each one wrapped in `Effect.promise`, `inFlight` fibers. */
export const effectPromiseUndici = (base: string): Client => {
  const runtime = ManagedRuntime.make(Layer.empty)
  const mouse = Effect.promise(async () => {
    const response = await request(`${base}/browsers/b1/computer/get_mouse_position`, { method: "POST", headers })
    return response.body.json()
  })
  return {
    name: "Effect.promise(raw undici.request)",
    sequential: (n) =>
      runtime.runPromise(Effect.gen(function*() {
        for (let i = 0; i < n; i++) yield* mouse
      })),
    concurrent: (n, k) => runtime.runPromise(inFlight(mouse, n, k)),
    close: () => runtime.dispose()
  }
}

const transports = {
  kernel: { name: "KernelTransport.layerUndici", layer: KernelTransport.layerUndici },
  undici: { name: "NodeHttpClient.layerUndici", layer: NodeHttpClient.layerUndici },
  fetch: { name: "FetchHttpClient.layer", layer: FetchHttpClient.layer }
} as const

/** A bare `HttpClient`: `execute` + `json`, no SDK. */
export const bareTransport = (base: string, transport: "kernel" | "undici"): Client => {
  const runtime = ManagedRuntime.make(transports[transport].layer)
  const request = HttpClientRequest.post(`${base}/browsers/b1/computer/get_mouse_position`).pipe(
    HttpClientRequest.setHeaders(headers)
  )
  const mouse = Effect.flatMap(HttpClient.execute(request), (response) => response.json)
  const pools = HttpClientRequest.get(`${base}/browser_pools`).pipe(HttpClientRequest.setHeaders(headers))
  return {
    name: `bare ${transports[transport].name} execute + json`,
    sequential: (n) =>
      runtime.runPromise(Effect.gen(function*() {
        for (let i = 0; i < n; i++) yield* mouse
      })),
    concurrent: (n, k) => runtime.runPromise(inFlight(mouse, n, k)),
    ...(transport === "kernel" ?
      {
        pools: () =>
          runtime.runPromise(
            Effect.flatMap(HttpClient.execute(pools), (response) => response.json).pipe(
              Effect.map((json) => Array.isArray(json) ? json.length : 0)
            )
          ),
        stream: (bytes: number) =>
          runtime.runPromise(
            Effect.flatMap(
              HttpClient.get(`${base}/browsers/b1/replays/${bytes}`, { headers }),
              (response) => Stream.runFold(response.stream, 0, (n, chunk) => n + chunk.length)
            )
          )
      } :
      {}),
    close: () => runtime.dispose()
  }
}

export const effectKernel = (base: string, transport: "kernel" | "undici" | "fetch"): Client => {
  const runtime = ManagedRuntime.make(
    EffectKernel.layer.pipe(
      Layer.provide(KernelConfig.layer({ apiKey: Redacted.make(token), baseUrl: base, maxRetries: 0 })),
      Layer.provide(transports[transport].layer),
      Layer.orDie
    )
  )
  const mouse = Computer.getMousePosition({ id: "b1" })
  const generated = {
    retrieve: Browsers.retrieve({ id: "b1" }),
    clickMouse: Computer.clickMouse({ id: "b1", x: 10, y: 20 }),
    list: Browsers.list({ limit: 5 })
  }
  const calls =
    <A, E>(call: Effect.Effect<A, E, ManagedRuntime.ManagedRuntime.Context<typeof runtime>>) =>
    (n: number, k: number) => runtime.runPromise(inFlight(call, n, k))
  return {
    name: `effect-kernel (${transports[transport].name})`,
    sequential: (n) =>
      runtime.runPromise(Effect.gen(function*() {
        for (let i = 0; i < n; i++) yield* mouse
      })),
    concurrent: (n, k) => runtime.runPromise(inFlight(mouse, n, k)),
    ...(transport === "kernel" ?
      {
        generated: {
          retrieve: calls(generated.retrieve),
          clickMouse: calls(generated.clickMouse),
          list: calls(generated.list)
        }
      } :
      {}),
    pools: () => runtime.runPromise(Effect.map(BrowserPools.list(), (pools) => pools.length)),
    stream: (bytes) =>
      runtime.runPromise(
        Replays.download({ id: "b1", replayId: String(bytes) }).pipe(Stream.runFold(0, (n, chunk) => n + chunk.length))
      ),
    close: () => runtime.dispose()
  }
}

/** The clients, floor first: every row is compared with raw undici (the first). */
export const makeClients = (base: string): ReadonlyArray<Client> => [
  rawUndici(base),
  effectPromiseUndici(base),
  bareTransport(base, "kernel"),
  bareTransport(base, "undici"),
  effectKernel(base, "kernel"),
  effectKernel(base, "undici"),
  effectKernel(base, "fetch"),
  official(base),
  rawFetch(base)
]

/**
 * The clients of {@link makeClients}, each in a process of its own (bench/calls-child.ts), driven from
 * this one: their per-call methods run there (timed here: one message each way per round), their
 * `stream` is run by bench/stream-child.ts as before (here it only says whether the client streams).
 */
export const isolated = async (base: string, tsxLoader: string): Promise<ReadonlyArray<Client>> => {
  const count = makeClients(base).length
  return Promise.all(Array.from({ length: count }, (_, index) =>
    new Promise<Client>((resolve, reject) => {
      const child = fork(new URL("calls-child.ts", import.meta.url).pathname, [String(index), base], {
        execArgv: ["--import", tsxLoader],
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
      let next = 0
      const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
      const call = (method: string, ...args: ReadonlyArray<number>) =>
        new Promise<unknown>((resolve, reject) => {
          const id = next++
          pending.set(id, { resolve, reject })
          child.send({ id, method, args })
        })
      child.on("message", (message: ChildMessage) => {
        if ("ready" in message) {
          const shape = message.ready
          const generated: Partial<Record<GeneratedOp, (n: number, inFlight: number) => Promise<void>>> = {}
          for (const op of shape.generated) {
            generated[op] = async (n, inFlight) => {
              await call(`generated:${op}`, n, inFlight)
            }
          }
          resolve({
            name: shape.name,
            sequential: async (n) => {
              await call("sequential", n)
            },
            concurrent: async (n, inFlight) => {
              await call("concurrent", n, inFlight)
            },
            ...(shape.generated.length > 0 ? { generated } : {}),
            ...(shape.pools ? { pools: async () => Number(await call("pools")) } : {}),
            ...(shape.stream ? { stream: () => Promise.reject(new Error("streamed in bench/stream-child.ts")) } : {}),
            close: async () => {
              await call("close")
              child.disconnect()
            }
          })
          return
        }
        const waiter = pending.get(message.id)
        pending.delete(message.id)
        if ("error" in message) waiter?.reject(new Error(message.error))
        else waiter?.resolve(message.value)
      })
      child.once("exit", (code) => {
        const error = new Error(`calls-child ${index} exited ${code}`)
        reject(error)
        for (const waiter of pending.values()) waiter.reject(error)
      })
    })))
}

type ChildMessage =
  | {
    readonly ready: {
      readonly name: string
      readonly generated: ReadonlyArray<GeneratedOp>
      readonly pools: boolean
      readonly stream: boolean
    }
  }
  | { readonly id: number; readonly value: unknown }
  | { readonly id: number; readonly error: string }
