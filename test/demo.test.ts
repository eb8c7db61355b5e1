import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as Net from "node:net"

const tsx = createRequire(import.meta.url).resolve("tsx/cli")

describe("npm run demo", () => {
  it("runs every step, the agent's day included, against the embedded simulator and exits 0 with the summary", () => {
    const result = spawnSync(process.execPath, [tsx, "examples/demo.ts"], { encoding: "utf8", timeout: 60_000 })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    // the transport the README recommends, not NodeHttpClient's
    expect(result.stdout).toMatch(
      /^effect-kernel demo — simulator listening on \S+, SDK over KernelTransport\.layerUndici$/m
    )
    expect(result.stdout).toContain("still recording: waiting 1s (Retry-After), poll 2")
    expect(result.stdout).toContain("running -> stopped, marked for deletion")
    expect(result.stdout).toMatch(
      /^demo ok: 3 pools, mouse \(640, 360\), cursor hidden, replay 32\.0 MiB at \d+ MB\/s after 2 waits, 2 deployments deleted$/m
    )
    // the agent's day: each step says what happened
    for (
      const line of [
        /^7\. An agent's day: a browser for the session \(Browsers\.scoped\)$/m,
        /^ {2}browser (\S+) created; it is deleted when this scope closes$/m,
        /^ {2}cursor at \(320, 240\); typed "kernel browsers<Return>"$/m,
        /^ {2}wrote 37 bytes to \/tmp\/agent\/notes\.txt; read back "visited example\.com; found 3 results\\n"$/m,
        /^ {2}\$ cat \/tmp\/agent\/notes\.txt -> exit 0: "visited example\.com; found 3 results\\n"$/m,
        /^ {2}\[stdout\] "hello from the browser\\n"\n {2}\[exit 0\]$/m,
        /^ {2}scope closed: browser \S+ deleted$/m,
        /^ {2}leased \S+ from small: available 2 -> 1\n {2}lease released when its scope closed: available 2$/m,
        /^ {2}followed: (\S+ -> )*running$/m,
        /^ {2}invocation \S+: Accepted \(queued\)$/m,
        /^ {2}followed: (\S+ -> )*succeeded; retrieved: succeeded$/m,
        /^ {2}8 browsers in 4 pages of 2: browser_1, /m,
        /^agent's day ok: browser driven, screenshot \d+ bytes, file round-trip, exec exit 0, pool lease released, deployment running, invocation succeeded, 8 browsers listed$/m
      ]
    ) expect(result.stdout).toMatch(line)
    // the screenshot is a real PNG file, of the size printed
    const shot = /^ {2}screenshot saved to (\S+) \((\d+) bytes, PNG\)$/m.exec(result.stdout)
    expect(shot, result.stdout).not.toBeNull()
    const png = fs.readFileSync(shot![1]!)
    expect(png.length).toBe(Number(shot![2]))
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    fs.rmSync(shot![1]!)
  }, 60_000)

  it("prints the typed error and exits non-zero when the service cannot be reached", async () => {
    // a port that was free a moment ago (a fixed low port may be taken by another test's server)
    const port = await new Promise<number>((resolve) => {
      const server = Net.createServer().listen(0, "127.0.0.1", () => {
        const address = server.address()
        server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
      })
    })
    const result = spawnSync(process.execPath, [tsx, "examples/demo.ts", "--live"], {
      encoding: "utf8",
      timeout: 60_000,
      env: {
        ...process.env,
        KERNEL_API_KEY: "sk_unused",
        KERNEL_BASE_URL: `http://127.0.0.1:${port}`,
        KERNEL_MAX_RETRIES: "0"
      }
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("demo failed with TransportError")
    expect(result.stderr + result.stdout).not.toContain("sk_unused")
  }, 60_000)

  it("runs on KernelTransport, as the README recommends", () => {
    const source = fs.readFileSync("examples/demo.ts", "utf8")
    expect(source).toContain("KernelTransport.layerUndici")
    expect(source).not.toContain("NodeHttpClient")
  })
})
