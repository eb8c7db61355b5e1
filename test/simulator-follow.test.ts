/**
 * Over HTTP, a stream that follows a hub (a filesystem watch, telemetry) is written as its events
 * are told, without an Effect `Stream` per open stream: the same frames, ends and clean-up as in
 * memory, and a fraction of the memory an open stream held (about 60 KiB of `Stream` machinery each,
 * which made every young collection of the bin under the mixed load several times slower).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KernelSimulator } from "effect-kernel/testing"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

setFlagsFromString("--expose_gc")
const gc: unknown = runInNewContext("gc")
const collect = () => {
  if (typeof gc === "function") {
    gc()
    gc()
  }
}

const token = "sk_sim_follow"

const served = (browsers: ReadonlyArray<string>) =>
  KernelSimulator.serve({
    adminToken: "adm_follow",
    seed: { organizations: [{ id: "org_follow", token, browsers: browsers.map((id) => ({ id })) }] }
  })

const call = (url: string, method: string, body?: unknown) =>
  fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const json = async (url: string, method: string, body?: unknown) => (await call(url, method, body)).json()

/** Reads an event stream until `until` holds of its text; the text. */
const readUntil = async (response: Response, until: (text: string) => boolean): Promise<string> => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  while (!until(text)) {
    const next = await reader.read()
    if (next.done) break
    text += decoder.decode(next.value, { stream: true })
  }
  await reader.cancel().catch(() => undefined)
  return text
}

const events = (text: string) => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!))

describe("streams following a hub, over HTTP", () => {
  it.live("a watch tells the changes under its path, then ends when it is stopped", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* served(["b1"])
      const text = yield* Effect.promise(async () => {
        const base = `${sim.url}/browsers/b1`
        // a watched path exists (a missing one is the document's 404)
        await call(`${base}/fs/create_directory`, "PUT", { path: "/data" })
        const watch = await json(`${base}/fs/watch`, "POST", { path: "/data", recursive: true })
        const stream = await call(`${base}/fs/watch/${watch.watch_id}/events`, "GET")
        expect(stream.status).toBe(200)
        expect(stream.headers.get("content-type")).toContain("text/event-stream")
        const reading = readUntil(stream, () => false)
        await call(`${base}/fs/create_directory`, "PUT", { path: "/data/sub" })
        await call(`${base}/fs/create_directory`, "PUT", { path: "/elsewhere" })
        await call(`${base}/fs/move`, "PUT", { src_path: "/data/sub", dest_path: "/moved" })
        expect((await call(`${base}/fs/watch/${watch.watch_id}`, "DELETE")).status).toBe(204)
        // the stream ends with the watch (read to its end, not cut)
        return reading
      })
      expect(events(text).map((e) => [e.type, e.path])).toEqual([["CREATE", "/data/sub"], ["RENAME", "/data/sub"]])
      expect(text).toMatch(/^id: 1\n/)
      expect(yield* sim.liveSubscribers).toBe(0)
    })))

  it.live("telemetry tells each interaction by seq, and a client gone leaves no subscription", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* served(["b1"])
      const text = yield* Effect.promise(async () => {
        const base = `${sim.url}/browsers/b1`
        const stream = await call(`${base}/telemetry`, "GET")
        expect(stream.status).toBe(200)
        const reading = readUntil(stream, (t) => events(t).length >= 2)
        await call(`${base}/computer/click_mouse`, "POST", { x: 1, y: 2 })
        await call(`${base}/computer/press_key`, "POST", { keys: ["Return"] })
        return reading
      })
      const told = events(text)
      expect(told.map((e) => e.seq)).toEqual([1, 2])
      expect(text).toContain("id: 1\n")
      // the client went (cancelled its read): the server lets go of the subscription
      for (let i = 0; i < 100 && (yield* sim.liveSubscribers) > 0; i++) yield* Effect.sleep("10 millis")
      expect(yield* sim.liveSubscribers).toBe(0)
    })))

  it.live("an open stream holds a few KiB, not a Stream's machinery", () =>
    Effect.scoped(Effect.gen(function*() {
      const count = 100
      const ids = Array.from({ length: count }, (_, i) => `b${i}`)
      const sim = yield* served(ids)
      const perStream = yield* Effect.promise(async () => {
        const watches: Array<string> = []
        for (const id of ids) {
          watches.push((await json(`${sim.url}/browsers/${id}/fs/watch`, "POST", { path: "/" })).watch_id)
        }
        collect()
        const before = process.memoryUsage().heapUsed
        const open = await Promise.all(
          ids.map((id, i) => call(`${sim.url}/browsers/${id}/fs/watch/${watches[i]}/events`, "GET"))
        )
        await new Promise((resolve) => setTimeout(resolve, 100))
        collect()
        const held = (process.memoryUsage().heapUsed - before) / count
        await Promise.all(open.map((response) => response.body?.cancel()))
        return held
      })
      expect(yield* sim.liveSubscribers).toBe(count)
      // server and client in this process: about 29 KiB per open stream (the client's fetch and both
      // sides' sockets included); it was about 72 KiB with a Stream per open stream
      expect(perStream).toBeLessThan(50 * 1024)
    })))
})
