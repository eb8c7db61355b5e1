import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as Stream from "effect/Stream"
import * as KernelError from "../KernelError.js"
import { bound, concatBytes, GrowableBytes, jsonSyntaxMessage } from "./bounded.js"
import { decodeError, describe, transportError } from "./errors.js"
import * as FastDecode from "./fastDecode.js"
import { RedactedResponse } from "./redact.js"
import * as Secrets from "./secrets.js"
import * as Transport from "./transport.js"

/** How much of an error body is read; the rest is discarded and the connection closed. */
const errorBodyLimit = 64 * 1024

/**
 * A function made on first use: building a schema's decoder walks its whole AST, work that
 * should not happen at import time (cold start) for operations a program may never call.
 *
 * @internal
 */
export const lazy = <F>(make: () => F): () => F => {
  let made: F | undefined
  return () => (made ??= make())
}

/** Up to 64 KiB of a body (and what its last chunk brought past that), as sent: "" if it could not be read. */
const readHead = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<Uint8Array<ArrayBuffer>> =>
  response.stream.pipe(
    Stream.runFoldWhile(
      { parts: new Array<Uint8Array>(), size: 0 },
      (acc) => acc.size < errorBodyLimit,
      (acc, chunk) => {
        acc.parts.push(chunk)
        acc.size += chunk.length
        return acc
      }
    ),
    Effect.map(({ parts }) => concatBytes(parts)),
    Effect.orElseSucceed(() => new Uint8Array(0))
  )

/**
 * Up to 64 KiB of a body as text ("" if it could not be read): an error body, or a body the SDK
 * discards. The rest is never read; the attempt ending releases it.
 *
 * @internal
 */
export const readBounded = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
  Effect.map(readHead(response), (bytes) => new TextDecoder().decode(bytes).slice(0, errorBodyLimit))

/**
 * A body the SDK does not keep (a success without content, a 204), read so that its connection can
 * be reused: on `KernelTransport` whole within 64 KiB in one step (usually read before the response
 * was handed over: {@link discardPrefetch}), past that dropped with its connection; on another
 * transport {@link readBounded}. Never fails.
 *
 * @internal
 */
export const discardBody = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<void> =>
  response instanceof Transport.ResponseImpl
    ? Effect.ignore(response.textWithin(errorBodyLimit))
    : Effect.asVoid(readBounded(response))

/**
 * The bound within which `KernelTransport` reads a body {@link discardBody} discards before it hands
 * the response over (`Transport.Owner.prefetch`).
 *
 * @internal
 */
export const discardPrefetch: number = errorBodyLimit

/**
 * An error body as text: {@link readBounded}, decoded when it came with a content coding the
 * transport did not undo (the operations ask for gzip, deflate and br). At most 64 KiB either
 * side; "" when it cannot be decoded.
 *
 * @internal
 */
export const readErrorText = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> => {
  const codings = codingsOf(response.headers["content-encoding"])
  if (codings.length === 0 || decodedByTransport(response)) return readBounded(response)
  if (codings.length > maxCodings || codings.some((coding) => !supportedCodings.has(coding))) return Effect.succeed("")
  return readHead(response).pipe(
    Effect.flatMap((bytes) => inflateHeadAll(codings, bytes)),
    Effect.map((buffer) => new TextDecoder().decode(buffer.subarray(0, errorBodyLimit))),
    Effect.orElseSucceed(() => "")
  )
}

/**
 * The first {@link errorBodyLimit} bytes a coding gives of `input`, whatever follows: an error page that
 * inflates past the bound, or whose encoded bytes were cut at it (`readHead`), still gives its head
 * (the one-shot inflate of a JSON body fails there, and the excerpt was lost). A corrupt stream gives what
 * was decoded before it.
 */
const inflateHead = (zlib: Zlib, coding: string, input: Buffer): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    const format = formatOf(coding, input)
    const inflater = format === "br"
      ? zlib.createBrotliDecompress()
      : format === "raw"
      ? zlib.createInflateRaw()
      : format === "zlib"
      ? zlib.createInflate()
      : zlib.createGunzip()
    const parts: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = () => {
      if (done) return
      done = true
      inflater.destroy()
      resume(Effect.succeed(Buffer.concat(parts).subarray(0, errorBodyLimit)))
    }
    inflater.on("data", (chunk: Buffer) => {
      parts.push(chunk)
      size += chunk.length
      if (size >= errorBodyLimit) finish()
    })
    inflater.on("end", finish)
    inflater.on("error", finish)
    inflater.end(input)
    return Effect.sync(() => inflater.destroy())
  })

/** The head of an error body's codings undone, in the reverse order of their application. */
const inflateHeadAll = (codings: ReadonlyArray<string>, input: Uint8Array): Effect.Effect<Buffer> =>
  undoCodings(codings, input, inflateHead)

/**
 * The most a JSON answer may have: 64 MiB (a list of 10,000 browser pools is a few MiB). A larger
 * body is refused with a `DecodeError`, not buffered: a server cannot make the SDK hold more.
 *
 * @internal
 */
export const maxJsonBytes = 64 * 1024 * 1024

const tooLarge = (request: HttpClientRequest.HttpClientRequest, status: number, declared?: number) =>
  new KernelError.DecodeError({
    ...describe(request),
    status,
    message: `the JSON body${declared === undefined ? "" : ` (${declared} bytes)`} is larger than the ${
      maxJsonBytes / 1024 / 1024
    } MiB a JSON answer may have`
  })

/**
 * What the operations' JSON requests accept as content coding: the codings decoded here (or by
 * `fetch`). A replay download asks for `identity` instead (its definition's header).
 *
 * @internal
 */
export const acceptEncoding = "gzip, deflate, br"

const supportedCodings: ReadonlySet<string> = new Set(["gzip", "x-gzip", "deflate", "br"])

/**
 * The content codings of a `Content-Encoding` header, in the order they were applied (`identity` left out).
 *
 * @internal
 */
export const codingsOf = (header: string | undefined): ReadonlyArray<string> =>
  header === undefined
    ? []
    : header.split(",").map((coding) => coding.trim().toLowerCase()).filter((coding) =>
      coding !== "" && coding !== "identity"
    )

/**
 * The most content codings a body may have (what undici's `fetch` accepts): each one is a decoding
 * pass, so a longer list is refused before any of it is decoded.
 */
const maxCodings = 5

/**
 * Whether the transport decoded the body itself: `fetch` does (its response wraps a web `Response`),
 * unless the header lists a coding it does not know, `identity` included (`gzip, identity`): it then
 * decodes none of them and hands the body over as sent.
 *
 * @internal
 */
export const decodedByTransport = (response: HttpClientResponse.HttpClientResponse): boolean => {
  const original = response instanceof RedactedResponse ? response.original : response
  return Predicate.hasProperty(original, "source") && isWebResponse(original.source) &&
    (response.headers["content-encoding"] ?? "").toLowerCase().split(",").every((coding) =>
      supportedCodings.has(coding.trim())
    )
}

/**
 * A web `Response`, whichever implementation made it: the global class, or another fetch's (npm
 * undici's `fetch` given to `FetchHttpClient.Fetch` returns its own `Response`, not the global one).
 */
const isWebResponse = (value: unknown): boolean =>
  (typeof Response === "function" && value instanceof Response) ||
  (Predicate.hasProperty(value, "bodyUsed") && typeof value.bodyUsed === "boolean" &&
    Predicate.hasProperty(value, "arrayBuffer") && Predicate.isFunction(value.arrayBuffer) &&
    Predicate.hasProperty(value, "headers") && Predicate.hasProperty(value, "status"))

type Zlib = typeof import("node:zlib")
let zlibModule: Promise<Zlib> | undefined
/** node:zlib, loaded on the first encoded answer of a transport that does not decode (never in a browser). */
const loadZlib = Effect.promise(() => zlibModule ??= import("node:zlib"))

/**
 * The zlib format of a coding's bytes: "deflate" is the zlib format, but some servers send raw deflate,
 * which fetch accepts too.
 */
const formatOf = (coding: string, input: Buffer): "br" | "raw" | "zlib" | "gzip" =>
  coding === "br"
    ? "br"
    : coding === "deflate" && input.length > 0 && (input[0]! & 0x0f) !== 8
    ? "raw"
    : coding === "deflate"
    ? "zlib"
    : "gzip"

/** One coding undone, at most {@link maxJsonBytes} of output (zlib stops there: a bomb is never inflated whole). */
const inflate = (
  zlib: Zlib,
  coding: string,
  input: Buffer,
  maxOutputLength: number = maxJsonBytes
): Effect.Effect<Buffer, unknown> =>
  Effect.async<Buffer, unknown>((resume) => {
    const options = { maxOutputLength }
    const done = (error: Error | null, output: Buffer) =>
      resume(error === null ? Effect.succeed(output) : Effect.fail(error))
    const format = formatOf(coding, input)
    if (format === "br") zlib.brotliDecompress(input, options, done)
    else if (format === "raw") zlib.inflateRaw(input, options, done)
    else if (format === "zlib") zlib.inflate(input, options, done)
    else zlib.gunzip(input, options, done)
  })

/**
 * The codings of a body undone, in the reverse order of their application, each bounded to
 * `maxOutputLength` bytes of output.
 */
const inflateAll = (
  codings: ReadonlyArray<string>,
  input: Uint8Array,
  maxOutputLength: number
): Effect.Effect<Buffer, unknown> =>
  undoCodings(codings, input, (zlib, coding, bytes) => inflate(zlib, coding, bytes, maxOutputLength))

/** A body's codings undone by `step`, in the reverse order of their application. */
const undoCodings = <E>(
  codings: ReadonlyArray<string>,
  input: Uint8Array,
  step: (zlib: Zlib, coding: string, bytes: Buffer) => Effect.Effect<Buffer, E>
): Effect.Effect<Buffer, E> =>
  Effect.flatMap(loadZlib, (zlib) => {
    let body: Effect.Effect<Buffer, E> = Effect.succeed(Buffer.from(input.buffer, input.byteOffset, input.length))
    for (const coding of [...codings].reverse()) {
      body = Effect.flatMap(body, (bytes) => step(zlib, coding, bytes))
    }
    return body
  })

/**
 * A body read to its end, chunk by chunk, refused with a `DecodeError` once it passes
 * {@link maxJsonBytes} (the request is then released: nothing more is read).
 */
const forEachBounded = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  onChunk: (chunk: Uint8Array) => void
): Effect.Effect<void, KernelError.DecodeError | KernelError.TransportError> =>
  Effect.suspend(() => {
    let size = 0
    return response.stream.pipe(
      // fetch's answer without a body (a 204) is an empty body, as the other transports read it: not a
      // failure of the transport (retried), but a body that is not what the operation answers
      Stream.catchAll((error) =>
        error._tag === "ResponseError" && error.reason === "EmptyBody"
          ? Stream.empty
          : Stream.fail<KernelError.DecodeError | KernelError.TransportError>(transportError(request, error))
      ),
      Stream.runForEachChunk((chunks) => {
        for (const chunk of chunks) {
          size += chunk.length
          if (size > maxJsonBytes) return Effect.fail(tooLarge(request, response.status))
          onChunk(chunk)
        }
        return Effect.void
      })
    )
  })

/**
 * An encoded JSON body: read as sent (at most {@link maxJsonBytes}), then decoded with node:zlib,
 * the bound counting the decoded bytes: a small body that inflates past it is refused there.
 */
const readEncodedJson = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  codings: ReadonlyArray<string>
): Effect.Effect<string, KernelError.DecodeError | KernelError.TransportError> =>
  Effect.suspend(() => {
    // one buffer that doubles, not a chunk kept per read (a body dripped a byte per read)
    const bytes = new GrowableBytes()
    return forEachBounded(request, response, (chunk) => bytes.append(chunk)).pipe(
      Effect.flatMap(() =>
        Effect.mapError(inflateAll(codings, bytes.view(), maxJsonBytes), (cause) =>
          Predicate.hasProperty(cause, "code") && cause.code === "ERR_BUFFER_TOO_LARGE"
            ? tooLarge(request, response.status)
            : new KernelError.DecodeError({
              ...describe(request),
              status: response.status,
              message: bound(
                `the ${codings.join(", ")} body could not be decoded: ${
                  cause instanceof Error ? cause.message : String(cause)
                }`,
                512
              )
            }))
      ),
      Effect.map((buffer) =>
        new TextDecoder().decode(buffer)
      )
    )
  })

/** The JSON of a 2xx answer that did not decode, or of an undocumented 2xx, by its error (held only while the error is). */
const undecoded = new WeakMap<KernelError.DecodeError | KernelError.UnexpectedStatus, unknown>()

/**
 * Keeps what an undocumented 2xx answer (a 201 where the operation documents a 200) says it made, with its
 * `UnexpectedStatus`, never shown: a create it answered may still have made what it names (see
 * {@link undecodedSessionId}).
 *
 * @internal
 */
export const keepUndocumented = (error: KernelError.UnexpectedStatus, made: unknown): void => {
  undecoded.set(error, made)
}

/**
 * The JSON a 2xx answer that did not decode (a `DecodeError`), or an undocumented 2xx (an
 * `UnexpectedStatus`), was made from (`undefined` for any other error): what a resource's create made
 * even when its answer does not decode. Never shown: it may carry the answer's secrets.
 */
const undecodedOf = (error: unknown): unknown =>
  error instanceof KernelError.DecodeError || error instanceof KernelError.UnexpectedStatus
    ? undecoded.get(error)
    : undefined

/**
 * The `session_id` a 2xx answer that did not decode, or an undocumented 2xx, still names (a browser
 * made, a lease taken): what a scoped resource ends at once. `undefined` for another error, or an
 * answer without one.
 *
 * @internal
 */
export const undecodedSessionId = (error: { readonly _tag: string }): string | undefined => {
  const made = undecodedOf(error)
  const id = typeof made === "object" && made !== null ? Reflect.get(made, "session_id") : undefined
  return typeof id === "string" && id !== "" ? id : undefined
}

/**
 * The secrets of such an answer (the values of its secret fields: a browser's CDP and live-view URLs),
 * which the release of what it made must not show should it fail (see `Resource.scopedResource`).
 *
 * @internal
 */
export const undecodedSecrets = (error: unknown): ReadonlyArray<string> => Secrets.secretFieldValues(undecodedOf(error))

/**
 * A JSON body as text, bounded by {@link maxJsonBytes}: with a `Content-Length` (which the
 * transports enforce) the body is read whole, or refused before it is read when too large;
 * without one it is counted as it comes and the request released once it passes the bound.
 */
const readJsonText = <A>(
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  onText: (text: string) => Effect.Effect<A, KernelError.DecodeError>
): Effect.Effect<A, KernelError.DecodeError | KernelError.TransportError> => {
  // on KernelTransport, without building the record of every header
  const length = headerOf(response, "content-length")
  const encoding = headerOf(response, "content-encoding")
  const codings = codingsOf(encoding)
  if (codings.length > 0) {
    const unsupported = codings.find((coding) => !supportedCodings.has(coding))
    if (unsupported !== undefined) {
      return Effect.fail(
        new KernelError.DecodeError({
          ...describe(request),
          status: response.status,
          message: `the JSON body has content-encoding ${
            bound(encoding ?? "", 100)
          }, which the SDK does not decode (it asks for ${acceptEncoding})`
        })
      )
    }
    if (codings.length > maxCodings) {
      return Effect.fail(
        new KernelError.DecodeError({
          ...describe(request),
          status: response.status,
          message: `the JSON body has ${codings.length} content codings, more than the ${maxCodings} the SDK decodes`
        })
      )
    }
    // fetch decodes what it receives (and the bytes it hands over are the decoded ones, counted
    // below); the other transports hand over the bytes as sent: decoded here
    if (!decodedByTransport(response)) return Effect.flatMap(readEncodedJson(request, response, codings), onText)
    // a body fetch could not decode fails its read ("terminated", caused by zlib's error): the
    // same DecodeError as on the other transports, not a transient TransportError retried
    return Effect.catchTag(
      readJsonBody(request, response, length, encoding, onText),
      "TransportError",
      (error): Effect.Effect<never, KernelError.DecodeError | KernelError.TransportError> => {
        const failure = zlibFailure(error)
        return failure === undefined ? Effect.fail(error) : Effect.fail(
          new KernelError.DecodeError({
            ...describe(request),
            status: response.status,
            message: bound(`the ${codings.join(", ")} body could not be decoded: ${failure}`, 512)
          })
        )
      }
    )
  }
  return readJsonBody(request, response, length, encoding, onText)
}

/**
 * The bound within which `KernelTransport` reads a JSON answer's body before it hands the response
 * over (`Transport.Owner.prefetch`), or `undefined` when {@link readJsonText} would not read it
 * whole as it comes: a content coding (decoded here, from the bytes as sent), or a `Content-Length`
 * past {@link maxJsonBytes} (refused before a byte is read). Then `textWithin(maxJsonBytes)`, what
 * {@link readJsonBody} reads, answers at once: the head and the body resume the attempt once.
 *
 * @internal
 */
export const jsonPrefetch = (response: Transport.ResponseImpl): number | undefined => {
  if (codingsOf(response.header("content-encoding")).length > 0) return undefined
  const declared = declaredLength(response.header("content-length"))
  return declared !== undefined && declared > maxJsonBytes ? undefined : maxJsonBytes
}

/**
 * A `Content-Length` header's value as a number of bytes, or `undefined` when there is none or it is
 * not a whole number.
 *
 * @internal
 */
export const declaredLength = (header: string | undefined): number | undefined =>
  header !== undefined && /^\s*\d+\s*$/.test(header) ? Number(header) : undefined

/**
 * A response header's value (`name` in lower case): on `KernelTransport`, without building the record
 * of every header.
 *
 * @internal
 */
export const headerOf = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined =>
  response instanceof Transport.ResponseImpl ? response.header(name) : response.headers[name]

/** zlib's (or brotli's) error along a failure's `cause` chain, as `code: message`, if there is one. */
const zlibFailure = (failure: unknown): string | undefined => {
  let cause: unknown = failure
  for (let depth = 0; depth < 8 && Predicate.hasProperty(cause, "cause"); depth++) {
    cause = cause.cause
    if (
      Predicate.hasProperty(cause, "code") && typeof cause.code === "string" &&
      /^(?:Z_[A-Z_]+_ERROR|Z_NEED_DICT|ERR__ERROR_|ERR_BROTLI)/.test(cause.code)
    ) {
      return `${cause.code}: ${cause instanceof Error ? cause.message : String(cause.code)}`
    }
  }
  return undefined
}

/**
 * A JSON body as text, decoded by the transport if it had a coding: bounded by {@link maxJsonBytes},
 * then given to `onText` (on KernelTransport, in the same step as the read).
 */
const readJsonBody = <A>(
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  length: string | undefined,
  encoding: string | undefined,
  onText: (text: string) => Effect.Effect<A, KernelError.DecodeError>
): Effect.Effect<A, KernelError.DecodeError | KernelError.TransportError> => {
  // a compressed body (fetch decodes it) may be far larger than its Content-Length: counted
  const declared = encoding === undefined || encoding.trim().toLowerCase() === "identity"
    ? declaredLength(length)
    : undefined
  if (declared !== undefined && declared > maxJsonBytes) {
    return Effect.fail(tooLarge(request, response.status, declared))
  }
  if (response instanceof Transport.ResponseImpl) {
    // KernelTransport reads the body whole, dropping it past the bound
    return Effect.matchEffect(response.textWithin(maxJsonBytes), {
      onFailure: (error) => Effect.fail(transportError(request, error)),
      onSuccess: (text) => text === undefined ? Effect.fail(tooLarge(request, response.status)) : onText(text)
    })
  }
  if (declared !== undefined) {
    return Effect.flatMap(Effect.mapError(response.text, (error) => transportError(request, error)), onText)
  }
  return Effect.suspend(() => {
    // the bytes in one buffer that doubles, decoded once at the end (the same text as decoding
    // each chunk as a stream), not a string grown a read at a time (a node per read)
    const bytes = new GrowableBytes()
    return Effect.flatMap(
      forEachBounded(request, response, (chunk) => bytes.append(chunk)),
      () => onText(new TextDecoder().decode(bytes.view()))
    )
  })
}

/** Whether the schema is an array's (under its refinements, transformations and suspensions). */
const isArrayAst = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "TupleType":
      return ast.elements.length === 0 && ast.rest.length === 1
    case "Refinement":
      return isArrayAst(ast.from)
    case "Transformation":
      return isArrayAst(ast.from)
    case "Suspend":
      return isArrayAst(ast.f())
    default:
      return false
  }
}

/**
 * Decodes a JSON body with a schema, failing with `DecodeError` (naming the field) or
 * `TransportError` when the body could not be read.
 *
 * @internal
 */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
  // the compiled decoder (the schema's own where the body does not fit): built on first use
  const decoder = lazy(() => FastDecode.decoder(schema))
  // a list answered `null` is the empty list: what a Go server (the browser's, `ListFiles`) encodes
  // for an empty slice
  const nullIsEmpty = lazy(() => isArrayAst(schema.ast))
  return (
    request: HttpClientRequest.HttpClientRequest
  ) =>
  (
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<A, KernelError.DecodeError | KernelError.TransportError> =>
    readJsonText(request, response, (text) => {
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch (cause) {
        return Effect.fail(
          new KernelError.DecodeError({
            ...describe(request),
            status: response.status,
            message: bound(`body is not JSON: ${jsonSyntaxMessage(cause)}`, 512)
          })
        )
      }
      if (json === null && nullIsEmpty()) json = []
      // decoding follows the schema, not the data; a failure here is a bug of ours, but it
      // must still not escape as a defect: whatever the server sent, the result is typed
      let result: Either.Either<A, ParseResult.ParseError>
      try {
        result = decoder()(json)
      } catch (cause) {
        return Effect.fail(
          new KernelError.DecodeError({
            ...describe(request),
            status: response.status,
            message: bound(
              `body could not be decoded: ${cause instanceof Error ? cause.message : String(cause)}`,
              512
            )
          })
        )
      }
      return Either.match(result, {
        onLeft: (error) => {
          const failure = decodeError(request, response.status, error)
          undecoded.set(failure, json)
          return Effect.fail(failure)
        },
        onRight: Effect.succeed
      })
    })
}
