// A minimal node:http server answering the five routes, run in its own process so the server is
// not what the benchmark measures. Prints `port N` once listening.
//   GET  /browser_pools                          -> JSON array of POOLS pools (env, default 10000)
//   GET  /browsers/:id                           -> a browser (bench/fixtures.mjs browserJson)
//   GET  /browsers                               -> a page of 5 browsers (X-Has-More: false, X-Next-Offset: 5)
//   POST /browsers/:id/computer/click_mouse      -> 200, no content
//   POST /browsers/:id/computer/get_mouse_position -> {"x":640,"y":360}
//   POST /browsers/:id/computer/cursor           -> {"ok":true}
//   DELETE /deployments/:id                      -> 204
//   GET  /browsers/:id/replays/:bytes            -> :bytes bytes of video/mp4 (an `ftyp` box, then one `mdat`
//                                                   box to the end: a structurally complete mp4, as the
//                                                   SDK checks), streamed with back-pressure
// With --exit-with-parent, the server exits when its parent goes away (its stdin, a pipe from the
// parent, ends); on SIGTERM it exits at once
// (closing every connection at once): a benchmark killed half-way never leaves it behind, holding
// the terminal's output open.
import http from "node:http"
import { browserJson, poolsJson } from "./fixtures.mjs"
import { streamsRoute } from "./streams-routes.mjs"

const poolCount = Number(process.env.POOLS ?? 10000)
const pools = poolsJson(poolCount)
const browser = Buffer.from(browserJson("b1"))
const page = Buffer.from(`[${Array.from({ length: 5 }, (_, i) => browserJson(`b${i}`)).join(",")}]`)
const position = Buffer.from("{\"x\":640,\"y\":360}")
const ok = Buffer.from("{\"ok\":true}")
const chunk = Buffer.alloc(64 * 1024, 7)
const ftyp = Buffer.from("000000186674797069736f6d0000020069736f6d6d703431", "hex")
/** The first bytes of a replay of `size` bytes: `ftyp`, then the `mdat` box header (64-bit size past 4 GiB). */
const mp4Head = (size) => {
  const payload = size - ftyp.length
  if (payload < 8) return Buffer.alloc(0)
  if (payload <= 0xffffffff) {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(payload, 0)
    head.write("mdat", 4, "latin1")
    return Buffer.concat([ftyp, head])
  }
  const head = Buffer.alloc(16)
  head.writeUInt32BE(1, 0)
  head.write("mdat", 4, "latin1")
  head.writeBigUInt64BE(BigInt(payload), 8)
  return Buffer.concat([ftyp, head])
}

const json = (res, body) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
  res.end(body)
}

const server = http.createServer((req, res) => {
  // the events-and-files rows (issue 19): event streams, uploads and downloads
  if (streamsRoute(req, res)) return
  req.resume()
  req.on("end", () => {
    const path = req.url.split("?")[0]
    if (path === "/browser_pools") return json(res, Buffer.from(pools))
    if (path.endsWith("/computer/get_mouse_position")) return json(res, position)
    if (req.method === "GET" && /^\/browsers\/[^/]+$/.test(path)) return json(res, browser)
    if (req.method === "GET" && path === "/browsers") {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": page.length,
        "x-has-more": "false",
        "x-next-offset": "5"
      })
      return res.end(page)
    }
    if (path.endsWith("/computer/click_mouse")) {
      res.writeHead(200, { "content-length": 0 })
      return res.end()
    }
    if (path.endsWith("/computer/cursor")) return json(res, ok)
    if (path.startsWith("/deployments/")) {
      res.writeHead(204)
      return res.end()
    }
    const replay = /^\/browsers\/[^/]+\/replays\/(\d+)$/.exec(path)
    if (replay) {
      const size = Number(replay[1])
      res.writeHead(200, { "content-type": "video/mp4", "content-length": size })
      const head = mp4Head(size)
      res.write(head)
      let sent = head.length
      const pump = () => {
        while (sent < size) {
          const n = Math.min(chunk.length, size - sent)
          sent += n
          if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return res.once("drain", pump)
        }
        res.end()
      }
      res.on("close", () => {
        sent = size
      })
      return pump()
    }
    res.writeHead(404, { "content-type": "application/json" })
    res.end("{\"code\":\"not_found\",\"message\":\"no route\"}")
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => console.log(`port ${server.address().port}`))
const stop = () => {
  server.close()
  server.closeAllConnections()
  process.exit(0)
}
process.on("SIGTERM", stop)
if (process.argv.includes("--exit-with-parent")) {
  process.stdin.on("end", stop)
  process.stdin.on("close", stop)
  process.stdin.resume()
}
