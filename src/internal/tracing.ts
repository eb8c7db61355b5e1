import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import { RedactedResponse, redactError, scrubCauses } from "./redact.js"
import { redactAll } from "./secrets.js"

/** Effect's built-in tracer: its spans are kept by nothing and exported nowhere. */
const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * Whether a span made now would be seen: tracing is enabled and a tracer is installed (an
 * OpenTelemetry layer, the DevTools, a test's tracer), not only Effect's built-in one, or the
 * current span continues a trace from upstream (an external span: an incoming request's
 * `traceparent`, as the platform's server middleware reads it), whose context the requests pass on
 * to Kernel even when this process exports nothing. The SDK's spans (`Kernel.<operation>`, the
 * platform's `http.client`, KernelTransport's) and so the trace headers are made only then, so
 * tracing costs nothing when it is off.
 *
 * @internal
 */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.getFiberRef(FiberRef.currentTracerEnabled) &&
  (fiber.currentTracer !== nativeTracer || continuesUpstream(fiber.currentContext))

/** Whether the current span is, or descends from, an external span (a trace context from upstream). */
const continuesUpstream = (context: Context.Context<never>): boolean => {
  let span = Context.getOption(context, Tracer.ParentSpan)
  while (Option.isSome(span)) {
    if (span.value._tag === "ExternalSpan") return true
    span = span.value.parent
  }
  return false
}

/**
 * `self` with the spans made while it runs (the platform's `http.client`) recording no attribute
 * value that holds the token (`<redacted>` in its place): the platform redacts a response header by
 * its name only, and a proxy that echoes the request's `Authorization` in another header (a debug
 * header, a `Location`) put the token into an exported `http.response.header.*` attribute. The
 * spans are the tracer's own, their `attribute` scrubbing first; run only when tracing.
 *
 * @internal
 */
export const scrubbingSpans = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  secret: Redacted.Redacted<string>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.tracer, (tracer) => Effect.withTracer(self, scrubbing(tracer, Redacted.value(secret))))

const scrubbing = (tracer: Tracer.Tracer, token: string): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) =>
      scrubbed(tracer.span(name, parent, context, links, startTime, kind, options), token),
    context: (f, fiber) => tracer.context(f, fiber)
  })

const scrubbed = (span: Tracer.Span, token: string): Tracer.Span => {
  // the span itself, its `attribute` and `end` replaced on it: a proxy in its place would be the parent
  // of the spans made under it, which a tracer keeping its state in `#private` fields cannot read
  const attribute = span.attribute
  const end = span.end
  try {
    Object.defineProperty(span, "attribute", {
      value: (name: string, value: unknown) =>
        attribute.call(span, name, typeof value === "string" ? redactAll(value, [token]) : value),
      configurable: true,
      writable: true
    })
    Object.defineProperty(span, "end", {
      value: (endTime: bigint, exit: Exit.Exit<unknown, unknown>) => end.call(span, endTime, shownExit(exit)),
      configurable: true,
      writable: true
    })
  } catch {
    // a frozen span: recorded as it is
  }
  return span
}

/**
 * The outcome a transport's span (the platform's `http.client`) ends with, as a tracer may render it
 * anywhere (`JSON.stringify`, `util.inspect`, outside a fiber, where the platform's headers are not
 * redacted): its response and its errors with their requests showing no credentials, a response's
 * body never read by rendering it (the platform's `toJSON` of a response reads it).
 */
const shownExit = (exit: Exit.Exit<unknown, unknown>): Exit.Exit<unknown, unknown> =>
  Exit.isSuccess(exit)
    ? isResponse(exit.value) && !(exit.value instanceof RedactedResponse)
      ? Exit.succeed(new RedactedResponse(exit.value))
      : exit
    : Exit.failCause(Cause.map(exit.cause, (error) => {
      if (!HttpClientError.isHttpClientError(error)) return error
      scrubCauses(error.cause, error.request.headers["authorization"])
      return redactError(error)
    }))

const isResponse = (u: unknown): u is HttpClientResponse.HttpClientResponse =>
  typeof u === "object" && u !== null && HttpClientResponse.TypeId in u
