/**
 * Deterministic mp4 content of any size, produced chunk by chunk: an `ftyp` box, then an `mdat`
 * box whose payload byte at absolute offset `i` is `(i * 31 + 7) & 0xff`.
 */

const ftyp = new Uint8Array([
  0x00,
  0x00,
  0x00,
  0x18, // size 24
  0x66,
  0x74,
  0x79,
  0x70, // "ftyp"
  0x69,
  0x73,
  0x6f,
  0x6d, // major brand "isom"
  0x00,
  0x00,
  0x02,
  0x00, // minor version
  0x69,
  0x73,
  0x6f,
  0x6d, // compatible "isom"
  0x6d,
  0x70,
  0x34,
  0x31 // compatible "mp41"
])

/** The smallest valid replay: the two box headers (32-bit mdat size). */
export const minimumSize = ftyp.length + 8

const patternPeriod = 256
/** @internal */
export const chunkSize = 64 * 1024
// made on the first replay served (not when a module that verifies replays is imported)
let pattern: Uint8Array | undefined
const patternOf = (): Uint8Array =>
  pattern ??= new Uint8Array(chunkSize + patternPeriod).map((_, i) => (i * 31 + 7) & 0xff)

const header = (size: number): Uint8Array => {
  const payload = size - ftyp.length
  const large = payload > 0xffffffff
  const out = new Uint8Array(ftyp.length + (large ? 16 : 8))
  out.set(ftyp)
  const view = new DataView(out.buffer)
  if (large) {
    view.setUint32(ftyp.length, 1)
    out.set([0x6d, 0x64, 0x61, 0x74], ftyp.length + 4)
    view.setBigUint64(ftyp.length + 8, BigInt(payload))
  } else {
    view.setUint32(ftyp.length, payload)
    out.set([0x6d, 0x64, 0x61, 0x74], ftyp.length + 4)
  }
  return out
}

/** The byte at `offset` of a replay of `size` bytes. */
export const byteAt = (size: number, offset: number): number => {
  const head = header(size)
  return offset < head.length ? head[offset]! : (offset * 31 + 7) & 0xff
}

/**
 * The replay's bytes as chunks of at most `chunkSize`, lazily. The payload chunks are views of a
 * shared, never-mutated buffer: no allocation per chunk.
 */
export function* chunks(size: number): Generator<Uint8Array> {
  const head = header(Math.max(size, minimumSize))
  yield head
  let offset = head.length
  const total = Math.max(size, minimumSize)
  while (offset < total) {
    const length = Math.min(chunkSize, total - offset)
    const start = offset % patternPeriod
    yield patternOf().subarray(start, start + length)
    offset += length
  }
}

const ftypType = 0x66747970
const mdatType = 0x6d646174

/**
 * Checks, while a body streams, that it is an mp4 whose top-level boxes add up exactly to the
 * body: each box is a 32-bit size and a 4-character type, a size of 1 is followed by a 64-bit
 * `largesize`, a size of 0 runs to the end of the body. The first box must be `ftyp`, and an `mdat`
 * (the media) must be among them: a body cut right after its `ftyp` (or any other box before the
 * media) adds up too, but is not a replay. Only the
 * box headers (at most 16 bytes at a time) are looked at or copied; payloads are skipped by
 * arithmetic, so the cost per chunk does not depend on its size beyond the boxes it holds.
 *
 * @internal
 */
export class Verifier {
  /** Bytes of the current box's payload still to come. */
  private remaining = 0
  /** The current box runs to the end of the body (size 0). */
  private toEnd = false
  /** The box header being assembled across chunk boundaries. */
  private readonly header = new Uint8Array(16)
  private filled = 0
  private boxes = 0
  private media = false
  private failure: string | undefined

  /** Feeds one chunk; returns why the body is not an mp4, once it is known. */
  push(chunk: Uint8Array): string | undefined {
    if (this.failure !== undefined) return this.failure
    let offset = 0
    const length = chunk.length
    while (offset < length) {
      if (this.toEnd) return undefined
      if (this.remaining > 0) {
        const skip = Math.min(this.remaining, length - offset)
        this.remaining -= skip
        offset += skip
        continue
      }
      // assembling a header: 8 bytes, or 16 when the size field is 1
      const want = this.filled >= 8 && this.sizeField() === 1 ? 16 : 8
      const take = Math.min(want - this.filled, length - offset)
      this.header.set(chunk.subarray(offset, offset + take), this.filled)
      this.filled += take
      offset += take
      if (this.filled < 8) continue
      const failure = this.headerDone(want)
      if (failure !== undefined) return (this.failure = failure)
    }
    return undefined
  }

  /** Called at the end of the body; returns why the body is not a complete mp4. */
  end(): string | undefined {
    if (this.failure !== undefined) return this.failure
    if (this.boxes === 0 && this.filled === 0) return "the body is empty, not an mp4"
    if (this.toEnd) return this.media ? undefined : "the body is not an mp4 with media: no mdat box"
    if (this.filled > 0) {
      return `the body ends inside an mp4 box header (${this.filled} of ${
        this.filled >= 8 && this.sizeField() === 1 ? 16 : 8
      } bytes)`
    }
    if (this.remaining > 0) return `the body ends ${this.remaining} bytes before the end of its last mp4 box`
    if (!this.media) return "the body ends before any mdat box (the media): not a complete mp4"
    return undefined
  }

  private sizeField(): number {
    const h = this.header
    return ((h[0]! << 24) >>> 0) + (h[1]! << 16) + (h[2]! << 8) + h[3]!
  }

  private headerDone(want: number): string | undefined {
    const h = this.header
    const size = this.sizeField()
    const type = ((h[4]! << 24) >>> 0) + (h[5]! << 16) + (h[6]! << 8) + h[7]!
    if (this.boxes === 0 && type !== ftypType) {
      return "the body is not an mp4: it does not start with an ftyp box"
    }
    for (let i = 4; i < 8; i++) {
      if (h[i]! < 0x20 || h[i]! > 0x7e) return "the body is not an mp4: a top-level box has an invalid type"
    }
    if (size === 1) {
      if (want === 8) return undefined // the largesize follows
      if (this.filled < 16) return undefined
      const high = ((h[8]! << 24) >>> 0) + (h[9]! << 16) + (h[10]! << 8) + h[11]!
      const low = ((h[12]! << 24) >>> 0) + (h[13]! << 16) + (h[14]! << 8) + h[15]!
      const large = high * 2 ** 32 + low
      if (large < 16) return "the body is not an mp4: a box's 64-bit size is smaller than its header"
      if (!Number.isSafeInteger(large)) return "the body is not an mp4: a box's 64-bit size is out of range"
      this.remaining = large - 16
    } else if (size === 0) {
      this.toEnd = true
    } else if (size < 8) {
      return "the body is not an mp4: a box's size is smaller than its header"
    } else {
      this.remaining = size - 8
    }
    this.filled = 0
    this.boxes++
    if (type === mdatType) this.media = true
    return undefined
  }
}
