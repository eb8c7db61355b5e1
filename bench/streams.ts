/**
 * The events-and-files rows of `npm run bench` (issue 19): an event stream (`Logs.stream`), uploads
 * (`Filesystem.writeFile`'s raw body from a file and from a `Stream`, a multipart `Filesystem.upload`
 * of the same file) and the seven downloads, effect-kernel on `KernelTransport.layerUndici` against
 * raw undici (a hand-written SSE reader with `JSON.parse` for the events) on bench/server.mjs. Each
 * group runs in a fresh child (bench/streams-child.ts, with --expose-gc), the raw and SDK measurement
 * of each kind next to each other (so a ratio is of the same minute on a shared machine), for each
 * round. `run.ts --streams` runs only these rows.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import type { Job, Kind, Result } from "./streams-child.js"

/** The names of the two clients (raw undici: the run's floor, so the table prints the ratio). */
export const rawName = "raw undici.request"
export const sdkName = "effect-kernel (KernelTransport.layerUndici)"

/** The sizes of a run: events of the event stream, bytes of an upload and of a download. */
export const streamsSizes = (quick: boolean) => ({
  events: quick ? 400_000 : 10_000_000,
  upload: quick ? 64 * 1024 * 1024 : 1024 * 1024 * 1024,
  download: quick ? 32 * 1024 * 1024 : 256 * 1024 * 1024,
  /** How many times a round measures each download (each one a sample). */
  downloadReps: quick ? 1 : 3
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
  const file = makeFile(sizes.upload)
  const child = (jobs: ReadonlyArray<Job>): ReadonlyArray<Result> => {
    const out = execFileSync(
      process.execPath,
      ["--expose-gc", "--import", options.tsxLoader, `${here}streams-child.ts`, base, JSON.stringify(jobs)],
      { encoding: "utf8", timeout: 900_000, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 }
    )
    return JSON.parse(out.trim().split("\n").at(-1)!)
  }
  const nameOf = (result: Result) => result.client === "raw" ? rawName : sdkName
  try {
    for (let round = 0; round < options.rounds; round++) {
      // raw and SDK next to each other, the one first in one round second in the next
      const pair = (job: Omit<Job, "client">): Array<Job> =>
        round % 2 === 0
          ? [{ ...job, client: "raw" }, { ...job, client: "sdk" }]
          : [{ ...job, client: "sdk" }, { ...job, client: "raw" }]
      for (const sse of child(pair({ kind: "sse", size: sizes.events }))) {
        record(metrics.sse, nameOf(sse), sse.count / sse.seconds)
        const quarters = sse.quarters!
        record(metrics.sseHeap, nameOf(sse), quarters[3]!.heapMiB - quarters[1]!.heapMiB)
        record(metrics.sseRss, nameOf(sse), quarters[3]!.rssMiB - quarters[1]!.rssMiB)
      }
      const uploads = child([
        ...pair({ kind: "upload-file", size: sizes.upload, file }),
        ...pair({ kind: "upload-stream", size: sizes.upload }),
        { client: "sdk", kind: "upload-multipart", size: sizes.upload, file }
      ])
      for (const result of uploads) {
        const [metric, what] = result.kind === "upload-file"
          ? [metrics.uploadFile, "writeFile from a file"]
          : result.kind === "upload-stream"
          ? [metrics.uploadStream, "writeFile from a Stream"]
          : [metrics.uploadMultipart, "multipart from a file"]
        // MB/s of the file's bytes (a multipart body adds its framing)
        record(metric, nameOf(result), sizes.upload / 1e6 / result.seconds)
        record(metrics.uploadHeap(what), nameOf(result), result.heapGrowthMiB)
      }
      // each download `downloadReps` times a round (raw and SDK next to each other each time): a 256 MiB
      // download takes a fraction of a second, shorter than the load swings of a shared machine
      const jobs = downloads.flatMap(([kind]) =>
        Array.from({ length: sizes.downloadReps }, () => pair({ kind, size: sizes.download })).flat()
      )
      for (const result of child(jobs)) {
        const operation = downloads.find(([kind]) => kind === result.kind)![1]
        record(metrics.download(operation), nameOf(result), result.count / 1e6 / result.seconds)
        record(metrics.downloadHeap(operation), nameOf(result), result.heapGrowthMiB)
      }
    }
  } finally {
    fs.rmSync(nodePath.dirname(file), { recursive: true, force: true })
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
  for (
    const [metric, what] of [
      [metrics.uploadFile, "writeFile from a file"],
      [metrics.uploadStream, "writeFile from a Stream"]
    ] as const
  ) {
    targets.push([
      `upload ${metrics.uploadSize} MB/s, ${what}, KernelTransport / raw undici`,
      ratio(med(metric, sdkName), med(metric, rawName)),
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
  // the multipart body's time over the raw body's (same file, same transport), minus one
  const multipart = ratio(med(metrics.uploadFile, sdkName), med(metrics.uploadMultipart, sdkName))
  targets.push([
    `upload ${metrics.uploadSize}: multipart overhead, share of the raw body's time`,
    multipart === undefined ? undefined : multipart - 1,
    "<=",
    0.1
  ])
  for (const [, operation] of downloads) {
    targets.push([
      `download ${metrics.downloadSize} MB/s, ${operation}, KernelTransport / raw undici`,
      ratio(med(metrics.download(operation), sdkName), med(metrics.download(operation), rawName)),
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
