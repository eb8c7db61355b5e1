// A newcomer's first hour, walked from the packed tarball the way the docs tell a user to:
//   1. pack (prepack builds), make an empty project (`npm init -y`, `npm pkg set type=module`);
//   2. run README.md's install lines EXACTLY (read from README.md, with the tarball's path in place
//      of `effect-kernel`), so a docs change that breaks the install breaks this test;
//   3. write README's tsconfig, its quick start and getting-started's first program, and
//      type-check them strictly (the README's `"skipLibCheck": true`, then without it: every
//      declaration checked, the `ws` advice followed as documented);
//   4. start the packed `effect-kernel-simulator` bin on a free port and run both programs with
//      `npx tsx` and the token the README gives, checking what they print;
//   5. a CommonJS consumer: a `.cts` type-checked under `--module node16` and run (it must load
//      dist/cjs through require), and a plain `.cjs` requiring `effect-kernel/testing`;
//   6. KERNEL_LOG=off / debug / DEBUG / an invalid value leave the program's own log lines and
//      `runMain`'s one error report alone, and govern the SDK's own lines (a 503 injected through
//      the bin's control plane makes the SDK log its retry: shown with debug, dropped otherwise);
//   7. docs/testing.md's install line and its vitest examples, run with `npx vitest run`.
// Needs the npm registry. Usage: npm run test:newcomer
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const npx = process.platform === "win32" ? "npx.cmd" : "npx"
const run = (cmd, args, cwd, env = {}) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
    timeout: 300_000
  })
const check = (condition, message) => {
  if (!condition) throw new Error(message)
}
const steps = []
const step = (name) => {
  steps.push(name)
  console.log(`newcomer: ${name}`)
}

/** The ```lang blocks of a markdown file, in order. */
const blocks = (file, lang) =>
  [...fs.readFileSync(path.join(root, file), "utf8").matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```", "gm"))]
    .map((m) => m[1])

/** The block of `file` that follows the heading `heading`. */
const blockAfter = (file, heading, lang) => {
  const text = fs.readFileSync(path.join(root, file), "utf8")
  const at = text.indexOf(`\n${heading}\n`)
  check(at >= 0, `${file} has no heading ${heading}`)
  const match = new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```", "m").exec(text.slice(at))
  check(match !== null, `${file}: no ${lang} block after ${heading}`)
  return match[1]
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-kernel-newcomer-"))
let simulator
try {
  step("pack")
  const tarball = path.join(
    dir,
    run(npm, ["pack", "--silent", "--pack-destination", dir], root).trim().split("\n").at(-1)
  )
  const project = path.join(dir, "my-agent")
  fs.mkdirSync(project)
  run(npm, ["init", "-y"], project)
  run(npm, ["pkg", "set", "type=module"], project)

  // the install lines of README, getting-started and testing, exactly (each once); only the package
  // name becomes the tarball's path
  const installs = [
    ...new Set(
      ["README.md", "docs/getting-started.md", "docs/testing.md"].flatMap((file) => blocks(file, "sh"))
        .flatMap((b) => b.split("\n")).filter((l) => /^npm install /.test(l))
    )
  ]
  check(
    installs.some((l) => l.startsWith("npm install effect-kernel ")),
    "README.md has no `npm install effect-kernel` line"
  )
  for (const line of installs) {
    step(line)
    const args = line.split(/\s+/).slice(1).map((arg) => arg === "effect-kernel" ? tarball : arg)
    try {
      run(npm, [...args, "--no-audit", "--no-fund"], project)
    } catch (error) {
      throw new Error(`the docs' install line failed: ${line}\n${error.stderr ?? error.message}`)
    }
  }
  const installed = JSON.parse(fs.readFileSync(path.join(project, "node_modules/effect/package.json"), "utf8"))
  check(installed.version.startsWith("3."), `effect ${installed.version} installed, expected 3.x`)
  check(installs.some((l) => l.includes("@effect/vitest")), "the docs have no install line for @effect/vitest")

  step("strict type-check of the quick start and the first program (README's tsconfig)")
  fs.writeFileSync(path.join(project, "tsconfig.json"), blocks("README.md", "json")[0])
  check(JSON.parse(blocks("README.md", "json")[0]).compilerOptions.strict === true, "README's tsconfig is not strict")
  fs.writeFileSync(path.join(project, "quickstart.ts"), blockAfter("README.md", "## Quick start", "ts"))
  fs.writeFileSync(path.join(project, "program.ts"), blockAfter("docs/getting-started.md", "## First program", "ts"))
  fs.writeFileSync(
    path.join(project, "logs.ts"),
    `import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Computer, Kernel } from "effect-kernel"

const KernelLive = Kernel.layerConfig().pipe(Layer.provide(NodeHttpClient.layerUndici))
const program = Effect.gen(function*() {
  yield* Effect.logDebug("mine debug")
  yield* Effect.logInfo("mine info")
  yield* Effect.logError("mine error")
  const { x } = yield* Computer.getMousePosition({ id: "browser_1" })
  yield* Effect.logInfo(\`mine x=\${x}\`)
  yield* Computer.getMousePosition({ id: "no_such_browser" })
})
program.pipe(Effect.provide(KernelLive), NodeRuntime.runMain)
`
  )
  for (const skipLibCheck of ["true", "false"]) {
    try {
      run(npx, ["tsc", "-p", ".", "--skipLibCheck", skipLibCheck], project)
    } catch (error) {
      throw new Error(`the strict type-check (skipLibCheck ${skipLibCheck}) fails:\n${error.stdout}${error.stderr}`)
    }
  }

  step("start the packed simulator bin on a free port")
  const tokenMatch = /KERNEL_API_KEY=(sk_sim_\w+)/.exec(fs.readFileSync(path.join(root, "README.md"), "utf8"))
  check(tokenMatch !== null, "README gives no simulator token")
  const token = tokenMatch[1]
  simulator = spawn(path.join(project, "node_modules/.bin/effect-kernel-simulator"), ["--port", "0"], {
    cwd: project,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let banner = ""
  const baseUrl = await new Promise((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Error(`the simulator did not start: ${out}`)), 30_000)
    const onData = (data) => {
      out += data
      banner = out
      const url = /listening on (http:\/\/\S+)/.exec(out)
      if (url && /admin token \S+/.test(out)) {
        clearTimeout(timer)
        resolve(url[1])
      }
    }
    simulator.stdout.on("data", onData)
    simulator.stderr.on("data", onData)
    simulator.on("exit", (code) => reject(new Error(`the simulator exited (${code}): ${out}`)))
  })
  const env = { KERNEL_BASE_URL: baseUrl, KERNEL_API_KEY: token }
  const adminToken = /admin token (\S+)/.exec(banner)[1]
  // a new connection each time (agent: false): spawnSync blocks this process's event loop for
  // seconds, long enough for the simulator to close an idle keep-alive connection under a reused one
  const injectFault = (fault) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(fault)
      const request = http.request(`${baseUrl}/_simulator/faults`, {
        method: "POST",
        agent: false,
        headers: {
          authorization: `Bearer ${adminToken}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body)
        }
      }, (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk) => text += chunk)
        response.on("end", () =>
          response.statusCode === 201
            ? resolve()
            : reject(new Error(`injecting a fault: ${response.statusCode} ${text}`)))
      })
      request.on("error", reject)
      request.end(body)
    })

  step(`README's quick start against ${baseUrl}`)
  const quick = run(npx, ["tsx", "quickstart.ts"], project, env)
  check(quick === "3 pools\ncursor at 640,360\n", `quick start printed ${JSON.stringify(quick)}`)

  step("getting-started's first program")
  const first = run(npx, ["tsx", "program.ts"], project, env)
  check(first.includes("saved 4194304 bytes"), `first program printed ${JSON.stringify(first)}`)
  check(fs.statSync(path.join(project, "replay.mp4")).size === 4194304, "replay.mp4 has the wrong size")

  step("a CommonJS consumer: .cts under --module node16, and a plain .cjs")
  fs.writeFileSync(
    path.join(project, "consumer.cts"),
    `import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Redacted } from "effect"
import { BrowserPools, Kernel, KernelConfig } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

const layer = Kernel.layer.pipe(
  Layer.provide(KernelConfig.layer({ apiKey: Redacted.make(KernelSimulator.defaultToken), baseUrl: process.argv[2]! })),
  Layer.provide(NodeHttpClient.layerUndici)
)
Effect.runPromise(BrowserPools.list().pipe(Effect.provide(layer))).then((pools) => {
  console.log("cjs", pools.length, require.resolve("effect-kernel").includes("/dist/cjs/"))
})
`
  )
  try {
    run(npx, [
      "tsc",
      "--module",
      "node16",
      "--target",
      "es2022",
      "--strict",
      "--types",
      "node",
      "--outDir",
      "out",
      "consumer.cts"
    ], project)
  } catch (error) {
    throw new Error(`the CommonJS consumer does not type-check:\n${error.stdout}${error.stderr}`)
  }
  check(
    fs.readFileSync(path.join(project, "out/consumer.cjs"), "utf8").includes("require(\"effect-kernel\")"),
    "no require"
  )
  const cjs = run(process.execPath, ["out/consumer.cjs", baseUrl], project)
  check(cjs === "cjs 3 true\n", `CommonJS consumer printed ${JSON.stringify(cjs)}`)
  fs.writeFileSync(
    path.join(project, "plain.cjs"),
    `const { KernelSimulator } = require("effect-kernel/testing")
console.log(typeof KernelSimulator.layer, KernelSimulator.defaultToken === ${JSON.stringify(token)})
`
  )
  check(run(process.execPath, ["plain.cjs"], project) === "function true\n", "require(effect-kernel/testing) failed")

  step("KERNEL_LOG leaves the program's own log lines and runMain's error report alone")
  const logs = async (value) => {
    // the first call is answered 503 once: the SDK retries it and logs the failed attempt at debug
    await injectFault({ route: "getMousePosition", status: 503, times: 1 })
    const vars = { ...process.env, ...env, KERNEL_LOG: value }
    if (value === undefined) delete vars.KERNEL_LOG
    const result = spawnSync(npx, ["tsx", "logs.ts"], { cwd: project, encoding: "utf8", env: vars, timeout: 120_000 })
    const output = `${result.stdout}${result.stderr}`
    check(result.status === 1, `KERNEL_LOG=${value}: exit ${result.status}, expected 1:\n${output}`)
    // the logger's format (logfmt or pretty) is Effect's to choose: count what matters
    const count = (pattern) => (output.match(pattern) ?? []).length
    check(count(/INFO.*mine info/g) === 1, `KERNEL_LOG=${value} hid the program's info line:\n${output}`)
    check(count(/ERROR.*mine error/g) === 1, `KERNEL_LOG=${value} hid the program's error line:\n${output}`)
    check(count(/mine debug/g) === 0, `KERNEL_LOG=${value} turned on the program's debug lines:\n${output}`)
    check(count(/INFO.*mine x=640/g) === 1, `KERNEL_LOG=${value}: the retried call did not succeed:\n${output}`)
    // the SDK's own line about the retry: shown only when KERNEL_LOG asks for debug
    const sdkLines = count(/DEBUG.*getMousePosition: attempt 1 failed/g)
    const wanted = value !== undefined && value.toLowerCase() === "debug" ? 1 : 0
    check(sdkLines === wanted, `KERNEL_LOG=${value}: ${sdkLines} SDK retry lines, expected ${wanted}:\n${output}`)
    // runMain's report of the uncaught NotFound, exactly once
    const reports = count(/^\s*NotFound: /gm)
    check(reports === 1, `KERNEL_LOG=${value}: ${reports} error reports, expected 1:\n${output}`)
    check(!output.includes("ConfigError") && !output.includes("Invalid data"), `KERNEL_LOG=${value}: ${output}`)
    return output
  }
  for (const value of [undefined, "off", "debug", "DEBUG", "warn"]) await logs(value)
  const invalid = await logs("loud")
  check(invalid.split("ignoring KERNEL_LOG").length === 2, `KERNEL_LOG=loud should warn once:\n${invalid}`)

  step("docs/testing.md's tests, run with vitest as a user would")
  const examples = blocks("docs/testing.md", "ts").filter((b) => b.includes("describe("))
  check(examples.length >= 3, `docs/testing.md has ${examples.length} vitest examples`)
  examples.forEach((b, i) => fs.writeFileSync(path.join(project, `docs-${i}.test.ts`), b))
  try {
    run(npx, ["tsc", "-p", "."], project)
  } catch (error) {
    throw new Error(`docs/testing.md's tests do not type-check:\n${error.stdout}${error.stderr}`)
  }
  let vitest
  try {
    // CI may force colours (FORCE_COLOR): ask for none and strip any that come anyway
    vitest = run(npx, ["vitest", "run", "--testTimeout", "20000"], project, { NO_COLOR: "1", FORCE_COLOR: "0" })
      .replace(/\u001b\[[0-9;]*m/g, "")
  } catch (error) {
    throw new Error(`docs/testing.md's tests fail:\n${error.stdout}${error.stderr}`)
  }
  check(/Test Files\s+\d+ passed/.test(vitest) && !/failed/.test(vitest), `vitest printed ${vitest}`)

  console.log(`newcomer-test: ok (${steps.length} steps, ${path.basename(tarball)})`)
} catch (error) {
  console.error("newcomer-test failed:", error.stderr ?? "", error.stdout ?? "", error.message)
  process.exitCode = 1
} finally {
  simulator?.kill()
  fs.rmSync(dir, { recursive: true, force: true })
}
