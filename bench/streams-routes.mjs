// The routes of the events-and-files benchmark (issue 19), served by bench/server.mjs. The size of
// each answer is a number in the request (so one server serves every size):
//   GET  /browsers/:id/logs/stream?path=N            -> N `log` events (text/event-stream), written as
//                                                      fast as the socket takes them, then the end
//   PUT  /browsers/:id/fs/write_file, POST /browsers/:id/fs/upload
//                                                   -> 201 once the body is read (discarded, counted)
//   GET  /_bench/received                           -> {"bytes":N}: the size of the last upload's body
//   GET  /profiles/N/download, /extensions/N, /extensions/from_chrome_store?url=N,
//        /browsers/:id/fs/read_file?path=/N, /browsers/:id/fs/download_dir_zip?path=/N
//   POST /browsers/N/computer/screenshot            -> N bytes (octet-stream, zip or png), with back-pressure
// (the replay download is bench/server.mjs's own route).

const chunk = Buffer.alloc(64 * 1024, 7)
const sseEvent =
  "event: log\ndata: {\"event\":\"log\",\"timestamp\":\"2026-11-24T10:00:00Z\",\"message\":\"a line\"}\n\n"
/** About 64 KiB of whole events, written again and again. */
const eventsPerBlock = Math.floor(64 * 1024 / sseEvent.length)
const sseBlock = Buffer.from(sseEvent.repeat(eventsPerBlock))
let lastUpload = 0

/** Writes `count` units of `block` (each `per` units) and the rest from `tail(n)`, with back-pressure. */
const pump = (res, count, per, block, tail) => {
  let sent = 0
  res.on("close", () => {
    sent = count
  })
  const next = () => {
    while (sent < count) {
      const n = Math.min(per, count - sent)
      sent += n
      if (!res.write(n === per ? block : tail(n))) return res.once("drain", next)
    }
    res.end()
  }
  next()
}

const downloads = [
  [/^\/profiles\/(\d+)\/download$/, "path", "application/octet-stream"],
  [/^\/extensions\/(\d+)$/, "path", "application/octet-stream"],
  [/^\/extensions\/from_chrome_store$/, "url", "application/octet-stream"],
  [/^\/browsers\/[^/]+\/fs\/read_file$/, "path", "application/octet-stream"],
  [/^\/browsers\/[^/]+\/fs\/download_dir_zip$/, "path", "application/zip"],
  [/^\/browsers\/(\d+)\/computer\/screenshot$/, "path", "image/png"]
]

/** Answers a request of the streams benchmark; `false` when the route is not one of them. */
export const streamsRoute = (req, res) => {
  const url = new URL(req.url, "http://bench")
  const path = url.pathname
  if (/^\/browsers\/[^/]+\/fs\/(write_file|upload)$/.test(path)) {
    let bytes = 0
    req.on("data", (data) => {
      bytes += data.length
    })
    req.on("end", () => {
      lastUpload = bytes
      res.writeHead(201, { "content-length": 0 })
      res.end()
    })
    return true
  }
  if (path === "/_bench/received") {
    req.resume()
    const body = JSON.stringify({ bytes: lastUpload })
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
    res.end(body)
    return true
  }
  if (/^\/browsers\/[^/]+\/logs\/stream$/.test(path)) {
    req.resume()
    const count = Number(url.searchParams.get("path"))
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    pump(res, count, eventsPerBlock, sseBlock, (n) => sseBlock.subarray(0, n * sseEvent.length))
    return true
  }
  for (const [pattern, param, contentType] of downloads) {
    const match = pattern.exec(path)
    if (match === null) continue
    req.resume()
    // a file's path is absolute (`/N`, the API's pattern for `path`): its size is the number
    const size = Number(match[1] ?? url.searchParams.get(param)?.replace(/^\//, ""))
    res.writeHead(200, { "content-type": contentType, "content-length": size })
    pump(res, size, chunk.length, chunk, (n) => chunk.subarray(0, n))
    return true
  }
  return false
}
