// One streaming measurement in a fresh process, so its RSS is the client's own.
// Usage: stream-child.ts CLIENT_INDEX BYTES BASE_URL  -> prints JSON
import { makeClients } from "./clients.js"

const [index, bytes, base] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]!]
const client = makeClients(base)[index]!
const stream = client.stream
if (stream === undefined) throw new Error(`${client.name} does not stream`)
// RSS is measured from before the warm-up: the growth includes everything streaming ever cost
const before = process.memoryUsage()
// what the allocator holds (RSS), and what is alive or awaiting collection (JS heap + buffers)
const inUse = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external
let peak = before.rss
let peakInUse = inUse(before)
const sample = () => {
  const m = process.memoryUsage()
  peak = Math.max(peak, m.rss)
  peakInUse = Math.max(peakInUse, inUse(m))
}
const sampler = setInterval(sample, 5)
// warm-up: the code paths are compiled and the connection is open, for every client alike, so the
// figure is steady-state throughput (a first cold 256 MiB run measures the JIT as much as the client)
for (let i = 0; i < 2; i++) await stream(64 * 1024 * 1024)
const started = performance.now()
const received = await stream(bytes)
const seconds = (performance.now() - started) / 1000
clearInterval(sampler)
sample()
await client.close()
process.stdout.write(
  JSON.stringify({
    received,
    seconds,
    rssGrowthMiB: (peak - before.rss) / 1024 / 1024,
    inUseGrowthMiB: (peakInUse - inUse(before)) / 1024 / 1024
  }) + "\n"
)
process.exit(0)
