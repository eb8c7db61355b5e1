import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

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
