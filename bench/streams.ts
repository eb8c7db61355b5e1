/**
 * The events-and-files rows of `npm run bench` (issue 19): an event stream (`Logs.stream`), uploads
 * (`Filesystem.writeFile`'s raw body from a file and from a `Stream`, a multipart `Filesystem.upload`
 * of the same file) and the seven downloads, effect-kernel on `KernelTransport.layerUndici` against
 * raw undici (a hand-written SSE reader with `JSON.parse` for the events) on bench/server.mjs. Each
 * group runs in two fresh children (bench/streams-child.ts, with --expose-gc), the raw and SDK
 * measurement of each kind next to each other (so a ratio is of the same minute on a shared machine),
 * several alternating pairs of each upload and download a round ({@link streamsSizes}): one child
 * measures time and CPU with no collection forced, the other the memory rows, each job after a forced
 * collection (the module of streams-child.ts says why the two are apart; its time ratios are printed as
 * information, `…, after a forced collection`). A ratio target is the median of the pairs' own ratios
 * (the `…, each adjacent pair` rows); the MB/s rows are the medians of every sample. `run.ts --streams`
 * runs only these rows.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import type { Job, Kind, Mode, Result } from "./streams-child.js"

/** The names of the two clients (raw undici: the run's floor, so the table prints the ratio). */
export const rawName = "raw undici.request"
export const sdkName = "effect-kernel (KernelTransport.layerUndici)"

/**
 * The sizes of a run: events of the event stream, bytes of an upload and of a download, and how many
 * alternating raw/SDK pairs a round measures of each upload and download (a full run: 3 rounds, so 6
 * upload pairs of 1 GiB and 45 download pairs of 256 MiB; `--quick`: 5 and 25 in its one round). One
 * pair is a fraction of a second to a few seconds, shorter than the load swings of a shared machine
 * (a single pair measured 0.57× to 1.2× in one hour): the targets read the median of the pairs. A
 * download of 256 MiB takes 50–100 ms on loopback (32 MiB: under 10 ms), and single download pairs
 * measured 0.23× to 3.35× within one run: 9 pairs a round (27 a run) left the median of a row to that
 * noise, so the pairs of the seven downloads are also interleaved (the first pair of each, then the
 * second...), so that a slow minute falls on every row rather than on the one measured then.
 */
export const streamsSizes = (quick: boolean) => ({
  events: quick ? 400_000 : 10_000_000,
  upload: quick ? 64 * 1024 * 1024 : 1024 * 1024 * 1024,
  download: quick ? 32 * 1024 * 1024 : 256 * 1024 * 1024,
  uploadPairs: quick ? 5 : 2,
  downloadPairs: quick ? 25 : 15
})

const label = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : `${Math.round(bytes / 1024 / 1024)} MiB`

const downloads: ReadonlyArray<readonly [Kind, string]> = [
  ["download-replay", "Replays.download"],
  ["download-profile", "Profiles.download"],
  ["download-extension", "Extensions.download"],
  ["download-chrome-store", "Extensions.downloadFromChromeStore"],
  ["download-read-file", "Filesystem.readFile"],
  ["download-dir-zip", "Filesystem.downloadDirZip"],
  ["download-screenshot", "Computer.captureScreenshot"]
]

/** The metric names of a run (the table's rows and the targets read the same). */
export const streamsMetrics = (quick: boolean) => {
  const sizes = streamsSizes(quick)
  const events = `${sizes.events.toLocaleString("en-US")} events`
  const upload = label(sizes.upload)
  const download = label(sizes.download)
  return {
    sse: `SSE, Logs.stream, ${events} (events/s)`,
    sseHeap: `SSE, ${events}: JS heap + buffers after GC, growth 2nd → 4th quarter (MiB)`,
    sseRss: `SSE, ${events}: RSS, growth 2nd → 4th quarter (MiB)`,
    uploadFile: `upload ${upload}, Filesystem.writeFile from a file (MB/s)`,
    uploadStream: `upload ${upload}, Filesystem.writeFile from a Stream (MB/s)`,
    uploadMultipart: `upload ${upload}, Filesystem.upload (multipart) from a file (MB/s)`,
    uploadHeap: (what: string) => `upload ${upload}, ${what}: peak JS heap + buffers growth (MiB)`,
    download: (name: string) => `download ${download}, ${name} (MB/s)`,
    downloadHeap: (name: string) => `download ${download}, ${name}: peak JS heap + buffers growth (MiB)`,
    /** The ratio of one adjacent pair (SDK / raw MB/s; multipart / raw body time): a sample each. */
    uploadPair: (what: string) => `upload ${upload}, ${what}: KernelTransport / raw undici MB/s, each adjacent pair`,
    multipartPair: `upload ${upload}, multipart / raw body time on KernelTransport, each adjacent pair`,
    downloadPair: (name: string) =>
      `download ${download}, ${name}: KernelTransport / raw undici MB/s, each adjacent pair`,
    /**
     * Information, no target: the client process's CPU time of the SDK over raw undici's, per adjacent
     * pair (the client shares the machine's cores with the server: its CPU per byte is in the MB/s).
     */
    uploadCpuPair: (what: string) => `upload ${upload}, ${what}: client CPU, KernelTransport / raw undici, each pair`,
    downloadCpuPair: (name: string) =>
      `download ${download}, ${name}: client CPU, KernelTransport / raw undici, each pair`,
    /**
     * Information, no target: the same ratios (SDK / raw events/s or MB/s) measured in the memory child,
     * each job right after a forced collection (what the time rows measured before the two were apart).
     */
    afterGcPair: (what: string) => `${what}: KernelTransport / raw undici, each pair, after a forced collection`,
    uploadSize: upload,
    downloadSize: download
  }
}

/** A file of `size` bytes (not all one value) for the upload rows; removed by the caller. */
const makeFile = (size: number): string => {
  const path = nodePath.join(fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-bench-")), "upload.bin")
  const block = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < block.length; i++) block[i] = (i * 31 + 7) & 0xff
  const fd = fs.openSync(path, "w")
  try {
    for (let written = 0; written < size; written += block.length) {
      fs.writeSync(fd, block, 0, Math.min(block.length, size - written))
    }
  } finally {
    fs.closeSync(fd)
  }
  return path
}

/**
 * Runs the rows, `rounds` times: each group (events, uploads, downloads) in a child per client.
 * `record(metric, client, value)` adds a sample.
 */
export const runStreams = (options: {
  readonly quick: boolean
  readonly rounds: number
  readonly base: string
  readonly tsxLoader: string
  readonly record: (metric: string, client: string, value: number) => void
}): void => {
  const { base, quick, record } = options
  const sizes = streamsSizes(quick)
  const metrics = streamsMetrics(quick)
  const here = new URL(".", import.meta.url).pathname
  const path = makeFile(sizes.upload)
  const child = (jobs: ReadonlyArray<Job>, mode: Mode): ReadonlyArray<Result> => {
    const out = execFileSync(
      process.execPath,
      ["--expose-gc", "--import", options.tsxLoader, `${here}streams-child.ts`, base, JSON.stringify(jobs), mode],
      { encoding: "utf8", timeout: 900_000, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 }
    )
    return JSON.parse(out.trim().split("\n").at(-1)!)
  }
  /**
   * The same jobs measured for time (no forced collection) and for memory, the first one each round in turn.
   * `memoryApart`: each job's memory in a fresh child of its own. A 1 GiB upload's peak is mostly the
   * garbage of its own chunks waiting for a collection, and when that comes depends on V8's limits, which
   * the jobs before it in the same process have raised: in one child after the file uploads, raw undici's
   * own Stream upload read 43-53 MiB, and 20-23 MiB in a child of its own (docs/performance.md).
   */
  const both = (jobs: ReadonlyArray<Job>, round: number, memoryApart = false) => {
    const memoryOf = () => memoryApart ? jobs.flatMap((job) => child([job], "memory")) : child(jobs, "memory")
    if (round % 2 === 0) {
      const speed = child(jobs, "speed")
      return { speed, memory: memoryOf() }
    }
    const memory = memoryOf()
    return { speed: child(jobs, "speed"), memory }
  }
  const heapOf = (result: Result): number => {
    if (result.heapGrowthMiB === undefined) throw new Error(`${result.client} ${result.kind}: no memory figure`)
    return result.heapGrowthMiB
  }
  const nameOf = (result: Result) => result.client === "raw" ? rawName : sdkName
  /** The result of `jobs[i]` that matches (its client and kind), by the jobs' order. */
  const resultOf = (jobs: ReadonlyArray<Job>, results: ReadonlyArray<Result>, client: Job["client"], kind: Kind) =>
    results[jobs.findIndex((job) => job.client === client && job.kind === kind)]!
  const secondsOf = (jobs: ReadonlyArray<Job>, results: ReadonlyArray<Result>, client: Job["client"], kind: Kind) =>
    resultOf(jobs, results, client, kind).seconds
  const cpuOf = (jobs: ReadonlyArray<Job>, results: ReadonlyArray<Result>, client: Job["client"], kind: Kind) =>
    resultOf(jobs, results, client, kind).cpuSeconds
  try {
    for (let round = 0; round < options.rounds; round++) {
      // raw and SDK next to each other, the one first in one pair second in the next
      const pair = (job: Omit<Job, "client">, flip: number): Array<Job> =>
        flip % 2 === 0
          ? [{ ...job, client: "raw" }, { ...job, client: "sdk" }]
          : [{ ...job, client: "sdk" }, { ...job, client: "raw" }]
      const sseJobs = pair({ kind: "sse", size: sizes.events }, round)
      const sse = both(sseJobs, round)
      for (const result of sse.speed) record(metrics.sse, nameOf(result), result.count / result.seconds)
      for (const result of sse.memory) {
        const quarters = result.quarters!
        record(metrics.sseHeap, nameOf(result), quarters[3]!.heapMiB - quarters[1]!.heapMiB)
        record(metrics.sseRss, nameOf(result), quarters[3]!.rssMiB - quarters[1]!.rssMiB)
      }
      // events/s over events/s of the same count: the raw one's time over the SDK's
      record(
        metrics.afterGcPair(metrics.sse),
        sdkName,
        secondsOf(sseJobs, sse.memory, "raw", "sse") / secondsOf(sseJobs, sse.memory, "sdk", "sse")
      )
      // `uploadPairs` sets of: a file on raw undici and on the SDK, the same file as a multipart body
      // on the SDK next to the SDK's raw body (the multipart overhead is their ratio, one minute's), a
      // Stream on raw undici and on the SDK; each set in the other order from the one before
      const uploadSets = Array.from({ length: sizes.uploadPairs }, (_, set): Array<Job> => {
        const flip = round * sizes.uploadPairs + set
        const file: Array<Job> = [
          { client: "raw", kind: "upload-file", size: sizes.upload, file: path },
          { client: "sdk", kind: "upload-file", size: sizes.upload, file: path },
          { client: "sdk", kind: "upload-multipart", size: sizes.upload, file: path }
        ]
        return [
          ...(flip % 2 === 0 ? file : file.reverse()),
          ...pair({ kind: "upload-stream", size: sizes.upload }, flip)
        ]
      })
      const uploads = both(uploadSets.flat(), round, true)
      uploadSets.forEach((jobs, set) => {
        const results = uploads.speed.slice(set * jobs.length, (set + 1) * jobs.length)
        const memory = uploads.memory.slice(set * jobs.length, (set + 1) * jobs.length)
        const whatOf = (kind: Kind) =>
          kind === "upload-file"
            ? "writeFile from a file"
            : kind === "upload-stream"
            ? "writeFile from a Stream"
            : "multipart from a file"
        for (const result of results) {
          const metric = result.kind === "upload-file"
            ? metrics.uploadFile
            : result.kind === "upload-stream"
            ? metrics.uploadStream
            : metrics.uploadMultipart
          // MB/s of the file's bytes (a multipart body adds its framing)
          record(metric, nameOf(result), sizes.upload / 1e6 / result.seconds)
        }
        for (const result of memory) record(metrics.uploadHeap(whatOf(result.kind)), nameOf(result), heapOf(result))
        for (const kind of ["upload-file", "upload-stream"] as const) {
          const what = whatOf(kind)
          // MB/s over MB/s of the same bytes: the raw one's time over the SDK's
          record(
            metrics.uploadPair(what),
            sdkName,
            secondsOf(jobs, results, "raw", kind) / secondsOf(jobs, results, "sdk", kind)
          )
          record(
            metrics.uploadCpuPair(what),
            sdkName,
            cpuOf(jobs, results, "sdk", kind) / cpuOf(jobs, results, "raw", kind)
          )
          record(
            metrics.afterGcPair(`upload ${metrics.uploadSize} MB/s, ${what}`),
            sdkName,
            secondsOf(jobs, memory, "raw", kind) / secondsOf(jobs, memory, "sdk", kind)
          )
        }
        record(
          metrics.multipartPair,
          sdkName,
          secondsOf(jobs, results, "sdk", "upload-multipart") / secondsOf(jobs, results, "sdk", "upload-file")
        )
      })
      // `downloadPairs` pairs of each download a round, raw and SDK next to each other: a 256 MiB download
      // takes a fraction of a second, shorter than the load swings of a shared machine
      const downloadPairs = Array.from(
        { length: sizes.downloadPairs },
        (_, n) => downloads.map(([kind]) => pair({ kind, size: sizes.download }, round + n))
      ).flat()
      const results = both(downloadPairs.flat(), round)
      downloadPairs.forEach((jobs, n) => {
        const speed = results.speed.slice(n * 2, n * 2 + 2)
        const memory = results.memory.slice(n * 2, n * 2 + 2)
        const kind = jobs[0]!.kind
        const operation = downloads.find(([each]) => each === kind)![1]
        for (const result of speed) {
          record(metrics.download(operation), nameOf(result), result.count / 1e6 / result.seconds)
        }
        for (const result of memory) record(metrics.downloadHeap(operation), nameOf(result), heapOf(result))
        record(
          metrics.downloadPair(operation),
          sdkName,
          secondsOf(jobs, speed, "raw", kind) / secondsOf(jobs, speed, "sdk", kind)
        )
        record(
          metrics.downloadCpuPair(operation),
          sdkName,
          cpuOf(jobs, speed, "sdk", kind) / cpuOf(jobs, speed, "raw", kind)
        )
        record(
          metrics.afterGcPair(`download ${metrics.downloadSize} MB/s, ${operation}`),
          sdkName,
          secondsOf(jobs, memory, "raw", kind) / secondsOf(jobs, memory, "sdk", kind)
        )
      })
    }
  } finally {
    fs.rmSync(nodePath.dirname(path), { recursive: true, force: true })
  }
}

/** The targets of issue 19, from this run's medians (`med(metric, client)`). */
export const streamsTargets = (
  quick: boolean,
  med: (metric: string, client: string) => number | undefined
): Array<[string, number | undefined, ">=" | "<=", number]> => {
  const metrics = streamsMetrics(quick)
  const ratio = (a: number | undefined, b: number | undefined) => a === undefined || b === undefined ? undefined : a / b
  const targets: Array<[string, number | undefined, ">=" | "<=", number]> = [
    ["SSE: events/s decoded, effect-kernel (Logs.stream)", med(metrics.sse, sdkName), ">=", 100_000],
    [
      "SSE: events/s, effect-kernel / raw undici + hand-written reader + JSON.parse",
      ratio(med(metrics.sse, sdkName), med(metrics.sse, rawName)),
      ">=",
      0.8
    ],
    ["SSE: JS heap + buffers (after GC), growth 2nd → 4th quarter (MiB)", med(metrics.sseHeap, sdkName), "<=", 1],
    ["SSE: RSS, growth 2nd → 4th quarter (MiB)", med(metrics.sseRss, sdkName), "<=", 8]
  ]
  // the median of the adjacent pairs' ratios (the ratio of the MB/s medians is in the table's rows)
  for (const what of ["writeFile from a file", "writeFile from a Stream"]) {
    targets.push([
      `upload ${metrics.uploadSize} MB/s, ${what}, KernelTransport / raw undici`,
      med(metrics.uploadPair(what), sdkName),
      ">=",
      0.9
    ])
  }
  for (const what of ["writeFile from a file", "writeFile from a Stream", "multipart from a file"]) {
    targets.push([
      `upload ${metrics.uploadSize}, ${what}: peak JS heap + buffers growth (MiB)`,
      med(metrics.uploadHeap(what), sdkName),
      "<=",
      48
    ])
  }
  // the multipart body's time over the raw body's (same file, same transport, next to each other), minus
  // one: the median of the sets
  const multipart = med(metrics.multipartPair, sdkName)
  targets.push([
    `upload ${metrics.uploadSize}: multipart overhead, share of the raw body's time`,
    multipart === undefined ? undefined : multipart - 1,
    "<=",
    0.1
  ])
  for (const [, operation] of downloads) {
    targets.push([
      `download ${metrics.downloadSize} MB/s, ${operation}, KernelTransport / raw undici`,
      med(metrics.downloadPair(operation), sdkName),
      ">=",
      0.95
    ])
    targets.push([
      `download ${metrics.downloadSize}, ${operation}: peak JS heap + buffers growth (MiB)`,
      med(metrics.downloadHeap(operation), sdkName),
      "<=",
      48
    ])
  }
  return targets
}
