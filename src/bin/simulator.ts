#!/usr/bin/env node
/**
 * `effect-kernel-simulator`: serves the Kernel simulator over HTTP. See `--help`.
 *
 * Prints `listening on http://HOST:PORT` (the port it actually chose with `--port 0`), its pid, the
 * organizations' tokens and the admin token once ready; stops with exit code 0 on SIGINT, SIGTERM or
 * SIGHUP, and, when started by `npm exec` / `npx`, once its parent is gone. Every startup error is
 * one line on stderr and exit code 2.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { parseArgs } from "node:util"
import * as KernelSimulator from "../testing/KernelSimulator.js"

const name = "effect-kernel-simulator"

const help = `usage: ${name} [options]

Serves the Kernel simulator (every operation of the Kernel API, stateful, with its documented
statuses and Error bodies) over HTTP, plus a control plane under /_simulator/ guarded by its own
token.

Options:
  --port <n>               port to listen on; 0 picks a free one (default 4010)
  --host <address>         address to bind (default 127.0.0.1)
  --seed <file.json>       the world to serve, as JSON (default: the built-in demo seed)
  --admin-token <token>    bearer token of the control plane (default: random, printed at start)
  --max-body-bytes <n>     JSON request bodies over this are answered 413 (default 65536)
  --max-upload-bytes <n>   upload bodies (multipart or raw bytes) over this are answered 413
                           (default ${KernelSimulator.defaultMaxUploadBytes}, 16 MiB)
  --max-stored-bytes <n>   bytes of files and uploads the simulator stores; a write beyond is 400
                           (default ${KernelSimulator.defaultMaxStoredBytes}, 256 MiB)
  --request-log-size <n>   requests kept in the log, oldest dropped first (default 1000)
  -h, --help               this text

Tokens of the default seed:
  ${KernelSimulator.defaultToken}   organization org_demo (paid): browser browser_1 (replay replay_1,
                           4 MiB, 202 twice first), pools pool_small, pool_stealth, pool_kiosk,
                           deployments dep_running (serving app my-app 1.0.0), dep_stopped,
                           dep_failed, dep_queued, dep_in_progress
  sk_sim_free              organization org_free (free plan: 403 on replays and pools)

Seed format (validated; an error names the field, e.g. organizations[0].browsers[0].mouse.x):
  {
    "organizations": [{
      "id": "org_test", "token": "sk_test", "plan": "paid",
      "browsers": [{ "id": "b1", "mouse": { "x": 10, "y": 20 }, "cursorHidden": false,
                     "replays": [{ "id": "r1", "size": 100000, "pendingPolls": 2, "retryAfter": 1,
                                   "readyAfter": "5 seconds" }] }],
      "pools": [{ "id": "p1", "name": "small", "available_count": 2, "acquired_count": 1,
                  "created_at": "2026-11-01T09:00:00Z", "browser_pool_config": { "size": 3 } }],
      "deployments": [{ "id": "d1", "state": "running", "app_name": "my-app", "version": "1.0.0" }]
    }]
  }
  states: queued, in_progress, running, stopped, failed (a deployment's app_name / version: the
  app POST /invocations may invoke; any other is 404); replay sizes >= ${KernelSimulator.minimumReplaySize} bytes (mp4 boxes)

Control plane (Authorization: Bearer <admin token>):
  POST   /_simulator/faults     inject a fault on any operation by name, e.g. {"route":"createBrowser","status":429,"retryAfter":2,"times":1}
  DELETE /_simulator/faults     clear the faults
  POST   /_simulator/reset      back to the seed, or to the seed in the JSON body
  GET    /_simulator/requests   the request log (tokens redacted)
  DELETE /_simulator/requests   clear the log
  GET    /_simulator/evictions  resources dropped to keep collections under their limit
  GET    /_simulator/operations the operations a fault may name, with their method and path

Example:
  ${name} --port 4010 --admin-token admin_secret
  curl -H "Authorization: Bearer ${KernelSimulator.defaultToken}" http://127.0.0.1:4010/browser_pools

Stopping:
  Ctrl-C in its terminal, or kill the pid it prints at start ("pid 12345 ...": kill 12345).
  SIGINT, SIGTERM and SIGHUP close the server and exit with code 0. Started by npm exec / npx,
  it also stops once npm is gone: after \`npx ${name} &\`, \`kill $!\` kills npm,
  not the simulator, which notices within a second and exits.

Exit codes: 0 when stopped; 2 on a startup error (one line on stderr).
`

/** One line on stderr, exit code 2. */
const fail = (message: string): never => {
  process.stderr.write(`${name}: ${message.replace(/\s+/g, " ").slice(0, 1000)}\n`)
  process.exit(2)
}

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: "string", default: "4010" },
        host: { type: "string", default: "127.0.0.1" },
        seed: { type: "string" },
        "admin-token": { type: "string" },
        "max-body-bytes": { type: "string" },
        "max-upload-bytes": { type: "string" },
        "max-stored-bytes": { type: "string" },
        "request-log-size": { type: "string" },
        help: { type: "boolean", short: "h", default: false }
      },
      strict: true,
      allowPositionals: false
    })
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0]! : String(error)
    // a value that starts with a dash (`--port -1`) is taken for an option: name it and say how to give it
    const flag = /^Option '(--[\w-]+)' argument is ambiguous/.exec(message)?.[1]
    const value = flag === undefined ? undefined : process.argv[process.argv.indexOf(flag) + 1]
    return value === undefined
      ? fail(`${message} (see --help)`)
      : value.startsWith("--")
      // the next argument is another flag: this one's value is missing
      ? fail(`${flag} needs a value, and ${value} is a flag (see --help)`)
      : fail(
        `${flag} ${value}: a value that starts with a dash is read as an option; write ${flag}=${value} (see --help)`
      )
  }
})()
const values = parsed.values

if (values.help) {
  process.stdout.write(help)
  process.exit(0)
}

const integer = (flag: string, text: string | undefined, min: number, max: number): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  return /^\d+$/.test(text) && n >= min && n <= max
    ? n
    : fail(`invalid --${flag} ${text}: an integer from ${min} to ${max}`)
}

const port = integer("port", values.port, 0, 65535)!
const maxBodyBytes = integer("max-body-bytes", values["max-body-bytes"], 1, 1024 * 1024 * 1024)
const maxUploadBytes = integer("max-upload-bytes", values["max-upload-bytes"], 1, 1024 * 1024 * 1024)
const maxStoredBytes = integer("max-stored-bytes", values["max-stored-bytes"], 0, Number.MAX_SAFE_INTEGER)
const requestLogSize = integer("request-log-size", values["request-log-size"], 0, 1_000_000)

const readSeed = (path: string): unknown => {
  let text: string
  try {
    text = fs.readFileSync(path, "utf8")
  } catch (error) {
    const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : String(error)
    return fail(`cannot read seed file ${path}: ${code}`)
  }
  try {
    // a byte order mark (editors on Windows write one) is not part of the JSON
    return JSON.parse(text.replace(/^\uFEFF/, ""))
  } catch (error) {
    return fail(`seed file ${path} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const seedInput = values.seed === undefined ? KernelSimulator.defaultSeed : readSeed(values.seed)

const describe = (cause: unknown): string => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  if (code === "EADDRINUSE") {
    return "address already in use (EADDRINUSE): another simulator may be running there (stop it, or pick another --port)"
  }
  if (code === "EACCES") return "permission denied (EACCES)"
  if (code === "EADDRNOTAVAIL") return "address not available (EADDRNOTAVAIL)"
  return cause instanceof Error ? cause.message : String(cause)
}

// `npm exec` (and `npx`) runs the bin under a shell; killing npm (`kill $!` after `npx ... &`)
// kills that shell, not the bin, which would go on holding the port. Started so, the bin stops
// once its parent is gone (it is then adopted by another process). Started directly, it does not:
// `nohup effect-kernel-simulator &` outlives its shell as asked. npm's variables are inherited by
// everything below it: the bin must be the command npm exec ran (`npm_lifecycle_script`), not a
// process that command started (`npx zx dev.mjs` starting the bin in the background, then ending).
const watchesParent = process.env.npm_command === "exec" &&
  /effect-kernel-simulator/.test(process.env.npm_lifecycle_script ?? "")

/**
 * Listens, for the life of the scope, for SIGHUP (a closed terminal) and, when started by npm exec,
 * for the parent's end; the effect it returns succeeds on either. It listens from the start, so a
 * signal sent the moment the bin says it is ready is not missed.
 */
const stopRequests: Effect.Effect<Effect.Effect<void>, never, Scope.Scope> = Effect.gen(function*() {
  const requested = yield* Deferred.make<void>()
  const stop = () => Deferred.unsafeDone(requested, Exit.void)
  const parent = process.ppid
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      process.on("SIGHUP", stop)
      return watchesParent ? setInterval(() => process.ppid !== parent && stop(), 500) : undefined
    }),
    (timer) =>
      Effect.sync(() => {
        process.off("SIGHUP", stop)
        clearInterval(timer)
      })
  )
  return Deferred.await(requested)
})

const program = Effect.gen(function*() {
  const stopRequested = yield* stopRequests
  const seed = yield* KernelSimulator.decodeSeed(seedInput).pipe(
    Effect.mapError((error) => `seed ${values.seed ?? "(default)"}: ${error.message}`)
  )
  const served = yield* KernelSimulator.serve({
    port,
    host: values.host,
    seed,
    adminToken: values["admin-token"],
    maxBodyBytes,
    maxUploadBytes,
    maxStoredBytes,
    requestLogSize
  }).pipe(
    Effect.mapError((error) =>
      error._tag === "SeedError"
        ? error.message
        : `cannot listen on ${values.host}:${port}: ${describe(error.cause)}`
    )
  )
  yield* Console.log(`listening on ${served.url}`)
  yield* Console.log(`pid ${process.pid} (stop with Ctrl-C or kill ${process.pid})`)
  for (const org of (seed.organizations ?? []).slice(0, 20)) {
    yield* Console.log(`token ${org.token} (organization ${org.id}${org.plan === "free" ? ", free plan" : ""})`)
  }
  yield* Console.log(`admin token ${Redacted.value(served.adminToken)} (control plane ${served.url}/_simulator/)`)
  // SIGINT and SIGTERM interrupt the program (NodeRuntime.runMain); this ends it on the rest
  yield* stopRequested
}).pipe(
  Effect.catchAllCause((cause) =>
    Cause.isInterruptedOnly(cause) ? Effect.void : Effect.sync(() =>
      fail(
        Cause.failureOption(cause).pipe((failure) => failure._tag === "Some" ? failure.value : Cause.pretty(cause))
      )
    )
  )
)

// `@effect/platform-node` is an optional peer dependency of the package (a program that only uses the
// SDK may not have it): loaded here, so that its absence is one line, not a stack trace
const { NodeRuntime } = await import("@effect/platform-node").catch((cause: unknown) =>
  fail(
    cause instanceof Error && "code" in cause && cause.code === "ERR_MODULE_NOT_FOUND"
      ? "it needs @effect/platform-node, an optional peer dependency of effect-kernel: " +
        "npm install @effect/platform-node@^0.108 (or npx -p effect-kernel -p @effect/platform-node@^0.108 " +
        `${name})`
      : `cannot load @effect/platform-node: ${describe(cause)}`
  )
)

NodeRuntime.runMain(Effect.scoped(program), { disableErrorReporting: true })
