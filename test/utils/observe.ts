import { type Context, Effect, Layer, Logger, LogLevel, type Option, Tracer } from "effect"
import type * as Exit from "effect/Exit"

export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = Math.random().toString(16).slice(2)
  readonly traceId: string
  readonly sampled = true
  status: Tracer.SpanStatus
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<{ readonly name: string; readonly attributes: Record<string, unknown> }> = []
  readonly links: Array<Tracer.SpanLink> = []
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    readonly kind: Tracer.SpanKind,
    startTime: bigint,
    attributes: Record<string, unknown> | undefined
  ) {
    this.traceId = parent._tag === "Some" ? parent.value.traceId : Math.random().toString(16).slice(2)
    this.status = { _tag: "Started", startTime }
    for (const [k, v] of Object.entries(attributes ?? {})) this.attributes.set(k, v)
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event(name: string, _startTime: bigint, attributes?: Record<string, unknown>) {
    this.events.push({ name, attributes: attributes ?? {} })
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

/** A tracer and a debug-level logger that keep everything, for assertions. */
export const makeObserver = () => {
  const spans: Array<RecordedSpan> = []
  const logs: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, _links, startTime, kind, options) => {
      const span = new RecordedSpan(name, parent, context, kind, startTime, options?.attributes)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    logs.push(`${logLevel.label} ${JSON.stringify(message)} ${JSON.stringify([...annotations])}`)
  })
  const layer = Layer.mergeAll(
    Layer.setTracer(tracer),
    Logger.replace(Logger.defaultLogger, logger),
    Logger.minimumLogLevel(LogLevel.All)
  )
  /**
   * What exporters see, as text: log lines, span names, attributes and events, and the outcome of
   * the SDK's own spans. (The platform's `http.client` span ends with the response object, whose
   * request carries the headers; exporters record a span's status, not that value.)
   */
  const dump = () =>
    [
      ...logs,
      ...spans.map((s) =>
        `${s.name} ${JSON.stringify([...s.attributes])} ${JSON.stringify(s.events)} ${
          s.status._tag === "Ended" && s.name.startsWith("Kernel.") ? String(s.status.exit) : ""
        }`
      )
    ].join("\n")
  return { spans, logs, layer, dump }
}

export const withObserver = <A, E, R>(effect: Effect.Effect<A, E, R>, observer: ReturnType<typeof makeObserver>) =>
  Effect.provide(effect, observer.layer)
