/**
 * Runs hostile server behaviours back to back on every transport, many times, in this process:
 * `Connection: close` after bodies the SDK does not read whole (a large error body, a large 202
 * body, a JSON body, a replay abandoned after its first chunk), bodies cut by an early close.
 * On undici 7 a response body left paused when the peer closes crashes the process
 * (`assert(!this.paused)`, nodejs/undici#5360): test/hostile.test.ts runs this file in a child
 * process and asserts it exits 0 and prints its summary.
 *
 * Usage: tsx test/stress/hostile.ts [budgetMillis] [rounds]
 */
import type { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Redacted, Schedule, Stream } from "effect"
import { BrowserPools, Computer, Deployments, Kernel, KernelClient, KernelConfig, Replays } from "effect-kernel"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { transports } from "../utils/transports.js"

const budget = Number(process.argv[2] ?? 20_000) / transports.length
const maxRounds = Number(process.argv[3] ?? 1_000)
// body sizes cycled through the rounds: undici's body buffer holds 64 KiB, and the crash needs the
// parser to pause on the last bytes the socket delivers before its end
const sizes = [64 * 1024, 64 * 1024 + 1, 96 * 1024, 128 * 1024, 1024 * 1024]
let big = sizes[0]!

const ftypMdat = (size: number): Buffer => {
  const out = Buffer.alloc(size)
  out.writeUInt32BE(16, 0)
  out.write("ftypisom", 4, "latin1")
  out.writeUInt32BE(size - 16, 16)
  out.write("mdat", 20, "latin1")
  return out
}

type Handler = (socket: net.Socket) => void

const head = (status: string, headers: Record<string, string | number>): string =>
  `HTTP/1.1 ${status}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`

/** Writes the response, then ends the socket (FIN) once written. */
const sendAndClose = (
  status: string,
  headers: () => Record<string, string | number>,
  body: () => Buffer
): Handler =>
(socket) => {
  socket.write(head(status, { connection: "close", ...headers() }))
  socket.end(body())
}

const cases: Record<string, Handler> = {
  // an error body far larger than the SDK reads (64 KiB), then FIN
  bigError: sendAndClose(
    "500 Internal Server Error",
    () => ({ "content-type": "text/plain", "content-length": big }),
    () => Buffer.alloc(big, 0x61)
  ),
  // an error body to a download, which reads it in part
  bigErrorReplay: (socket) => cases.bigError!(socket),
  // the same without a length: close-delimited
  bigErrorClose: (socket) => {
    socket.write(head("503 Service Unavailable", { connection: "close", "content-type": "text/plain" }))
    socket.end(Buffer.alloc(big, 0x62))
  },
  // a 202 with a large body, then FIN; the SDK polls again at once
  big202: sendAndClose(
    "202 Accepted",
    () => ({ "retry-after": "0", "content-length": big }),
    () => Buffer.alloc(big, 0x63)
  ),
  // a JSON body larger than the socket buffers, then FIN
  bigJson: sendAndClose(
    "200 OK",
    () => ({ "content-type": "application/json" }),
    () => Buffer.from(JSON.stringify({ x: 1, y: 2, pad: "z".repeat(big) }))
  ),
  // a replay the consumer abandons after its first chunk
  replay: sendAndClose(
    "200 OK",
    () => ({ "content-type": "video/mp4", "content-length": 4 * big }),
    () => ftypMdat(4 * big)
  ),
  // a replay cut in the middle: Content-Length says more, then FIN
  replayCut: (socket) => {
    socket.write(head("200 OK", { connection: "close", "content-type": "video/mp4", "content-length": 4 * big }))
    socket.end(ftypMdat(4 * big).subarray(0, 2 * big))
  },
  // a replay cut by a reset
  replayReset: (socket) => {
    socket.write(head("200 OK", { "content-type": "video/mp4" }))
    socket.write(ftypMdat(4 * big).subarray(0, big), () => socket.resetAndDestroy())
  },
  // a 204 with Connection: close to a delete
  noContent: sendAndClose("204 No Content", () => ({}), () => Buffer.alloc(0)),
  // a 206 fragment with a large body
  partial: sendAndClose(
    "206 Partial Content",
    () => ({ "content-type": "video/mp4", "content-length": big }),
    () => ftypMdat(big)
  ),
  // a gzip-encoded "replay" and one with a wrong content type, both refused unread
  gzip: sendAndClose(
    "200 OK",
    () => ({ "content-type": "video/mp4", "content-encoding": "gzip", "content-length": big }),
    () => Buffer.alloc(big, 0x1f)
  ),
  // a large body to the escape-hatch client, whose caller reads only the status, or one chunk
  escapeStatus: sendAndClose(
    "200 OK",
    () => ({ "content-type": "application/octet-stream", "content-length": big }),
    () => Buffer.alloc(big, 0x65)
  ),
  escapeChunk: (socket) => cases.escapeStatus!(socket),
  html: sendAndClose(
    "200 OK",
    () => ({ "content-type": "text/html", "content-length": big }),
    () => Buffer.alloc(big, 0x3c)
  )
}

let current: Handler = cases.bigError!
const server = net.createServer((socket) => {
  socket.on("error", () => {})
  let seen = ""
  socket.on("data", (data) => {
    seen += data.toString("latin1")
    if (seen.includes("\r\n\r\n")) {
      seen = ""
      current(socket)
    }
  })
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const port = (server.address() as net.AddressInfo).port
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kernel-hostile-"))

const program = Effect.gen(function*() {
  const outcomes: Record<string, number> = {}
  const note = (name: string, tag: string) => (outcomes[`${name}:${tag}`] = (outcomes[`${name}:${tag}`] ?? 0) + 1)
  const settle = <A, E extends { readonly _tag: string }, R>(name: string, effect: Effect.Effect<A, E, R>) =>
    Effect.tap(
      Effect.either(effect),
      (result) => Effect.sync(() => note(name, result._tag === "Left" ? result.left._tag : "ok"))
    )
  const params = { id: "b", replayId: "r" }
  const steps: ReadonlyArray<[string, Effect.Effect<unknown, never, Kernel.Services | FileSystem.FileSystem>]> = [
    ["bigError", settle("bigError", Computer.getMousePosition({ id: "b" }))],
    ["bigErrorClose", settle("bigErrorClose", BrowserPools.list())],
    ["big202", settle("big202", Replays.download(params, { schedule: Schedule.recurs(3) }).pipe(Stream.runDrain))],
    ["bigJson", settle("bigJson", Computer.getMousePosition({ id: "b" }))],
    ["replay", settle("replay", Replays.download(params).pipe(Stream.take(1), Stream.runDrain))],
    ["replayCut", settle("replayCut", Replays.download(params).pipe(Stream.runDrain))],
    ["replayReset", settle("replayReset", Replays.download(params).pipe(Stream.runDrain))],
    ["noContent", settle("noContent", Deployments.delete({ id: "d" }))],
    ["partial", settle("partial", Replays.download(params).pipe(Stream.runDrain))],
    ["gzip", settle("gzip", Replays.download(params).pipe(Stream.runDrain))],
    ["html", settle("html", Replays.download(params).pipe(Stream.runDrain))],
    ["bigErrorReplay", settle("bigErrorReplay", Replays.download(params).pipe(Stream.runDrain))],
    [
      "escapeStatus",
      settle("escapeStatus", Effect.flatMap(KernelClient.KernelClient, ({ httpClient }) => httpClient.get("/raw")))
    ],
    [
      "escapeChunk",
      settle(
        "escapeChunk",
        Effect.flatMap(
          KernelClient.KernelClient,
          ({ httpClient }) =>
            Effect.flatMap(httpClient.get("/raw"), (response) => Stream.runDrain(Stream.take(response.stream, 1)))
        )
      )
    ]
  ]
  const only = process.argv[4]?.split(",")
  const chosen = only === undefined ? steps : steps.filter(([name]) => only.includes(name))
  const started = Date.now()
  let rounds = 0
  while (rounds < maxRounds && Date.now() - started < budget) {
    big = sizes[rounds % sizes.length]!
    for (const [name, step] of chosen) {
      current = cases[name]!
      yield* step
    }
    rounds++
  }
  return { rounds, outcomes }
})

const results: Array<string> = []
const onlyTransports = process.argv[5]?.split(",")
for (const transport of transports.filter((t) => onlyTransports === undefined || onlyTransports.includes(t.name))) {
  const layer = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make("sk_hostile"),
      baseUrl: `http://127.0.0.1:${port}`,
      retrySchedule: Schedule.recurs(1),
      timeout: "5 seconds",
      idleTimeout: "5 seconds"
    })),
    Layer.provide(transport.layer),
    Layer.merge(NodeFileSystem.layer)
  )
  const { outcomes, rounds } = await Effect.runPromise(
    Effect.provide(program, layer).pipe(Effect.timeout(budget + 10_000)) as Effect.Effect<
      { rounds: number; outcomes: Record<string, number> },
      unknown
    >
  )
  results.push(`${transport.name}: ${rounds} rounds ${JSON.stringify(outcomes)}`)
}
server.close()
fs.rmSync(dir, { recursive: true, force: true })
console.log(results.join("\n"))
console.log("hostile ok")
process.exit(0)
