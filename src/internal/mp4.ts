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
const pattern = new Uint8Array(chunkSize + patternPeriod).map((_, i) => (i * 31 + 7) & 0xff)

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
    yield pattern.subarray(start, start + length)
    offset += length
  }
}
