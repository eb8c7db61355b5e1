/**
 * `npm run bench [-- --quick]`: raw undici, global fetch, the official @onkernel/sdk and
 * effect-kernel (on undici and on fetch), interleaved over several rounds against one loopback
 * server in a child process. Prints a table (median, min–max, ratio to raw undici) and writes
 * bench/results.json. `--quick` is a smoke run (small sizes, one round) that asserts nothing.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import { makeClients } from "./clients.js"

const quick = process.argv.includes("--quick")
const rounds = quick ? 1 : 3
const sizes = {
  sequential: quick ? 200 : 2000,
  concurrent: quick ? 500 : 5000,
  inFlight: 32,
  pools: quick ? 2 : 10,
  stream: quick ? 16 * 1024 * 1024 : 256 * 1024 * 1024,
  streamLarge: quick ? 32 * 1024 * 1024 : 1024 * 1024 * 1024,
  coldRuns: quick ? 1 : 5
}
const here = new URL(".", import.meta.url).pathname
const tsx = createRequire(import.meta.url).resolve("tsx/cli")

const startServer = () =>
  new Promise<{ child: ChildProcess; base: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [`${here}server.mjs`], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout!.once("data", (data: Buffer) => {
      const port = /port (\d+)/.exec(data.toString())?.[1]
      if (port) resolve({ child, base: `http://127.0.0.1:${port}` })
      else reject(new Error(data.toString()))
    })
    child.once("exit", (code) => reject(new Error(`bench server exited ${code}`)))
  })

type Samples = Record<string, Record<string, Array<number>>>
const samples: Samples = {}
const record = (metric: string, client: string, value: number) => {
  ;((samples[metric] ??= {})[client] ??= []).push(value)
}
const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const { child, base } = await startServer()
try {
  const clients = makeClients(base)
  const floor = clients[0]!.name
  for (const client of clients) {
    await client.sequential(100) // warm-up
    await client.pools()
  }
  for (let round = 0; round < rounds; round++) {
    for (const client of clients) {
      let started = performance.now()
      await client.sequential(sizes.sequential)
      record(
        "get_mouse_position sequential (µs/call)",
        client.name,
        (performance.now() - started) * 1000 / sizes.sequential
      )
      started = performance.now()
      await client.concurrent(sizes.concurrent, sizes.inFlight)
      record(
        `get_mouse_position, ${sizes.inFlight} in flight (calls/s)`,
        client.name,
        sizes.concurrent / ((performance.now() - started) / 1000)
      )
      started = performance.now()
      for (let i = 0; i < sizes.pools; i++) {
        if ((await client.pools()) !== 10_000) throw new Error(`${client.name}: wrong pool count`)
      }
      record("list 10,000 pools (ms/call)", client.name, (performance.now() - started) / sizes.pools)
    }
    // streaming: each client in a fresh process, so its RSS is its own
    const streams = clients.map((client, index) => ({ client, index, bytes: sizes.stream }))
    streams.push({ client: clients[3]!, index: 3, bytes: sizes.streamLarge })
    for (const { bytes, client, index } of streams) {
      const out = execFileSync(process.execPath, [tsx, `${here}stream-child.ts`, String(index), String(bytes), base], {
        encoding: "utf8"
      })
      const result: { received: number; seconds: number; rssGrowthMiB: number; inUseGrowthMiB: number } = JSON.parse(
        out.trim().split("\n").at(-1)!
      )
      if (result.received !== bytes) throw new Error(`${client.name}: received ${result.received} of ${bytes}`)
      const label = `${Math.round(bytes / 1024 / 1024)} MiB`
      record(`replay ${label} (MB/s)`, client.name, bytes / 1e6 / result.seconds)
      record(`replay ${label}: peak RSS growth (MiB)`, client.name, result.rssGrowthMiB)
      record(`replay ${label}: peak JS heap + buffers growth (MiB)`, client.name, result.inUseGrowthMiB)
    }
  }
  for (let run = 0; run < sizes.coldRuns; run++) {
    for (const mode of ["base", "sdk"] as const) {
      const out = execFileSync(process.execPath, [`${here}cold.mjs`, mode, base], { encoding: "utf8" })
      const result: { baseImportMs: number; sdkImportMs: number; firstCallMs: number } = JSON.parse(out)
      if (mode === "base") record("cold: import effect + @effect/platform (ms)", "node", result.baseImportMs)
      else {
        record("cold: + import effect-kernel (ms)", "node", result.sdkImportMs)
        record("cold: + first call, incl. layer and transport (ms)", "node", result.firstCallMs)
      }
    }
  }
  for (const client of clients) await client.close()

  // the table
  const lines: Array<string> = []
  const fmt = (n: number) => n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)
  lines.push(
    `effect-kernel benchmark — ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}, ` +
      `${rounds} round${rounds > 1 ? "s" : ""}${quick ? " (--quick)" : ""}`
  )
  const results: Record<string, Record<string, { median: number; min: number; max: number; ratio?: number }>> = {}
  for (const [metric, byClient] of Object.entries(samples)) {
    lines.push("", metric)
    const reference = byClient[floor] ? median(byClient[floor]) : undefined
    for (const [client, values] of Object.entries(byClient)) {
      const m = median(values)
      const ratio = reference === undefined ? undefined : m / reference
      ;(results[metric] ??= {})[client] = {
        median: m,
        min: Math.min(...values),
        max: Math.max(...values),
        ...(ratio === undefined ? {} : { ratio })
      }
      lines.push(
        `  ${client.padEnd(46)} ${fmt(m).padStart(9)}  (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})` +
          (ratio === undefined ? "" : `  ${ratio.toFixed(2)}× raw undici`)
      )
    }
  }
  console.log(lines.join("\n"))
  fs.writeFileSync(
    new URL("results.json", import.meta.url),
    JSON.stringify({ quick, rounds, node: process.version, cores: os.cpus().length, results }, null, 2)
  )
  console.log("\nwritten to bench/results.json")
} finally {
  child.kill("SIGTERM")
}
