/**
 * The simulator's replays: structurally valid ISO-BMFF (mp4) files of any size, produced chunk by
 * chunk in constant memory. The top-level boxes are `ftyp`, `moov` (holding one `mvhd`) and
 * `mdat`; their sizes add up exactly to the file's size. An `mdat` that does not fit a 32-bit size
 * uses the size field 1 and a 64-bit `largesize`. The `mdat` payload byte at absolute offset `i`
 * of the file is `(i * 31 + 7) & 0xff`.
 */

const fourCC = (name: string): Array<number> => Array.from(name, (c) => c.charCodeAt(0))

const u32 = (n: number): Array<number> => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]

const ftyp = Uint8Array.from([
  ...u32(24),
  ...fourCC("ftyp"),
  ...fourCC("isom"), // major brand
  ...u32(0x200), // minor version
  ...fourCC("isom"),
  ...fourCC("mp41")
])

// a version 0 movie header: 1000 units per second, duration 0, rate 1.0, volume 1.0, identity matrix
const mvhd = Uint8Array.from([
  ...u32(108),
  ...fourCC("mvhd"),
  ...u32(0), // version and flags
  ...u32(0), // creation time
  ...u32(0), // modification time
  ...u32(1000), // timescale
  ...u32(0), // duration
  ...u32(0x00010000), // rate
  0x01,
  0x00, // volume
  ...new Array<number>(10).fill(0), // reserved
  ...u32(0x00010000),
  ...u32(0),
  ...u32(0),
  ...u32(0),
  ...u32(0x00010000),
  ...u32(0),
  ...u32(0),
  ...u32(0),
  ...u32(0x40000000), // matrix
  ...new Array<number>(24).fill(0), // pre-defined
  ...u32(1) // next track id
])

const moov = Uint8Array.from([...u32(8 + mvhd.length), ...fourCC("moov"), ...mvhd])

const prefix = ftyp.length + moov.length

/** The smallest replay: `ftyp`, `moov` and an empty `mdat` with a 32-bit size. */
export const minimumSize = prefix + 8

/** Whether a replay of `size` bytes needs a 64-bit `mdat` size. */
const isLarge = (size: number): boolean => size - prefix > 0xffffffff

const pattern = (offset: number): number => (offset * 31 + 7) & 0xff

const patternPeriod = 256
/** @internal */
export const chunkSize = 64 * 1024
// shared and never mutated: payload chunks are views of it
const patternBuffer = new Uint8Array(chunkSize + patternPeriod).map((_, i) => pattern(i))

/** The boxes' headers: everything before the `mdat` payload. */
export const header = (size: number): Uint8Array => {
  const large = isLarge(size)
  const out = new Uint8Array(prefix + (large ? 16 : 8))
  out.set(ftyp)
  out.set(moov, ftyp.length)
  const view = new DataView(out.buffer)
  const mdatSize = size - prefix
  if (large) {
    view.setUint32(prefix, 1)
    out.set(fourCC("mdat"), prefix + 4)
    view.setBigUint64(prefix + 8, BigInt(mdatSize))
  } else {
    view.setUint32(prefix, mdatSize)
    out.set(fourCC("mdat"), prefix + 4)
  }
  return out
}

/** The byte at `offset` of a replay of `size` bytes. */
export const byteAt = (size: number, offset: number): number => {
  const headLength = prefix + (isLarge(size) ? 16 : 8)
  return offset < headLength ? header(size)[offset]! : pattern(offset)
}

/**
 * The replay's bytes as chunks of at most `chunkSize`, lazily. The payload chunks are views of a
 * shared, never-mutated buffer: no allocation per chunk.
 */
export function* chunks(size: number): Generator<Uint8Array> {
  const total = Math.max(size, minimumSize)
  const head = header(total)
  yield head
  let offset = head.length
  while (offset < total) {
    const length = Math.min(chunkSize, total - offset)
    const start = offset % patternPeriod
    yield patternBuffer.subarray(start, start + length)
    offset += length
  }
}
