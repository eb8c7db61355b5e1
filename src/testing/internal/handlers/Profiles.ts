/**
 * The simulator's profiles: a profile has no state until a browser that used it with
 * `save_changes` ends (`Browsers.ts` saves it); its download answers 202 until then, as the
 * document says ("Profile exists but has not yet captured any state"), then the saved archive.
 *
 * @internal
 */
import * as engine from "../engine.js"
import type { Handlers } from "./shared.js"
import { error, obj } from "./shared.js"

/**
 * A POSIX (ustar) archive of files: a 512-byte header each (name, mode, size, checksum), the bytes
 * padded to 512, and two empty blocks at the end.
 */
const tar = (
  files: ReadonlyArray<{ readonly name: string; readonly bytes: Uint8Array }>,
  mtime: number
): Uint8Array => {
  const blocks: Array<Uint8Array> = []
  for (const file of files) {
    const header = Buffer.alloc(512)
    header.write(file.name.slice(0, 100), 0, "utf8")
    header.write("0000644\0", 100, "latin1")
    header.write("0000000\0", 108, "latin1")
    header.write("0000000\0", 116, "latin1")
    header.write(`${file.bytes.length.toString(8).padStart(11, "0")}\0`, 124, "latin1")
    header.write(`${Math.floor(mtime / 1000).toString(8).padStart(11, "0")}\0`, 136, "latin1")
    header.write("        ", 148, "latin1")
    header.write("0", 156, "latin1")
    header.write("ustar\0" + "00", 257, "latin1")
    let sum = 0
    for (const byte of header) sum += byte
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1")
    blocks.push(header, file.bytes, new Uint8Array((512 - (file.bytes.length % 512)) % 512))
  }
  blocks.push(new Uint8Array(1024))
  return Buffer.concat(blocks)
}

/**
 * A Zstandard frame of `content` stored as raw blocks (no compression: a valid frame any zstd
 * decoder reads back): the magic number, a single-segment header with the content's size, blocks of
 * at most 128 KiB.
 */
const zstdFrame = (content: Uint8Array): Uint8Array => {
  const maxBlock = 128 * 1024
  const head = Buffer.alloc(9)
  head.writeUInt32LE(0xfd2fb528, 0)
  // Frame_Header_Descriptor: a 4-byte content size, single segment, no checksum, no dictionary
  head[4] = 0xa0
  head.writeUInt32LE(content.length, 5)
  const parts: Array<Uint8Array> = [head]
  let offset = 0
  do {
    const size = Math.min(maxBlock, content.length - offset)
    const last = offset + size >= content.length ? 1 : 0
    // Block_Header: Last_Block, Block_Type 0 (raw), Block_Size
    const value = last | (size << 3)
    parts.push(Buffer.from([value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]))
    parts.push(content.subarray(offset, offset + size))
    offset += size
  } while (offset < content.length)
  return Buffer.concat(parts)
}

/**
 * The state a browser session leaves in its profile: as the service's archive, a zstd-compressed tar
 * of a user-data directory (here one file, its `Default/Preferences`).
 */
const savedState = (browserId: string, now: number): Uint8Array =>
  zstdFrame(tar([{
    name: "Default/Preferences",
    bytes: new TextEncoder().encode(JSON.stringify({ profile: { name: `profile state of ${browserId}` } }))
  }], now))

/** Saves a browser's state into the profile it was created with, when it asked to save changes. */
export const saveProfile = (
  store: engine.Store,
  browser: engine.Resource,
  stamp: string,
  now: number
): void => {
  const profile = obj(browser.fields["profile"])
  if (profile["save_changes"] !== true) return
  const key = typeof profile["id"] === "string" ? profile["id"] : profile["name"]
  if (typeof key !== "string") return
  const stored = engine.find(store, "/profiles", key, browser.project)
  if (stored === undefined || stored.deleted) return
  stored.fields = { ...stored.fields, __bytes: savedState(browser.id, now), updated_at: stamp, last_used_at: stamp }
  store.byteCollections.add("/profiles")
}

export const handlers: Handlers = {
  downloadProfile: ({ call, op, store }) => {
    const stored = engine.find(store, "/profiles", call.segments[1]!, call.project)
    if (stored === undefined || stored.deleted) return error(404, "not_found", "profile not found")
    const state = stored.fields["__bytes"]
    return state instanceof Uint8Array ? engine.reply(op, state, 200) : engine.reply(op, undefined, 202)
  }
}
