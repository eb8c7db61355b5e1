/**
 * The effect-kernel demo: starts the embedded Kernel simulator on a loopback port and drives it
 * with the SDK over real HTTP — the pools, the replay wait, a streamed download, typed errors —
 * then an agent's day: a scoped browser driven and screenshotted, a file written and read back, a
 * process's output, a pool lease, an app deployed and invoked, a paged list.
 *
 *   npm run demo                      against the embedded simulator
 *   npm run demo -- --live            against the real service (KERNEL_API_KEY), read-only steps
 *   npm run demo -- --live --browser ID [--replay ID] [--deployment ID]   plus those steps
 */
import { NodeContext } from "@effect/platform-node"
import { Chunk, Console, DateTime, Duration, Effect, Layer, Option, Redacted, Schedule, Stream } from "effect"
import {
  BrowserPools,
  Browsers,
  Computer,
  Deployments,
  Filesystem,
  Invocations,
  Kernel,
  KernelConfig,
  type KernelError,
  KernelEvents,
  KernelTransport,
  Processes,
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

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const fromBase64 = (b64: string | undefined) => Buffer.from(b64 ?? "", "base64").toString("utf8")
const collect = <E, R>(stream: Stream.Stream<Uint8Array, E, R>) =>
  Stream.runCollect(stream).pipe(Effect.map((chunks) => Buffer.concat(Chunk.toArray(chunks))))

/**
 * An agent's day, numbered from `first`: what an agent on Kernel does in a working session, each
 * step printed with what happened. It creates and deletes its own resources (simulator only).
 */
const agentDay = (first: number, control: KernelSimulator.Control) =>
  Effect.gen(function*() {
    const summary: Array<string> = []
    let n = first
    const step = (title: string) => Console.log(`\n${n++}. ${title}`)

    // a browser for the session, deleted when the scope closes — whatever happens in between
    const id = yield* Effect.scoped(Effect.gen(function*() {
      yield* step("An agent's day: a browser for the session (Browsers.scoped)")
      const browser = yield* Browsers.scoped({ headless: true, timeout_seconds: 300 })
      const id = browser.session_id
      yield* Console.log(`  browser ${id} created; it is deleted when this scope closes`)

      yield* step(`Drive ${id}: move, click, type, press Enter, then a screenshot`)
      yield* Computer.moveMouse({ id, x: 320, y: 240 })
      yield* Computer.clickMouse({ id, x: 320, y: 240 })
      yield* Computer.typeText({ id, text: "kernel browsers" })
      yield* Computer.pressKey({ id, keys: ["Return"] })
      const { x, y } = yield* Computer.getMousePosition({ id })
      const typed = Option.match(yield* control.browser(id), { onNone: () => [], onSome: (b) => b.typed })
      yield* Console.log(`  cursor at (${x}, ${y}); typed ${JSON.stringify(typed.join(""))}`)
      const png = yield* collect(yield* Computer.captureScreenshot({ id }))
      const shot = path.join(os.tmpdir(), `effect-kernel-demo-${process.pid}.png`)
      fs.writeFileSync(shot, png)
      const isPng = png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      yield* Console.log(`  screenshot saved to ${shot} (${png.length} bytes${isPng ? ", PNG" : ""})`)
      summary.push("browser driven", `screenshot ${png.length} bytes`)

      yield* step("Upload a file to the browser and read it back (Filesystem.writeFile / readFile)")
      const file = "/tmp/agent/notes.txt"
      const notes = "visited example.com; found 3 results\n"
      yield* Filesystem.createDirectory({ id, path: "/tmp/agent" })
      yield* Filesystem.writeFile({ id, path: file, contents: new TextEncoder().encode(notes) })
      const back = text(yield* collect(yield* Filesystem.readFile({ id, path: file })))
      yield* Console.log(`  wrote ${notes.length} bytes to ${file}; read back ${JSON.stringify(back)}`)
      summary.push(back === notes ? "file round-trip" : "file MISMATCH")

      yield* step("Run processes in the browser: an exec, and a spawned process's streamed output")
      const exec = yield* Processes.exec({ id, command: "cat", args: [file] })
      yield* Console.log(`  $ cat ${file} -> exit ${exec.exit_code}: ${JSON.stringify(fromBase64(exec.stdout_b64))}`)
      const spawned = yield* Processes.spawn({ id, command: "echo", args: ["hello from the browser"] })
      const events = yield* Stream.runCollect(
        yield* Processes.stdoutStream({ id, processId: spawned.process_id! })
      )
      // the output arrives as bytes with its stream, the exit code last
      for (const event of events) {
        if (KernelEvents.isUnknownEvent(event)) continue
        yield* Console.log(
          event._tag === "Exit"
            ? `  [exit ${event.exitCode}]`
            : `  [${event.stream}] ${JSON.stringify(new TextDecoder().decode(event.data))}`
        )
      }
      summary.push(`exec exit ${exec.exit_code}`)
      return id
    }))
    const gone = Option.isNone(yield* control.browser(id)) ? "deleted" : "STILL RUNNING"
    yield* Console.log(`  scope closed: browser ${id} ${gone}`)

    yield* step("Lease a browser from a pool (BrowserPools.acquireScoped)")
    const pool = (yield* BrowserPools.list())[0]!
    const before = pool.available_count
    yield* Effect.scoped(Effect.gen(function*() {
      const leased = yield* BrowserPools.acquireScoped({ idOrName: pool.id, acquire_timeout_seconds: 10 })
      const during = (yield* BrowserPools.list()).find((p) => p.id === pool.id)!.available_count
      yield* Console.log(`  leased ${leased.session_id} from ${pool.name ?? pool.id}: available ${before} -> ${during}`)
    }))
    const after = (yield* BrowserPools.list()).find((p) => p.id === pool.id)!.available_count
    yield* Console.log(`  lease released when its scope closed: available ${after}`)
    summary.push("pool lease released")

    yield* step("Deploy an app and follow it to running (Deployments.create / follow)")
    const deployment = yield* Deployments.create({
      file: new TextEncoder().encode("PK\x05\x06" + "\0".repeat(18)),
      entrypoint_rel_path: "src/agent-app.ts",
      version: "1.0.0"
    })
    yield* Console.log(`  deployment ${deployment.id} created`)
    const states = yield* (yield* Deployments.follow({ id: deployment.id })).pipe(
      Stream.filterMap((event) =>
        KernelEvents.isKnownEvent(event) && event.event === "deployment_state"
          ? Option.some(event.deployment.status)
          : Option.none()
      ),
      Stream.takeUntil((status) => status === "running" || status === "failed"),
      Stream.runCollect
    )
    yield* Console.log(`  followed: ${Chunk.toArray(states).join(" -> ")}`)
    summary.push(`deployment ${Chunk.last(states).pipe(Option.getOrElse(() => "unknown"))}`)

    yield* step("Invoke the app and follow the invocation to completion (Invocations.create / follow)")
    const created = yield* Invocations.create({
      app_name: "agent-app",
      action_name: "summarize",
      version: "1.0.0",
      payload: JSON.stringify({ url: "https://example.com" }),
      async: true
    })
    // an asynchronous invocation is answered 202 Accepted, queued
    const invocation = created.value
    yield* Console.log(`  invocation ${invocation.id}: ${created._tag} (${invocation.status})`)
    const invocationStates = yield* (yield* Invocations.follow({ id: invocation.id })).pipe(
      Stream.filterMap((event) =>
        KernelEvents.isKnownEvent(event) && event.event === "invocation_state"
          ? Option.some(event.invocation.status)
          : Option.none()
      ),
      Stream.takeUntil((status) => status === "succeeded" || status === "failed"),
      Stream.runCollect
    )
    const final = yield* Invocations.retrieve({ id: invocation.id })
    yield* Console.log(`  followed: ${Chunk.toArray(invocationStates).join(" -> ")}; retrieved: ${final.status}`)
    summary.push(`invocation ${final.status}`)

    yield* step("List every browser, two a page (Browsers.listAll pages on demand)")
    for (let i = 0; i < 4; i++) yield* Browsers.create({ headless: true })
    const all = yield* Stream.runCollect(Browsers.listAll({ limit: 2 }))
    const listed = Chunk.toArray(all)
    yield* Console.log(`  ${listed.length} browsers in ${Math.ceil(listed.length / 2)} pages of 2: ${
      listed.map((b) => b.session_id).join(", ")
    }`)
    summary.push(`${listed.length} browsers listed`)
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
  const day = yield* agentDay(7, served).pipe(Effect.provide(KernelLive))
  yield* Console.log(`\ndemo ok: ${summary.join(", ")}`)
  yield* Console.log(`agent's day ok: ${day.join(", ")}`)
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
