// A group of the events-and-files measurements (issue 19) in a fresh process (run with --expose-gc).
// Usage:
//   streams-child.ts BASE_URL JOBS_JSON MODE  -> prints one JSON line: an array of results, one per job
// JOBS_JSON: [{ "client": "raw" | "sdk", "kind": ..., "size": N, "file"?: path }], raw and SDK jobs of a
// kind next to each other, so their ratio is of the same minute. "raw": undici.request (and a
// hand-written SSE reader with JSON.parse); "sdk": effect-kernel on KernelTransport.layerUndici, through
// the public API. Each job runs once to warm up (at a smaller size), then measured, as MODE says:
// - "memory": the collector runs before the job and the growth is measured from there (peak JS heap +
//   buffers, sampled every 5 ms; RSS), so each figure is the job's own; an event stream also reports the
//   heap and RSS (after a collection) at each quarter of its events;
// - "speed": no collection is forced (before the job or during it) and nothing is sampled: the job's
//   time and CPU as a program that never calls `gc()` sees them. A forced full collection leaves V8's
//   old-generation limit just above the live heap, and the socket buffers' external memory then starts
//   a mark-compact every few MiB, for the rest of the job and the next ones (a 256 MiB download: 6-13
//   mark-compacts and several times the CPU of the same download without the forced collection, for
//   either client); in that state one client's garbage changes the other's figures (docs/performance.md,
//   "sixth pass"), so the time and CPU rows are measured without it.
// Both: the job's CPU time (the client process's user + system, the same for both clients).
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import * as fs from "node:fs"
import { Readable } from "node:stream"
import { request } from "undici"
import { loadSdk } from "./sdk.js"

// the built package, as users run it (bench/sdk.ts)
const {
  Computer,
  Extensions,
  Filesystem,
  Kernel,
  KernelConfig,
  KernelFiles,
  KernelTransport,
  Logs,
  Profiles,
  Replays
} = await loadSdk()

export type Kind =
  | "sse"
  | "upload-file"
  | "upload-stream"
  | "upload-multipart"
  | "download-replay"
  | "download-profile"
  | "download-extension"
  | "download-chrome-store"
  | "download-read-file"
  | "download-dir-zip"
  | "download-screenshot"

export interface Job {
  readonly client: "raw" | "sdk"
  readonly kind: Kind
  readonly size: number
  /** The file an upload reads (`upload-file`, `upload-multipart`). */
  readonly file?: string
}

export interface Quarter {
  readonly heapMiB: number
  readonly rssMiB: number
}

export interface Result {
  readonly client: "raw" | "sdk"
  readonly kind: Kind
  /** Events or bytes received or sent. */
  readonly count: number
  readonly seconds: number
  /** This process's CPU time (user + system) over the job, in seconds: the client's own work. */
  readonly cpuSeconds: number
  /** Measured in the "memory" mode only. */
  readonly heapGrowthMiB?: number
  readonly rssGrowthMiB?: number
  readonly quarters?: ReadonlyArray<Quarter>
}

/** What a child measures (see the module). */
export type Mode = "speed" | "memory"

const [base, jobsJson, modeArg] = [process.argv[2]!, process.argv[3]!, process.argv[4]]
const jobs: ReadonlyArray<Job> = JSON.parse(jobsJson)
if (modeArg !== "speed" && modeArg !== "memory") throw new Error(`mode must be "speed" or "memory", got ${modeArg}`)
const mode: Mode = modeArg
const headers = { authorization: "Bearer sk_bench" }
const chunkSize = 64 * 1024
const gc = (): void => {
  const collect: unknown = Reflect.get(globalThis, "gc")
  if (typeof collect !== "function") throw new Error("run with --expose-gc")
  collect()
}
const mib = (bytes: number) => bytes / 1024 / 1024

/** `size` bytes as fresh 64 KiB chunks (a source that does not reuse its buffers). */
function* freshChunks(size: number): Generator<Uint8Array> {
  for (let sent = 0; sent < size; sent += chunkSize) yield new Uint8Array(Math.min(chunkSize, size - sent)).fill(7)
}

/** What the server counted of the last upload. */
const uploaded = async () => {
  const response = await request(`${base}/_bench/received`, { headers })
  const body: { bytes: number } = JSON.parse(await response.body.text())
  return body.bytes
}

/**
 * The request of each download, as the SDK sends it (raw undici sends the same: method, path, its
 * `accept`, `accept-encoding: identity`, and no body, the screenshot's POST included).
 */
const downloadRequest = (
  kind: Kind,
  size: number
): { method: "GET" | "POST"; path: string; accept: string } => {
  const bytes = "application/octet-stream, application/json"
  switch (kind) {
    case "download-replay":
      return { method: "GET", path: `/browsers/b1/replays/${size}`, accept: "video/mp4, application/json" }
    case "download-profile":
      return { method: "GET", path: `/profiles/${size}/download`, accept: bytes }
    case "download-extension":
      return { method: "GET", path: `/extensions/${size}`, accept: bytes }
    case "download-chrome-store":
      return { method: "GET", path: `/extensions/from_chrome_store?url=${size}`, accept: bytes }
    case "download-read-file":
      return { method: "GET", path: `/browsers/b1/fs/read_file?path=%2F${size}`, accept: bytes }
    case "download-dir-zip":
      return {
        method: "GET",
        path: `/browsers/b1/fs/download_dir_zip?path=%2F${size}`,
        accept: "application/zip, application/json"
      }
    default:
      return { method: "POST", path: `/browsers/${size}/computer/screenshot`, accept: "image/png, application/json" }
  }
}

/** The memory at each quarter of `total` events: filled by `onEvent(count)`. */
const quarterWatch = (total: number) => {
  const quarters: Array<Quarter> = []
  const marks = [1, 2, 3, 4].map((q) => Math.floor(total * q / 4))
  return {
    quarters,
    onEvent: (count: number) => {
      if (count === marks[quarters.length]) {
        gc()
        const m = process.memoryUsage()
        quarters.push({ heapMiB: mib(m.heapUsed + m.external), rssMiB: mib(m.rss) })
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// raw undici: the floor
// ---------------------------------------------------------------------------------------------

/** A hand-written SSE reader: frames split at blank lines, `data:` lines joined and `JSON.parse`d. */
const rawSse = async (count: number, onEvent: (count: number) => void): Promise<number> => {
  const response = await request(`${base}/browsers/b1/logs/stream?source=path&follow=false&path=${count}`, { headers })
  const decoder = new TextDecoder()
  let buffer = ""
  let events = 0
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Buffer, { stream: true })
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let data = ""
      for (const line of frame.split("\n")) {
        if (line.startsWith("data:")) data += (data === "" ? "" : "\n") + line.slice(line[5] === " " ? 6 : 5)
      }
      const event: { event?: unknown } = JSON.parse(data)
      if (event.event === "log") onEvent(++events)
    }
  }
  return events
}

const rawJob = async (job: Job, onEvent: (count: number) => void): Promise<number> => {
  switch (job.kind) {
    case "sse":
      return rawSse(job.size, onEvent)
    case "upload-file":
    case "upload-stream": {
      const body = job.kind === "upload-file"
        ? fs.createReadStream(job.file!, { highWaterMark: chunkSize })
        : Readable.from(freshChunks(job.size), { objectMode: false })
      // the request the SDK sends: a file's length declared (it measures the file), a stream's not
      const length = job.kind === "upload-file" ? { "content-length": String(fs.statSync(job.file!).size) } : {}
      const response = await request(`${base}/browsers/b1/fs/write_file?path=/bench`, {
        method: "PUT",
        headers: { ...headers, "content-type": "application/octet-stream", ...length },
        body
      })
      await response.body.dump()
      return uploaded()
    }
    case "upload-multipart":
      throw new Error("no raw multipart row")
    default: {
      const { accept, method, path } = downloadRequest(job.kind, job.size)
      const response = await request(`${base}${path}`, {
        method,
        headers: { ...headers, accept, "accept-encoding": "identity" },
        body: method === "POST" ? "" : null
      })
      let received = 0
      for await (const chunk of response.body) received += (chunk as Buffer).length
      return received
    }
  }
}

// ---------------------------------------------------------------------------------------------
// effect-kernel on KernelTransport, through the public API
// ---------------------------------------------------------------------------------------------

const runtime = ManagedRuntime.make(
  Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make("sk_bench"), baseUrl: base, maxRetries: 0 })),
    Layer.provide(KernelTransport.layerUndici),
    Layer.orDie
  )
)

const count = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>) => Stream.runFold(bytes, 0, (n, chunk) => n + chunk.length)

const sdkJob = (job: Job, onEvent: (count: number) => void) => {
  const id = "b1"
  switch (job.kind) {
    case "sse":
      return Logs.stream({ id, source: "path", follow: false, path: String(job.size) }).pipe(
        Effect.flatMap(Stream.runFold(0, (n) => {
          onEvent(n + 1)
          return n + 1
        }))
      )
    case "upload-file":
      return Effect.zipRight(
        Filesystem.writeFile({ id, path: "/bench", contents: KernelFiles.file(job.file!) }),
        Effect.promise(uploaded)
      )
    case "upload-stream":
      return Effect.zipRight(
        Filesystem.writeFile({ id, path: "/bench", contents: Stream.fromIteratorSucceed(freshChunks(job.size), 1) }),
        Effect.promise(uploaded)
      )
    case "upload-multipart":
      return Effect.zipRight(
        Filesystem.upload({ id, files: [{ file: KernelFiles.file(job.file!), dest_path: "/home/user/bench.bin" }] }),
        Effect.promise(uploaded)
      )
    case "download-replay":
      return count(Replays.download({ id, replayId: String(job.size) }))
    case "download-profile":
      return Effect.flatMap(
        Profiles.download({ idOrName: String(job.size) }),
        (outcome) => outcome._tag === "Ok" ? count(outcome.value) : Effect.succeed(-1)
      )
    case "download-extension":
      return Effect.flatMap(Extensions.download({ idOrName: String(job.size) }), count)
    case "download-chrome-store":
      return Effect.flatMap(Extensions.downloadFromChromeStore({ url: String(job.size) }), count)
    case "download-read-file":
      return Effect.flatMap(Filesystem.readFile({ id, path: `/${job.size}` }), count)
    case "download-dir-zip":
      return Effect.flatMap(Filesystem.downloadDirZip({ id, path: `/${job.size}` }), count)
    case "download-screenshot":
      return Effect.flatMap(Computer.captureScreenshot({ id: String(job.size) }), count)
  }
}

const runJob = (job: Job, onEvent: (count: number) => void): Promise<number> =>
  job.client === "raw" ? rawJob(job, onEvent) : runtime.runPromise(sdkJob(job, onEvent))

const results: Array<Result> = []
for (const job of jobs) {
  // warm-up: compiled code paths and an open connection (a quarter of the size, at most 16 MiB / 100,000 events)
  const warm = Math.max(1, Math.min(Math.floor(job.size / 4), job.kind === "sse" ? 100_000 : 16 * 1024 * 1024))
  await runJob({ ...job, size: warm }, () => {})
  if (mode === "memory") gc()
  const before = process.memoryUsage()
  const inUse = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external
  let peakInUse = inUse(before)
  let peakRss = before.rss
  const sample = () => {
    const m = process.memoryUsage()
    peakInUse = Math.max(peakInUse, inUse(m))
    peakRss = Math.max(peakRss, m.rss)
  }
  const sampler = mode === "memory" ? setInterval(sample, 5) : undefined
  const watch = mode === "memory" && job.kind === "sse" ? quarterWatch(job.size) : undefined
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  const received = await runJob(job, watch?.onEvent ?? (() => {}))
  const cpu = process.cpuUsage(cpuBefore)
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  sample()
  // an upload's body is the file (or stream) and, for multipart, its framing
  const expected = job.kind === "upload-multipart" ? received >= job.size : received === job.size
  if (!expected) throw new Error(`${job.client} ${job.kind}: ${received} for ${job.size}`)
  results.push({
    client: job.client,
    kind: job.kind,
    count: received,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    ...(mode === "memory"
      ? { heapGrowthMiB: mib(peakInUse - inUse(before)), rssGrowthMiB: mib(peakRss - before.rss) }
      : {}),
    ...(watch === undefined ? {} : { quarters: watch.quarters })
  })
}
await runtime.dispose()
process.stdout.write(JSON.stringify(results) + "\n")
process.exit(0)
