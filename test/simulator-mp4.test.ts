import { describe, expect, it } from "@effect/vitest"
import { KernelSimulator } from "effect-kernel/testing"
import * as mp4 from "../src/testing/internal/mp4.js"

/** The top-level boxes of an mp4 whose first bytes are `head` and whole size is `size`. */
const boxes = (head: Uint8Array, size: number) => {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  const out: Array<{ type: string; size: number; header: number }> = []
  let at = 0
  while (at < size) {
    const small = view.getUint32(at)
    const type = new TextDecoder().decode(head.subarray(at + 4, at + 8))
    const box = small === 1
      ? { type, size: Number(view.getBigUint64(at + 8)), header: 16 }
      : { type, size: small, header: 8 }
    out.push(box)
    expect(box.size).toBeGreaterThanOrEqual(box.header)
    at += box.size
  }
  expect(at).toBe(size)
  return out
}

describe("simulated replays are structurally valid mp4", () => {
  const fourGiB = 2 ** 32
  const sizes = [
    mp4.minimumSize,
    mp4.minimumSize + 1,
    100_000,
    // the largest mdat with a 32-bit size, and the smallest that needs 64 bits
    fourGiB - 1 + 140,
    fourGiB + 140,
    5 * 2 ** 30
  ]
  for (const size of sizes) {
    it(`${size} bytes: ftyp, moov, mdat, adding up exactly, streamed in bounded chunks`, () => {
      let total = 0
      let first: Uint8Array | undefined
      let largest = 0
      for (const chunk of mp4.chunks(size)) {
        first ??= chunk.slice()
        total += chunk.length
        largest = Math.max(largest, chunk.length)
      }
      expect(total).toBe(size)
      expect(largest).toBeLessThanOrEqual(mp4.chunkSize)
      const found = boxes(first!, size)
      expect(found.map((b) => b.type)).toEqual(["ftyp", "moov", "mdat"])
      expect(found[2]!.header).toBe(size - 140 > 0xffffffff ? 16 : 8)
      expect(found[2]!.size).toBe(size - 140)
      expect(KernelSimulator.replayByteAt(size, 4)).toBe(0x66) // "f" of ftyp
      if (size > 156) expect(KernelSimulator.replayByteAt(size, size - 1)).toBe(((size - 1) * 31 + 7) & 0xff)
    })
  }

  it("the moov box holds an mvhd", () => {
    const head = mp4.header(100_000)
    expect(new TextDecoder().decode(head.subarray(24 + 12, 24 + 16))).toBe("mvhd")
    expect(KernelSimulator.minimumReplaySize).toBe(148)
  })
})
