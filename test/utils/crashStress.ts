/**
 * The undici 7 `assert(!this.paused)` stress (nodejs/undici#5360), run in a CHILD process because
 * the bug kills the process: hostile loopback servers (Connection: close, close-delimited bodies,
 * bodies cut by FIN or RST, chunked bodies cut mid-chunk) against clients that pause bodies (slow
 * consumers, late readers, abandoned responses, partial streams), back to back, bounded in count
 * and time. Exit code 0 and a JSON summary on the last line mean the process survived.
 *
 * Usage: tsx test/utils/crashStress.ts <kernel|platform-undici|fetch> [iterations] [seconds]
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientTag from "@effect/platform/HttpClient"
import { Duration, Effect, Layer, Stream } from "effect"
import * as Net from "node:net"
import { KernelTransport } from "../../src/index.js"

const transport = process.argv[2] ?? "kernel"
const iterations = Number(process.argv[3] ?? 40)
const seconds = Number(process.argv[4] ?? 20)

const layers: Record<string, Layer.Layer<HttpClient.HttpClient>> = {
  kernel: KernelTransport.layerUndici,
  "platform-undici": NodeHttpClient.layerUndici,
  fetch: FetchHttpClient.layer
}

/** The hostile behaviours: each writes a response (or part of one) and ends the connection its way. */
const behaviours: Record<string, (socket: Net.Socket) => void> = {
  // close-delimited (no Content-Length, not chunked): the end of the body IS the FIN
  closeDelimited: (socket) => {
    socket.write("HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nConnection: close\r\n\r\n")
    socket.end(Buffer.alloc(1024 * 1024, 7))
  },
  // complete body, then the server closes at once
  lengthThenClose: (socket) => {
    socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2097152\r\nConnection: close\r\n\r\n")
    socket.end(Buffer.alloc(2 * 1024 * 1024, 1))
  },
  // cut body: Content-Length says 4 MiB, 1 MiB comes, then FIN
  cutThenFin: (socket) => {
    socket.write("HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\nConnection: close\r\n\r\n")
    socket.end(Buffer.alloc(1024 * 1024, 2))
  },
  // cut body, then RST
  cutThenReset: (socket) => {
    socket.write("HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\nConnection: close\r\n\r\n")
    socket.write(Buffer.alloc(1024 * 1024, 3), () => setTimeout(() => socket.resetAndDestroy(), 5))
  },
  // close-delimited body, then RST
  closeDelimitedReset: (socket) => {
    socket.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
    socket.write(Buffer.alloc(512 * 1024, 4), () => setTimeout(() => socket.resetAndDestroy(), 5))
  },
  // chunked, cut in the middle of a chunk, then FIN
  chunkedCut: (socket) => {
    socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    socket.write(`100000\r\n`)
    socket.end(Buffer.alloc(600 * 1024, 5))
  },
  // HTTP/1.0: no keep-alive, close-delimited
  http10: (socket) => {
    socket.write("HTTP/1.0 200 OK\r\n\r\n")
    socket.end(Buffer.alloc(768 * 1024, 6))
  },
  // a 202 with a body, then close
  accepted: (socket) => {
    socket.write("HTTP/1.1 202 Accepted\r\nRetry-After: 0\r\nConnection: close\r\n\r\n")
    socket.end(Buffer.alloc(300 * 1024, 8))
  }
}

const listen = (behaviour: (socket: Net.Socket) => void) =>
  new Promise<{ server: Net.Server; url: string }>((resolve) => {
    const server = Net.createServer((socket) => {
      socket.on("error", () => {})
      let seen = ""
      socket.on("data", (data: Buffer) => {
        if (seen.includes("\r\n\r\n")) return
        seen += data.toString("latin1")
        if (seen.includes("\r\n\r\n")) behaviour(socket)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({ server, url: `http://127.0.0.1:${port}/x` })
    })
  })

/** How the client treats the body: each one leaves it paused in its own way. */
const consumers: Record<string, (response: { stream: Stream.Stream<Uint8Array, unknown> }) => Effect.Effect<unknown>> =
  {
    // reads late: the body is paused when the peer closes
    lateReader: (response) =>
      Effect.sleep(Duration.millis(40)).pipe(
        Effect.zipRight(Stream.runDrain(response.stream)),
        Effect.ignore
      ),
    // a slow consumer: a pause between chunks
    slowConsumer: (response) =>
      response.stream.pipe(
        Stream.tap(() => Effect.sleep(Duration.millis(2))),
        Stream.take(40),
        Stream.runDrain,
        Effect.ignore
      ),
    // takes one chunk and stops
    partial: (response) => response.stream.pipe(Stream.take(1), Stream.runDrain, Effect.ignore),
    // never reads: the response is dropped
    abandoned: () => Effect.sleep(Duration.millis(40))
  }

const started = Date.now()
const outcomes: Record<string, number> = {}
const program = Effect.gen(function*() {
  const http = yield* HttpClientTag.HttpClient
  const servers = yield* Effect.promise(() =>
    Promise.all(Object.entries(behaviours).map(async ([name, b]) => ({ name, ...(await listen(b)) })))
  )
  let done = 0
  for (let i = 0; i < iterations && (Date.now() - started) / 1000 < seconds; i++) {
    yield* Effect.forEach(
      servers,
      (server) =>
        Effect.forEach(Object.entries(consumers), ([consumerName, consume]) =>
          http.get(server.url).pipe(
            Effect.flatMap((response) => consume(response)),
            Effect.timeout(Duration.seconds(5)),
            Effect.exit,
            Effect.tap((exit) =>
              Effect.sync(() => {
                const key = `${exit._tag}`
                outcomes[key] = (outcomes[key] ?? 0) + 1
                void consumerName
              })
            )
          ), { concurrency: "unbounded", discard: true }),
      { concurrency: "unbounded", discard: true }
    )
    done++
  }
  for (const { server } of servers) server.close()
  return done
})

const done = await Effect.runPromise(Effect.scoped(Effect.provide(program, layers[transport]!)))
// give sockets time to end while bodies are paused
await new Promise((resolve) => setTimeout(resolve, 200))
process.stdout.write(
  JSON.stringify({ transport, iterations: done, seconds: (Date.now() - started) / 1000, outcomes }) + "\n"
)
process.exit(0)
