// The 10,000-pool decode: JSON.parse alone vs JSON.parse + the BrowserPoolList decoder the SDK uses
// (onExcessProperty "ignore"), medians of 7 rounds in one process. Usage: tsx scripts/perf-pools.ts [pools=10000]
import { Schema } from "effect"
import { poolsJson } from "../bench/fixtures.mjs"
import { BrowserPools } from "../src/index.js"

const count = Number(process.argv[2] ?? 10_000)
const text = poolsJson(count)
const decode = Schema.decodeUnknownEither(BrowserPools.BrowserPoolList, { onExcessProperty: "ignore" })
const time = (f: () => unknown) => {
  const start = performance.now()
  f()
  return performance.now() - start
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const parse: Array<number> = []
const full: Array<number> = []
for (let i = 0; i < 9; i++) {
  parse.push(time(() => JSON.parse(text)))
  full.push(time(() => decode(JSON.parse(text))))
}
const p = median(parse)
const f = median(full)
console.log(
  JSON.stringify({ pools: count, parseMs: +p.toFixed(1), parseAndDecodeMs: +f.toFixed(1), ratio: +(f / p).toFixed(2) })
)
