// The 10,000-pool decode: JSON.parse alone vs JSON.parse + the BrowserPoolList decoder the SDK uses
// (onExcessProperty "ignore"), medians of 7 rounds in one process. Usage: tsx scripts/perf-pools.ts [pools=10000]
import { Schema } from "effect"
import { BrowserPools } from "../src/index.js"

const count = Number(process.argv[2] ?? 10_000)
const text = JSON.stringify(Array.from({ length: count }, (_, i) => ({
  id: `pool_${i}`,
  name: `pool-${i}`,
  available_count: i % 10,
  acquired_count: i % 3,
  created_at: "2026-11-01T09:00:00Z",
  browser_pool_config: {
    size: 10,
    name: `pool-${i}`,
    fill_rate_per_minute: 10,
    timeout_seconds: 600,
    stealth: i % 2 === 0,
    headless: true,
    viewport: { width: 1920, height: 1080, refresh_rate: 25 },
    kiosk_mode: false,
    chrome_policy: { HomepageLocation: "https://example.com" }
  }
})))
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
