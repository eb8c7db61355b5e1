/**
 * The simulator as an outside client drives it over HTTP (issue 20), a later review's findings: a
 * recording still running, a project's caller and other projects, a profile's archive, `exec`'s
 * `timeout_sec`, a watch of a missing path, an extension that is not a ZIP archive, the event streams'
 * `X-SSE-Content-Type`, and lists' out-of-range `limit` / `offset`. One served simulator for the file.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import * as zlib from "node:zlib"
import * as values from "../src/testing/internal/values.js"
import { handleJson, sendJson, servedForFile } from "./utils/served.js"

// a log of 5 requests: the test of its drops fills it
const served = servedForFile({ adminToken: "adm_review_h_0123456789", requestLogSize: 5 })

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  sendJson(served.url, method, path, body, headers)

/** A request whose answer is read as bytes (a download, an event stream's head). */
const fetchRaw = (path: string, init: RequestInit = {}) =>
  fetch(`${served.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, ...init.headers }
  })

let unique = 0
const name = (prefix: string) => `${prefix}-outside-${++unique}`

const browser = async () => (await send("POST", "/browsers", { timeout_seconds: 600 })).json.session_id as string

describe("a replay started by the program", () => {
  it("answers its download 202 with Retry-After while it records, the mp4 once stopped", async () => {
    const id = await browser()
    const replay = (await send("POST", `/browsers/${id}/replays`, {})).json.replay_id as string
    const recording = await fetchRaw(`/browsers/${id}/replays/${replay}`)
    expect(recording.status).toBe(202)
    expect(recording.headers.get("retry-after")).toMatch(/^\d+$/)
    await recording.arrayBuffer()
    expect((await send("POST", `/browsers/${id}/replays/${replay}/stop`)).status).toBe(200)
    const done = await fetchRaw(`/browsers/${id}/replays/${replay}`)
    expect(done.status).toBe(200)
    expect(done.headers.get("content-type")).toBe("video/mp4")
    const bytes = new Uint8Array(await done.arrayBuffer())
    expect(new TextDecoder().decode(bytes.subarray(4, 8))).toBe("ftyp")
  })
})

describe("a project's caller and another project", () => {
  it("reads it, but cannot rename, re-limit or delete it (404); its own it can", async () => {
    const a = (await send("POST", "/org/projects", { name: name("a") })).json
    const b = (await send("POST", "/org/projects", { name: name("b") })).json
    const key = (await send("POST", "/org/api_keys", { name: name("key"), project_id: a.id })).json.key as string
    for (const caller of [{ token: key }, { "x-kernel-project-id": a.id as string }]) {
      expect((await send("GET", `/org/projects/${b.id}`, undefined, caller)).status).toBe(200)
      expect((await send("PATCH", `/org/projects/${b.id}`, { name: name("hijack") }, caller)).status).toBe(404)
      expect((await send("PATCH", `/org/projects/${b.id}/limits`, { max_concurrent_sessions: 3 }, caller)).status)
        .toBe(404)
      expect((await send("DELETE", `/org/projects/${b.id}`, undefined, caller)).status).toBe(404)
    }
    // nothing of B changed, and B's own caller (the organization's too) still manages it
    expect((await send("GET", `/org/projects/${b.id}`)).json.name).toBe(b.name)
    const renamed = name("a-renamed")
    expect((await send("PATCH", `/org/projects/${a.id}`, { name: renamed }, { token: key })).json.name).toBe(renamed)
    expect((await send("DELETE", `/org/projects/${b.id}`)).status).toBe(204)
  })
})

describe("a profile's saved state", () => {
  it("downloads as a zstd-compressed tar of a user-data directory", async () => {
    const profile = (await send("POST", "/profiles", { name: name("profile") })).json
    const id = (await send("POST", "/browsers", { profile: { name: profile.name, save_changes: true } })).json
      .session_id
    expect((await send("DELETE", `/browsers/${id}`)).status).toBe(204)
    const answer = await fetchRaw(`/profiles/${profile.id}/download`)
    expect(answer.status).toBe(200)
    const archive = new Uint8Array(await answer.arrayBuffer())
    expect([...archive.subarray(0, 4)]).toEqual([0x28, 0xb5, 0x2f, 0xfd])
    // Node 22.15 and later read zstd (CI runs 22 and 24); on an older Node, the frame's raw blocks are read here
    const decompress: unknown = Reflect.get(zlib, "zstdDecompressSync")
    const tar = typeof decompress === "function" ? new Uint8Array(decompress(archive)) : rawBlocks(archive)
    // a ustar header: the file's name, the magic, a checksum over the header, then its bytes
    const header = Buffer.from(tar.subarray(0, 512))
    expect(header.toString("latin1", 0, 19)).toBe("Default/Preferences")
    expect(header.toString("latin1", 257, 262)).toBe("ustar")
    const size = parseInt(header.toString("latin1", 124, 135), 8)
    const checksum = parseInt(header.toString("latin1", 148, 154), 8)
    let sum = 0
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!
    expect(checksum).toBe(sum)
    expect(JSON.parse(Buffer.from(tar.subarray(512, 512 + size)).toString())).toMatchObject({
      profile: { name: `profile state of ${id}` }
    })
    expect(tar.length % 512).toBe(0)
  })
})

/** The content of a zstd frame made of raw blocks (what the simulator writes), for a Node without zstd. */
const rawBlocks = (frame: Uint8Array): Uint8Array => {
  const view = Buffer.from(frame)
  expect(view[4]).toBe(0xa0)
  const size = view.readUInt32LE(5)
  const out: Array<Buffer> = []
  for (let at = 9, last = 0; !last;) {
    const header = view[at]! | (view[at + 1]! << 8) | (view[at + 2]! << 16)
    last = header & 1
    expect((header >> 1) & 3).toBe(0)
    const length = header >> 3
    out.push(view.subarray(at + 3, at + 3 + length))
    at += 3 + length
  }
  const content = Buffer.concat(out)
  expect(content.length).toBe(size)
  return content
}

describe("exec's timeout_sec", () => {
  it("is a 500 'process timed out' when the command runs longer; within it, the answer", async () => {
    const id = await browser()
    const over = await send("POST", `/browsers/${id}/process/exec`, { command: "sleep", args: ["5"], timeout_sec: 1 })
    expect(over.status).toBe(500)
    expect(over.json.message).toBe("process timed out")
    const within = await send("POST", `/browsers/${id}/process/exec`, {
      command: "sleep",
      args: ["1"],
      timeout_sec: 2
    })
    expect(within.json).toMatchObject({ exit_code: 0, duration_ms: 1000 })
  })
})

describe("a filesystem watch", () => {
  it("of a path that does not exist is the document's 404; of one that does, 201", async () => {
    const id = await browser()
    const missing = await send("POST", `/browsers/${id}/fs/watch`, { path: "/does/not/exist" })
    expect(missing.status).toBe(404)
    expect(missing.json.message).toContain("/does/not/exist")
    expect((await send("PUT", `/browsers/${id}/fs/create_directory`, { path: "/w" })).status).toBe(201)
    expect((await send("POST", `/browsers/${id}/fs/watch`, { path: "/w" })).status).toBe(201)
  })
})

/** `POST /extensions` of `bytes` as its file, under a new name. */
const upload = (bytes: Uint8Array, extension = name("ext")) => {
  const form = new FormData()
  form.append("file", new Blob([new Uint8Array(bytes)]), "extension.zip")
  form.append("name", extension)
  return fetchRaw("/extensions", { method: "POST", body: form })
}

describe("extensions", () => {
  it("refuses an upload that is not a ZIP archive (400), as uploadZip does; takes one that is", async () => {
    const refused = await upload(new TextEncoder().encode("not a zip"), name("ext"))
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { message: string }).message).toMatch(/^file: /)
    // the Chrome Web Store's download is a ZIP archive of an unpacked extension, which uploads back
    const store = await fetchRaw(
      `/extensions/from_chrome_store?url=${
        encodeURIComponent("https://chromewebstore.google.com/detail/x/abcdefghijklmnopabcdefghijklmnop")
      }`
    )
    expect(store.status).toBe(200)
    const zip = new Uint8Array(await store.arrayBuffer())
    expect([...zip.subarray(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04])
    expect(Buffer.from(zip).toString("latin1")).toContain("manifest.json")
    const taken = await upload(zip, name("ext"))
    expect(taken.status).toBe(201)
  })
})

describe("the event streams", () => {
  it("say their data's media type (X-SSE-Content-Type: application/json), as the service does", async () => {
    const id = await browser()
    const controller = new AbortController()
    const answer = await fetchRaw(
      `/browsers/${id}/logs/stream?source=supervisor&supervisor_process=chromium&follow=false`,
      {
        signal: controller.signal
      }
    )
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toBe("text/event-stream")
    expect(answer.headers.get("x-sse-content-type")).toBe("application/json")
    controller.abort()
  })
})

describe("a list's limit and offset where the document sets no bounds", () => {
  it.each(["0", "-3"])("limit=%s is the default limit (20)", async (limit) => {
    const answer = await fetchRaw(`/org/projects?limit=${limit}`)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-limit")).toBe("20")
    await answer.arrayBuffer()
  })

  it("a negative offset is 0", async () => {
    const answer = await fetchRaw("/org/projects?offset=-2&limit=50")
    expect([answer.headers.get("x-offset"), answer.headers.get("x-limit")]).toEqual(["0", "50"])
    await answer.arrayBuffer()
  })
})

describe("the request log", () => {
  it("says how many requests it dropped since it was cleared (X-Simulator-Requests-Dropped)", async () => {
    const admin = { authorization: "Bearer adm_review_h_0123456789" }
    await fetch(`${served.url}/_simulator/requests`, { method: "DELETE", headers: admin })
    for (let i = 0; i < 8; i++) await send("GET", `/browsers?limit=${i + 1}`)
    const log = await fetch(`${served.url}/_simulator/requests`, { headers: admin })
    const entries = (await log.json()) as ReadonlyArray<{ readonly query: string }>
    expect(entries.map((e) => e.query)).toEqual(["limit=4", "limit=5", "limit=6", "limit=7", "limit=8"])
    expect(log.headers.get("x-simulator-requests-dropped")).toBe("3")
    await fetch(`${served.url}/_simulator/requests`, { method: "DELETE", headers: admin })
    const cleared = await fetch(`${served.url}/_simulator/requests`, { headers: admin })
    expect(await cleared.json()).toEqual([])
    expect(cleared.headers.get("x-simulator-requests-dropped")).toBe("0")
  })

  it.effect("of no size (requestLogSize: 0) says it dropped every request", () =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.make(KernelSimulator.defaultSeed, { requestLogSize: 0 })
      for (let i = 0; i < 4; i++) yield* handleJson(simulator)("GET", "/browsers")
      expect(yield* simulator.requests).toEqual([])
      expect(yield* simulator.requestsDropped).toBe(4)
    }))
})

describe("a process killed by a signal", () => {
  // the browser's own server reports Go's `WaitStatus.ExitStatus()`: -1 for a process a signal ended (it was
  // 128 + the signal's number, a shell's way, which the service never answers)
  it.each([["HUP", -1], ["INT", -1], ["KILL", -1], ["TERM", -1]] as const)(
    "%s: exits %i, as the browser's server reports a process a signal ended",
    async (signal, code) => {
      const id = await browser()
      const spawned = (await send("POST", `/browsers/${id}/process/spawn`, { command: "cat" })).json.process_id
      expect((await send("POST", `/browsers/${id}/process/${spawned}/kill`, { signal })).status).toBe(200)
      expect((await send("GET", `/browsers/${id}/process/${spawned}/status`)).json).toMatchObject({
        state: "exited",
        exit_code: code
      })
    }
  )
})

describe("a project that holds resources", () => {
  it("is not evicted to make room while projects holding none can be", async () => {
    const held = (await send("POST", "/org/projects", { name: name("held") })).json
    const browser = (await send("POST", "/browsers", {}, { "x-kernel-project-id": held.id })).json.session_id
    for (let i = 0; i < KernelSimulator.collectionLimit; i++) {
      expect((await send("POST", "/org/projects", { name: name("filler") })).status).toBe(201)
    }
    expect((await send("GET", `/org/projects/${held.id}`)).status).toBe(200)
    expect((await send("GET", `/browsers/${browser}`, undefined, { "x-kernel-project-id": held.id })).status).toBe(200)
  })
})

describe("an extension's archive", () => {
  it("is checked for its structure only: many entries and large contents are taken (no limit is documented)", async () => {
    const many = values.zip(Array.from({ length: 1_200 }, (_, i) => ({ name: `f${i}.js`, bytes: new Uint8Array(1) })))
    // an entry that says it holds 17 MiB once inflated (its size fields: local header, then directory)
    const large = Buffer.from(values.zip([{ name: "module.wasm", bytes: new Uint8Array(8) }]))
    large.writeUInt32LE(17 * 1024 * 1024, 22)
    large.writeUInt32LE(17 * 1024 * 1024, 30 + "module.wasm".length + 8 + 24)
    for (const archive of [many, large]) expect((await upload(archive)).status).toBe(201)
    // a directory that points past the archive is not one
    const damaged = values.zip([{ name: "manifest.json", bytes: new Uint8Array(4) }])
    damaged[damaged.length - 6] = 0xff
    expect((await upload(damaged)).status).toBe(400)
  })
})

describe("a new browser's machine", () => {
  const out = (answer: { readonly json: Record<string, unknown> }) =>
    Buffer.from(String(answer.json["stdout_b64"]), "base64").toString()

  it("has /tmp and the kernel user's home before anything is written; exec's cwd: null is no cwd", async () => {
    const id = await browser()
    const exec = (body: Record<string, unknown>) => send("POST", `/browsers/${id}/process/exec`, body)
    expect(out(await exec({ command: "ls", args: ["/"] }))).toBe("home\ntmp\n")
    expect(out(await exec({ command: "ls", args: ["/home"] }))).toBe("kernel\n")
    expect(out(await exec({ command: "pwd", cwd: "/tmp" }))).toBe("/tmp\n")
    expect(out(await exec({ command: "pwd", cwd: null }))).toBe("/\n")
    const spawned = await send("POST", `/browsers/${id}/process/spawn`, { command: "echo", args: ["hi"], cwd: null })
    expect(spawned.status).toBe(200)
    expect((await send("POST", `/browsers/${id}/fs/watch`, { path: "/tmp" })).status).toBe(201)
  })
})

describe("a browser's curl", () => {
  it("answers an HTTP status, a page of the URL's host, UTF-8 or base64 as asked", async () => {
    const id = await browser()
    const plain = (await send("POST", `/browsers/${id}/curl`, { url: "https://example.com/a" })).json
    expect(plain).toMatchObject({ status: 200, headers: { "content-type": ["text/html; charset=utf-8"] } })
    expect(plain.body).toContain("example.com")
    // a client can make a Response of it (a status of 1 could not)
    expect(new Response(plain.body, { status: plain.status }).status).toBe(200)
    const encoded = (await send("POST", `/browsers/${id}/curl`, {
      url: "https://example.com/a",
      response_encoding: "base64"
    })).json
    expect(Buffer.from(encoded.body, "base64").toString()).toBe(plain.body)
  })
})
