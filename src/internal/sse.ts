/**
 * A `text/event-stream` parser (the WHATWG HTML "server-sent events" interpretation rules), fed
 * with the body's chunks as they arrive:
 * - lines end with CRLF, LF or CR (a CR at the end of a chunk and the LF that starts the next one
 *   are one line end); a UTF-8 BOM at the very start is skipped;
 * - `data:` lines are joined by `\n`; `event:` sets the type (default `message`); `id:` sets the
 *   last event id (refused when it holds a NUL); `retry:` (digits only) sets the reconnection
 *   time; lines starting with `:` are comments; other fields are ignored; one space after the
 *   colon is dropped;
 * - a blank line dispatches the event (none when no `data:` line came); an event not ended by a
 *   blank line when the body ends is dropped.
 *
 * It works on bytes: line ends are found by scanning the chunk, and only whole lines are decoded
 * (UTF-8 never puts a CR or LF byte inside a character, so a character split across chunks is
 * decoded whole). A line that does not end within `maxLine` bytes, or an event whose data grows past
 * `maxEvent` characters, is refused (`push` returns why) — a server that never sends a line end
 * cannot exhaust memory.
 *
 * @internal
 */

import { GrowableBytes } from "./bounded.js"

/** One dispatched event. @internal */
export interface ServerSentEvent {
  /** The `event:` field, `message` when none was given. */
  readonly event: string
  readonly data: string
  /** The last event id (the stream's, as the format says: it carries over to the next events). */
  readonly id: string
}

/** The default bound of a line and of an event's data: 1 MiB. @internal */
export const defaultMaxLine = 1024 * 1024

const LF = 0x0a
const CR = 0x0d

/** An incremental parser (one per body). @internal */
export class Parser {
  readonly maxLine: number
  readonly maxEvent: number
  /** The last event id (`id:`), carried over events. */
  lastEventId = ""
  /** The last `retry:` (milliseconds), when one came. */
  retry: number | undefined = undefined
  /** How many comment lines came (keep-alives). */
  comments = 0
  private readonly decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })
  private data = ""
  private hasData = false
  private type = ""
  /** The bytes of a line not ended yet (from earlier chunks), in one buffer that grows by doubling. */
  private readonly pending = new GrowableBytes()
  private skipLF = false
  private started = false

  constructor(maxLine: number = defaultMaxLine, maxEvent: number = defaultMaxLine) {
    this.maxLine = maxLine
    this.maxEvent = maxEvent
  }

  /**
   * Feeds one chunk: the events it completes are pushed on `out`; returns `undefined`, or why the
   * body is refused (a line or an event past its bound).
   */
  push(chunk: Uint8Array, out: Array<ServerSentEvent>): string | undefined {
    const length = chunk.length
    if (!this.started && length > 0) {
      // (a copy: the pending buffer is written again while `head` is read)
      const head = this.pending.length > 0 ? this.take(chunk, 0, length).slice() : chunk
      // the BOM may itself be split across chunks: wait for 3 bytes (or a line end)
      if (head.length < 3 && head.indexOf(LF) < 0 && head.indexOf(CR) < 0) {
        this.keep(head, 0, head.length)
        return undefined
      }
      this.started = true
      return this.push(head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? head.subarray(3) : head, out)
    }
    let start = 0
    if (this.skipLF && start < length) {
      if (chunk[start] === LF) start++
      this.skipLF = false
    }
    let i = start
    let fast = true
    while (i < length) {
      // the fast path, once a line starts with nothing pending: the chunk's whole lines decoded at once
      // (one decode for the chunk, not one per line) when they end with LF only and the span of them
      // is within the bound (so each line is)
      if (fast && this.pending.length === 0) {
        fast = false
        const last = chunk.lastIndexOf(LF)
        if (last >= i && last - i <= this.maxLine && chunk.indexOf(CR, i) < 0) {
          const refused = this.lines(this.decoder.decode(chunk.subarray(i, last)), out)
          if (refused !== undefined) return refused
          i = start = last + 1
          continue
        }
      }
      const byte = chunk[i]!
      if (byte !== LF && byte !== CR) {
        i++
        continue
      }
      // a whole line: [start, i) after any pending pieces
      let line: string
      if (this.pending.length === 0) {
        if (i - start > this.maxLine) return this.tooLong()
        line = i === start ? "" : this.decoder.decode(chunk.subarray(start, i))
      } else {
        if (this.pending.length + i - start > this.maxLine) return this.tooLong()
        line = this.decoder.decode(this.take(chunk, start, i))
      }
      const refused = this.line(line, 0, line.length, out)
      if (refused !== undefined) return refused
      i++
      if (byte === CR) {
        if (i < length) {
          if (chunk[i] === LF) i++
        } else this.skipLF = true
      }
      start = i
    }
    if (start < length) {
      const rest = length - start
      if (this.pending.length + rest > this.maxLine) return this.tooLong()
      // a copy: the transport may reuse its buffers
      this.keep(chunk, start, length)
    }
    return undefined
  }

  /** Appends `chunk[from, to)` to the pending line. */
  private keep(chunk: Uint8Array, from: number, to: number): void {
    this.pending.append(chunk, from, to)
  }

  /**
   * The pending line followed by `chunk[from, to)` (a view of the pending buffer: read it before the
   * next chunk), the pending line emptied; a buffer grown past 64 KiB is let go.
   */
  private take(chunk: Uint8Array, from: number, to: number): Uint8Array {
    this.keep(chunk, from, to)
    const whole = this.pending.view()
    this.pending.clear(65536)
    return whole
  }

  private tooLong(): string {
    return `a line of the event stream is longer than ${this.maxLine} bytes`
  }

  /** The lines of `text` (separated by LF), each handled in turn, in place. */
  private lines(text: string, out: Array<ServerSentEvent>): string | undefined {
    let from = 0
    while (true) {
      const end = text.indexOf("\n", from)
      const refused = this.line(text, from, end < 0 ? text.length : end, out)
      if (refused !== undefined || end < 0) return refused
      from = end + 1
    }
  }

  /** The line `text[start, end)`: read in place, only a known field's value is taken out of it. */
  private line(text: string, start: number, end: number, out: Array<ServerSentEvent>): string | undefined {
    if (start === end) {
      if (this.hasData) {
        out.push({ event: this.type === "" ? "message" : this.type, data: this.data, id: this.lastEventId })
      }
      this.data = ""
      this.hasData = false
      this.type = ""
      return undefined
    }
    // the colon looked for within the line only (a search of the rest of the text for each line
    // without one would make a body of such lines quadratic)
    let colon = -1
    for (let i = start; i < end; i++) {
      if (text.charCodeAt(i) === 0x3a) {
        colon = i
        break
      }
    }
    if (colon === start) {
      this.comments++
      return undefined
    }
    // the field compared in place (no string made for it), the value taken only for a known one
    const fieldEnd = colon < 0 ? end : colon
    if (isField(text, start, fieldEnd, "data")) {
      const data = valueOf(text, colon, end)
      if (this.hasData) {
        if (this.data.length + data.length + 1 > this.maxEvent) {
          return `an event of the event stream is larger than ${this.maxEvent} characters`
        }
        this.data += "\n" + data
      } else {
        this.data = data
        this.hasData = true
      }
    } else if (isField(text, start, fieldEnd, "event")) {
      this.type = valueOf(text, colon, end)
    } else if (isField(text, start, fieldEnd, "id")) {
      const id = valueOf(text, colon, end)
      if (id.indexOf("\u0000") < 0) this.lastEventId = id
    } else if (isField(text, start, fieldEnd, "retry")) {
      const retry = valueOf(text, colon, end)
      if (/^\d+$/.test(retry)) this.retry = Number(retry)
    }
    return undefined
  }
}

/**
 * The value of a line ending at `end` whose colon is at `colon` (none: ""), one space after the colon
 * dropped.
 */
const valueOf = (text: string, colon: number, end: number): string =>
  colon < 0 ? "" : text.slice(colon + 1 < end && text.charCodeAt(colon + 1) === 0x20 ? colon + 2 : colon + 1, end)

/** Whether the field `text[start, end)` is `name`. */
const isField = (text: string, start: number, end: number, name: string): boolean =>
  end - start === name.length && text.startsWith(name, start)

/**
 * Parses a whole body at once (tests, small bodies): its events, or why it was refused.
 *
 * @internal
 */
export const parseAll = (
  chunks: ReadonlyArray<Uint8Array>,
  maxLine: number = defaultMaxLine
): { readonly events: ReadonlyArray<ServerSentEvent>; readonly error: string | undefined; readonly parser: Parser } => {
  const parser = new Parser(maxLine, maxLine)
  const events: Array<ServerSentEvent> = []
  for (const chunk of chunks) {
    const error = parser.push(chunk, events)
    if (error !== undefined) return { events, error, parser }
  }
  return { events, error: undefined, parser }
}
