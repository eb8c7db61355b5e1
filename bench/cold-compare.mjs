// The cold rows of two builds, interleaved in fresh processes (bench/cold.mjs over each build's dist/esm,
// one after the other, for each mode, for N rounds), with the medians and the ratio new / old of this one
// run, in wall-clock ms and in CPU ms (process.cpuUsage: steadier than the wall clock when other work shares
// the cores). Answers the first call from a local server that returns `{"x":1,"y":2}` to everything.
// Usage: npm run build && node bench/cold-compare.mjs OLD_DIST NEW_DIST [ROUNDS]   (ROUNDS: 9)
//   e.g. an earlier revision built into .tmp: node bench/cold-compare.mjs .tmp/main-dist dist/esm 11
import { execFile } from "node:child_process"
import { createServer } from "node:http"
import * as path from "node:path"

const [oldDist, newDist, rounds = "9"] = process.argv.slice(2)
if (oldDist === undefined || newDist === undefined) {
  throw new Error("usage: cold-compare.mjs OLD_DIST NEW_DIST [ROUNDS]")
}
const cold = path.join(import.meta.dirname, "cold.mjs")
const server = createServer((_, res) => {
  res.setHeader("content-type", "application/json")
  res.end(`{"x":1,"y":2}`)
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${server.address().port}`
const run = (mode, dist) =>
  new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [cold, mode, base],
      { encoding: "utf8", env: { ...process.env, EFFECT_KERNEL_DIST: path.resolve(dist) } },
      (error, out, err) => error ? reject(new Error(err)) : resolve(JSON.parse(out))
    )
  )
const modes = ["sdk", "area:Browsers", "area:BrowserPools", "area:Computer", "area:Browsers,Computer", "layer"]
const builds = [["old", oldDist], ["new", newDist]]
const rows = new Map()
for (let round = 0; round < Number(rounds); round++) {
  for (const mode of modes) {
    for (const [name, dist] of builds) {
      for (const [key, value] of Object.entries(await run(mode, dist))) {
        const row = `${mode} ${key}`
        if (!rows.has(row)) rows.set(row, { old: [], new: [] })
        rows.get(row)[name].push(value)
      }
    }
  }
}
server.close()
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
console.log(`medians of ${rounds} interleaved fresh processes each: old ${oldDist}, new ${newDist}`)
for (const [row, { new: after, old: before }] of rows) {
  const [o, n] = [median(before), median(after)]
  console.log(
    `  ${row.padEnd(46)} old ${o.toFixed(2).padStart(8)}  new ${n.toFixed(2).padStart(8)}  new/old ${
      (n / o).toFixed(2)
    }`
  )
}
