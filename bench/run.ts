/**
 * `npm run bench [-- --quick]`: the floor rows (raw undici, `Effect.promise` around it, the bare
 * transports' `execute` + `json`), effect-kernel on its three transports, the official
 * @onkernel/sdk and global fetch, interleaved over several rounds against one loopback server in a
 * child process. Prints a table (median, min–max, ratio to raw undici), then the targets of the
 * fast-path issue as ratios of this one run, and writes bench/results.json. `--quick` is a smoke
 * run (small sizes, one round) that asserts nothing. `--replays` runs only the replay rows (raw
 * undici, effect-kernel on KernelTransport, the bare KernelTransport stream, effect-kernel on
 * NodeHttpClient.layerUndici; 256 MiB, 1 GiB, and 8 GiB in the first round unless `--no-huge`) and
 * writes bench/results-replays.json; `--rounds=N` sets the number of interleaved rounds.
 * `--footprint` runs only the footprint rows of issue 18 (every run has them): cold start (the whole
 * package, one area above the shared client, a second area above the first, building Kernel.layer) in fresh
 * processes (the shared client, KernelClient.js, loads the runtime chunk every area shares), the bundle sizes
 * (scripts/bundle-size.ts) and the type-check cost (scripts/tsc-cost.mjs), and writes
 * bench/results-footprint.json. `--calls` runs only the per-call rows (sequential, 32 in flight, `Browsers.retrieve` at 32 in flight, 10,000
 * pools: no replay, cold start, bundle or type-check row) and writes bench/results-calls.json. `--before-dist=<dir>` adds the cold rows of another build's dist/esm
 * (an earlier revision built into .tmp), interleaved with this one's, so both come from the same hour.
 * `--streams` runs only the events-and-files rows of issue 19 (bench/streams.ts: an event stream,
 * uploads, the seven downloads; every run has them, `--quick` at small sizes) and writes
 * bench/results-streams.json.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import type { GeneratedOp } from "./clients.js"
import { startBenchServer } from "./fixtures.mjs"
import { ensureBuilt } from "./sdk.js"
import { runStreams, streamsTargets } from "./streams.js"
import type { SweepResult } from "./sweep.js"

// effect-kernel is measured as its users run it, the built package (bench/sdk.ts): built first if stale
ensureBuilt()
const { generatedOps, isolated } = await import("./clients.js")
const { unmeasured } = await import("./sweep.js")

const quick = process.argv.includes("--quick")
// `--replays`: only the replay rows (256 MiB, 1 GiB and, in the first round, 8 GiB), for a targeted run
const replaysOnly = process.argv.includes("--replays")
// `--footprint`: only cold start, Kernel.layer's build, bundle sizes and the type-check cost
const footprintOnly = process.argv.includes("--footprint")
// `--streams`: only the events-and-files rows (issue 19)
const streamsOnly = process.argv.includes("--streams")
// `--calls`: only the per-call rows (sequential, in flight, pools), for a targeted run
const callsOnly = process.argv.includes("--calls")
// `--before-dist=<dir>`: the cold rows of an earlier build too (bench/cold.mjs EFFECT_KERNEL_DIST)
const beforeDist = process.argv.find((arg) => arg.startsWith("--before-dist="))?.slice("--before-dist=".length)
const beforeEnv = beforeDist === undefined ? undefined : { ...process.env, EFFECT_KERNEL_DIST: beforeDist }
/** The label suffix of the before build's area rows. */
const beforeWho = `, before: ${beforeDist}`
/** The builds whose area rows are measured: this one, and the before build's, interleaved. */
const areaBuilds: Array<readonly [NodeJS.ProcessEnv | undefined, string]> = beforeEnv === undefined
  ? [[undefined, ""]]
  : [[undefined, ""], [beforeEnv, beforeWho]]
// `--no-huge`: without the 8 GiB row; `--rounds=N`: N interleaved rounds (default 3, 1 with --quick)
const noHuge = process.argv.includes("--no-huge")
const roundsFlag = process.argv.find((arg) => arg.startsWith("--rounds="))
const rounds = roundsFlag !== undefined ? Math.max(1, Number(roundsFlag.slice("--rounds=".length))) : quick ? 1 : 3
const sizes = {
  // sequential calls a round: 2,000 (about 0.2 s) read 91, 209 and 234 µs a call for the SDK in one run's rounds
  sequential: quick ? 200 : 5000,
  // calls of a per-call row a round: 5,000 (about 150 ms for the SDK) let one major collection or one
  // scheduling hiccup decide a round (the SDK's rounds of one run read 22,154 to 37,203 calls/s)
  concurrent: quick ? 500 : 20_000,
  inFlight: 32,
  pools: quick ? 2 : 10,
  // calls of each per-call row a client makes before the first round (see the warm-up below)
  warmupCalls: quick ? 2000 : 20_000,
  stream: quick ? 16 * 1024 * 1024 : 256 * 1024 * 1024,
  streamLarge: quick ? 32 * 1024 * 1024 : 1024 * 1024 * 1024,
  // once, in the first round of a full run: memory must not grow with the size
  streamHuge: quick || noHuge ? 0 : 8 * 1024 * 1024 * 1024,
  coldRuns: replaysOnly || streamsOnly || callsOnly ? 0 : quick ? 3 : 5,
  // tsc runs per program and tsconfig (scripts/tsc-cost.mjs): 8 checks of 1–5 s each per run (--quick: 4,
  // the README's tsconfig only); the median of 3 in both, as one run on a shared machine is noise
  tscRuns: replaysOnly || streamsOnly || callsOnly ? 0 : 3,
  // calls per client and round of each operation in the sweep, and its rounds (a ratio per round, the
  // median kept: one operation's rounds are short, so more of them than the other rows'). Rounds of
  // 1000 calls (35 ms) were shorter than one major GC or re-optimisation: an operation's ratio moved by
  // up to 0.2 between two sweeps of the same build (loadBrowserExtensions 0.53 and 0.72)
  sweepCalls: quick ? 100 : 3000,
  sweepRounds: quick ? 1 : Math.max(rounds, 5)
}
/** The areas whose import is measured above the shared client (bench/cold.mjs area:<Area>). */
const coldAreas = ["Browsers", "BrowserPools", "Computer"]
/** A second area imported above the first (bench/cold.mjs area:<Area>,<Second>). */
const secondArea = ["Browsers", "Computer"]
const secondAreaLabel = "Computer after Browsers"
const root = new URL("..", import.meta.url).pathname
const here = new URL(".", import.meta.url).pathname
// the stream children run as `node --import tsx`: one process (the tsx CLI would add a parent that relays
// signals), so a time-out's SIGKILL ends the measurement itself
const tsxLoader = createRequire(import.meta.url).resolve("tsx")
/** A streaming child that has not finished in this time is killed and the run fails (never hangs). */
const streamTimeLimit = (bytes: number) => 60_000 + Math.ceil(bytes / (10 * 1024 * 1024)) * 1000

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

/** The per-call rows of generated operations (issue 18: "per-call throughput holds for every operation"). */
const generatedMetric = (op: GeneratedOp) => `${generatedOps[op]}, ${sizes.inFlight} in flight (calls/s)`

const { child, base } = await startBenchServer()
try {
  const clients = await isolated(base, tsxLoader)
  const floor = clients[0]!.name
  const skipClients = replaysOnly || footprintOnly || streamsOnly
  for (const client of skipClients ? [] : clients) {
    // warm-up: each client's process compiles its paths before its first round (200 calls left the
    // first round of a client in its own process a fifth slower than the next). A long-lived program's
    // steady state: measured in rounds of 5,000 calls at 32 in flight after 2,000 calls of warm-up, raw
    // undici ran 19.9k, 29.5k, 39.1k, 42.7k calls/s and the SDK 19.8k, 31.8k, 34.1k, 41.3k: both are
    // still optimising for some 15,000 calls, so with 2,000 the rounds measured how fast each path
    // reaches its optimised code rather than what it costs then (the SDK's row read 0.59–0.68× raw
    // undici in a run where both reach about 42k calls/s in a warm process)
    await client.sequential(2000)
    await client.concurrent(sizes.warmupCalls, sizes.inFlight)
    for (const call of Object.values(client.generated ?? {})) await call(sizes.warmupCalls, sizes.inFlight)
    if (client.pools) await client.pools()
  }
  for (let round = 0; round < (footprintOnly || streamsOnly ? 0 : rounds); round++) {
    // measurement by measurement, every client in turn (forwards in one round, backwards in the next):
    // each row's clients measured within seconds of each other, not a whole client's rows apart
    const order = skipClients ? [] : round % 2 === 0 ? clients : [...clients].reverse()
    const timed = async (run: () => Promise<unknown>) => {
      const started = performance.now()
      await run()
      return performance.now() - started
    }
    for (const client of order) {
      const ms = await timed(() => client.sequential(sizes.sequential))
      record("get_mouse_position sequential (µs/call)", client.name, ms * 1000 / sizes.sequential)
    }
    for (const client of order) {
      const ms = await timed(() => client.concurrent(sizes.concurrent, sizes.inFlight))
      record(`get_mouse_position, ${sizes.inFlight} in flight (calls/s)`, client.name, sizes.concurrent / (ms / 1000))
    }
    for (const op of Object.keys(generatedOps) as Array<GeneratedOp>) {
      for (const client of order) {
        const call = client.generated?.[op]
        if (call === undefined) continue
        const ms = await timed(() => call(sizes.concurrent, sizes.inFlight))
        record(generatedMetric(op), client.name, sizes.concurrent / (ms / 1000))
      }
    }
    for (const client of order) {
      const pools = client.pools
      if (pools === undefined) continue
      const ms = await timed(async () => {
        for (let i = 0; i < sizes.pools; i++) {
          if ((await pools()) !== 10_000) throw new Error(`${client.name}: wrong pool count`)
        }
      })
      record("list 10,000 pools (ms/call)", client.name, ms / sizes.pools)
    }
    // streaming: each client in a fresh process, so its RSS is its own
    const streaming = callsOnly ? [] : clients.flatMap((client, index) => client.stream ? [{ client, index }] : [])
    // the large sizes: raw undici and effect-kernel on its own transport (first two: the 8 GiB row), the
    // bare KernelTransport stream (the transport alone) and effect-kernel on the platform's undici
    const large = [
      clients[0]!.name,
      "effect-kernel (KernelTransport.layerUndici)",
      "bare KernelTransport.layerUndici execute + json",
      "effect-kernel (NodeHttpClient.layerUndici)"
    ].flatMap((name) => streaming.filter(({ client }) => client.name === name))
    // with --replays, the 256 MiB row has only those clients too
    const streams = (replaysOnly ? large : streaming).map(({ client, index }) => ({
      client,
      index,
      bytes: sizes.stream
    }))
    for (const { client, index } of large) streams.push({ client, index, bytes: sizes.streamLarge })
    if (round === 0 && sizes.streamHuge > 0 && !callsOnly) {
      for (const { client, index } of large.slice(0, 2)) streams.push({ client, index, bytes: sizes.streamHuge })
    }
    for (const { bytes, client, index } of streams) {
      const out = execFileSync(
        process.execPath,
        ["--import", tsxLoader, `${here}stream-child.ts`, String(index), String(bytes), base],
        { encoding: "utf8", timeout: streamTimeLimit(bytes), killSignal: "SIGKILL" }
      )
      const result: { received: number; seconds: number; rssGrowthMiB: number; inUseGrowthMiB: number } = JSON.parse(
        out.trim().split("\n").at(-1)!
      )
      if (result.received !== bytes) throw new Error(`${client.name}: received ${result.received} of ${bytes}`)
      const label = bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : `${Math.round(bytes / 1024 / 1024)} MiB`
      record(`replay ${label} (MB/s)`, client.name, bytes / 1e6 / result.seconds)
      record(`replay ${label}: peak RSS growth (MiB)`, client.name, result.rssGrowthMiB)
      record(`replay ${label}: peak JS heap + buffers growth (MiB)`, client.name, result.inUseGrowthMiB)
    }
  }
  if (!replaysOnly && !footprintOnly && !callsOnly) runStreams({ quick, rounds, base, tsxLoader, record })
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
    if (beforeDist !== undefined) {
      const env = beforeEnv
      const out = execFileSync(process.execPath, [`${here}cold.mjs`, "sdk", base], { encoding: "utf8", env })
      const result: { sdkImportMs: number; firstCallMs: number } = JSON.parse(out)
      record("cold: + import effect-kernel (ms)", `before: ${beforeDist}`, result.sdkImportMs)
      record("cold: + first call, incl. layer and transport (ms)", `before: ${beforeDist}`, result.firstCallMs)
      const layerOut = execFileSync(process.execPath, [`${here}cold.mjs`, "layer", base], { encoding: "utf8", env })
      const layerResult: { layerBuildMs: number } = JSON.parse(layerOut)
      record(
        "build Kernel.layer, 118 operations + client (ms)",
        `before: ${beforeDist}`,
        layerResult.layerBuildMs
      )
    }
    // one area above the shared client, each in a fresh process (dist/esm/<Area>.js: the package exports
    // only "."), a second area above the first (the shared runtime chunk, which KernelClient.js loads, is
    // then in: the marginal cost of one more area), this build's and the before build's, interleaved; then
    // building Kernel.layer (118 operations) in a fresh process
    for (const [env, who] of areaBuilds) {
      for (const area of [...coldAreas, secondArea.join(",")]) {
        // a build from before the generated areas (e.g. 8e7e929) has no area layers (`Browsers.layer`) to compare
        const dist = env?.EFFECT_KERNEL_DIST
        if (dist !== undefined && !fs.existsSync(`${dist}/Browsers.js`)) continue
        const out = execFileSync(process.execPath, [`${here}cold.mjs`, `area:${area}`, base], { encoding: "utf8", env })
        const result: { clientImportMs: number; areaImportMs: number; secondAreaImportMs?: number } = JSON.parse(out)
        record(
          "cold: + import the shared client, KernelClient + KernelConfig (ms)",
          `node${who}`,
          result.clientImportMs
        )
        if (result.secondAreaImportMs === undefined) {
          record("cold: + import one area above the client (ms)", `${area}${who}`, result.areaImportMs)
        } else {
          record(
            "cold: + import a second area above the first (ms)",
            `${secondAreaLabel}${who}`,
            result.secondAreaImportMs
          )
        }
      }
    }
    const out = execFileSync(process.execPath, [`${here}cold.mjs`, "layer", base], { encoding: "utf8" })
    const result: { layerBuildMs: number; layerRebuildMs: number } = JSON.parse(out)
    record("build Kernel.layer, 118 operations + client (ms)", "first, in a fresh process", result.layerBuildMs)
    record("build Kernel.layer, 118 operations + client (ms)", "median of the next 20", result.layerRebuildMs)
  }
  // bundle sizes (esbuild, minified) and the type-check cost: each its own script, run once
  let bundleKib: Record<string, number> | undefined
  if (!replaysOnly && !streamsOnly && !callsOnly) {
    const out = execFileSync(process.execPath, ["--import", tsxLoader, `${root}scripts/bundle-size.ts`, "--json"], {
      encoding: "utf8"
    })
    const result: { kib: Record<string, number>; gzipKib: Record<string, number> } = JSON.parse(
      out.trim().split("\n").at(-1)!
    )
    bundleKib = result.kib
    for (const [program, kib] of Object.entries(result.kib)) {
      record("bundle, esbuild minified (KiB)", program, kib)
      record("bundle, esbuild minified + gzip (KiB)", program, result.gzipKib[program]!)
    }
  }
  let tscDifferences: Record<string, number> | undefined
  if (sizes.tscRuns > 0) {
    // --quick: the README's tsconfig only (4 checks a run)
    const tscArgs = [
      `${root}scripts/tsc-cost.mjs`,
      "--json",
      `--runs=${sizes.tscRuns}`,
      ...(quick ? ["--readme-only"] : [])
    ]
    const out = execFileSync(process.execPath, tscArgs, { encoding: "utf8" })
    const result: {
      seconds: Record<string, { median: number; min: number; max: number }>
      differences: Record<string, number>
    } = JSON.parse(out.trim().split("\n").at(-1)!)
    for (const [program, { median: m }] of Object.entries(result.seconds)) {
      record(`tsc --noEmit, median of ${sizes.tscRuns} (s)`, program, m)
    }
    tscDifferences = result.differences
  }
  for (const client of clients) await client.close()
  // every operation, per call (bench/sweep.ts), in a process of its own (bench/sweep-child.ts)
  const sweep: SweepResult | undefined = replaysOnly || footprintOnly || streamsOnly
    ? undefined
    : JSON.parse(
      execFileSync(
        process.execPath,
        [
          "--import",
          tsxLoader,
          `${here}sweep-child.ts`,
          String(sizes.sweepCalls),
          String(sizes.inFlight),
          String(sizes.sweepRounds)
        ],
        { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 }
      ).trim().split("\n").at(-1)!
    )

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
  if (sweep !== undefined) {
    lines.push(
      "",
      `every operation, ${sizes.inFlight} in flight on KernelTransport: calls/s over raw undici's (a stream's: and over raw undici's body as an Effect Stream)`
    )
    for (const row of sweep.rows) {
      lines.push(
        `  ${row.name.padEnd(32)} ${row.kind.padEnd(34)} ${row.ratio.toFixed(2).padStart(5)}` +
          (row.overStreamFloor === undefined ? "" : `  ${row.overStreamFloor.toFixed(2).padStart(5)} over the Stream`) +
          `  (${row.sdkPerSecond.toFixed(0)}/s)`
      )
    }
    if (sweep.failed.length > 0) lines.push(`  not measured (the call failed): ${sweep.failed.join(", ")}`)
    for (const [name, why] of Object.entries(unmeasured)) lines.push(`  not called: ${name}: ${why}`)
  }
  // the fast-path targets, as ratios of this run's medians
  const med = (metric: string, client: string) => {
    const values = samples[metric]?.[client]
    return values === undefined ? undefined : median(values)
  }
  const raw = clients[0]!.name
  const kt = "effect-kernel (KernelTransport.layerUndici)"
  const onUndici = "effect-kernel (NodeHttpClient.layerUndici)"
  const bareUndici = "bare NodeHttpClient.layerUndici execute + json"
  const officialName = "@onkernel/sdk"
  const concurrentMetric = `get_mouse_position, ${sizes.inFlight} in flight (calls/s)`
  const targets: Array<[string, number | undefined, ">=" | "<=", number]> = []
  const ratio = (a: number | undefined, b: number | undefined) => a === undefined || b === undefined ? undefined : a / b
  const sumOf = (a: number | undefined, b: number | undefined) => a === undefined || b === undefined ? undefined : a + b
  targets.push([
    `${sizes.inFlight} in flight, KernelTransport / raw undici`,
    ratio(med(concurrentMetric, kt), med(concurrentMetric, raw)),
    ">=",
    0.5
  ])
  targets.push([
    `${sizes.inFlight} in flight, KernelTransport / raw undici (issue 18)`,
    ratio(med(concurrentMetric, kt), med(concurrentMetric, raw)),
    ">=",
    0.7
  ])
  for (
    const [op, name] of [["retrieve", "Browsers.retrieve"], ["clickMouse", "Computer.clickMouse"], [
      "list",
      "Browsers.list"
    ]] as const
  ) {
    const metric = generatedMetric(op)
    targets.push([
      `${sizes.inFlight} in flight, ${name}, KernelTransport / raw undici (issue 18)`,
      ratio(med(metric, kt), med(metric, raw)),
      ">=",
      0.7
    ])
    targets.push([
      `${sizes.inFlight} in flight, ${name}, KernelTransport / official client`,
      ratio(med(metric, kt), med(metric, officialName)),
      ">=",
      3
    ])
  }
  if (sweep !== undefined) {
    const plain = sweep.rows.filter((row) => row.overStreamFloor === undefined)
    const streamed = sweep.rows.filter((row) => row.overStreamFloor !== undefined)
    const under = (rows: ReadonlyArray<{ readonly name: string }>) => rows.map((row) => row.name).join(", ")
    const slowPlain = plain.filter((row) => row.ratio < 0.7)
    const slowStreamed = streamed.filter((row) => (row.overStreamFloor ?? 0) < 0.7)
    targets.push([
      `every operation (${plain.length} JSON, page or no-content ones): how many under 0.7× raw undici${
        slowPlain.length > 0 ? ` (${under(slowPlain)})` : ""
      }`,
      slowPlain.length,
      "<=",
      0
    ])
    targets.push([
      `every stream operation (${streamed.length}): how many under 0.7× raw undici's body as an Effect Stream${
        slowStreamed.length > 0 ? ` (${under(slowStreamed)})` : ""
      }`,
      slowStreamed.length,
      "<=",
      0
    ])
    targets.push([
      "every operation: how many could not be called (see the sweep's table)",
      sweep.failed.length,
      "<=",
      0
    ])
  }
  // the list's secrets: raw undici wrapping them as the SDK does (what the SDK's list costs on top of that)
  targets.push([
    `${sizes.inFlight} in flight, Browsers.list, KernelTransport / raw undici with Redacted secrets`,
    ratio(med(generatedMetric("list"), kt), med(generatedMetric("listRedacted"), raw)),
    ">=",
    0.7
  ])
  targets.push([
    `${sizes.inFlight} in flight, KernelTransport / official client`,
    ratio(med(concurrentMetric, kt), med(concurrentMetric, officialName)),
    ">=",
    3
  ])
  targets.push([
    `${sizes.inFlight} in flight, on NodeHttpClient.layerUndici: SDK / bare platform`,
    ratio(med(concurrentMetric, onUndici), med(concurrentMetric, bareUndici)),
    ">=",
    0.85
  ])
  targets.push([
    "sequential µs/call, KernelTransport / raw undici",
    ratio(med("get_mouse_position sequential (µs/call)", kt), med("get_mouse_position sequential (µs/call)", raw)),
    "<=",
    1.6
  ])
  for (const bytes of [sizes.stream, sizes.streamLarge]) {
    const label = bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : `${Math.round(bytes / 1024 / 1024)} MiB`
    targets.push([
      `replay ${label} MB/s, KernelTransport / raw undici`,
      ratio(med(`replay ${label} (MB/s)`, kt), med(`replay ${label} (MB/s)`, raw)),
      ">=",
      0.95
    ])
  }
  for (const label of [`${sizes.streamLarge / 1024 ** 3} GiB`, "8 GiB"]) {
    const value = med(`replay ${label}: peak JS heap + buffers growth (MiB)`, kt)
    if (value !== undefined && sizes.streamLarge >= 1024 ** 3) {
      targets.push([`replay ${label}: peak JS heap + buffers growth (MiB), KernelTransport`, value, "<=", 48])
    }
  }
  targets.push([
    "10,000 pools, effect-kernel on KernelTransport / raw undici + JSON.parse",
    ratio(med("list 10,000 pools (ms/call)", kt), med("list 10,000 pools (ms/call)", raw)),
    "<=",
    2.5
  ])
  const coldBase = med("cold: import effect + @effect/platform (ms)", "node")
  const coldSdk = med("cold: + import effect-kernel (ms)", "node")
  if (coldBase !== undefined && coldSdk !== undefined) {
    targets.push(["cold start: ms the SDK adds to importing effect + @effect/platform", coldSdk, "<=", 15])
  }
  // issue 18's footprint targets
  const coldWhole = "cold: whole package, ms it adds to effect + @effect/platform (0.1.0: 33.7)"
  if (coldSdk !== undefined) targets.push([coldWhole, coldSdk, "<=", 50.55])
  if (beforeDist !== undefined) {
    targets.push([
      "cold: whole package / the before build, same run",
      ratio(coldSdk, med("cold: + import effect-kernel (ms)", `before: ${beforeDist}`)),
      "<=",
      1.5
    ])
  }
  for (const area of coldAreas) {
    const value = med("cold: + import one area above the client (ms)", area)
    if (value !== undefined) targets.push([`cold: import ${area} above the shared client (ms)`, value, "<=", 5])
  }
  const second = med("cold: + import a second area above the first (ms)", secondAreaLabel)
  if (second !== undefined) targets.push(["cold: import a second area above the first (ms)", second, "<=", 5])
  if (beforeDist !== undefined) {
    // the client now loads the runtime every area shares: what a user pays is the client and an area together
    const sum = (who: string) =>
      sumOf(
        med("cold: + import the shared client, KernelClient + KernelConfig (ms)", `node${who}`),
        med("cold: + import one area above the client (ms)", `Browsers${who}`)
      )
    targets.push([
      "cold: shared client + Browsers / the before build, same run",
      ratio(sum(""), sum(beforeWho)),
      "<=",
      1
    ])
  }
  const layerBuild = med("build Kernel.layer, 118 operations + client (ms)", "first, in a fresh process")
  if (layerBuild !== undefined) {
    targets.push(["build Kernel.layer (ms), first build in a fresh process", layerBuild, "<=", 5])
  }
  if (bundleKib !== undefined) {
    const floorKib = bundleKib["floor: effect + Schema + FetchHttpClient (no SDK)"]
    for (
      const [program, label] of [
        ["effect-kernel: BrowserPools.list (BrowserPools.layerList)", "BrowserPools.list"],
        ["effect-kernel: Browsers.retrieve (Browsers.layer)", "Browsers.retrieve"]
      ] as const
    ) {
      targets.push([`bundle, one operation (${label}) / floor program`, ratio(bundleKib[program], floorKib), "<=", 1.3])
      targets.push([`bundle, one operation (${label}), KiB (before the 118: 862)`, bundleKib[program], "<=", 862])
    }
  }
  // rows printed for information after the targets: no bound of their own
  const information: Array<[string, number]> = []
  if (tscDifferences !== undefined) {
    // the target: the README's tsconfig ("skipLibCheck": true, as tsc --init writes it)
    targets.push([
      "tsc --noEmit: s the 20-operation program takes above the empty one",
      tscDifferences["20 ops above empty, README tsconfig"],
      "<=",
      1
    ])
    // the same without skipLibCheck (every package's declarations checked too: effect's alone are
    // more than 1 s of it), the 20 operations above the effect-only program, and effect's own cost;
    // the no-skipLibCheck rows are not in --quick
    for (
      const [key, label] of [
        ["20 ops above empty, no skipLibCheck", "20-operation program above the empty one, no skipLibCheck"],
        ["20 ops above effect, README tsconfig", "20-operation program above the effect-only one"],
        ["20 ops above effect, no skipLibCheck", "20-operation program above the effect-only one, no skipLibCheck"],
        ["effect above empty, README tsconfig", "effect-only program (no SDK) above the empty one"],
        ["effect above empty, no skipLibCheck", "effect-only program (no SDK) above the empty one, no skipLibCheck"]
      ] as const
    ) {
      const value = tscDifferences[key]
      if (value !== undefined) information.push([`tsc --noEmit: s the ${label}`, value])
    }
  }
  if (!replaysOnly && !footprintOnly && !callsOnly) targets.push(...streamsTargets(quick, med))
  lines.push("", `targets${quick ? " (--quick: sizes too small to judge)" : ""}`)
  const targetResults: Array<{ target: string; value: number | null; bound: string; met: boolean | null }> = []
  for (const [target, value, op, bound] of targets) {
    if ((footprintOnly || streamsOnly || callsOnly) && value === undefined) continue
    const met = value === undefined ? null : op === ">=" ? value >= bound : value <= bound
    targetResults.push({ target, value: value ?? null, bound: `${op} ${bound}`, met })
    lines.push(
      `  ${target.padEnd(78)} ${value === undefined ? "n/a" : value.toFixed(2).padStart(7)}  ${op} ${bound}  ${
        met === null ? "" : met ? "met" : "NOT MET"
      }`
    )
  }
  if (information.length > 0) {
    lines.push("", "for information (no target)")
    const width = Math.max(78, ...information.map(([what]) => what.length))
    for (const [what, value] of information) lines.push(`  ${what.padEnd(width)} ${value.toFixed(2).padStart(7)}`)
  }
  console.log(lines.join("\n"))
  const resultsFile = replaysOnly
    ? "results-replays.json"
    : footprintOnly
    ? "results-footprint.json"
    : streamsOnly
    ? "results-streams.json"
    : callsOnly
    ? "results-calls.json"
    : "results.json"
  fs.writeFileSync(
    new URL(resultsFile, import.meta.url),
    JSON.stringify(
      {
        quick,
        rounds,
        node: process.version,
        cores: os.cpus().length,
        results,
        targets: targetResults,
        information: Object.fromEntries(information)
      },
      null,
      2
    )
  )
  console.log(`\nwritten to bench/${resultsFile}`)
} finally {
  child.kill("SIGTERM")
}
