// Load driver for test/load/simulator-bin.test.ts, run in its own process:
//   node bin-driver.mjs <url> <token> <seconds>
// Sustained keep-alive load (well-behaved clients) alongside hostile ones: 8 MiB bodies with no
// token, over-limit bodies with a token, slowloris headers, and replay readers that never read.
// Prints one JSON line: the well-behaved clients' count, errors and latencies (ms).
import * as http from "node:http"
import * as net from "node:net"

const [url, token, secondsText] = process.argv.slice(2)
const target = new URL(url)
const seconds = Number(secondsText)
const until = Date.now() + seconds * 1000
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })
const latencies = []
let errors = 0
let hostile = 0

const request = (options, body) =>
  new Promise((resolve) => {
    const started = performance.now()
    const req = http.request({ host: target.hostname, port: target.port, ...options }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - started }))
      res.on("error", () => resolve({ status: 0, ms: performance.now() - started }))
    })
    req.on("error", () => resolve({ status: 0, ms: performance.now() - started }))
    req.end(body)
  })

const wellBehaved = async () => {
  const calls = [
    { method: "POST", path: "/browsers/browser_1/computer/get_mouse_position" },
    { method: "GET", path: "/browser_pools" },
    { method: "DELETE", path: "/deployments/dep_stopped" }
  ]
  let i = 0
  while (Date.now() < until) {
    const call = calls[i++ % calls.length]
    const result = await request({ ...call, agent, headers: { authorization: `Bearer ${token}` } })
    if (result.status < 200 || result.status >= 300) errors++
    latencies.push(result.ms)
  }
}

const bigBody = (authorized) =>
  new Promise((resolve) => {
    const req = http.request({
      host: target.hostname,
      port: target.port,
      method: "POST",
      path: authorized ? "/browsers/browser_1/computer/cursor" : "/nope",
      agent: false,
      headers: {
        "content-type": "application/json",
        "transfer-encoding": "chunked",
        ...(authorized ? { authorization: `Bearer ${token}` } : {})
      }
    }, (res) => {
      res.resume()
      res.on("end", resolve)
      res.on("error", resolve)
    })
    req.on("error", resolve)
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    let left = 8 * 1024 * 1024
    const pump = () => {
      while (left > 0 && !req.destroyed) {
        left -= chunk.length
        if (!req.write(chunk)) return void req.once("drain", pump)
      }
      if (!req.destroyed) req.end()
    }
    pump()
    setTimeout(() => {
      req.destroy()
      resolve()
    }, 5000).unref()
  })

const hostileBodies = async () => {
  while (Date.now() < until) {
    await Promise.all([bigBody(false), bigBody(true)])
    hostile += 2
  }
}

// slowloris: one header byte every 200 ms, over many connections
const slowClients = () => {
  const sockets = []
  for (let i = 0; i < 50; i++) {
    const socket = net.connect(Number(target.port), target.hostname)
    socket.on("error", () => {})
    const text = `GET /browser_pools HTTP/1.1\r\nHost: x\r\nX-Slow: ${"a".repeat(1000)}`
    let at = 0
    const timer = setInterval(() => {
      if (at >= text.length || socket.destroyed) return clearInterval(timer)
      socket.write(text[at++])
    }, 200)
    sockets.push({ socket, timer })
  }
  return sockets
}

// replay readers that never read: the server must not buffer the replay for them
const stuckReaders = async () => {
  const stuck = []
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => {
      const req = http.request({
        host: target.hostname,
        port: target.port,
        path: "/browsers/browser_1/replays/replay_1",
        agent: false,
        headers: { authorization: `Bearer ${token}` }
      }, (res) => {
        if (res.statusCode === 200) res.pause()
        else res.resume()
        stuck.push(req)
        resolve()
      })
      req.on("error", resolve)
      req.end()
    })
  }
  return stuck
}

const slow = slowClients()
const stuck = await stuckReaders()
await Promise.all([...Array.from({ length: 16 }, wellBehaved), hostileBodies()])
for (const { socket, timer } of slow) {
  clearInterval(timer)
  socket.destroy()
}
for (const req of stuck) req.destroy()
agent.destroy()
latencies.sort((a, b) => a - b)
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
process.stdout.write(
  JSON.stringify({ count: latencies.length, errors, hostile, p50: at(0.5), p99: at(0.99), max: at(1) }) + "\n"
)
