/**
 * The simulator's open-ended event streams stay open and tell what happens as it happens, with
 * keep-alives on the simulator's clock; they end when their source ends (the process exits, the
 * watch stops, the browser is deleted) or when the client goes, leaving no timer or subscription.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Option, Stream, TestClock } from "effect"
import { KernelSimulator } from "effect-kernel/testing"

const token = "sk_sim_live"
const seed: KernelSimulator.Seed = { organizations: [{ id: "org_live", token, browsers: [{ id: "b1" }] }] }

const request = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown) =>
  HttpClientRequest.make(method)(`http://localhost${path}`).pipe(
    HttpClientRequest.bearerToken(token),
    body === undefined ? (r) => r : HttpClientRequest.bodyUnsafeJson(body)
  )

/** A JSON call; its decoded answer. */
const call = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    Effect.flatMap(
      client.execute(request(method, path, body)),
      (response) =>
        Effect.map(
          response.text,
          (text) => ({ status: response.status, json: text === "" ? undefined : JSON.parse(text) })
        )
    ))

/** An event stream's text, chunk by chunk, as it arrives. */
const open = (path: string) =>
  Effect.map(
    Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(request("GET", path))),
    (response) => ({ status: response.status, text: Stream.decodeText(response.stream) })
  )

const collect = (text: Stream.Stream<string, unknown>) =>
  Effect.map(Stream.runCollect(text), (chunks) => Chunk.join(chunks, ""))

const b64 = (text: string) => Buffer.from(text).toString("base64")

const simulator = KernelSimulator.layer(seed, { token })

describe("open-ended event streams", () => {
  it.effect("a process's stdout stays open until it exits, with its output as it comes and keep-alives", () =>
    Effect.gen(function*() {
      const spawned = yield* call("POST", "/browsers/b1/process/spawn", { command: "cat" })
      const id = spawned.json.process_id
      const stream = yield* open(`/browsers/b1/process/${id}/stdout/stream`)
      expect(stream.status).toBe(200)
      const reader = yield* Effect.fork(collect(stream.text))
      yield* call("POST", `/browsers/b1/process/${id}/stdin`, { data_b64: b64("hello\n") })
      yield* TestClock.adjust("15 seconds")
      yield* call("POST", `/browsers/b1/process/${id}/stdin`, { data_b64: b64("again\n") })
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.poll(reader))._tag).toBe("None")
      expect((yield* call("GET", `/browsers/b1/process/${id}/status`)).json).toMatchObject({ state: "running" })
      yield* call("POST", `/browsers/b1/process/${id}/kill`, { signal: "TERM" })
      const text = yield* Fiber.join(reader)
      const data = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!))
      expect(data).toEqual([
        { stream: "stdout", data_b64: b64("hello\n") },
        { stream: "stdout", data_b64: b64("again\n") },
        { event: "exit", exit_code: -1 }
      ])
      // nothing happened for 15 s: a keep-alive (the process events have no heartbeat kind)
      expect(text).toContain(": keep-alive\n\n")
      expect(text.indexOf(": keep-alive")).toBeLessThan(text.indexOf(b64("again\n")))
      // a process that exits at once: its whole output, then the stream ends
      const echo = yield* call("POST", "/browsers/b1/process/spawn", { command: "echo", args: ["hi"] })
      const done = yield* open(`/browsers/b1/process/${echo.json.process_id}/stdout/stream`)
      expect(yield* collect(done.text)).toContain(`"exit_code":0`)
    }).pipe(Effect.provide(simulator)))

  it.effect("`sleep N` runs N seconds of the simulator's clock, then its stream ends with exit 0", () =>
    Effect.gen(function*() {
      const spawned = yield* call("POST", "/browsers/b1/process/spawn", { command: "sleep", args: ["30"] })
      const id = spawned.json.process_id
      const reader = yield* Effect.fork(collect((yield* open(`/browsers/b1/process/${id}/stdout/stream`)).text))
      yield* TestClock.adjust("29 seconds")
      expect((yield* Fiber.poll(reader))._tag).toBe("None")
      expect((yield* call("GET", `/browsers/b1/process/${id}/status`)).json).toMatchObject({ state: "running" })
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(reader)).toContain(`data: {"event":"exit","exit_code":0}`)
      expect((yield* call("GET", `/browsers/b1/process/${id}/status`)).json).toMatchObject({
        state: "exited",
        exit_code: 0
      })
    }).pipe(Effect.provide(simulator)))

  it.effect("a client gone leaves no subscription and no timer behind", () =>
    Effect.gen(function*() {
      const sim = yield* KernelSimulator.KernelSimulator
      const spawned = yield* call("POST", "/browsers/b1/process/spawn", { command: "cat" })
      const id = spawned.json.process_id
      const stream = yield* open(`/browsers/b1/process/${id}/stdout/stream`)
      const reader = yield* Effect.fork(Stream.runDrain(stream.text))
      yield* TestClock.adjust("16 seconds")
      expect(
        yield* Effect.flatMap(KernelSimulator.KernelSimulator, (s) => (s as KernelSimulator.Simulator).liveSubscribers)
      ).toBe(1)
      expect((yield* TestClock.sleeps()).length).toBeGreaterThan(0)
      yield* Fiber.interrupt(reader)
      // the stream's fiber ends on its own schedule: give it the turns it needs
      for (let i = 0; i < 20 && (yield* (sim as KernelSimulator.Simulator).liveSubscribers) > 0; i++) {
        yield* Effect.yieldNow()
      }
      expect(yield* (sim as KernelSimulator.Simulator).liveSubscribers).toBe(0)
      // the keep-alive timer went with it: once the clock passes its last sleep, none is left
      // (a live one would have slept again)
      yield* TestClock.adjust("1 minute")
      expect(Chunk.toReadonlyArray(yield* TestClock.sleeps())).toEqual([])
    }).pipe(Effect.provide(simulator)))
})

describe("filesystem watches and logs as things happen", () => {
  const events = (text: string) => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!))
  const write = (path: string, text: string) =>
    Effect.flatMap(HttpClient.HttpClient, (client) =>
      client.execute(
        HttpClientRequest.put(`http://localhost/browsers/b1/fs/write_file?path=${encodeURIComponent(path)}`).pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.bodyUint8Array(new TextEncoder().encode(text), "application/octet-stream")
        )
      ))

  it.effect("a watch tells the changes under its path as they happen, until it is stopped", () =>
    Effect.gen(function*() {
      // a watched path exists (a missing one is the document's 404)
      yield* call("PUT", "/browsers/b1/fs/create_directory", { path: "/data" })
      const started = yield* call("POST", "/browsers/b1/fs/watch", { path: "/data", recursive: true })
      expect(started.status).toBe(201)
      const watch = started.json.watch_id
      const stream = yield* open(`/browsers/b1/fs/watch/${watch}/events`)
      const reader = yield* Effect.fork(collect(stream.text))
      yield* write("/data/a.txt", "one")
      yield* write("/data/a.txt", "two")
      yield* write("/elsewhere.txt", "not watched")
      yield* call("PUT", "/browsers/b1/fs/create_directory", { path: "/data/sub" })
      yield* call("PUT", "/browsers/b1/fs/move", { src_path: "/data/a.txt", dest_path: "/data/sub/b.txt" })
      yield* call("PUT", "/browsers/b1/fs/delete_file", { path: "/data/sub/b.txt" })
      yield* write("/data/sub/deep/c.txt", "")
      yield* call("PUT", "/browsers/b1/fs/delete_directory", { path: "/data/sub" })
      yield* TestClock.adjust("20 seconds")
      expect((yield* Fiber.poll(reader))._tag).toBe("None")
      expect((yield* call("DELETE", `/browsers/b1/fs/watch/${watch}`)).status).toBe(204)
      const text = yield* Fiber.join(reader)
      // as inotify tells them: a new file created then written (not when nothing is written), what a
      // directory holds deleted before it, the deepest first
      expect(events(text).map((e) => [e.type, e.path])).toEqual([
        ["CREATE", "/data/a.txt"],
        ["WRITE", "/data/a.txt"],
        ["WRITE", "/data/a.txt"],
        ["CREATE", "/data/sub"],
        ["RENAME", "/data/a.txt"],
        ["CREATE", "/data/sub/b.txt"],
        ["DELETE", "/data/sub/b.txt"],
        ["CREATE", "/data/sub/deep"],
        ["CREATE", "/data/sub/deep/c.txt"],
        ["DELETE", "/data/sub/deep/c.txt"],
        ["DELETE", "/data/sub/deep"],
        ["DELETE", "/data/sub"]
      ])
      expect(text).toContain(": keep-alive")
      // a stopped watch has no events
      expect((yield* open(`/browsers/b1/fs/watch/${watch}/events`)).status).toBe(404)
    }).pipe(Effect.provide(simulator)))

  it.effect("logs with follow tell what is done on the browser, until it is deleted", () =>
    Effect.gen(function*() {
      const stream = yield* open("/browsers/b1/logs/stream?source=supervisor&supervisor_process=chromium&follow=true")
      expect(stream.status).toBe(200)
      const reader = yield* Effect.fork(collect(stream.text))
      yield* call("POST", "/browsers/b1/computer/click_mouse", { x: 1, y: 2 })
      yield* TestClock.adjust("15 seconds")
      expect((yield* Fiber.poll(reader))._tag).toBe("None")
      yield* call("DELETE", "/browsers/b1")
      const text = yield* Fiber.join(reader)
      const messages = events(text).filter((e) => e.event === "log").map((e) => e.message)
      expect(messages).toEqual(["browser started", "session b1 ready", "POST /browsers/b1/computer/click_mouse"])
      // the log events have no heartbeat kind: a comment keeps the stream alive
      expect(text).toContain(": keep-alive")
      // a browser that is not there
      const once = yield* open("/browsers/b2/logs/stream?source=supervisor&supervisor_process=chromium")
      expect(once.status).toBe(404)
    }).pipe(Effect.provide(simulator)))

  // the document's `follow` defaults to true: without it the stream followed the browser on the service
  // and ended at once on the simulator (the SDK's `Logs.stream` then failed: a drop)
  it.effect("logs without follow follow (the document's default); follow=false: the opening lines, then the end", () =>
    Effect.gen(function*() {
      const path = "/browsers/b1/logs/stream?source=supervisor&supervisor_process=chromium"
      const stream = yield* open(path)
      expect(stream.status).toBe(200)
      const reader = yield* Effect.fork(collect(stream.text))
      yield* call("POST", "/browsers/b1/computer/click_mouse", { x: 1, y: 2 })
      yield* TestClock.adjust("15 seconds")
      expect((yield* Fiber.poll(reader))._tag).toBe("None")
      const whole = yield* open(`${path}&follow=false`)
      expect(events(yield* collect(whole.text)).map((e) => e.message)).toEqual(["browser started", "session b1 ready"])
      yield* call("DELETE", "/browsers/b1")
      const messages = events(yield* Fiber.join(reader)).map((e) => e.message)
      expect(messages).toEqual(["browser started", "session b1 ready", "POST /browsers/b1/computer/click_mouse"])
    }).pipe(Effect.provide(simulator)))
  // as the browser's own server reads a log file (kernel-images' LogsStream): before, source=path told the
  // supervisor's lines whatever the path
  it.effect("logs of a path: the file's lines (follow=false), or what writes add to it (follow); no file, one line", () =>
    Effect.gen(function*() {
      const write = (text: string) =>
        Effect.flatMap(HttpClient.HttpClient, (client) =>
          client.execute(
            HttpClientRequest.put("http://localhost/browsers/b1/fs/write_file?path=/tmp/app.log").pipe(
              HttpClientRequest.bearerToken(token),
              HttpClientRequest.bodyUint8Array(new TextEncoder().encode(text), "application/octet-stream")
            )
          ))
      const logs = (query: string) => `/browsers/b1/logs/stream?source=path&${query}`
      const messages = (text: string) => events(text).map((e) => e.message)
      yield* write("one\n\ntwo\nthree, not ended")
      expect(messages(yield* collect((yield* open(logs("path=/tmp/./app.log&follow=false"))).text))).toEqual([
        "one",
        "two"
      ])
      const followed = yield* open(logs("path=/tmp/app.log"))
      const reader = yield* Effect.fork(collect(followed.text))
      yield* TestClock.adjust("1 second")
      // appended (what the file held before the stream opened is not told, the end of its last line
      // neither: the server reads from the size it had); then the file cut shorter and written again
      yield* write("one\n\ntwo\nthree, not ended\nfour\n")
      // a partial line, then the file cut shorter: the partial line is not joined to what follows
      yield* write("one\n\ntwo\nthree, not ended\nfour\npartial")
      yield* write("x\n")
      yield* write("x\nfive\n")
      yield* call("DELETE", "/browsers/b1")
      expect(messages(yield* Fiber.join(reader))).toEqual(["four", "five"])
    }).pipe(Effect.provide(simulator)))

  it.effect("logs of a path that is not a file, or not absolute: one line saying so, then the end", () =>
    Effect.gen(function*() {
      const one = (query: string) =>
        Effect.flatMap(
          open(`/browsers/b1/logs/stream?source=path&${query}`),
          (stream) => Effect.map(collect(stream.text), (text) => events(text).map((e) => e.message))
        )
      expect(yield* one("path=/tmp/none.log")).toEqual(["failed to open log path"])
      expect(yield* one("path=/tmp&follow=false")).toEqual(["failed to open log path"])
      expect(yield* one("path=tmp/app.log")).toEqual(["logs source not available"])
    }).pipe(Effect.provide(simulator)))

  it.effect("beyond 100 streams on one source the oldest ends (never a 429, which the document does not list)", () =>
    Effect.gen(function*() {
      const sim = (yield* KernelSimulator.KernelSimulator) as KernelSimulator.Simulator
      const path = "/browsers/b1/logs/stream?source=supervisor&supervisor_process=chromium&follow=true"
      const readers: Array<Fiber.RuntimeFiber<string, unknown>> = []
      const openOne = Effect.gen(function*() {
        const stream = yield* open(path)
        expect(stream.status).toBe(200)
        readers.push(yield* Effect.fork(collect(stream.text)))
        // subscribed once its reader runs
        for (let i = 0; i < 50 && (yield* sim.liveSubscribers) < Math.min(readers.length, 100); i++) {
          yield* Effect.yieldNow()
        }
      })
      for (let i = 0; i < 100; i++) yield* openOne
      expect(yield* sim.liveSubscribers).toBe(100)
      yield* openOne
      // the oldest has ended, cleanly, with what it was told; the others are still open
      const oldest = yield* Fiber.join(readers[0]!)
      expect(events(oldest).map((e) => e.message)).toEqual(["browser started", "session b1 ready"])
      expect((yield* Fiber.poll(readers[1]!))._tag).toBe("None")
      expect((yield* Fiber.poll(readers[100]!))._tag).toBe("None")
      expect(yield* sim.liveSubscribers).toBe(100)
      yield* call("DELETE", "/browsers/b1")
      for (const reader of readers) yield* Fiber.join(reader)
      expect(yield* sim.liveSubscribers).toBe(0)
    }).pipe(Effect.provide(simulator)))
})

describe("telemetry as it happens", () => {
  const frames = (text: string) =>
    [...text.matchAll(/^id: (\d+)\ndata: (.*)$/gm)].map((m) => ({ id: m[1], ...JSON.parse(m[2]!) }))
  const openFrom = (lastEventId?: string) =>
    Effect.map(
      Effect.flatMap(HttpClient.HttpClient, (client) =>
        client.execute(
          request("GET", "/browsers/b1/telemetry").pipe(
            lastEventId === undefined ? (r) => r : HttpClientRequest.setHeader("last-event-id", lastEventId)
          )
        )),
      (response) => Stream.decodeText(response.stream)
    )

  it.effect("an event per interaction, numbered by seq; Last-Event-ID resumes after it; the end with the browser", () =>
    Effect.gen(function*() {
      const first = yield* Effect.fork(collect(yield* openFrom()))
      yield* call("POST", "/browsers/b1/computer/click_mouse", { x: 10, y: 20 })
      yield* call("POST", "/browsers/b1/computer/type", { text: "hi" })
      const resumed = yield* Effect.fork(collect(yield* openFrom("1")))
      yield* TestClock.adjust("15 seconds")
      yield* call("POST", "/browsers/b1/computer/scroll", { x: 0, y: 0, delta_y: 100 })
      expect((yield* Fiber.poll(first))._tag).toBe("None")
      yield* call("DELETE", "/browsers/b1")
      const all = yield* Fiber.join(first)
      expect(frames(all).map((f) => [f.id, f.seq, f.event.type])).toEqual([
        ["1", 1, "interaction_click"],
        ["2", 2, "interaction_key"],
        ["3", 3, "interaction_key"],
        ["4", 4, "interaction_scroll_settled"]
      ])
      expect(frames(all)[0]!.event.data).toMatchObject({ x: 10, y: 20 })
      // a key event per character typed, with its key
      expect(frames(all).slice(1, 3).map((f) => f.event.data.key)).toEqual(["h", "i"])
      expect(all).toContain(": keep-alive")
      expect(frames(yield* Fiber.join(resumed)).map((f) => f.seq)).toEqual([2, 3, 4])
    }).pipe(Effect.provide(simulator)))
})

describe("telemetry only as the session is configured", () => {
  // [what, the create's body, the update after the first click (or none), the clicks' events seen]
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, Record<string, unknown> | undefined, number]> =
    [
      ["created without telemetry: the stream opens, no event", {}, undefined, 0],
      ["every category (`{}`)", { telemetry: {} }, undefined, 2],
      ["`browser: {}`: every category", { telemetry: { browser: {} } }, undefined, 2],
      ["interaction disabled", { telemetry: { browser: { interaction: { enabled: false } } } }, undefined, 0],
      [
        "another category only: interaction still captured",
        {
          telemetry: { browser: { console: { enabled: true } } }
        },
        undefined,
        2
      ],
      ["enabled by an update", {}, { telemetry: { browser: {} } }, 1],
      ["an update with `{}` leaves it on", { telemetry: {} }, { telemetry: {} }, 2],
      ["stopped by an update", { telemetry: {} }, { telemetry: { browser: { interaction: { enabled: false } } } }, 1]
    ]
  it.effect("a browser created (or updated) with a telemetry configuration that captures interactions", () =>
    Effect.gen(function*() {
      const seen: Array<readonly [string, number]> = []
      for (const [what, create, update] of cases) {
        const id = (yield* call("POST", "/browsers", create)).json.session_id as string
        const stream = yield* Effect.fork(collect(yield* Effect.map(open(`/browsers/${id}/telemetry`), (r) => r.text)))
        yield* call("POST", `/browsers/${id}/computer/click_mouse`, { x: 1, y: 1 })
        if (update !== undefined) yield* call("PATCH", `/browsers/${id}`, update)
        yield* call("POST", `/browsers/${id}/computer/click_mouse`, { x: 2, y: 2 })
        yield* call("DELETE", `/browsers/${id}`)
        seen.push([what, (yield* Fiber.join(stream)).split("interaction_click").length - 1])
      }
      expect(seen).toEqual(cases.map(([what, , , clicks]) => [what, clicks]))
    }).pipe(Effect.provide(simulator)))

  it.effect("a seeded browser captures every category unless its seed says `telemetry: null`", () =>
    Effect.gen(function*() {
      const clicks = (id: string) =>
        Effect.gen(function*() {
          const stream = yield* Effect.fork(
            collect(yield* Effect.map(open(`/browsers/${id}/telemetry`), (r) => r.text))
          )
          yield* call("POST", `/browsers/${id}/computer/click_mouse`, { x: 1, y: 1 })
          yield* call("DELETE", `/browsers/${id}`)
          return (yield* Fiber.join(stream)).split("interaction_click").length - 1
        })
      expect((yield* call("GET", "/browsers/b1")).json.telemetry).toEqual({})
      expect((yield* call("GET", "/browsers/quiet")).json.telemetry).toBeUndefined()
      expect([yield* clicks("b1"), yield* clicks("quiet")]).toEqual([1, 0])
    }).pipe(Effect.provide(KernelSimulator.layer({
      organizations: [{ id: "org_live", token, browsers: [{ id: "b1" }, { id: "quiet", telemetry: null }] }]
    }, { token }))))
})

describe("telemetry: a reader more than 1,024 events behind", () => {
  /** A fresh simulator; its telemetry stream opened and read to its first event; then `clicks` more clicks. */
  const behind = (clicks: number) =>
    Effect.gen(function*() {
      const simulator = yield* KernelSimulator.make()
      const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
        simulator.handle({
          method,
          path,
          headers: { authorization: `Bearer ${KernelSimulator.defaultToken}`, ...headers },
          readBody: () =>
            Effect.succeed({
              _tag: "Read" as const,
              bytes: new TextEncoder().encode(body === undefined ? "" : JSON.stringify(body))
            })
        })
      const click = send("POST", "/browsers/browser_1/computer/click_mouse", { x: 1, y: 2 }, {
        "content-type": "application/json"
      })
      const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
      const opened = yield* send("GET", "/browsers/browser_1/telemetry")
      if (opened.body._tag !== "Live") throw new Error(`not a live stream: ${opened.body._tag}`)
      const pull = yield* Stream.toPull(opened.body.frames)
      // the stream subscribes on its first pull: clicks until one reaches it
      const first = yield* Effect.fork(pull)
      let before = 0
      while ((yield* Fiber.poll(first))._tag === "None" && before < 50) {
        yield* click
        before++
        yield* Effect.yieldNow()
      }
      let text = Chunk.join(yield* Fiber.join(first), "")
      // the reader reads nothing while these happen: two events of the browser each (a log line
      // and a telemetry event)
      yield* Effect.repeatN(click, clicks - 1)
      const end = yield* Effect.flip(Effect.forever(Effect.map(pull, (chunk) => {
        text += Chunk.join(chunk, "")
      })))
      const read = ids(text)
      const resumed = yield* send("GET", "/browsers/browser_1/telemetry", undefined, {
        "last-event-id": String(read.at(-1))
      })
      if (resumed.body._tag !== "Live") throw new Error(`not a live stream: ${resumed.body._tag}`)
      const next = ids(Chunk.join(yield* Stream.runCollect(Stream.take(resumed.body.frames, 1)), ""))[0]
      return { ended: Option.isNone(end), read, next, lastSeq: before + clicks }
    })

  it.scoped("its stream ends after the events it holds (no hole); a resume with Last-Event-ID loses none", () =>
    Effect.gen(function*() {
      const { ended, lastSeq, next, read } = yield* behind(520)
      // 1,040 events: the stream ends, cleanly, after the 1,024 it held; every seq once, in order
      expect(ended).toBe(true)
      expect(read).toEqual(read.map((_, i) => i + 1))
      expect(read.length).toBeLessThan(lastSeq)
      // the rest are still in the browser's last 256 events: the resume goes on where it stopped
      expect(next).toBe(read.at(-1)! + 1)
    }))

  it.scoped("too far behind for the last 256 events: the resume starts past a gap (the SDK's DecodeError)", () =>
    Effect.gen(function*() {
      const { ended, lastSeq, next, read } = yield* behind(1100)
      expect(ended).toBe(true)
      expect(read).toEqual(read.map((_, i) => i + 1))
      // Telemetry.stream fails on this with DecodeError "telemetry gap: expected seq N, got M"
      expect(next).toBeGreaterThan(read.at(-1)! + 1)
      expect(next).toBeLessThanOrEqual(lastSeq)
    }))
})

describe("open-ended event streams over HTTP", () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }

  /** A JSON call to a served simulator: its decoded answer. */
  const sendTo = (served: KernelSimulator.Served) => (method: string, path: string, body?: unknown) =>
    Effect.promise(() =>
      fetch(`${served.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then((r) => r.json())
    )

  /** Once its client has gone: no stream left subscribed, and no more timers than `before` (within 2 s). */
  const leftNothing = (served: KernelSimulator.Served, before: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < 100 && (yield* served.liveSubscribers) > 0; i++) yield* Effect.sleep("20 millis")
      expect(yield* served.liveSubscribers).toBe(0)
      for (let i = 0; i < 100 && timers() > before; i++) yield* Effect.sleep("20 millis")
      expect(timers()).toBeLessThanOrEqual(before)
    })

  it.scopedLive("a client that disconnects ends its stream on the server: no subscription, no timer left", () =>
    Effect.gen(function*() {
      const served = yield* KernelSimulator.serve({ seed })
      const send = sendTo(served)
      const { process_id } = yield* send("POST", "/browsers/b1/process/spawn", { command: "cat" })
      yield* send("POST", `/browsers/b1/process/${process_id}/stdin`, { data_b64: b64("first\n") })
      const before = timers()
      const controller = new AbortController()
      const first = yield* Effect.promise(async () => {
        const response = await fetch(`${served.url}/browsers/b1/process/${process_id}/stdout/stream`, {
          headers: { authorization: `Bearer ${token}` },
          signal: controller.signal
        })
        const reader = response.body!.getReader()
        const chunk = await reader.read()
        return new TextDecoder().decode(chunk.value)
      })
      expect(first).toContain(b64("first\n"))
      expect(yield* served.liveSubscribers).toBe(1)
      controller.abort()
      yield* leftNothing(served, before)
    }))

  it.scopedLive("a followed log tells its opening lines, then what is done; a `sleep`'s stream ends at its time", () =>
    Effect.gen(function*() {
      const served = yield* KernelSimulator.serve({ seed })
      const send = sendTo(served)
      /** Reads an event stream's data frames until `enough` of them (or its end), then closes it. */
      const frames = (path: string, enough: number, onOpen: () => Promise<unknown> = async () => undefined) =>
        Effect.promise(async () => {
          const controller = new AbortController()
          const response = await fetch(`${served.url}${path}`, { headers, signal: controller.signal })
          await onOpen()
          const reader = response.body!.getReader()
          const decoder = new TextDecoder()
          let text = ""
          const data = () => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!))
          while (data().length < enough) {
            const chunk = await reader.read()
            if (chunk.done) break
            text += decoder.decode(chunk.value, { stream: true })
          }
          controller.abort()
          return data()
        })
      // logs follow by default: the two opening lines, then a line for an operation done after it opened
      const logs = yield* frames(
        "/browsers/b1/logs/stream?source=supervisor&supervisor_process=chromium",
        3,
        () =>
          fetch(`${served.url}/browsers/b1/computer/move_mouse`, {
            method: "POST",
            headers,
            body: JSON.stringify({ x: 5, y: 6 })
          })
      )
      expect(logs.map((l) => l.message)).toEqual(["browser started", "session b1 ready", expect.any(String)])
      // a `sleep 1` on the bin's clock: its stream stays open, then ends with exit 0 at its time
      const before = timers()
      const { process_id } = yield* send("POST", "/browsers/b1/process/spawn", { command: "sleep", args: ["1"] })
      const started = Date.now()
      const output = yield* frames(`/browsers/b1/process/${process_id}/stdout/stream`, 1)
      expect(output).toEqual([{ event: "exit", exit_code: 0 }])
      expect(Date.now() - started).toBeGreaterThanOrEqual(900)
      // a client gone before the deadline: the deadline's timer goes with its stream
      const long = yield* send("POST", "/browsers/b1/process/spawn", { command: "sleep", args: ["600"] })
      const controller = new AbortController()
      yield* Effect.promise(() =>
        fetch(`${served.url}/browsers/b1/process/${long.process_id}/stdout/stream`, {
          headers,
          signal: controller.signal
        })
      )
      for (let i = 0; i < 100 && (yield* served.liveSubscribers) === 0; i++) yield* Effect.sleep("10 millis")
      expect(yield* served.liveSubscribers).toBe(1)
      controller.abort()
      yield* leftNothing(served, before)
    }))

  it.scopedLive("a `sleep` killed while its stream is stalled keeps the kill's exit code past its deadline", () =>
    Effect.gen(function*() {
      const served = yield* KernelSimulator.serve({ seed })
      const send = sendTo(served)
      // the stream's head, then nothing: its frames wait, and the stream stays open past the kill
      yield* served.injectFault({ route: "streamProcessStdout", stallAt: 0, times: 1 })
      const { process_id } = yield* send("POST", "/browsers/b1/process/spawn", { command: "sleep", args: ["1"] })
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      yield* Effect.promise(() =>
        fetch(`${served.url}/browsers/b1/process/${process_id}/stdout/stream`, { headers, signal: controller.signal })
      )
      yield* send("POST", `/browsers/b1/process/${process_id}/kill`, { signal: "TERM" })
      expect(yield* send("GET", `/browsers/b1/process/${process_id}/status`)).toMatchObject({ exit_code: -1 })
      yield* Effect.sleep("1500 millis")
      expect(yield* send("GET", `/browsers/b1/process/${process_id}/status`)).toMatchObject({
        state: "exited",
        exit_code: -1
      })
    }))
})

// a browser that times out ended its streams only when a request next came: a program reading one
// alone waited forever (the document: "the stream closes when the browser session terminates")
describe("a browser that times out while its streams are read", () => {
  const streams = [
    ["logs", () => "/logs/stream?source=supervisor&supervisor_process=chromium"],
    ["telemetry", () => "/telemetry"]
  ] as const
  it.effect.each(streams)("%s: the stream ends at the time-out, with no request", ([, path]) =>
    Effect.gen(function*() {
      const created = yield* call("POST", "/browsers", { timeout_seconds: 10 })
      const id = created.json.session_id
      const stream = yield* open(`/browsers/${id}${path()}`)
      expect(stream.status).toBe(200)
      const reader = yield* Effect.fork(collect(stream.text))
      yield* TestClock.adjust("9 seconds")
      expect((yield* Fiber.poll(reader))._tag).toBe("None")
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.poll(reader))._tag).toBe("Some")
      expect((yield* call("GET", `/browsers/${id}`)).status).toBe(404)
    }).pipe(Effect.provide(simulator)))

  it.effect("a process's stdout and a watch's events end too; activity moves the time-out on", () =>
    Effect.gen(function*() {
      const id = (yield* call("POST", "/browsers", { timeout_seconds: 10 })).json.session_id
      const process = (yield* call("POST", `/browsers/${id}/process/spawn`, { command: "cat" })).json.process_id
      const stdout = yield* Effect.fork(collect((yield* open(`/browsers/${id}/process/${process}/stdout/stream`)).text))
      const watch = (yield* call("POST", `/browsers/${id}/fs/watch`, { path: "/" })).json.watch_id
      const events = yield* Effect.fork(collect((yield* open(`/browsers/${id}/fs/watch/${watch}/events`)).text))
      // a request at 6 s: the browser is idle from then on
      yield* TestClock.adjust("6 seconds")
      yield* call("POST", `/browsers/${id}/computer/click_mouse`, { x: 1, y: 1 })
      yield* TestClock.adjust("9 seconds")
      expect((yield* Fiber.poll(stdout))._tag).toBe("None")
      expect((yield* Fiber.poll(events))._tag).toBe("None")
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.poll(stdout))._tag).toBe("Some")
      expect((yield* Fiber.poll(events))._tag).toBe("Some")
    }).pipe(Effect.provide(simulator)))
})
