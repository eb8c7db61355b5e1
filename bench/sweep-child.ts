/**
 * The per-call sweep (bench/sweep.ts) in a process of its own, as a user's program runs the SDK: one
 * transport (`KernelTransport`). Run in the benchmark's own process, after the rows that call the SDK
 * on three transports and the official client, the SDK's shared call path had met every transport's
 * classes: the same build measured 0.60–0.75 there and 0.72–1.0 in a fresh process.
 *
 * `tsx bench/sweep-child.ts <calls> <inFlight> <rounds>` prints the sweep's result as JSON, on its
 * last line.
 */
import { runSweep } from "./sweep.js"

const [calls, inFlight, rounds] = process.argv.slice(2).map(Number)
const result = await runSweep({ calls: calls!, inFlight: inFlight!, rounds: rounds! })
process.stdout.write(`${JSON.stringify(result)}\n`)
process.exit(0)
