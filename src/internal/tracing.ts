import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Tracer from "effect/Tracer"

/** Effect's built-in tracer: its spans are kept by nothing and exported nowhere. */
const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * Whether a span made now would be seen: tracing is enabled and a tracer is installed (an
 * OpenTelemetry layer, the DevTools, a test's tracer), not only Effect's built-in one. The SDK's
 * spans (`Kernel.<operation>`, and `http.client` on KernelTransport) are made only then, so
 * tracing costs nothing when it is off.
 *
 * @internal
 */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== nativeTracer && fiber.getFiberRef(FiberRef.currentTracerEnabled)
