import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as Net from "node:net"

const tsx = createRequire(import.meta.url).resolve("tsx/cli")

describe("npm run demo", () => {
  it("runs every step against the embedded simulator and exits 0 with the summary", () => {
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
