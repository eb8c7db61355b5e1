import type { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Random, Schedule, Stream, TestClock } from "effect"
import { Computer, Filesystem, Kernel, KernelError, KernelRetry, Replays } from "effect-kernel"
import { errorBody, type Handler, json, mockLayer, settle } from "./utils/mock.js"

const position = () => json(200, { x: 1, y: 2 })

/** Runs `getMousePosition` in a fiber and reports how many requests were sent after each clock step. */
const stepThrough = (
  layerAndRequests: ReturnType<typeof mockLayer>,
  steps: ReadonlyArray<Duration.DurationInput>
) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Effect.exit(Computer.getMousePosition({ id: "b1" })))
    const counts: Array<number> = []
    yield* settle
    counts.push(layerAndRequests.requests.length)
    for (const step of steps) {
      yield* TestClock.adjust(step)
      yield* settle
      counts.push(layerAndRequests.requests.length)
    }
    const exit = yield* Fiber.join(fiber)
    return { counts, exit }
  }).pipe(Effect.provide(layerAndRequests.layer))

/** A 429 that asked for `retryAfter`. */
const rateLimited = (retryAfter: Duration.Duration) =>
  new KernelError.RateLimited({ status: 429, code: "x", message: "y", method: "GET", path: "/", retryAfter })

describe("retry policy", () => {
  it.effect("retries a 503 and succeeds", () => {
    const mock = mockLayer((_r, _q, n) => n === 1 ? json(503, errorBody("unavailable", "later")) : position())
    return Effect.gen(function*() {
      const { counts, exit } = yield* stepThrough(mock, ["10 seconds"])
      expect(counts).toEqual([1, 2])
      expect(exit._tag).toBe("Success")
    })
  })

  it.effect("waits the Retry-After of a 429, never less, lengthened by at most 25 % of jitter", () => {
    const mock = mockLayer((_r, _q, n) =>
      n === 1 ? json(429, errorBody("rate_limited", "slow"), { "retry-after": "3" }) : position()
    )
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["2999 millis", "751 millis"])
      expect(counts).toEqual([1, 1, 2])
    })
  })

  it.effect("prefers retry-after-ms over Retry-After", () => {
    const mock = mockLayer((_r, _q, n) =>
      n === 1
        ? json(503, errorBody("x", "y"), { "retry-after-ms": "250", "retry-after": "30" })
        : position()
    )
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["249 millis", "64 millis"])
      expect(counts).toEqual([1, 1, 2])
    })
  })

  it.effect("retry-after-ms: 0 asks for no wait: the Retry-After beside it says how long", () => {
    const mock = mockLayer((_r, _q, n) =>
      n === 1 ? json(503, errorBody("x", "y"), { "retry-after-ms": "0", "retry-after": "5" }) : position()
    )
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["4999 millis", "1300 millis"])
      expect(counts).toEqual([1, 1, 2])
    })
  })

  it.effect("KernelRetry.delayFor: a wait capped under the backoff (maxRetryAfter 0 or 100 ms) is the backoff", () =>
    Effect.sync(() => {
      const refused = rateLimited(Duration.seconds(5))
      const at = (attempt: number, jitter: number, cap: Duration.DurationInput) =>
        Duration.toMillis(KernelRetry.delayFor(refused, attempt, jitter, cap))
      expect([at(0, 0, 0), at(0, 0.999, "100 millis"), at(1, 0, "100 millis"), at(0, 0, "3 seconds")]).toEqual([
        500,
        375,
        1000,
        3000
      ])
    }))

  it.effect("honours Retry-After as an HTTP date", () => {
    const mock = mockLayer((_r, _q, n) =>
      n === 1
        ? json(503, errorBody("x", "y"), { "retry-after": new Date(5_000).toUTCString() })
        : position()
    )
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["4999 millis", "1251 millis"])
      expect(counts).toEqual([1, 1, 2])
    })
  })

  it.effect("caps a huge Retry-After at maxRetryAfter (reduced by at most 25 % of jitter)", () => {
    const mock = mockLayer(
      (_r, _q, n) => n === 1 ? json(429, errorBody("x", "y"), { "retry-after": "86400" }) : position(),
      { maxRetryAfter: "10 seconds" }
    )
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["7499 millis", "2501 millis"])
      expect(counts).toEqual([1, 1, 2])
    })
  })

  // a fan-out refused at once (a 429 storm) must not come back at one instant: the server's wait is
  // lengthened by up to 25 % of jitter, never shortened (and spread below maxRetryAfter when capped)
  describe.each([
    { name: "Retry-After: 1", headers: { "retry-after": "1" }, asked: 1_000, cap: undefined },
    { name: "retry-after-ms: 400", headers: { "retry-after-ms": "400" }, asked: 400, cap: undefined },
    { name: "Retry-After: 1 (a 503)", headers: { "retry-after": "1" }, asked: 1_000, cap: undefined, status: 503 },
    { name: "Retry-After: 86400, capped at 2 s", headers: { "retry-after": "86400" }, asked: 2_000, cap: Duration.seconds(2) }
  ])("$name: 200 calls refused at once", ({ asked, cap, headers, status }) => {
    it.effect("come back spread over the jitter window, none before the server's wait", () => {
      const calls = 200
      const mock = mockLayer(
        (_r, _q, n) => n <= calls ? json(status ?? 429, errorBody("rate_limited", "slow"), headers) : position(),
        cap === undefined ? {} : { maxRetryAfter: cap }
      )
      // capped: spread over [0.75 cap, cap]; else over [asked, 1.25 asked]
      const [from, to] = cap === undefined ? [asked, asked * 1.25] : [asked * 0.75, asked]
      return Effect.gen(function*() {
        const fiber = yield* Effect.fork(
          Effect.forEach(Array.from({ length: calls }), () => Computer.getMousePosition({ id: "b1" }), {
            concurrency: "unbounded"
          })
        )
        yield* settle
        expect(mock.requests.length).toBe(calls)
        yield* TestClock.adjust(from - 1)
        yield* settle
        expect(mock.requests.length).toBe(calls)
        // a quarter of the window: about a quarter of the calls, far from all of them
        yield* TestClock.adjust(1 + (to - from) / 4)
        yield* settle
        const early = mock.requests.length - calls
        expect(early).toBeGreaterThan(0)
        expect(early).toBeLessThan(calls / 2)
        yield* TestClock.adjust(to - from)
        yield* settle
        expect(mock.requests.length).toBe(2 * calls)
        expect(yield* Fiber.join(fiber)).toHaveLength(calls)
      }).pipe(Effect.provide(mock.layer))
    })
  })

  it.effect("KernelRetry.delayFor: a server's wait with jitter 0 is exactly it; jitter lengthens it by up to 25 %", () =>
    Effect.sync(() => {
      const refused = rateLimited(Duration.seconds(1))
      const at = (jitter: number, cap: Duration.DurationInput = "1 minute") =>
        Duration.toMillis(KernelRetry.delayFor(refused, 0, jitter, cap))
      expect([at(0), at(0.5), at(0.999)]).toEqual([1000, 1125, 1250])
      expect([at(0, "1100 millis"), at(0.999, "1100 millis")]).toEqual([1000, 1100])
      expect([at(0, "800 millis"), at(0.999, "800 millis")]).toEqual([800, 600])
    }))

  it.effect("KernelRetry.delayFor: a server asking for no wait (Retry-After: 0, a date past) gets the backoff", () =>
    Effect.sync(() => {
      const refused = rateLimited(Duration.zero)
      const at = (attempt: number, jitter: number) =>
        Duration.toMillis(KernelRetry.delayFor(refused, attempt, jitter, "1 minute"))
      expect([at(0, 0), at(0, 0.999), at(2, 0)]).toEqual([500, 375, 2000])
    }))

  it.effect("a 503 storm answering Retry-After: 0 or a past date is retried with the backoff, not at once", () =>
    Effect.gen(function*() {
      // (the TestClock starts at the epoch: its first instant is a date past once asked)
      for (const retryAfter of ["0", "Thu, 01 Jan 1970 00:00:00 GMT"]) {
        const mock = mockLayer((_r, _q, n) =>
          n <= 2 ? json(503, errorBody("unavailable", "busy"), { "retry-after": retryAfter }) : position()
        )
        // the first retry within (375, 500] ms (the backoff's), the second within (750, 1000] ms after it: not
        // at once (it was: all three requests at the first instant)
        const { counts, exit } = yield* stepThrough(mock, ["374 millis", "126 millis", "749 millis", "251 millis"])
        expect([counts[0], counts[1], counts[2], counts[4]]).toEqual([1, 1, 2, 3])
        expect(exit._tag).toBe("Success")
      }
    }))

  it.effect("backs off min(0.5·2^n, 8) s, reduced by at most 25 % of jitter", () => {
    const mock = mockLayer((_r, _q, n) => n <= 2 ? json(500, errorBody("x", "y")) : position())
    return Effect.gen(function*() {
      // first retry within (375, 500] ms, second within (750, 1000] ms after it
      const { counts, exit } = yield* stepThrough(mock, ["374 millis", "126 millis", "749 millis", "251 millis"])
      expect(counts[0]).toBe(1)
      expect(counts[1]).toBe(1)
      expect(counts[2]).toBe(2)
      expect(counts[4]).toBe(3)
      expect(exit._tag).toBe("Success")
    })
  })

  it.effect("backoff without jitter is exactly 0.5, 1, 2, 4, 8, 8 s", () =>
    Effect.sync(() => {
      const delays = [0, 1, 2, 3, 4, 5].map((n) => Duration.toMillis(KernelRetry.backoff(n, 0)))
      expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 8000])
      expect(Duration.toMillis(KernelRetry.backoff(0, 0.999))).toBe(375)
    }))

  it.effect("gives up after maxRetries with the last error", () => {
    const mock = mockLayer(() => json(500, errorBody("boom", "broken")), { maxRetries: 2 })
    return Effect.gen(function*() {
      const { counts, exit } = yield* stepThrough(mock, ["1 minute"])
      expect(counts).toEqual([1, 3])
      expect(exit._tag === "Failure" && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe(
        "InternalServerError"
      )
    })
  })

  it.effect("does not retry a 503 with x-should-retry: false", () => {
    const mock = mockLayer(() => json(503, errorBody("x", "y"), { "x-should-retry": "false" }))
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["1 minute"])
      expect(counts).toEqual([1, 1])
    })
  })

  it.effect("retries a 400 with x-should-retry: true", () => {
    const mock = mockLayer((_r, _q, n) =>
      n === 1 ? json(400, errorBody("bad_request", "y"), { "x-should-retry": "true" }) : position()
    )
    return Effect.gen(function*() {
      const { counts, exit } = yield* stepThrough(mock, ["1 minute"])
      expect(counts).toEqual([1, 2])
      expect(exit._tag).toBe("Success")
    })
  })

  it.effect("does not retry documented client errors", () => {
    const mock = mockLayer(() => json(404, errorBody("not_found", "no such browser")))
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["1 minute"])
      expect(counts).toEqual([1, 1])
    })
  })

  it.effect("times out each attempt and retries it", () => {
    const mock = mockLayer((_r, _q, n) => n === 1 ? Effect.never : position(), { timeout: "2 seconds" })
    return Effect.gen(function*() {
      const { counts, exit } = yield* stepThrough(mock, ["1999 millis", "1 millis", "1 second"])
      expect(counts[1]).toBe(1)
      expect(counts[3]).toBe(2)
      expect(exit._tag).toBe("Success")
    })
  })

  it.effect("fails with Timeout once every attempt timed out", () => {
    const mock = mockLayer(() => Effect.never, { timeout: "1 second", maxRetries: 1 })
    return Effect.gen(function*() {
      const { exit } = yield* stepThrough(mock, ["1 minute"])
      expect(exit._tag === "Failure" && exit.cause._tag === "Fail" && exit.cause.error).toMatchObject({
        _tag: "Timeout",
        method: "POST",
        path: "/browsers/b1/computer/get_mouse_position"
      })
    })
  })

  // A streamed body's deadline is pushed back by each chunk the transport takes (docs/retries.md,
  // "Time-outs"), on the program's clock: the mock transport takes a chunk, waits on the clock, takes
  // the next.
  const uploadThrough = (
    mock: ReturnType<typeof mockLayer>,
    steps: number
  ) =>
    Effect.gen(function*() {
      const chunk = new Uint8Array(16)
      const fiber = yield* Effect.fork(Effect.exit(
        Filesystem.writeFile({
          id: "b1",
          path: "/tmp/x",
          contents: Stream.rechunk(Stream.make(chunk, chunk, chunk, chunk), 1)
        })
      ))
      const done: Array<boolean> = []
      for (let i = 0; i < steps; i++) {
        yield* TestClock.adjust("100 millis")
        yield* settle
        done.push(Option.isSome(yield* Fiber.poll(fiber)))
      }
      return { done, exit: yield* Fiber.join(fiber) }
    }).pipe(Effect.provide(mock.layer))
  const taking = (request: HttpClientRequest.HttpClientRequest, between: (index: number) => Duration.DurationInput) => {
    let index = 0
    return request.body._tag === "Stream"
      ? Effect.as(
        Effect.orDie(Stream.runForEach(request.body.stream, () => Effect.sleep(between(index++)))),
        new Response(null, { status: 201 })
      )
      : Effect.die("not a stream body")
  }

  it.effect("on the TestClock, a streamed body taken a chunk every 1.5 s outlasts a timeout of 2 s", () => {
    const mock = mockLayer((_r, request) => taking(request, () => "1500 millis"), { timeout: "2 seconds" })
    return Effect.gen(function*() {
      // chunks taken at 0, 1.5, 3 and 4.5 s, the end at 6 s
      const { done, exit } = yield* uploadThrough(mock, 65)
      expect(exit._tag).toBe("Success")
      expect(done.indexOf(true)).toBe(59)
      expect(mock.requests.length).toBe(1)
    })
  })

  it.effect("on the TestClock, a streamed body not taken for the timeout fails with Timeout", () => {
    // the second chunk taken 1.5 s after the first, the third 2.5 s after it: cut 2 s after the second
    const mock = mockLayer((_r, request) => taking(request, (index) => index === 0 ? "1500 millis" : "2500 millis"), {
      timeout: "2 seconds"
    })
    return Effect.gen(function*() {
      const { done, exit } = yield* uploadThrough(mock, 40)
      expect(exit._tag === "Failure" && exit.cause._tag === "Fail" && exit.cause.error).toMatchObject({
        _tag: "Timeout",
        method: "PUT"
      })
      expect(done.indexOf(true)).toBe(34)
      // a one-shot Stream body is never sent again
      expect(mock.requests.length).toBe(1)
    })
  })

  // On the live clock the time-out is a timer on a forked attempt, not `Effect.timeoutFail`; these
  // check that path with a transport that ignores the abort signal (it never answers).
  it.live("on the live clock, a hung attempt is interrupted at the time-out and retried", () => {
    let interrupted = 0
    const hang = Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted++)))
    const mock = mockLayer((_r, _q, n) => n === 1 ? hang : position(), { timeout: "100 millis", maxRetries: 1 })
    return Effect.gen(function*() {
      const started = Date.now()
      const result = yield* Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(mock.layer))
      expect(result).toMatchObject({ x: 1, y: 2 })
      expect(mock.requests.length).toBe(2)
      expect(interrupted).toBe(1)
      expect(Date.now() - started).toBeLessThan(5_000)
    })
  })

  it.live("on the live clock, interrupting the caller interrupts the attempt", () => {
    let interrupted = 0
    const mock = mockLayer(() => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted++))), {
      timeout: "1 hour"
    })
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(mock.layer)))
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(fiber)
      expect(interrupted).toBe(1)
    })
  })

  it.live("on the live clock, a failed attempt fails with its own error, at once", () => {
    const mock = mockLayer(() => json(404, errorBody("not_found", "no browser")), { timeout: "1 hour" })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Computer.getMousePosition({ id: "b1" }).pipe(Effect.provide(mock.layer)))
      expect(error._tag).toBe("NotFound")
    })
  })

  it.effect("uses a custom retry schedule in place of the default", () => {
    const mock = mockLayer(() => json(503, errorBody("x", "y")), {
      retrySchedule: Schedule.recurs(5)
    })
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, [])
      expect(counts).toEqual([6])
    })
  })

  it.effect("never retries a non-transient error, even with a custom schedule", () => {
    const mock = mockLayer(() => json(404, errorBody("x", "y")), { retrySchedule: Schedule.recurs(5) })
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, [])
      expect(counts).toEqual([1])
    })
  })

  it.effect("maxRetries: 0 sends exactly one request", () => {
    const mock = mockLayer(() => json(503, errorBody("x", "y")), { maxRetries: 0 })
    return Effect.gen(function*() {
      const { counts } = yield* stepThrough(mock, ["1 minute"])
      expect(counts).toEqual([1, 1])
    })
  })

  it.effect("the policy is usable on its own, with a fixed random source", () =>
    Effect.gen(function*() {
      const error = new KernelError.InternalServerError({
        status: 500,
        code: "x",
        message: "y",
        method: "GET",
        path: "/"
      })
      let attempts = 0
      const fiber = yield* Effect.fork(
        Effect.suspend(() => {
          attempts++
          return Effect.fail(error)
        }).pipe(
          Effect.retry(KernelRetry.policy({ maxRetries: 3, maxRetryAfter: "1 minute" })),
          Effect.withRandom(Random.fixed([0])),
          Effect.exit
        )
      )
      yield* TestClock.adjust("499 millis")
      expect(attempts).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(attempts).toBe(2)
      yield* TestClock.adjust("1 second")
      expect(attempts).toBe(3)
      yield* TestClock.adjust("2 seconds")
      expect(attempts).toBe(4)
      yield* Fiber.join(fiber)
    }))
})

describe("a call's own retry policy (KernelRetry.withPolicy, noRetries)", () => {
  const unavailable = () => json(503, errorBody("unavailable", "later"))
  const limited = () => json(429, errorBody("rate_limited", "slow down"))
  // a 429 once the body was read whole (as a server that reads it before it answers)
  const limitedAfterBody: Handler = (_recorded, request) =>
    request.body._tag === "Stream"
      ? Effect.as(Effect.orDie(Stream.runDrain(request.body.stream)), limited())
      : limited()
  const table = [
    // idempotent: every transient failure, by the call's schedule
    ["an idempotent call answered 503", unavailable, Computer.getMousePosition({ id: "b1" }), [2, 4, 1]],
    // not idempotent: a 429 is safe to repeat, by the call's schedule; a 503 never is, whatever the schedule
    ["a click answered 429", limited, Computer.clickMouse({ id: "b1", x: 1, y: 1 }), [2, 4, 1]],
    ["a click answered 503", unavailable, Computer.clickMouse({ id: "b1", x: 1, y: 1 }), [1, 1, 1]],
    // a PUT whose second attempt finds its file gone is not; a directory's delete is (os.RemoveAll: 200 where nothing is)
    ["a file's delete answered 503", unavailable, Filesystem.deleteFile({ id: "b1", path: "/f" }), [1, 1, 1]],
    ["a directory's delete answered 503", unavailable, Filesystem.deleteDirectory({ id: "b1", path: "/d" }), [2, 4, 1]],
    // a one-shot Stream body is never sent twice, whatever the schedule: once read from, never retried
    [
      "a Stream upload answered 429 once its body was read",
      limitedAfterBody,
      Filesystem.writeFile({ id: "b1", path: "/x", contents: Stream.make(new Uint8Array([1])) }),
      [1, 1, 1]
    ],
    // ... but one never read from (not a byte of it sent) is retried as any call of its kind
    [
      "a Stream upload answered 429 before its body was read",
      limited,
      Filesystem.writeFile({ id: "b1", path: "/x", contents: Stream.make(new Uint8Array([1])) }),
      [2, 4, 1]
    ]
  ] as const satisfies ReadonlyArray<
    readonly [string, Handler, Effect.Effect<unknown, unknown, Kernel.Services>, ReadonlyArray<number>]
  >
  // the requests sent with the config's policy (maxRetries 1), within withPolicy(recurs(3)), within noRetries
  for (const [name, answer, row, sent] of table) {
    const call: Effect.Effect<unknown, unknown, Kernel.Services> = row
    it.effect(name, () =>
      Effect.gen(function*() {
        const counts: Array<number> = []
        const wraps: ReadonlyArray<<A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>> = [
          (self) => self,
          KernelRetry.withPolicy(Schedule.recurs(3)),
          KernelRetry.noRetries
        ]
        for (const wrap of wraps) {
          // no delay between attempts: the config's policy waits for nothing either (Retry-After 0)
          const mock = mockLayer(answer, { maxRetries: 1, retrySchedule: undefined })
          const fiber = yield* Effect.fork(Effect.exit(Effect.provide(wrap(call), mock.layer)))
          yield* TestClock.adjust("1 minute")
          yield* Fiber.join(fiber)
          counts.push(mock.requests.length)
        }
        expect(counts).toEqual([...sent])
      }))
  }
})

describe("a Stream's own retry policy (KernelRetry.withPolicyStream, noRetriesStream)", () => {
  const unavailable = () => json(503, errorBody("unavailable", "later"))
  const bytes = () => new Response(new Uint8Array([1, 2, 3]), { headers: { "content-type": "application/octet-stream" } })
  // the requests a stream the SDK gives sends, answered 503 (the config's policy: maxRetries 1), as it
  // is, within withPolicyStream(recurs(3)), within noRetriesStream
  const streams = [
    ["Filesystem.readFileStream", Filesystem.readFileStream({ id: "b1", path: "/f" })],
    ["Computer.captureScreenshotStream", Computer.captureScreenshotStream({ id: "b1" })],
    ["Replays.download", Replays.download({ id: "b1", replayId: "r1" })]
  ] as const
  const wraps: ReadonlyArray<<A, E, R>(self: Stream.Stream<A, E, R>) => Stream.Stream<A, E, R>> = [
    (self) => self,
    KernelRetry.withPolicyStream(Schedule.recurs(3)),
    KernelRetry.noRetriesStream
  ]
  for (const [name, row] of streams) {
    const stream: Stream.Stream<Uint8Array, unknown, Kernel.Services> = row
    it.effect(`${name} answered 503: the config's policy, withPolicyStream's, noRetriesStream's`, () =>
      Effect.gen(function*() {
        const counts: Array<number> = []
        for (const wrap of wraps) {
          const mock = mockLayer(unavailable, { maxRetries: 1, retrySchedule: undefined })
          const fiber = yield* Effect.fork(Effect.exit(Stream.runDrain(wrap(stream)).pipe(Effect.provide(mock.layer))))
          yield* TestClock.adjust("1 minute")
          const exit = yield* Fiber.join(fiber)
          expect(exit._tag).toBe("Failure")
          counts.push(mock.requests.length)
        }
        expect(counts).toEqual([2, 4, 1])
      }))
  }

  it.effect("the Stream form is the setting nearest the stream's requests: it wins over withPolicy around the run", () =>
    Effect.gen(function*() {
      const mock = mockLayer(unavailable, { maxRetries: 1, retrySchedule: undefined })
      const fiber = yield* Effect.fork(Effect.exit(
        Filesystem.readFileStream({ id: "b1", path: "/f" }).pipe(
          KernelRetry.noRetriesStream,
          Stream.runDrain,
          KernelRetry.withPolicy(Schedule.recurs(5)),
          Effect.provide(mock.layer)
        )
      ))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      expect(mock.requests.length).toBe(1)
    }))

  it.effect("the calls of what consumes the stream keep the fiber's own policy", () =>
    Effect.gen(function*() {
      // the stream's own request succeeds; the consumer's getMousePosition is answered 503
      const mock = mockLayer(
        (recorded) => recorded.url.pathname.endsWith("/fs/read_file") ? bytes() : unavailable(),
        { maxRetries: 1, retrySchedule: undefined }
      )
      const fiber = yield* Effect.fork(
        Filesystem.readFileStream({ id: "b1", path: "/f" }).pipe(
          KernelRetry.noRetriesStream,
          Stream.runForEach(() => Effect.exit(Computer.getMousePosition({ id: "b1" }))),
          KernelRetry.withPolicy(Schedule.recurs(2)),
          Effect.provide(mock.layer)
        )
      )
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      // one read, and the position asked three times: withPolicy(recurs(2)) around the run, not noRetriesStream
      expect(mock.requests.map((r) => r.url.pathname.split("/").at(-1))).toEqual([
        "read_file",
        "get_mouse_position",
        "get_mouse_position",
        "get_mouse_position"
      ])
    }))
})
