/**
 * A JSON answer dripped one byte per read (a hostile server that never trips the idle time-out):
 * while it is read the client holds about its bytes, not an object per read (a Uint8Array kept per
 * chunk, or a cons-string node per decoded piece), on every transport, plain and gzip-encoded.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { KernelTransport } from "effect-kernel"
import { spawn } from "node:child_process"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { decodeJson } from "../src/internal/responseBody.js"

/** How many bytes of the body are dripped before the client's memory is measured. */
const dripped = 300_000

/**
 * A loopback server in a child process (its write queues are not this process's memory): it answers
 * `/plain?drip=N` or `/gzip?drip=N` with `{"a":"<letters>"}`, the first N bytes (as sent) written one
 * per HTTP chunk with back-pressure, prints "held" and waits for a line on stdin before the rest.
 */
const serverSource = `
const http = require("node:http"), zlib = require("node:zlib")
const letters = Array.from({ length: ${
  dripped + 1000
} }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join("")
const json = Buffer.from(JSON.stringify({ a: letters }))
let release
process.stdin.on("data", () => release && release())
const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://localhost")
  const gzip = url.pathname === "/gzip"
  const drip = Number(url.searchParams.get("drip"))
  const body = gzip ? zlib.gzipSync(json, { level: 0 }) : json
  req.socket.setNoDelay(true)
  res.writeHead(200, gzip ? { "content-type": "application/json", "content-encoding": "gzip" } : { "content-type": "application/json" })
  let i = 0
  const pump = () => {
    while (i < drip) {
      if (!res.write(body.subarray(i, i + 1))) { i++; res.once("drain", pump); return }
      i++
    }
    release = () => { release = undefined; res.end(body.subarray(i)) }
    res.write(body.subarray(i, i + 1), () => process.stdout.write("held\\n"))
    i++
  }
  pump()
})
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

const letters = Array.from({ length: dripped + 1000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join("")

const server = Effect.acquireRelease(
  Effect.async<{ port: number; held: Effect.Effect<void>; release: () => void; kill: () => void }>((resume) => {
    const child = spawn(process.execPath, ["-e", serverSource], { stdio: ["pipe", "pipe", "inherit"] })
    let port = 0
    let isHeld = false
    let onHeld: (() => void) | undefined
    let buffered = ""
    child.stdout.on("data", (data: Buffer) => {
      buffered += data.toString()
      const lines = buffered.split("\n")
      buffered = lines.pop() ?? ""
      for (const line of lines) {
        if (line === "held") {
          isHeld = true
          onHeld?.()
        } else {
          port = Number(line)
          resume(Effect.succeed({
            port,
            held: Effect.async<void>((done) => {
              if (isHeld) done(Effect.void)
              else onHeld = () => done(Effect.void)
            }),
            release: () => child.stdin.write("go\n"),
            kill: () => child.kill()
          }))
        }
      }
    })
  }),
  (s) => Effect.sync(() => s.kill())
)

setFlagsFromString("--expose_gc")
const gc: unknown = runInNewContext("gc")
const collect = () => {
  if (typeof gc === "function") gc()
}
const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers

const transports: ReadonlyArray<readonly [string, Layer.Layer<HttpClient.HttpClient>]> = [
  ["KernelTransport", KernelTransport.layerUndici],
  ["NodeHttpClient.layerUndici", NodeHttpClient.layerUndici],
  ["FetchHttpClient", FetchHttpClient.layer]
]
/**
 * With gzip, fetch decodes the body itself (npm undici on Node 20, Node's bundled undici on 22 and 24):
 * what its stream queues varies with the runtime and the machine's load (2.8 MB alone, 16.3 MB in a CI
 * run on Node 22), and it inflates one byte per read slowly (10-15 s for 300,000 bytes in CI runs on
 * Node 20 and 22, once past 20 s). Not the SDK's memory or time: that case drips fewer bytes and only
 * its answer is checked.
 */
const judged = (name: string, coding: string) => !(name === "FetchHttpClient" && coding === "gzip")

const cases = transports.flatMap(([name, layer]) =>
  (["plain", "gzip"] as const).map((coding) =>
    [`${name}, ${coding}`, layer, coding, judged(name, coding) ? dripped : 20_000] as const
  )
)

describe("a JSON answer dripped one byte per read", () => {
  it.live.each(cases)(
    "%s: holds about its bytes while it is read",
    ([name, layer, coding, drip]) =>
      Effect.gen(function*() {
        const { held, port, release } = yield* server
        const client = yield* HttpClient.HttpClient
        const request = HttpClientRequest.get(`http://127.0.0.1:${port}/${coding}?drip=${drip}`)
        const started = yield* Deferred.make<void>()
        collect()
        const before = used()
        const fiber = yield* Effect.fork(Effect.scoped(Effect.gen(function*() {
          const wrapped = yield* client.execute(request)
          // the platform's response for fetch is wrapped (interruption); the SDK's own client hands
          // decodeJson the transport's, whose `source` says fetch decoded the body itself
          const response = "original" in wrapped && "controller" in wrapped
            ? (wrapped.original as HttpClientResponse.HttpClientResponse)
            : wrapped
          yield* Deferred.succeed(started, undefined)
          return yield* decodeJson(Schema.Struct({ a: Schema.String }))(request)(response)
        })))
        yield* Deferred.await(started)
        yield* held
        // the client's reads of what the server wrote
        yield* Effect.sleep("400 millis")
        collect()
        const heldBytes = used() - before
        console.log(`${name}: ${drip} bytes dripped, ${(heldBytes / 1e6).toFixed(1)} MB held`)
        release()
        const answer = yield* Fiber.join(fiber)
        expect(answer.a).toBe(letters)
        // a buffer that doubles holds at most about twice the bytes read: ~0.6 MB here. The bound leaves
        // room for the platform's own pieces (3.6 MB seen on Node 24): one object per read, as before the
        // fix, held 34 MB here. fetch with gzip: only its answer is checked (see `judged`)
        if (drip === dripped) expect(heldBytes).toBeLessThan(8_000_000)
      }).pipe(Effect.scoped, Effect.provide(layer)),
    { timeout: 20_000 }
  )
})
