/**
 * Load on the bin itself: rounds of sustained keep-alive load from a child process, with hostile
 * bodies, slowloris clients and replay readers that never read. The bin's memory stays flat
 * across rounds and the well-behaved clients' latency stays bounded. Run by `npm run test:load`.
 */
import { describe, expect, it } from "@effect/vitest"
import { KernelSimulator } from "effect-kernel/testing"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { simulatorBin } from "../utils/bin.js"

const driver = new URL("./bin-driver.mjs", import.meta.url).pathname
const rounds = 3
const seconds = 8

/** Resident memory of a process, in MiB (Linux). */
const rssMiB = (pid: number): number => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
}

const runDriver = (url: string) =>
  new Promise<{ count: number; errors: number; hostile: number; p50: number; p99: number; max: number }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [driver, url, KernelSimulator.defaultToken, String(seconds)], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      let out = ""
      child.stdout.on("data", (d: Buffer) => (out += d.toString()))
      const timer = setTimeout(() => child.kill("SIGKILL"), (seconds + 20) * 1000)
      child.on("exit", (code) => {
        clearTimeout(timer)
        if (code === 0) resolve(JSON.parse(out))
        else reject(new Error(`driver exited ${code}: ${out}`))
      })
    }
  )

describe("the bin under load", () => {
  it("keeps flat memory and bounded latency under keep-alive load with hostile clients", async () => {
    let bin: ChildProcess | undefined
    try {
      // the bin as published (one JavaScript file, plain node): its memory is the server's alone
      const child = spawn(process.execPath, [await simulatorBin(), "--port", "0"], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      bin = child
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString()
          const match = /listening on (http:\/\/\S+)/.exec(out)
          if (match) resolve(match[1]!)
        })
        child.on("exit", (code) => reject(new Error(`bin exited ${code}: ${out}`)))
      })
      const memory: Array<number> = [rssMiB(child.pid!)]
      const results = []
      for (let round = 0; round < rounds; round++) {
        const result = await runDriver(url)
        results.push(result)
        memory.push(rssMiB(child.pid!))
        console.log(
          `bin load round ${round + 1}: ${result.count} requests (${Math.round(result.count / seconds)}/s), ` +
            `${result.errors} errors, ${result.hostile} hostile bodies, latency p50 ${result.p50.toFixed(1)} ms, ` +
            `p99 ${result.p99.toFixed(1)} ms, max ${result.max.toFixed(1)} ms; bin RSS ${memory.at(-1)!.toFixed(1)} MiB`
        )
      }
      // then idle for 3 s: what the bin keeps, not garbage it has not collected yet (V8's memory reducer
      // collects once the allocation rate drops)
      const idle: Array<number> = []
      for (let i = 0; i < 12; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250))
        idle.push(rssMiB(child.pid!))
      }
      const kept = Math.min(memory[rounds]!, ...idle)
      console.log(
        `bin RSS by round: ${memory.map((m) => m.toFixed(1)).join(" -> ")} MiB; idle 3 s after: ` +
          `${Math.min(...idle).toFixed(1)}-${Math.max(...idle).toFixed(1)} MiB`
      )
      for (const result of results) {
        expect(result.errors).toBe(0)
        expect(result.count).toBeGreaterThan(1000)
        expect(result.hostile).toBeGreaterThan(4)
        // a shared 2-core machine: generous, yet far below the seconds seen when bodies were read whole
        expect(result.p99).toBeLessThan(500)
      }
      // flat: what the bin keeps after the last round (the lower of its RSS then and while idle after it)
      // adds at most a quarter over the highest RSS of the rounds before it. The bin's heap reaches its
      // working size within the first round or within the second, as the collector decides: the same build
      // measured RSS by round 118 -> 212 -> 174 -> 172 MiB and 116 -> 159 -> 192 -> 204 MiB in two runs, so
      // the last round against the first alone failed by chance (45 MiB); garbage not collected yet swings
      // a round's RSS by 40 MiB (203.5 -> 160.1 -> 189.4; 222.2 -> 223.9 -> 256.3 in CI runs), so the last
      // round's RSS alone came within 8 MiB of the bound; a leak grows every round and stays when idle
      expect(kept / Math.max(...memory.slice(1, rounds))).toBeLessThan(1.25)
      expect(memory[rounds]!).toBeLessThan(400)
    } finally {
      bin?.kill("SIGTERM")
    }
  }, 120_000)
})
