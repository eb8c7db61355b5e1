/**
 * The simulator bin (`src/bin/simulator.ts`) as one JavaScript file, bundled once per test process by
 * esbuild, its packages left to `node_modules` as the published bin leaves them. Tests start it with
 * plain `node`: no tsx module hooks in the child, which on a loaded machine made a start or an exit
 * take tens of seconds now and then (Node 24 in CI: a SIGINT test timed out at 30 s, an earlier run
 * was killed at 45 s), and a start costs what the published bin's does.
 */
import { build } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { threadId } from "node:worker_threads"

const root = fileURLToPath(new URL("../..", import.meta.url))

let built: Promise<string> | undefined

/** Whether a process of this pid is running. */
export const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The bundled bin's path, built on the first call of this process: `.tmp/bin/simulator-<pid>-<thread>.mjs`,
 * inside the repository so that its imports resolve from its node_modules. Test workers end without
 * an exit event, so each build removes the files of processes that are gone.
 */
export const simulatorBin = (): Promise<string> =>
  built ??= (async () => {
    const dir = path.join(root, ".tmp", "bin")
    fs.mkdirSync(dir, { recursive: true })
    for (const file of fs.readdirSync(dir)) {
      const pid = /^simulator-(\d+)-\d+\.mjs$/.exec(file)?.[1]
      if (pid !== undefined && !isRunning(Number(pid))) fs.rmSync(path.join(dir, file), { force: true })
    }
    const outfile = path.join(dir, `simulator-${process.pid}-${threadId}.mjs`)
    await build({
      entryPoints: [path.join(root, "src/bin/simulator.ts")],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      logLevel: "silent"
    })
    return outfile
  })()
