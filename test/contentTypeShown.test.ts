import { describe, expect, it } from "@effect/vitest"
import { contentTypeShown } from "../src/internal/bounded.js"

// how a DecodeError names an answer's Content-Type (an event stream's, a replay's)
describe("contentTypeShown", () => {
  const cases: ReadonlyArray<readonly [string | undefined, string]> = [
    [undefined, "no content-type"],
    ["", "an empty content-type"],
    [" \t ", "an empty content-type"],
    // two blank header lines, joined by the transports
    [", ", "an empty content-type"],
    // not HTTP whitespace: a value, shown as it is
    ["\u00a0", "content-type \u00a0"],
    ["text/html; charset=utf-8", "content-type text/html; charset=utf-8"]
  ]
  it.each(cases)("%j is named %j", (contentType, shown) => {
    expect(contentTypeShown(contentType)).toBe(shown)
  })

  it("a long value is bounded", () => {
    expect(contentTypeShown("x".repeat(1000)).length).toBeLessThanOrEqual("content-type ".length + 100)
  })
})
