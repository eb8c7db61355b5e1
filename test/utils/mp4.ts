/** `bytes` made a valid mp4 of the same length (at least 32 bytes): an ftyp box, then one mdat box for the rest. */
export const asMp4 = (bytes: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(bytes)
  if (out.length < 32) throw new Error("an mp4 needs at least 32 bytes here")
  out.set([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0, 0x69, 0x73, 0x6f, 0x6d])
  out.set([0x6d, 0x70, 0x34, 0x31], 20)
  new DataView(out.buffer).setUint32(24, out.length - 24)
  out.set([0x6d, 0x64, 0x61, 0x74], 28)
  return out
}

/** The start of an mp4 whose mdat runs to the end of the body (size 0): any bytes may follow. */
export const openMp4Head = (): Uint8Array<ArrayBuffer> => {
  const head = asMp4(new Uint8Array(32))
  head.set([0, 0, 0, 0], 24)
  return head
}

/** A box header: 32-bit size and type (or size 1 and a 64-bit largesize). */
export const box = (type: string, size: number | bigint, large = false): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(large ? 16 : 8)
  const view = new DataView(out.buffer)
  if (large) {
    view.setUint32(0, 1)
    view.setBigUint64(8, BigInt(size))
  } else {
    view.setUint32(0, Number(size))
  }
  out.set([...type].map((c) => c.charCodeAt(0)), 4)
  return out
}
