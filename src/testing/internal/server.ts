/**
 * The simulator over HTTP, on `node:http` directly: every operation of the API, the control plane under
 * `/_simulator/`, bounded request bodies, backpressure on every response, lingering close when a
 * request body is left unread.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as Crypto from "node:crypto"
import type * as Http from "node:http"
import type * as Net from "node:net"
import { operations } from "../../internal/generated/table.js"
import type * as Sim from "../KernelSimulator.js"
import * as live from "./live.js"
import * as mp4 from "./mp4.js"
import * as schema from "./schema.js"
import * as internal from "./simulator.js"

/** What the server drives: the simulator's handler and control. */
export interface Target {
  readonly handle: (request: internal.SimRequest) => Effect.Effect<internal.SimResponse>
  readonly requests: Effect.Effect<ReadonlyArray<Sim.RecordedRequest>>
  readonly requestsDropped: Effect.Effect<number>
  readonly clearRequests: Effect.Effect<void>
  readonly evictions: Sim.Control["evictions"]
  readonly injectFault: (fault: Sim.Fault) => Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  readonly resetTo: (seed: Sim.Seed) => Effect.Effect<void>
  readonly initialSeed: Sim.Seed
}

/** Control-plane bodies (seeds) may be larger than the service's. */
export const adminBodyLimit = 1024 * 1024
/**
 * After answering a request whose body was left unread: how long more of it is drained (so a client
 * still sending reads the answer rather than a reset) before the connection is destroyed. How much:
 * {@link lingerBytesFor} the limit the body was read with.
 */
const lingerMillis = 4000

/**
 * How much of an unread body the server discards after its answer, for bodies limited to `limit`
 * bytes: four times the limit (at least 1 MiB), so a client sending a body up to four times too
 * large finishes sending and reads the 413. A body never asked for (unauthenticated, unrouted):
 * 1 MiB.
 */
export const lingerBytesFor = (limit: number): number => Math.max(1024 * 1024, 4 * limit)

const encoder = new TextEncoder()

const headerRecord = (request: Http.IncomingMessage): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue
    out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

/** Whether the request announces a body (a non-zero Content-Length, or a Transfer-Encoding). */
const announcesBody = (request: Http.IncomingMessage): boolean =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0")

/** Whether the client waits for `100 Continue` before sending its body. */
const expectsContinue = (request: Http.IncomingMessage): boolean =>
  request.headers.expect?.trim().toLowerCase() === "100-continue"

/** A declared body this small, left unread, is discarded by Node and the connection kept. */
const drainableBytes = 64 * 1024

/**
 * Whether the connection must close after an answer given without reading the whole body: a
 * body still to come that is not known to be small, or one the client holds back until told
 * `100 Continue` (it was not told).
 */
const mustClose = (request: Http.IncomingMessage): boolean => {
  if (request.complete || !announcesBody(request)) return false
  if (expectsContinue(request) || request.headers["transfer-encoding"] !== undefined) return true
  const declared = Number(request.headers["content-length"])
  return !(Number.isSafeInteger(declared) && declared >= 0 && declared <= drainableBytes)
}

/**
 * Reads at most `limit` bytes of the request body; a longer one is `TooLarge` and is left unread.
 * A client waiting for `100 Continue` is told to send its body only here, once the request is
 * authenticated and routed.
 */
export const readBody = (
  request: Http.IncomingMessage,
  limit: number,
  response?: Http.ServerResponse
): Effect.Effect<internal.BodyRead> => {
  // a body already received whole (a small request comes in one read with its head) is taken as it
  // is, with no wait for its events
  if (request.complete && !request.readableEnded && request.readableFlowing !== true) {
    const declared = Number(request.headers["content-length"])
    if ((Number.isFinite(declared) && declared > limit) || request.readableLength > limit) {
      return Effect.succeed({ _tag: "TooLarge" })
    }
    const chunk: unknown = request.read()
    // a copy: the chunk is a view of the connection's read buffer, which a stored body would keep whole
    return Effect.succeed({
      _tag: "Read",
      bytes: chunk instanceof Uint8Array ? new Uint8Array(chunk) : new Uint8Array(0)
    })
  }
  return Effect.async<internal.BodyRead>((resume) => {
    const declared = Number(request.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      resume(Effect.succeed({ _tag: "TooLarge" }))
      return
    }
    if (response !== undefined && expectsContinue(request) && !request.complete && !response.headersSent) {
      response.writeContinue()
    }
    if (request.readableEnded) {
      resume(Effect.succeed({ _tag: "Read", bytes: new Uint8Array(0) }))
      return
    }
    const parts: Array<Buffer> = []
    let total = 0
    const cleanup = () => {
      request.off("data", onData)
      request.off("end", onEnd)
      request.off("close", onEnd)
    }
    const onData = (chunk: Buffer) => {
      total += chunk.length
      if (total > limit) {
        cleanup()
        request.pause()
        resume(Effect.succeed({ _tag: "TooLarge" }))
        return
      }
      parts.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed({ _tag: "Read", bytes: new Uint8Array(Buffer.concat(parts, total)) }))
    }
    request.on("data", onData)
    request.on("end", onEnd)
    request.on("close", onEnd)
    return Effect.sync(cleanup)
  })
}

/**
 * The body's chunks, cut after `limit` bytes.
 *
 * @internal
 */
export function* limited(chunks: Iterable<Uint8Array>, limit: number | undefined): Generator<Uint8Array> {
  if (limit === undefined) return yield* chunks
  let sent = 0
  for (const chunk of chunks) {
    if (sent >= limit) return
    const take = Math.min(chunk.length, limit - sent)
    yield take === chunk.length ? chunk : chunk.subarray(0, take)
    sent += take
  }
}

export function* bodyChunks(response: internal.SimResponse): Generator<Uint8Array> {
  switch (response.body._tag) {
    case "Empty":
      return
    case "Text":
      yield encoder.encode(response.body.text)
      return
    case "Replay":
      yield* mp4.chunks(response.body.size)
      return
    case "Bytes":
      if (response.body.bytes instanceof Uint8Array) yield response.body.bytes
      else yield* response.body.bytes
  }
}

/**
 * Closes the connection once the answer is out when the request body was not read whole: half
 * close, discard what still arrives for a short while (so the client reads the answer rather than
 * a reset), then destroy.
 */
const lingerAfter = (request: Http.IncomingMessage, response: Http.ServerResponse, lingerBytes: number) => {
  const socket = request.socket
  // Node ends a `connection: close` answer's socket with `destroySoon`, which destroys it as soon as
  // the answer is flushed: a client still sending its body then meets EPIPE / ECONNRESET instead of
  // reading the answer. Half closed only here; the discarding below destroys it.
  socket.destroySoon = () => socket.end()
  response.once("finish", () => {
    let discarded = 0
    const timer = setTimeout(() => socket.destroy(), lingerMillis)
    timer.unref()
    socket.once("close", () => clearTimeout(timer))
    request.on("data", (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > lingerBytes) socket.destroy()
    })
    request.resume()
    socket.end()
  })
}

/**
 * The statuses whose answers carry no content (RFC 9110: 204, 205 and 304): an injected fault's `body`
 * is not sent with them, nor its length. A 205 says `content-length: 0`; a 204 says no length, a 304 none
 * but a fault's own `content-length` header.
 */
export const noContent: ReadonlySet<number> = new Set([204, 205, 304])

/** Writes a simulated response, with backpressure, acting out its network faults. */
export const send = (
  request: Http.IncomingMessage,
  response: Http.ServerResponse,
  sim: internal.SimResponse,
  lingerBytes: number
) => {
  const socket = request.socket
  if (response.destroyed || socket.destroyed) return
  if (sim.network.reset) {
    socket.resetAndDestroy()
    return
  }
  const unread = mustClose(request)
  const headers: Record<string, string> = { ...sim.headers }
  const noBody = sim.body._tag === "Empty" || noContent.has(sim.status)
  if (!noBody && sim.body._tag === "Text" && headers["content-length"] === undefined) {
    headers["content-length"] = String(Buffer.byteLength(sim.body.text))
  }
  if (noBody && sim.status !== 204 && sim.status !== 304) headers["content-length"] = "0"
  // a 204 has no body, and says nothing of one, whatever a fault's headers say (an injected 204 with a
  // `body` sent `content-length: 3`); a 304 says only what a fault's headers say
  if (sim.status === 204) delete headers["content-length"]
  if (unread) {
    headers["connection"] = "close"
    lingerAfter(request, response, lingerBytes)
  }
  try {
    response.writeHead(sim.status, headers)
  } catch {
    // headers Node refuses (an in-process fault's): the Error JSON rather than a hang
    const text = JSON.stringify({ code: "internal_error", message: "the injected headers are not valid HTTP" })
    response.writeHead(500, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...(unread ? { connection: "close" } : {})
    })
    response.end(text)
    return
  }
  if (noBody) {
    response.end()
    return
  }
  const cut = internal.bodyEnding(sim.network)
  const whole = sim.body._tag === "Text" ? sim.body.text : sim.body._tag === "Bytes" ? sim.body.bytes : undefined
  if (cut === undefined && (typeof whole === "string" || whole instanceof Uint8Array)) {
    // the head and the body in one write (a text not encoded to bytes first; bytes in one piece
    // already, so no pump: they are written whole either way). Bytes in pieces (a zip download)
    // are pumped: a client that does not read holds what the socket buffers, not the whole
    response.end(whole)
    return
  }
  // the head goes out whatever comes of the body: a cut at 0 bytes is a head and no body, not nothing
  if (cut !== undefined) response.flushHeaders()
  const iterator = limited(bodyChunks(sim), cut?.at)
  let closed = false
  response.once("close", () => {
    closed = true
  })
  const finish = (): void => {
    if (cut === undefined) {
      response.end()
    } else if (cut.kind === "truncate") {
      socket.end()
    } else if (cut.kind === "reset") {
      socket.resetAndDestroy()
    }
    // "stall": nothing more is sent; the connection stays open until the client or the server closes it
  }
  const pump = (): void => {
    while (!closed) {
      const next = iterator.next()
      if (next.done === true) return finish()
      if (!response.write(next.value)) {
        response.once("drain", pump)
        return
      }
    }
  }
  pump()
}

/** The writes of a live stream, within a fault's cut (`truncateAt`, `stallAt`, `resetAt`). */
interface CutWriter {
  /** Acts out a cut at 0 bytes, once the head is out. */
  readonly start: () => void
  /** Writes the text, up to the cut: `false` once the cut is reached (or for backpressure). */
  readonly write: (text: string) => boolean
  /** The cut was reached: nothing more is sent. */
  readonly over: boolean
}

const cutWriter = (
  response: Http.ServerResponse,
  cut: ReturnType<typeof internal.bodyEnding>
): CutWriter => {
  let left = cut?.at ?? Infinity
  let over = false
  const act = () => {
    over = true
    if (cut?.kind === "truncate") response.socket?.end()
    else if (cut?.kind === "reset") response.socket?.resetAndDestroy()
    // "stall": nothing more is sent; the connection stays open until the client or the server closes it
  }
  return {
    start: () => {
      if (left === 0) act()
    },
    write: (text) => {
      if (over) return false
      if (cut === undefined) return response.write(text)
      const bytes = encoder.encode(text)
      if (bytes.length < left) {
        left -= bytes.length
        return response.write(bytes)
      }
      response.write(bytes.subarray(0, left))
      left = 0
      act()
      return false
    },
    get over() {
      return over
    }
  }
}

/**
 * Writes an open-ended event stream as it comes, each frame after the last one drained; it ends
 * with its source, and stops (its subscription with it) when the client goes: the fiber running
 * it is interrupted on `close`.
 */
const sendLive = (
  response: Http.ServerResponse,
  sim: internal.SimResponse,
  { deadline, follow, keepAlive }: Extract<internal.SimResponse["body"], { readonly _tag: "Live" }>,
  open: Set<Http.ServerResponse>
): Effect.Effect<void> => {
  let written = 0
  const writer = cutWriter(response, internal.bodyEnding(sim.network))
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      response.writeHead(sim.status, sim.headers)
      response.flushHeaders()
      open.add(response)
      written = Date.now()
      // a fault's cut at 0 bytes: the head, then at once the cut
      writer.start()
      // while nothing happens, a keep-alive every 15 s, to the second (none while the client is not reading: the
      // stream is alive, and nothing is buffered up for it)
      const timer = setInterval(() => {
        if (response.writableEnded || response.destroyed || response.writableNeedDrain || writer.over) return
        if (Date.now() - written < keepAliveMillis) return
        written = Date.now()
        writer.write(keepAlive(written))
      }, 1000)
      timer.unref()
      return timer
    }),
    () =>
      withDeadline(
        followed(response, follow, writer, () => {
          written = Date.now()
        }),
        deadline
      ),
    (timer) =>
      Effect.sync(() => {
        clearInterval(timer)
        open.delete(response)
        if (!response.writableEnded) response.end()
      })
  )
}

/**
 * Writes the frames of a stream following a hub as they are told (see `live.follow`): each one once
 * the last is drained; done when the stream ends, and stopped (unsubscribed) when interrupted.
 */
const followed = (
  response: Http.ServerResponse,
  follow: live.FollowFrames,
  writer: CutWriter,
  onWrite: () => void
): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    let over = false
    const done = () => {
      if (over) return
      over = true
      response.off("drain", onDrain)
      resume(Effect.void)
    }
    const following = follow((frame) => {
      // ended by the server's shutdown, or the client gone
      if (response.destroyed || response.writableEnded) {
        done()
        return false
      }
      onWrite()
      return writer.write(frame)
    }, done)
    const onDrain = () => following.resume()
    response.on("drain", onDrain)
    return Effect.sync(() => {
      over = true
      response.off("drain", onDrain)
      following.stop()
    })
  })

/**
 * A followed stream with what happens at a time while it is open: the deadline's run tells the stream (or
 * ends it), which then goes on, or ends, as it says. One fiber that sleeps, not a `Stream.merge`.
 */
const withDeadline = (sending: Effect.Effect<void>, deadline: live.Deadline | undefined): Effect.Effect<void> =>
  deadline === undefined
    ? sending
    : Effect.raceFirst(sending, Effect.zipRight(live.awaitDeadline(deadline), Effect.never))

const keepAliveMillis = Duration.toMillis(live.keepAliveInterval)

/** How long a stream ended at shutdown has to reach its client before its connection is dropped. */
const endGraceMillis = 250

const json = (
  response: Http.ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {}
) => {
  const text = JSON.stringify(value)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
    ...headers
  })
  response.end(text)
}

const sameSecret = (given: string | undefined, expected: string): boolean => {
  if (given === undefined) return false
  const a = Crypto.createHash("sha256").update(given).digest()
  const b = Crypto.createHash("sha256").update(expected).digest()
  return Crypto.timingSafeEqual(a, b)
}

const adminRoutes: Record<string, ReadonlyArray<string>> = {
  "/_simulator/faults": ["POST", "DELETE"],
  "/_simulator/reset": ["POST"],
  "/_simulator/requests": ["GET", "DELETE"],
  "/_simulator/evictions": ["GET"],
  "/_simulator/operations": ["GET"]
}

/**
 * What `GET /_simulator/operations` answers: each operation a fault's `route` may name, with its method
 * and path (a client in another language finds them there).
 */
const operationList: ReadonlyArray<{ readonly name: string; readonly method: string; readonly path: string }> =
  operations.map((operation) => ({
    name: operation.name,
    operationId: operation.operationId,
    method: operation.method,
    path: operation.path
  }))

const errorBody = (code: string, message: string, details?: ReadonlyArray<{ code: string; message: string }>) =>
  details === undefined ? { code, message } : { code, message, details }

/** The control plane: its own token, JSON in and out, never recorded in the request log. */
const admin = (
  target: Target,
  adminToken: string,
  request: Http.IncomingMessage,
  response: Http.ServerResponse,
  path: string
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const answer = (status: number, value: unknown, headers?: Record<string, string>) =>
      Effect.sync(() => {
        if (mustClose(request)) {
          lingerAfter(request, response, lingerBytesFor(adminBodyLimit))
          json(response, status, value, { ...headers, connection: "close" })
        } else json(response, status, value, headers)
      })
    if (!sameSecret(internal.bearerToken(request.headers.authorization), adminToken)) {
      return yield* answer(401, errorBody("unauthorized", "missing or invalid admin token"))
    }
    const allowed = adminRoutes[path]
    if (allowed === undefined) return yield* answer(404, errorBody("not_found", "no such control route"))
    const method = request.method ?? "GET"
    if (!allowed.includes(method)) {
      return yield* answer(405, errorBody("method_not_allowed", `${method.slice(0, 16)} is not allowed here`), {
        allow: allowed.join(", ")
      })
    }
    const readJson: Effect.Effect<Either.Either<unknown, readonly [number, unknown]>> = Effect.gen(function*() {
      const read = yield* readBody(request, adminBodyLimit, response)
      if (read._tag === "TooLarge") {
        return Either.left([
          413,
          errorBody("payload_too_large", `control bodies are limited to ${adminBodyLimit} bytes`)
        ])
      }
      if (read.bytes.length === 0) return Either.right(undefined)
      const type = request.headers["content-type"]
      if (type === undefined || type.split(";")[0]!.trim().toLowerCase() !== "application/json") {
        return Either.left([415, errorBody("unsupported_media_type", "the body must be application/json")])
      }
      try {
        return Either.right<unknown>(JSON.parse(new TextDecoder().decode(read.bytes)))
      } catch {
        return Either.left([400, errorBody("bad_request", "the body is not valid JSON")])
      }
    })
    const invalid = (what: string, issues: ReadonlyArray<{ readonly path: string; readonly message: string }>) =>
      answer(
        400,
        errorBody(
          "bad_request",
          `invalid ${what}: ${schema.summary(issues)}`,
          issues.map((i) => ({ code: "invalid_input", message: `${i.path === "" ? "(root)" : i.path}: ${i.message}` }))
        )
      )
    switch (`${method} ${path}`) {
      case "POST /_simulator/faults": {
        const body = yield* readJson
        if (Either.isLeft(body)) return yield* answer(body.left[0], body.left[1])
        const fault = schema.decodeFault(body.right)
        if (Either.isLeft(fault)) return yield* invalid("fault", fault.left)
        yield* target.injectFault(fault.right)
        return yield* answer(201, { ok: true })
      }
      case "DELETE /_simulator/faults": {
        yield* target.clearFaults
        return yield* answer(200, { ok: true })
      }
      case "POST /_simulator/reset": {
        const body = yield* readJson
        if (Either.isLeft(body)) return yield* answer(body.left[0], body.left[1])
        if (body.right === undefined) {
          yield* target.resetTo(target.initialSeed)
          return yield* answer(200, { ok: true })
        }
        const seed = schema.decodeSeed(body.right)
        if (Either.isLeft(seed)) return yield* invalid("seed", seed.left)
        const clash = schema.adminTokenClash(seed.right, adminToken)
        if (clash.length > 0) return yield* invalid("seed", clash)
        yield* target.resetTo(seed.right)
        return yield* answer(200, { ok: true })
      }
      case "GET /_simulator/evictions": {
        return yield* answer(200, yield* target.evictions)
      }
      case "GET /_simulator/operations": {
        return yield* answer(200, operationList)
      }
      case "GET /_simulator/requests": {
        const requests = yield* target.requests
        const dropped = yield* target.requestsDropped
        return yield* answer(
          200,
          requests.map((r) => ({
            ...r,
            query: r.query ?? null,
            route: r.route ?? null,
            body: r.body ?? null,
            status: r.status ?? null
          })),
          // the log is bounded: what it dropped since it was last cleared, so a client knows it is not whole
          { "x-simulator-requests-dropped": String(dropped) }
        )
      }
      default: {
        yield* target.clearRequests
        return yield* answer(200, { ok: true })
      }
    }
  })

/** The raw answer to a request Node could not parse (a URL or headers over the limit...). */
const rawError = (status: number, reason: string, code: string, message: string): string => {
  const body = JSON.stringify({ code, message })
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${
    Buffer.byteLength(body)
  }\r\nconnection: close\r\n\r\n${body}`
}

export interface ServerConfig {
  readonly adminToken: string
  readonly run: <A>(effect: Effect.Effect<A>) => Fiber.RuntimeFiber<A, never>
  readonly maxHeaderBytes: number
}

/**
 * Wires a `node:http` server to the simulator. Returns how to stop serving: every open event stream
 * is ended (its client reads it to its end, not a cut connection), every other connection closed,
 * without waiting for the streams to end by themselves.
 */
export const attach = (
  server: Http.Server,
  target: Target,
  config: ServerConfig,
  sockets: Set<Net.Socket>
): { readonly close: Effect.Effect<void> } => {
  const open = new Set<Http.ServerResponse>()
  server.on("connection", (socket: Net.Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("clientError", (error: Error & { code?: string }, socket: Net.Socket) => {
    if (!socket.writable || error.code === "ECONNRESET") return socket.destroy()
    const answer = error.code === "HPE_HEADER_OVERFLOW"
      ? rawError(
        431,
        "Request Header Fields Too Large",
        "request_header_fields_too_large",
        `the request line and headers are limited to ${config.maxHeaderBytes} bytes`
      )
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT" || error.code === "HPE_HEADERS_TIMEOUT"
      ? rawError(408, "Request Timeout", "request_timeout", "the request was not received in time")
      : rawError(400, "Bad Request", "bad_request", "the request is not valid HTTP")
    socket.end(answer)
    setTimeout(() => socket.destroy(), lingerMillis).unref()
  })
  const onRequest = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const path = pathOf(request.url ?? "/")
    if (path === "/_simulator" || path.startsWith("/_simulator/")) {
      config.run(admin(target, config.adminToken, request, response, path))
      return
    }
    // how much of a body left unread is discarded after the answer: by the limit it was read with
    let lingerBytes = lingerBytesFor(0)
    const fiber = config.run(
      Effect.flatMap(
        target.handle({
          method: request.method ?? "GET",
          path,
          query: queryOf(request.url ?? "/"),
          headers: headerRecord(request),
          readBody: (limit) => {
            lingerBytes = lingerBytesFor(limit)
            return readBody(request, limit, response)
          }
        }),
        (sim) =>
          sim.body._tag === "Live"
            ? sendLive(response, sim, sim.body, open)
            : Effect.sync(() => send(request, response, sim, lingerBytes))
      )
    )
    // a client gone before its answer (an acquire waiting, an event stream open) stops the work
    // for it: its waits and subscriptions end with the fiber
    response.once("close", () => {
      if (!response.writableFinished) fiber.unsafeInterruptAsFork(fiber.id())
    })
  }
  server.on("request", onRequest)
  // an expectation other than 100-continue: the Error JSON, the same for every path
  server.on("checkExpectation", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
    json(response, 417, errorBody("expectation_failed", "only the expectation 100-continue is supported"), {
      connection: "close"
    })
  })
  // `100 Continue` is sent only when the body is read (after authentication and routing), never up front
  server.on("checkContinue", onRequest)
  const close = Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    const ending = new Set<Net.Socket>()
    for (const response of open) {
      const socket = response.socket
      open.delete(response)
      if (socket === null || response.writableEnded) continue
      ending.add(socket)
      // the stream's last chunk, then the connection half closed; dropped if the client lingers
      response.end()
      socket.end()
      setTimeout(() => socket.destroy(), endGraceMillis).unref()
    }
    for (const socket of sockets) if (!ending.has(socket)) socket.destroy()
  })
  return { close }
}

/** The query of a request target, without `?`. */
export const queryOf = (target: string): string => {
  const at = target.indexOf("?")
  return at < 0 ? "" : target.slice(at + 1).split("#")[0]!
}

/** The path of a request target, without query; an absolute-form target (`http://host/path`) gives its path. */
export const pathOf = (target: string): string => {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target)
  const rest = absolute === null ? target : target.slice(absolute[0].length)
  const path = rest.split("?")[0]!
  return absolute !== null && !path.startsWith("/") ? `/${path}` : path
}
