/**
 * The effect-kernel demo: starts the embedded Kernel simulator on a loopback port and drives it
 * with the SDK over real HTTP — every operation, the replay wait, a streamed download, typed
 * errors.
 *
 *   npm run demo                      against the embedded simulator
 *   npm run demo -- --live            against the real service (KERNEL_API_KEY), read-only steps
 *   npm run demo -- --live --browser ID [--replay ID] [--deployment ID]   plus those steps
 */
import { NodeContext } from "@effect/platform-node"
import { Console, DateTime, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import {
  BrowserPools,
  Computer,
  Deployments,
  Kernel,
  KernelConfig,
  type KernelError,
  KernelTransport,
  Replays
} from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"

const { values: args } = parseArgs({
  options: {
    live: { type: "boolean", default: false },
    browser: { type: "string" },
    replay: { type: "string" },
    deployment: { type: "string" },
    out: { type: "string" }
  }
})

const replaySize = 32 * 1024 * 1024

const seed: KernelSimulator.Seed = {
  organizations: [{
    ...KernelSimulator.defaultSeed.organizations![0]!,
    browsers: [{
      id: "browser_1",
      mouse: { x: 640, y: 360 },
      replays: [{ id: "replay_1", size: replaySize, pendingPolls: 2, retryAfter: 1 }]
    }]
  }]
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const line = (row: ReadonlyArray<string>) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ")
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n")
}

const progressBar = (fallbackTotal: number | undefined) => {
  let lastDrawn = -1
  const interactive = process.stdout.isTTY === true
  return ({ bytes, total: declared }: Replays.Progress) =>
    Effect.sync(() => {
      // the total the server declared (Content-Length), else what the demo knows of the seed
      const total = declared ?? fallbackTotal
      if (total === undefined) {
        const step = Math.floor(bytes / (8 * 1024 * 1024))
        if (step !== lastDrawn) {
          lastDrawn = step
          process.stdout.write(`  ${mib(bytes)} received\n`)
        }
        return
      }
      const percent = Math.floor((bytes / total) * 100)
      const step = interactive ? percent : Math.floor(percent / 25) * 25
      if (step === lastDrawn) return
      lastDrawn = step
      const filled = Math.round(percent / 5)
      const bar = `  [${"#".repeat(filled)}${".".repeat(20 - filled)}] ${String(percent).padStart(3)}%  ${mib(bytes)}`
      process.stdout.write(interactive ? `\r${bar}${bytes >= total ? "\n" : ""}` : `${bar}\n`)
    })
}

interface Ids {
  readonly browser: string | undefined
  readonly replay: string | undefined
  readonly deployments: ReadonlyArray<string>
}

const run = (ids: Ids, control: Option.Option<KernelSimulator.Control>, replayTotal: number | undefined) =>
  Effect.gen(function*() {
    const summary: Array<string> = []

    yield* Console.log("\n1. Browser pools")
    const pools = yield* BrowserPools.list()
    yield* Console.log(table([
      ["id", "name", "available", "acquired", "size", "created"],
      ...pools.map((p) => [
        p.id,
        p.name ?? "-",
        String(p.available_count),
        String(p.acquired_count),
        String(p.browser_pool_config.size),
        DateTime.formatIso(p.created_at)
      ])
    ]))
    summary.push(`${pools.length} pools`)

    if (ids.browser !== undefined) {
      const id = ids.browser
      yield* Console.log(`\n2. Mouse position of ${id}`)
      const { x, y } = yield* Computer.getMousePosition({ id })
      yield* Console.log(`  cursor at (${x}, ${y})`)
      summary.push(`mouse (${x}, ${y})`)

      yield* Console.log(`\n3. Hide the cursor of ${id}`)
      const { ok } = yield* Computer.setCursorVisibility({ id, hidden: true })
      const state = yield* Option.match(control, {
        onNone: () => Effect.succeed(""),
        onSome: (c) =>
          Effect.map(
            c.browser(id),
            Option.match({ onNone: () => "", onSome: (b) => ` (cursorHidden=${b.cursorHidden})` })
          )
      })
      yield* Console.log(`  ok=${ok}${state}`)
      summary.push("cursor hidden")
    }

    if (ids.browser !== undefined && ids.replay !== undefined) {
      const params = { id: ids.browser, replayId: ids.replay }
      yield* Console.log(`\n4. Download replay ${params.replayId}`)
      let waits = 0
      // the SDK's wait policy, tapped to show each wait
      const schedule = Replays.waitSchedule({ maxWait: "2 minutes" }).pipe(
        Schedule.tapInput((pending: Replays.ReplayPending) =>
          Console.log(
            `  still recording: waiting ${Duration.format(pending.retryAfter)} (Retry-After), poll ${pending.polls}`
          )
            .pipe(Effect.tap(() => waits++))
        )
      )
      const file = args.out ?? path.join(os.tmpdir(), `effect-kernel-demo-${process.pid}.mp4`)
      const started = Date.now()
      let streamStarted = 0
      const draw = progressBar(replayTotal)
      const result = yield* Replays.downloadToFile(params, file, {
        schedule,
        onProgress: (progress) => {
          if (streamStarted === 0) streamStarted = Date.now()
          return draw(progress)
        }
      })
      const seconds = Math.max(1, Date.now() - (streamStarted || started)) / 1000
      const throughput = result.bytes / 1e6 / seconds
      yield* Console.log(
        `  wrote ${mib(result.bytes)} to ${result.path} in ${seconds.toFixed(2)} s (${
          throughput.toFixed(0)
        } MB/s) after ${waits} waits`
      )
      summary.push(`replay ${mib(result.bytes)} at ${throughput.toFixed(0)} MB/s after ${waits} waits`)
      if (args.out === undefined) fs.rmSync(result.path)
    }

    for (const [n, id] of ids.deployments.entries()) {
      yield* Console.log(`\n${5 + n}. Delete deployment ${id}`)
      const describe = Option.match(control, {
        onNone: () => Effect.succeed("(state not visible)"),
        onSome: (c) =>
          Effect.map(
            c.deployment(id),
            Option.match({
              onNone: () => "absent",
              onSome: (d) => `${d.state}${d.markedForDeletion ? ", marked for deletion" : ""}`
            })
          )
      })
      const before = yield* describe
      const started = Date.now()
      yield* Deployments.delete({ id })
      const after = yield* describe
      yield* Console.log(`  ${before} -> ${after} (${Date.now() - started} ms)`)
    }
    if (ids.deployments.length > 0) summary.push(`${ids.deployments.length} deployments deleted`)
    return summary
  })

const report = (error: KernelError.KernelError | { readonly _tag: string; readonly message: string }) =>
  Console.error(`\ndemo failed with ${error._tag}: ${error.message}`).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

const simulated = Effect.gen(function*() {
  const served = yield* KernelSimulator.serve({ seed })
  yield* Console.log(`effect-kernel demo — simulator listening on ${served.url}, SDK over KernelTransport.layerUndici`)
  const KernelLive = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({ apiKey: Redacted.make(KernelSimulator.defaultToken), baseUrl: served.url })),
    // the SDK's own undici transport, as the README recommends
    Layer.provide(KernelTransport.layerUndici)
  )
  const summary = yield* run(
    { browser: "browser_1", replay: "replay_1", deployments: ["dep_running", "dep_stopped"] },
    Option.some(served),
    replaySize
  ).pipe(Effect.provide(KernelLive))
  yield* Console.log(`\ndemo ok: ${summary.join(", ")}`)
})

const live = Effect.gen(function*() {
  yield* Console.log("effect-kernel demo — live service (read-only unless ids are given)")
  const summary = yield* run(
    {
      browser: args.browser,
      replay: args.replay,
      deployments: args.deployment === undefined ? [] : [args.deployment]
    },
    Option.none(),
    undefined
  ).pipe(Effect.provide(Kernel.layerConfig().pipe(Layer.provide(KernelTransport.layerUndici))))
  yield* Console.log(`\ndemo ok: ${summary.join(", ")}`)
})

const main = (args.live ? live : simulated).pipe(
  Effect.scoped,
  Effect.catchTags({ ConfigError: (error) => report({ _tag: "ConfigError", message: String(error) }) }),
  Effect.catchAll(report),
  Effect.provide(NodeContext.layer)
)

Effect.runPromise(main).catch((defect) => {
  console.error("demo crashed:", defect)
  process.exitCode = 2
})
