#!/usr/bin/env node
/**
 * `effect-kernel-simulator`: serves the Kernel simulator over HTTP.
 *
 *   effect-kernel-simulator [--port 4010] [--host 127.0.0.1] [--seed seed.json]
 *
 * Prints one line `listening on http://HOST:PORT` (and the demo token) once ready; stops on
 * SIGINT/SIGTERM.
 *
 * @since 0.1.0
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { parseArgs } from "node:util"
import * as KernelSimulator from "../KernelSimulator.js"

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "4010" },
    host: { type: "string", default: "127.0.0.1" },
    seed: { type: "string" },
    help: { type: "boolean", short: "h", default: false }
  }
})

if (values.help) {
  process.stdout.write("usage: effect-kernel-simulator [--port 4010] [--host 127.0.0.1] [--seed seed.json]\n")
  process.exit(0)
}

const port = Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`invalid --port ${values.port}\n`)
  process.exit(2)
}

const program = Effect.gen(function*() {
  const seed: KernelSimulator.Seed = values.seed === undefined
    ? KernelSimulator.defaultSeed
    : yield* Effect.try({
      try: () => JSON.parse(fs.readFileSync(values.seed!, "utf8")),
      catch: (cause) => new Error(`cannot read seed ${values.seed}: ${String(cause)}`)
    })
  const served = yield* KernelSimulator.serve({ port, host: values.host, seed })
  yield* Console.log(`listening on ${served.url}`)
  if (values.seed === undefined) yield* Console.log(`token ${KernelSimulator.defaultToken}`)
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(program))
