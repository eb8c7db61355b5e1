/**
 * A hostile server's `Retry-After` on a 429 of an operation that is not idempotent (retried: the
 * server refused it unprocessed), on every transport: the wait between the attempts as the server
 * saw them. Only a number of seconds or an HTTP date (RFC 9110's three forms) is the server's wait;
 * any other text is none, and the back-off applies — `Date.parse` read `Retry 5` as a day of 2001
 * (the retry came at once) and `x 2030` as the year 2030 (the longest wait, `maxRetryAfter`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Option } from "effect"
import { Browsers } from "effect-kernel"
import { parseRetryAfter } from "../src/internal/retryAfter.js"
import { head, loopbackLayer, rawServer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const refused = JSON.stringify({ code: "rate_limited", message: "slow down" })

describe.each(transports)("Retry-After of a 429 on $name", (transport) => {
  // [the header, the least and the most wait between the two attempts, in ms]
  const cases: ReadonlyArray<readonly [string, () => string, number, number]> = [
    // garbage that `Date.parse` takes for a date: the back-off (375–500 ms), neither 0 nor the cap
    ["garbage read as a past date", () => "Retry 5", 300, 1500],
    ["garbage read as a far date", () => "x 2030", 300, 1500],
    ["a negative number", () => "-5", 300, 1500],
    // the cap (3 s) reduced by up to 25 % (the most: 1.5 s to spare for a loaded machine)
    ["huge", () => "99999999999", 2200, 4500],
    // an HTTP date 2 s ahead (to the second): 1 to 2.5 s
    ["an HTTP date", () => new Date(Date.now() + 2_000).toUTCString(), 900, 4000]
  ]
  for (const [name, value, least, most] of cases) {
    it.live(name, () =>
      Effect.gen(function*() {
        const times: Array<number> = []
        const server = yield* rawServer(({ socket }) => {
          times.push(Date.now())
          socket.write(
            head("429 Too Many Requests", {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(refused),
              "retry-after": value()
            }) + refused
          )
        })
        const exit = yield* Effect.exit(
          Browsers.create({}).pipe(
            Effect.provide(loopbackLayer(server.port, transport.layer, { maxRetries: 1, maxRetryAfter: "3 seconds" }))
          )
        )
        expect(Exit.isFailure(exit)).toBe(true)
        expect(times).toHaveLength(2)
        const waited = times[1]! - times[0]!
        expect(waited).toBeGreaterThanOrEqual(least)
        expect(waited).toBeLessThanOrEqual(most)
      }).pipe(Effect.scoped), 20_000)
  }
})

describe("parseRetryAfter", () => {
  const now = Date.parse("Sun, 06 Nov 1994 08:49:30 GMT")
  it("reads the three forms of an HTTP date, asctime's as UTC, and nothing else", () => {
    const read = (value: string) => Option.map(parseRetryAfter(value, now), Duration.toMillis)
    expect(read("Sun, 06 Nov 1994 08:49:37 GMT")).toEqual(Option.some(7_000))
    expect(read("Sunday, 06-Nov-94 08:49:37 GMT")).toEqual(Option.some(7_000))
    expect(read("Sun Nov  6 08:49:37 1994")).toEqual(Option.some(7_000))
    expect(read("Sat, 05 Nov 1994 08:49:37 GMT")).toEqual(Option.some(0))
    expect(read(" 2 ")).toEqual(Option.some(2_000))
    for (const garbage of ["Retry 5", "a 1", "x 2030", "-5", "1 day", "soon", "2030-01-01", "1, 2", ""]) {
      expect(read(garbage), garbage).toEqual(Option.none())
    }
  })
})
