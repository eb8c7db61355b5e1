// One process, the built package (dist/esm): `calls` mouse-position calls at 32 in flight against
// bench/server.mjs, `rounds` times after one warm-up round; prints per round the client's CPU per
// call (µs), its young-generation collection time per call (µs) and the calls per second. With the
// instrumented modules of literal-sites-instrument.mjs (and `--import` literal-sites-setup.mjs),
// also which literals made objects straight into the old generation. See README.md here.
//   node bench/diagnostics/in-flight-probe.mjs [sdk|bare|sdk-platform|bare-platform|raw] [rounds] [calls]
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { spawn } from "node:child_process"
import { PerformanceObserver } from "node:perf_hooks"
import { request } from "undici"

const kind = process.argv[2] ?? "sdk"
const rounds = Number(process.argv[3] ?? 5)
const calls = Number(process.argv[4] ?? 20000)
const inFlight = 32
const server = spawn(process.execPath, ["bench/server.mjs", "--exit-with-parent"], {
  stdio: ["pipe", "pipe", "inherit"]
})
const port = await new Promise((resolve) =>
  server.stdout.on("data", (data) => {
    const found = /port (\d+)/.exec(String(data))
    if (found) resolve(Number(found[1]))
  })
)
const base = `http://127.0.0.1:${port}`
const headers = { authorization: "Bearer sk_bench" }
let minorGcMs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (entry.detail?.kind === 1) minorGcMs += entry.duration
}).observe({ entryTypes: ["gc"] })

let run
if (kind === "raw") {
  const mouse = async () => {
    const response = await request(`${base}/browsers/b1/computer/get_mouse_position`, { method: "POST", headers })
    return response.body.json()
  }
  run = async () => {
    let next = 0
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next++ < calls) await mouse()
    }))
  }
} else {
  const Sdk = await import("../../dist/esm/index.js")
  // `sdk` and `bare` on KernelTransport; `sdk-platform` and `bare-platform` on NodeHttpClient.layerUndici
  const transport = kind.endsWith("-platform") ? NodeHttpClient.layerUndici : Sdk.KernelTransport.layerUndici
  const layer = kind.startsWith("sdk")
    ? Sdk.Kernel.layer.pipe(
      Layer.provide(Sdk.KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base, maxRetries: 0 })),
      Layer.provide(transport),
      Layer.orDie
    )
    : transport
  const bare = HttpClientRequest.post(`${base}/browsers/b1/computer/get_mouse_position`).pipe(
    HttpClientRequest.setHeaders(headers)
  )
  const mouse = kind.startsWith("sdk")
    ? Sdk.Computer.getMousePosition({ id: "b1" })
    : Effect.flatMap(HttpClient.execute(bare), (response) => response.json)
  const runtime = ManagedRuntime.make(layer)
  run = () =>
    runtime.runPromise(
      Effect.forEach(Array.from({ length: calls }), () => mouse, { concurrency: inFlight, discard: true })
    )
}

globalThis.__phase = 1
await run()
if (globalThis.__literalSitesOn !== undefined) globalThis.__literalSitesOn = true
const printed = []
for (let round = 0; round < rounds; round++) {
  const cpu = process.cpuUsage()
  const gc = minorGcMs
  const start = performance.now()
  await run()
  const elapsed = performance.now() - start
  const used = process.cpuUsage(cpu)
  const perCall = (used.user + used.system) / calls
  printed.push(
    `${perCall.toFixed(1)}/${((minorGcMs - gc) * 1000 / calls).toFixed(1)}/${Math.round(calls / elapsed * 1000)}`
  )
}
if (globalThis.__literalSitesReport !== undefined) globalThis.__literalSitesReport()
console.log(kind, "cpu µs/call / minor GC µs/call / calls/s:", printed.join("  "))
server.kill("SIGTERM")
process.exit(0)
