import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Exit, Fiber, Layer, Schedule, Stream, TestClock } from "effect"
import { Replays } from "effect-kernel"
import * as fs from "node:fs"
import * as path from "node:path"
import { errorBody, json, mockLayer, settle } from "./utils/mock.js"
import { asMp4, openMp4Head } from "./utils/mp4.js"
import { tempDir } from "./utils/tempDir.js"

const params = { id: "b1", replayId: "r1" }
const video = (bytes: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) =>
  new Response(asMp4(bytes), { status: 200, headers: { "content-type": "video/mp4", ...headers } })
const pending = (retryAfter?: string) =>
  new Response(null, { status: 202, headers: retryAfter === undefined ? {} : { "retry-after": retryAfter } })

const collect = (options?: Replays.DownloadOptions) =>
  Replays.download(params, options).pipe(
    Stream.runCollect,
    Effect.map((chunks) => Chunk.toReadonlyArray(chunks).reduce((n, c) => n + c.length, 0))
  )

/** Polls are recorded after each clock step. */
const pollTimes = (
  retryAfter: string | undefined,
  readyAfterPolls: number,
  steps: ReadonlyArray<Duration.DurationInput>,
  options?: Replays.DownloadOptions
) => {
  const mock = mockLayer((_r, _q, n) => n > readyAfterPolls ? video(new Uint8Array(40)) : pending(retryAfter))
  return Effect.gen(function*() {
    const fiber = yield* Effect.fork(Effect.exit(collect(options)))
    yield* settle
    const counts = [mock.requests.length]
    for (const step of steps) {
      yield* TestClock.adjust(step)
      yield* settle
      counts.push(mock.requests.length)
    }
    return { counts, exit: yield* Fiber.join(fiber) }
  }).pipe(Effect.provide(mock.layer))
}

describe("replay wait", () => {
  it.effect("waits exactly Retry-After: 1 before asking again", () =>
    Effect.gen(function*() {
      const { counts, exit } = yield* pollTimes("1", 1, ["999 millis", "1 millis"])
      expect(counts).toEqual([1, 1, 2])
      expect(exit).toEqual(Exit.succeed(40))
    }))

  it.effect("waits exactly Retry-After: 3 before asking again", () =>
    Effect.gen(function*() {
      const { counts } = yield* pollTimes("3", 2, ["2999 millis", "1 millis", "2999 millis", "1 millis"])
      expect(counts).toEqual([1, 1, 2, 2, 3])
    }))

  it.effect.each([
    ["missing", undefined],
    ["0", "0"],
    ["negative", "-5"],
    ["non-numeric", "soon"],
    ["fractional below 1", "0.2"]
  ])("treats a Retry-After that is %s as 1 s", ([, header]) =>
    Effect.gen(function*() {
      const { counts } = yield* pollTimes(header, 1, ["999 millis", "1 millis"])
      expect(counts).toEqual([1, 1, 2])
    }))

  it.effect("reads an HTTP-date Retry-After", () =>
    Effect.gen(function*() {
      const { counts } = yield* pollTimes(new Date(7_000).toUTCString(), 1, ["6999 millis", "1 millis"])
      expect(counts).toEqual([1, 1, 2])
    }))

  it.effect("caps a huge Retry-After at maxRetryAfter (60 s by default)", () =>
    Effect.gen(function*() {
      const { counts } = yield* pollTimes("999999", 1, ["59999 millis", "1 millis"])
      expect(counts).toEqual([1, 1, 2])
    }))

  it.effect("fails with ReplayNotReady once maxWait is spent, with the last Retry-After and time waited", () =>
    Effect.gen(function*() {
      const { counts, exit } = yield* pollTimes("2", Infinity, ["10 seconds"], { maxWait: "5 seconds" })
      // polls at 0, 2, 4 and a last one at 5 (the budget's end)
      expect(counts).toEqual([1, 4])
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        expect(exit.cause.error).toMatchObject({ _tag: "ReplayNotReady", id: "b1", replayId: "r1", polls: 4 })
        const error = exit.cause.error
        if (error._tag === "ReplayNotReady") {
          expect(Duration.toMillis(error.waited)).toBe(5000)
          expect(Duration.toMillis(error.retryAfter)).toBe(2000)
        }
      }
    }))

  // the wait counted only the sleeps between polls: a server answering each 202 after 3.8 s held a
  // download with `maxWait: "3 seconds"` for 18.2 s (4 polls), and with the defaults (a 60 s time-out, 5
  // minutes) for hours; now `maxWait` is the clock's time since the first 202
  it.effect("maxWait counts the polls' own time: a server slow to answer each 202 ends the wait as soon", () => {
    const mock = mockLayer(() => Effect.as(Effect.sleep("3800 millis"), pending("1")))
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.flip(collect({ maxWait: "3 seconds" })))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      // answered at 3.8 s; the wait from there: 1 s, a poll answered at 8.6 s, past the 3 s: done
      expect(error).toMatchObject({ _tag: "ReplayNotReady", polls: 2 })
      expect(mock.requests.length).toBe(2)
      if (error._tag === "ReplayNotReady") expect(Duration.toMillis(error.waited)).toBe(8600)
    }).pipe(Effect.provide(mock.layer))
  })

  it.effect.each(["0 millis", "500 millis"] as const)(
    "a maxRetryAfter of %s still polls a second apart, and maxWait ends the wait (it was a loop of requests)",
    (maxRetryAfter) => {
      const mock = mockLayer(() => pending("1"), { maxRetryAfter })
      return Effect.gen(function*() {
        const fiber = yield* Effect.fork(Effect.exit(collect({ maxWait: "3 seconds" })))
        yield* settle
        const counts = [mock.requests.length]
        for (const step of ["999 millis", "1 millis", "10 seconds"] as const) {
          yield* TestClock.adjust(step)
          yield* settle
          counts.push(mock.requests.length)
        }
        // polls at 0, 1, 2 and 3 s, then ReplayNotReady
        expect(counts).toEqual([1, 1, 2, 4])
        const exit = yield* Fiber.join(fiber)
        expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : "none").toBe(
          "ReplayNotReady"
        )
      }).pipe(Effect.provide(mock.layer))
    }
  )

  it.effect("uses the default maxWait of 5 minutes", () =>
    Effect.gen(function*() {
      const { counts, exit } = yield* pollTimes("60", Infinity, ["299 seconds", "1 second", "1 hour"])
      expect(counts).toEqual([1, 5, 6, 6])
      expect(Exit.isFailure(exit)).toBe(true)
    }))

  it.effect("accepts a caller's schedule in place of maxWait", () =>
    Effect.gen(function*() {
      const { counts, exit } = yield* pollTimes("30", Infinity, ["1 second"], {
        schedule: Schedule.spaced("100 millis").pipe(Schedule.compose(Schedule.recurs(2)))
      })
      expect(counts).toEqual([1, 3])
      expect(exit._tag).toBe("Failure")
    }))

  it.effect("stops waiting at once when interrupted", () => {
    const mock = mockLayer(() => pending("30"))
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(collect())
      yield* settle
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(mock.requests).toHaveLength(1)
    }).pipe(Effect.provide(mock.layer))
  })

  it.effect("a documented error while waiting ends the wait with that error", () => {
    const mock = mockLayer((_r, _q, n) => n === 1 ? pending("1") : json(404, errorBody("not_found", "gone")))
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.flip(collect()))
      yield* settle
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("NotFound")
    }).pipe(Effect.provide(mock.layer))
  })
})

describe("replay streaming", () => {
  it.effect("streams the body chunk by chunk and aborts the request when the consumer stops", () => {
    let pulls = 0
    let cancelled = false
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++
        controller.enqueue(pulls === 1 ? openMp4Head() : new Uint8Array(1024))
      },
      cancel() {
        cancelled = true
      }
    })
    const mock = mockLayer(() => new Response(body, { status: 200 }))
    return Effect.gen(function*() {
      const first = yield* Replays.download(params).pipe(Stream.take(3), Stream.runCollect)
      expect(Chunk.size(first)).toBe(3)
      // the body is infinite: only a few chunks were ever pulled, and the stream was cancelled
      expect(pulls).toBeLessThan(10)
      expect(cancelled).toBe(true)
    }).pipe(Effect.provide(mock.layer))
  })

  it.effect("fails a body shorter than its Content-Length with TransportError", () => {
    const mock = mockLayer(() => video(new Uint8Array(40), { "content-length": "50" }))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(collect())
      expect(error._tag).toBe("TransportError")
      expect(error.message).toContain("40 of 50")
    }).pipe(Effect.provide(mock.layer))
  })

  it.effect("fails a body that errors mid-stream with TransportError", () => {
    const mock = mockLayer(() =>
      new Response(failingBody(3), { status: 200, headers: { "content-type": "video/mp4" } })
    )
    return Effect.gen(function*() {
      const error = yield* Effect.flip(collect())
      expect(error._tag).toBe("TransportError")
    }).pipe(Effect.provide(mock.layer))
  })

  it.effect("fails a body that stalls with Timeout after idleTimeout", () => {
    // like a real transport, the body fails once the request is aborted
    const stalled = (signal: AbortSignal) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(openMp4Head())
          signal.addEventListener("abort", () => controller.error(new Error("aborted")))
        }
      })
    const mock = mockLayer((_r, _q, _n, signal) => new Response(stalled(signal), { status: 200 }), {
      idleTimeout: "5 seconds"
    })
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.flip(collect()))
      yield* settle
      yield* TestClock.adjust("4999 millis")
      yield* settle
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("Timeout")
    }).pipe(Effect.provide(mock.layer))
  })
})

const failingBody = (chunks: number) => {
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) controller.enqueue(openMp4Head())
      if (sent++ < chunks) controller.enqueue(new Uint8Array(100))
      else controller.error(new Error("connection reset"))
    }
  })
}

describe("downloadToFile", () => {
  const tmp = () => tempDir("effect-kernel-")

  it.effect("writes the whole replay and renames it into place", () => {
    const bytes = new Uint8Array(100_000).map((_, i) => i % 251)
    const mock = mockLayer(() => video(bytes))
    const dir = tmp()
    const target = path.join(dir, "out.mp4")
    const progress: Array<number> = []
    return Effect.gen(function*() {
      const result = yield* Replays.downloadToFile(params, target, {
        onProgress: (n) => Effect.sync(() => progress.push(n.bytes))
      })
      expect(result).toEqual({ path: target, bytes: 100_000 })
      expect(new Uint8Array(fs.readFileSync(target))).toEqual(asMp4(bytes))
      expect(fs.readdirSync(dir)).toEqual(["out.mp4"])
      expect(progress.at(-1)).toBe(100_000)
    }).pipe(Effect.provide(Layer.merge(mock.layer, NodeFileSystem.layer)))
  })

  it.effect("leaves no file, partial or final, when the body fails", () => {
    const mock = mockLayer(() =>
      new Response(failingBody(5), { status: 200, headers: { "content-type": "video/mp4" } })
    )
    const dir = tmp()
    const target = path.join(dir, "out.mp4")
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Replays.downloadToFile(params, target))
      expect(error._tag).toBe("TransportError")
      expect(fs.readdirSync(dir)).toEqual([])
    }).pipe(Effect.provide(Layer.merge(mock.layer, NodeFileSystem.layer)))
  })

  it.effect("leaves an existing file untouched when the download fails", () => {
    const mock = mockLayer(() => json(404, errorBody("not_found", "no replay")))
    const dir = tmp()
    const target = path.join(dir, "out.mp4")
    fs.writeFileSync(target, "previous")
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Replays.downloadToFile(params, target))
      expect(error._tag).toBe("NotFound")
      expect(fs.readFileSync(target, "utf8")).toBe("previous")
      expect(fs.readdirSync(dir)).toEqual(["out.mp4"])
    }).pipe(Effect.provide(Layer.merge(mock.layer, NodeFileSystem.layer)))
  })
})
