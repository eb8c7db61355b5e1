import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"

const tsx = createRequire(import.meta.url).resolve("tsx/cli")

// A crash of undici's parser (nodejs/undici#5360) kills the whole process from a socket event: no
// Effect boundary can catch it. The hostile cases therefore run in a child process, and the test
// is that it survives them all, on every transport, and reports what each ended with.
describe("hostile servers", () => {
  it("runs every hostile case back to back on every transport, many times, and the process lives", () => {
    const result = spawnSync(process.execPath, [tsx, "test/stress/hostile.ts", "12000", "400"], {
      encoding: "utf8",
      timeout: 60_000
    })
    expect(result.stderr).not.toContain("AssertionError")
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("hostile ok")
    for (const line of result.stdout.split("\n").filter((l) => l.includes("rounds"))) {
      // each transport ran several rounds of every case, and every outcome is typed or a success
      const [, rounds] = /: (\d+) rounds/.exec(line)!
      expect(Number(rounds)).toBeGreaterThanOrEqual(3)
    }
    expect(result.stdout).toMatch(/^undici: /m)
    expect(result.stdout).toMatch(/^fetch: /m)
  }, 60_000)
})
