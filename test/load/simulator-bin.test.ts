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
      console.log(`bin RSS by round: ${memory.map((m) => m.toFixed(1)).join(" -> ")} MiB`)
      for (const result of results) {
        expect(result.errors).toBe(0)
        expect(result.count).toBeGreaterThan(1000)
        expect(result.hostile).toBeGreaterThan(4)
        // a shared 2-core machine: generous, yet far below the seconds seen when bodies were read whole
        expect(result.p99).toBeLessThan(500)
      }
      // flat: the last round adds (almost) nothing over the highest RSS of the rounds before it. The bin's
      // heap reaches its working size within the first round or within the second, as the collector
      // decides: the same build measured RSS by round 118 -> 212 -> 174 -> 172 MiB and 116 -> 159 -> 192 ->
      // 204 MiB in two runs, so the last round against the first alone failed by chance (45 MiB); a leak
      // grows every round, the last included
      expect(memory[rounds]! - Math.max(...memory.slice(1, rounds))).toBeLessThan(40)
      expect(memory[rounds]!).toBeLessThan(400)
    } finally {
      bin?.kill("SIGTERM")
    }
  }, 120_000)
})
