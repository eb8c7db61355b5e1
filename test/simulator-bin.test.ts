import { beforeAll, describe, expect, it } from "@effect/vitest"
import { KernelSimulator } from "effect-kernel/testing"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as path from "node:path"
import { isRunning, simulatorBin } from "./utils/bin.js"
import { tempDir } from "./utils/tempDir.js"

// the bin bundled to one JavaScript file, run by plain `node` (test/utils/bin.ts): no tsx module hooks
// in the child, which made a start or an exit stall for tens of seconds on a loaded machine
let bin: ReadonlyArray<string> = []
beforeAll(async () => {
  bin = [await simulatorBin()]
}, 60_000)

/** Runs the bin to completion (bounded): its exit code, stdout and stderr. */
const run = (args: ReadonlyArray<string>, nodeArgs: ReadonlyArray<string> = []) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs, ...bin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Starts the bin and waits until it is ready (its admin token printed): its output and its exit. */
const start = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) => {
  const child = spawn(process.execPath, [...bin, ...args], { stdio: ["ignore", "pipe", "pipe"], env })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  let stderr = ""
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
  const out = await new Promise<string>((resolve, reject) => {
    let text = ""
    child.stdout.on("data", (d: Buffer) => {
      text += d.toString()
      if (text.includes("admin token")) resolve(text)
    })
    void exit.then(({ code }) => reject(new Error(`exited ${code}: ${text}${stderr}`)))
  })
  return { child, out, exit, stderr: () => stderr }
}

const seedFile = (content: string) => {
  const dir = tempDir("sim-seed-")
  const file = path.join(dir, "seed.json")
  fs.writeFileSync(file, content)
  return file
}

const expectOneLine = (result: { code: number | null; stdout: string; stderr: string }, contains: string) => {
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe("")
  const lines = result.stderr.split("\n").filter((l) => l !== "")
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).toContain(contains)
  expect(result.stderr).not.toMatch(/\n\s+at |TypeError|Error \[/)
}

describe("effect-kernel-simulator bin explains itself", () => {
  it("--help lists the flags, the tokens, the seed format and an example", async () => {
    const result = await run(["--help"])
    expect(result.code).toBe(0)
    for (
      const text of [
        "--port",
        "--host",
        "--seed",
        "--admin-token",
        "--max-body-bytes",
        "--request-log-size",
        KernelSimulator.defaultToken,
        "sk_sim_free",
        "\"organizations\"",
        "retryAfter",
        "/_simulator/faults",
        "Example:"
      ]
    ) expect(result.stdout).toContain(text)
  }, 30_000)

  it("every startup error is one line on stderr and exit code 2", async () => {
    const busy = Net.createServer()
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve))
    const port = (busy.address() as Net.AddressInfo).port
    try {
      // a few at a time: each starts a TypeScript loader
      const [unknown, positional, badPort, inUse, dashed, negative, noValue] = await Promise.all([
        run(["--nope"]),
        run(["extra"]),
        run(["--port", "99999"]),
        run(["--port", String(port)]),
        run(["--port", "-1"]),
        run(["--port=-1"]),
        run(["--seed", "--port", "4011"])
      ])
      const [missing, notJson, invalid, adminClash] = await Promise.all([
        run(["--seed", "/nonexistent/seed.json"]),
        run(["--seed", seedFile("{ not json")]),
        run([
          "--seed",
          seedFile(
            JSON.stringify({ organizations: [{ id: "o", token: "t", deployments: [{ id: "d", state: "exploded" }] }] })
          )
        ]),
        run(["--port", "0", "--admin-token", KernelSimulator.defaultToken])
      ])
      expectOneLine(unknown, "--nope")
      expectOneLine(positional, "extra")
      expectOneLine(badPort, "--port")
      expectOneLine(inUse, "EADDRINUSE): another simulator may be running there (stop it, or pick another --port)")
      expectOneLine(dashed, "--port -1: a value that starts with a dash is read as an option; write --port=-1")
      expectOneLine(negative, "invalid --port -1: an integer from 0 to 65535")
      expectOneLine(noValue, "--seed needs a value, and --port is a flag")
      expectOneLine(missing, "ENOENT")
      expectOneLine(notJson, "not valid JSON")
      expectOneLine(invalid, "organizations[0].deployments[0].state")
      expectOneLine(adminClash, "adminToken")
    } finally {
      busy.close()
    }
  }, 120_000)

  it("without @effect/platform-node (an optional peer) it says what to install, one line and exit 2", async () => {
    // a resolve hook that finds no @effect/platform-node, as in a project that did not install it
    const dir = tempDir("ek-no-platform-node-")
    const hooks = path.join(dir, "hooks.mjs")
    fs.writeFileSync(
      hooks,
      `export const resolve = (specifier, context, next) => {
  if (specifier === "@effect/platform-node" || specifier.startsWith("@effect/platform-node/")) {
    throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: "ERR_MODULE_NOT_FOUND" })
  }
  return next(specifier, context)
}
`
    )
    const register = path.join(dir, "register.mjs")
    fs.writeFileSync(
      register,
      `import { register } from "node:module"\nregister(${JSON.stringify(new URL(`file://${hooks}`).href)})\n`
    )
    const result = await run(["--port", "0"], ["--import", register])
    expectOneLine(result, "npm install @effect/platform-node@^0.108")
  }, 60_000)

  it("a seed nested too deep is one line and exit 2; a seed file with a byte order mark is read", async () => {
    const deep = await run(["--seed", seedFile(`{"organizations":${"[".repeat(100_000)}${"]".repeat(100_000)}}`)])
    expectOneLine(deep, "nests deeper than")
    const child = spawn(process.execPath, [
      ...bin,
      "--port",
      "0",
      "--seed",
      seedFile("\uFEFF{\"organizations\":[{\"id\":\"o\",\"token\":\"sk_bom\"}]}")
    ], { stdio: ["ignore", "pipe", "pipe"] })
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let text = ""
        child.stdout.on("data", (d: Buffer) => {
          text += d.toString()
          if (text.includes("admin token")) resolve(text)
        })
        child.on("exit", (code) => reject(new Error(`exited ${code}: ${text}`)))
      })
      expect(out).toContain("token sk_bom")
    } finally {
      child.kill("SIGTERM")
    }
  }, 60_000)

  it("prints the admin token it was given, and its control plane answers", async () => {
    const child = spawn(process.execPath, [...bin, "--port", "0", "--admin-token", "adm_1"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let text = ""
        child.stdout.on("data", (d: Buffer) => {
          text += d.toString()
          if (text.includes("admin token")) resolve(text)
        })
        child.on("exit", (code) => reject(new Error(`exited ${code}: ${text}`)))
      })
      expect(out).toContain("admin token adm_1")
      expect(out).toContain(`token ${KernelSimulator.defaultToken}`)
      const url = /listening on (http:\/\/\S+)/.exec(out)![1]!
      const response = await fetch(`${url}/_simulator/faults`, {
        method: "POST",
        headers: { authorization: "Bearer adm_1", "content-type": "application/json" },
        body: JSON.stringify({ route: "listBrowserPools", status: 503, retryAfter: 4, times: 1 })
      })
      expect(response.status).toBe(201)
      const pools = await fetch(`${url}/browser_pools`, {
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      })
      expect(pools.status).toBe(503)
      expect(pools.headers.get("retry-after")).toBe("4")
    } finally {
      child.kill("SIGTERM")
    }
  }, 30_000)

  it("--port 0 prints the port it chose and its pid; a ready bin says how to stop it", async () => {
    const { child, exit, out } = await start(["--port", "0"])
    try {
      const url = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/m.exec(out)
      expect(url, out).not.toBeNull()
      expect(Number(url![2])).toBeGreaterThan(0)
      expect(out).toContain(`pid ${child.pid} (stop with Ctrl-C or kill ${child.pid})`)
      const pools = await fetch(`${url![1]}/browser_pools`, {
        headers: { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      })
      expect(pools.status).toBe(200)
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exit).toEqual({ code: 0, signal: null })
  }, 30_000)

  it.each(["SIGTERM", "SIGINT", "SIGHUP"] as const)(
    "%s stops it with exit code 0 and frees the port",
    async (signal) => {
      const { child, exit, out, stderr } = await start(["--port", "0"])
      const port = Number(/listening on http:\/\/[^:]+:(\d+)/.exec(out)![1])
      child.kill(signal)
      expect(await exit, stderr()).toEqual({ code: 0, signal: null })
      // the port is free again: the next start on it succeeds
      const again = Net.createServer()
      await new Promise<void>((resolve, reject) => {
        again.once("error", reject)
        again.listen(port, "127.0.0.1", resolve)
      })
      again.close()
    },
    30_000
  )

  it("--help says how to stop it", async () => {
    const result = await run(["--help"])
    expect(result.stdout).toContain("Ctrl-C")
    expect(result.stdout).toContain("kill the pid it prints")
    expect(result.stdout).toContain("SIGHUP")
  }, 30_000)

  // `npx effect-kernel-simulator &` then `kill $!` kills npm exec (and the shell it ran the bin in),
  // not the bin: started by npm exec (npm_command=exec), the bin stops once its parent is gone
  it(
    "started by npm exec, it stops once its parent is gone; started otherwise (or by what npm ran), it stays",
    async () => {
      const parentOf = (env: NodeJS.ProcessEnv) =>
        spawn(
          process.execPath,
          [
            "-e",
            `const c = require("node:child_process").spawn(process.execPath, ${
              JSON.stringify(bin)
            }.concat(["--port", "0"]), { stdio: ["ignore", "pipe", "inherit"] });
           c.stdout.on("data", (d) => { if (String(d).includes("admin token")) console.log("child " + c.pid) })`
          ],
          { stdio: ["ignore", "pipe", "pipe"], env }
        )
      const childPid = (parent: ReturnType<typeof parentOf>) =>
        new Promise<number>((resolve, reject) => {
          let text = ""
          parent.stdout!.on("data", (d: Buffer) => {
            text += d.toString()
            const match = /child (\d+)/.exec(text)
            if (match !== null) resolve(Number(match[1]))
          })
          parent.on("exit", (code) => reject(new Error(`parent exited ${code}: ${text}`)))
        })
      // what npm exec sets for the command it runs (`npx effect-kernel-simulator --port 0`)
      const underNpm = parentOf({
        ...process.env,
        npm_command: "exec",
        npm_lifecycle_event: "npx",
        npm_lifecycle_script: "effect-kernel-simulator"
      })
      const direct = parentOf({ ...process.env, npm_command: undefined })
      // npm exec ran another program (`npx zx dev.mjs`) that started the bin in the background and
      // ended: the variables are inherited, but the bin is not npm's command and stays
      const underOther = parentOf({
        ...process.env,
        npm_command: "exec",
        npm_lifecycle_event: "npx",
        npm_lifecycle_script: "zx"
      })
      const [npmChild, directChild, otherChild] = await Promise.all([
        childPid(underNpm),
        childPid(direct),
        childPid(underOther)
      ])
      try {
        underNpm.kill("SIGKILL")
        direct.kill("SIGKILL")
        underOther.kill("SIGKILL")
        const deadline = Date.now() + 10_000
        while (isRunning(npmChild) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
        expect(isRunning(npmChild)).toBe(false)
        // the bin looks at its parent every 500 ms: long enough for it to have looked twice
        await new Promise((resolve) => setTimeout(resolve, 1_500))
        expect(isRunning(directChild)).toBe(true)
        expect(isRunning(otherChild)).toBe(true)
      } finally {
        for (const pid of [npmChild, directChild, otherChild]) if (isRunning(pid)) process.kill(pid, "SIGTERM")
      }
    },
    60_000
  )

  it(
    "SIGTERM with event streams open: each stream is ended (not cut), and the bin exits 0 before a heartbeat",
    async () => {
      const { child, exit, out } = await start(["--port", "0"])
      const url = new URL(/listening on (\S+)/.exec(out)![1]!)
      const auth = { authorization: `Bearer ${KernelSimulator.defaultToken}` }
      const open = (path: string) =>
        new Promise<{ readonly status: number; readonly ended: Promise<"ended" | "cut"> }>((resolve, reject) => {
          const request = Http.get({ host: url.hostname, port: url.port, path, headers: auth }, (response) => {
            response.on("data", () => {})
            resolve({
              status: response.statusCode ?? 0,
              // a stream ended by the server reads to its end; one whose connection is dropped is cut
              ended: new Promise((done) => {
                response.on("end", () => done("ended"))
                response.on("close", () => done(response.complete ? "ended" : "cut"))
                response.on("error", () => done("cut"))
              })
            })
          })
          request.on("error", reject)
        })
      const streams = await Promise.all([
        open("/browsers/browser_1/telemetry"),
        open("/browsers/browser_1/logs/stream?source=supervisor&supervisor_process=chromium&follow=true")
      ])
      expect(streams.map((s) => s.status)).toEqual([200, 200])
      const signalled = Date.now()
      child.kill("SIGTERM")
      expect(await exit).toEqual({ code: 0, signal: null })
      // the server did not wait for the streams to end by themselves: it exits long before the next
      // heartbeat (15 s), however loaded the machine
      expect(Date.now() - signalled).toBeLessThan(10_000)
      expect(await Promise.all(streams.map((s) => s.ended))).toEqual(["ended", "ended"])
    },
    60_000
  )
})
