import { describe, expect, it } from "@effect/vitest"
import * as Sse from "../src/internal/sse.js"

const enc = new TextEncoder()

/** Every split of `text` into 2 chunks, and 1-byte chunks: the parser's result must not depend on them. */
const splits = (bytes: Uint8Array): Array<Array<Uint8Array>> => {
  const out: Array<Array<Uint8Array>> = [[bytes]]
  for (let i = 1; i < bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)])
  out.push(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)))
  return out
}

const cases: ReadonlyArray<{
  readonly name: string
  readonly text: string | Uint8Array
  readonly events: ReadonlyArray<Partial<Sse.ServerSentEvent>>
}> = [
  { name: "LF", text: "data: a\n\ndata: b\n\n", events: [{ event: "message", data: "a" }, { data: "b" }] },
  { name: "CRLF", text: "data: a\r\n\r\ndata: b\r\n\r\n", events: [{ data: "a" }, { data: "b" }] },
  { name: "CR", text: "data: a\r\rdata: b\r\r", events: [{ data: "a" }, { data: "b" }] },
  { name: "multi-line data joined by LF", text: "data: a\ndata:b\ndata:  c\n\n", events: [{ data: "a\nb\n c" }] },
  {
    name: "event and id",
    text: "event: tick\nid: 7\ndata: x\n\ndata: y\n\n",
    events: [
      { event: "tick", id: "7", data: "x" },
      { event: "message", id: "7", data: "y" }
    ]
  },
  {
    name: "comments and unknown fields ignored",
    text: ": keep-alive\nfoo: bar\ndata: x\n\n:\n\n",
    events: [{ data: "x" }]
  },
  { name: "no data: no event", text: "event: tick\n\nid: 3\n\n", events: [] },
  { name: "an event not ended is dropped", text: "data: a\n\ndata: b", events: [{ data: "a" }] },
  {
    name: "BOM skipped",
    text: new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode("data: a\n\n")]),
    events: [{ data: "a" }]
  },
  { name: "field without colon", text: "data\n\n", events: [{ data: "" }] },
  {
    name: "id with NUL ignored",
    text: "id: 1\ndata: a\n\nid: x\u0000y\ndata: b\n\n",
    events: [{ id: "1" }, { id: "1" }]
  },
  {
    name: "fields read in place: empty values, near names, a colonless line before a colon",
    text: "data:\ndata: \ndatax: no\ndat: no\nevent:tick\ndata\ndata: b:c\n\n",
    events: [{ event: "tick", data: "\n\n\nb:c" }]
  },
  { name: "UTF-8 across chunks", text: "data: héllo ✓ 😀\n\n", events: [{ data: "héllo ✓ 😀" }] }
]

describe("the SSE parser", () => {
  for (const c of cases) {
    it(`${c.name}, on every split of the body`, () => {
      const bytes = typeof c.text === "string" ? enc.encode(c.text) : c.text
      for (const chunks of splits(bytes)) {
        const { error, events } = Sse.parseAll(chunks)
        expect(error).toBeUndefined()
        expect(events).toHaveLength(c.events.length)
        c.events.forEach((expected, i) => expect(events[i]).toMatchObject(expected))
      }
    })
  }

  it("retry: digits only", () => {
    expect(Sse.parseAll([enc.encode("retry: 1500\n\n")]).parser.retry).toBe(1500)
    expect(Sse.parseAll([enc.encode("retry: 15x\n\n")]).parser.retry).toBeUndefined()
  })

  it("counts comments (keep-alives)", () => {
    expect(Sse.parseAll([enc.encode(": a\n: b\n\n")]).parser.comments).toBe(2)
  })

  it("a line that never ends is refused past its bound, whatever the chunks", () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61)
    const parser = new Sse.Parser(1024 * 1024)
    const out: Array<Sse.ServerSentEvent> = []
    let error: string | undefined
    let chunks = 0
    while (error === undefined && chunks < 100) {
      error = parser.push(chunk, out)
      chunks++
    }
    expect(error).toMatch(/longer than 1048576 bytes/)
    expect(chunks).toBe(17)
    expect(Sse.parseAll([enc.encode("data: " + "x".repeat(2000) + "\n\n")], 1000).error).toMatch(/longer/)
  })

  it("an event whose data grows past its bound is refused", () => {
    const line = "data: " + "x".repeat(500) + "\n"
    const { error } = Sse.parseAll([enc.encode(line.repeat(10))], 2000)
    expect(error).toMatch(/larger than 2000/)
  })

  it("parses at least 100,000 small events a second", () => {
    const event = enc.encode("event: log\nid: 123\ndata: {\"event\":\"log\",\"message\":\"hello world\"}\n\n")
    // 64 KiB chunks that split events anywhere
    const count = 200_000
    const body = new Uint8Array(event.length * count)
    for (let i = 0; i < count; i++) body.set(event, i * event.length)
    const chunks: Array<Uint8Array> = []
    for (let i = 0; i < body.length; i += 65_521) chunks.push(body.subarray(i, i + 65_521))
    const started = performance.now()
    const { error, events } = Sse.parseAll(chunks)
    const seconds = (performance.now() - started) / 1000
    expect(error).toBeUndefined()
    expect(events).toHaveLength(count)
    expect(events[count - 1]).toEqual({
      event: "log",
      id: "123",
      data: "{\"event\":\"log\",\"message\":\"hello world\"}"
    })
    const rate = count / seconds
    console.log(`SSE parser: ${Math.round(rate)} events/s`)
    expect(rate).toBeGreaterThan(100_000)
  })
})
