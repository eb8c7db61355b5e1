/**
 * Review 78 (a hostile server against the event streams): a telemetry envelope whose `seq` breaks the
 * document's bound (`minimum: 1`: 0, a negative one) is a `DecodeError`, where it was counted as no seq
 * and delivered again on every resumed connection. Failed before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule, Stream } from "effect"
import { KernelEvents, Telemetry } from "effect-kernel"
import { mockLayer } from "./utils/mock.js"

const envelope = (seq: number) =>
  `data: ${
    JSON.stringify({ seq, event: { type: "console_log", ts: 1, source: { kind: "cdp" }, category: "console" } })
  }\n\n`

describe("a telemetry seq out of the document's bound", () => {
  for (const seq of [0, -3]) {
    it.effect(`seq ${seq}: a DecodeError naming it, not a duplicate on each reconnection`, () => {
      // each connection: the bad envelope, then seq 1, then the body ends (a drop)
      const { layer, requests } = mockLayer(() =>
        new Response(envelope(seq) + envelope(1), { status: 200, headers: { "content-type": "text/event-stream" } })
      )
      return Effect.gen(function*() {
        const events = yield* Telemetry.stream({ id: "b1" })
        const error = yield* Effect.flip(Stream.runDrain(events))
        expect(error._tag).toBe("DecodeError")
        expect(error.message).toContain(`telemetry seq ${seq} is not a sequence number`)
        expect(requests).toHaveLength(1)
      }).pipe(
        Effect.provideService(KernelEvents.ResumeSchedule, Schedule.recurs(3)),
        Effect.provide(layer)
      )
    })
  }
})
