/**
 * The server of the per-operation sweep (bench/sweep.ts), in its own process so that it is not what
 * the sweep measures: every operation of the table answered with its main answer (the simulator's
 * `engine.reply`, filled to its schema: a page of 3 items with `X-Has-More: false`), made once per
 * operation. It records the first request of each operation (`GET /__captured`: method, URL, headers
 * and body as the SDK sent them), which raw undici then sends as is. Prints `port N` once listening;
 * exits when its parent goes away (its stdin ends).
 */
import * as Http from "node:http"
import type { Operation } from "../src/internal/definition.js"
import { operations } from "../src/internal/generated/table.js"
import * as engine from "../src/testing/internal/engine.js"

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | number>
  readonly body: Buffer
}

interface Captured {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  /** base64 */
  readonly body: string
}

// a path without parameters first: `/extensions/from_chrome_store` is not `/extensions/{id_or_name}`
const routes = operations.map((operation: Operation) => ({
  operation,
  parameters: (operation.path.match(/\{/g) ?? []).length,
  pattern: new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, "[^/]+")}$`)
})).sort((a, b) => a.parameters - b.parameters)

const answerOf = (operation: Operation): Answer => {
  const [status, answer] = engine.mainAnswer(operation)
  const reply = engine.reply(operation, undefined)
  const headers: Record<string, string | number> = {}
  let body = Buffer.alloc(0)
  switch (reply._tag) {
    case "Json": {
      const value = answer.kind === "page" ? [0, 1, 2].map(() => engine.shape(operation, status, {})) : reply.value
      body = Buffer.from(JSON.stringify(value))
      headers["content-type"] = "application/json"
      break
    }
    case "Bytes":
      body = Buffer.concat(reply.bytes instanceof Uint8Array ? [reply.bytes] : [...reply.bytes])
      headers["content-type"] = reply.contentType
      break
    case "Events":
      body = Buffer.from(reply.text)
      headers["content-type"] = "text/event-stream"
      break
  }
  if (answer.kind === "page") {
    headers["x-has-more"] = "false"
    headers["x-next-offset"] = "3"
  }
  headers["content-length"] = body.length
  return { status: reply.status, headers, body }
}

const answers = new Map<string, Answer>()
const captured: Record<string, Captured> = {}

const server = Http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const url = req.url ?? "/"
    if (url === "/__captured") {
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(JSON.stringify(captured))
    }
    const path = url.split("?")[0]!
    const route = routes.find((route) => route.operation.method === req.method && route.pattern.test(path))
    if (route === undefined) {
      res.writeHead(404, { "content-type": "application/json" })
      return res.end("{\"code\":\"not_found\",\"message\":\"no such route\"}")
    }
    const name = route.operation.name
    if (captured[name] === undefined) {
      const headers: Record<string, string> = {}
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && !["host", "content-length", "connection"].includes(key)) headers[key] = value
      }
      captured[name] = { method: req.method ?? "GET", url, headers, body: Buffer.concat(chunks).toString("base64") }
    }
    let answer = answers.get(name)
    if (answer === undefined) {
      answer = answerOf(route.operation)
      answers.set(name, answer)
    }
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(`port ${typeof address === "object" && address !== null ? address.port : 0}`)
})
process.stdin.on("end", () => process.exit(0))
process.stdin.resume()
