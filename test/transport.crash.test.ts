import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"

const tsx = createRequire(import.meta.url).resolve("tsx/cli")
const script = new URL("./utils/crashStress.ts", import.meta.url).pathname

/** Runs the hostile-server stress in a child process: the undici 7 bug kills the process it runs in. */
const stress = (transport: string, iterations: number, seconds: number) => {
  const child = spawnSync(process.execPath, [tsx, script, transport, String(iterations), String(seconds)], {
    encoding: "utf8",
    timeout: (seconds + 60) * 1000
  })
  const last = child.stdout.trim().split("\n").at(-1) ?? ""
  return { status: child.status, signal: child.signal, stderr: child.stderr, summary: last }
}

describe("undici 7 paused-parser crash (nodejs/undici#5360)", () => {
  it("KernelTransport survives the hostile-server stress (child process exits 0)", () => {
    const result = stress("kernel", 30, 20)
    expect(result.stderr).not.toContain("AssertionError")
    expect(result.status).toBe(0)
    const summary: { iterations: number; outcomes: Record<string, number> } = JSON.parse(result.summary)
    expect(summary.iterations).toBeGreaterThan(0)
    // every exchange ended (success or a typed failure), none hung past its time-out
    expect(Object.values(summary.outcomes).reduce((a, b) => a + b, 0)).toBe(summary.iterations * 8 * 4)
  }, 120_000)

  // the control: the same stress on the platform's undici client crashes the child (most runs), which
  // shows that the stress reaches the bug; opt-in, since it tests undici rather than this SDK
  it.runIf(process.env["STRESS_CONTROL"] === "1")("control: NodeHttpClient.layerUndici crashes under it", () => {
    const result = stress("platform-undici", 30, 20)
    expect(result.stderr).toContain("Parser.finish")
    expect(result.status).not.toBe(0)
  }, 120_000)
})
