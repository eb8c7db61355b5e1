/**
 * The independent harness of issues 19 and 20, played from outside: what a user's program sees
 * through the public API, against the in-memory simulator and against hostile loopback servers on
 * every transport. Each case here is either a defect found by the harness (with the test that
 * failed before its fix) or a hostile case the other files did not cover.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import {
  ApiKeys,
  BrowserPools,
  Browsers,
  Deployments,
  Filesystem,
  Invocations,
  Kernel,
  KernelFiles,
  Logs,
  Profiles,
  Proxies,
  Telemetry
} from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"
import * as Fs from "node:fs"
import type * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { transports } from "./utils/transports.js"

const tagOf = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "Success"
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) ? failure.value._tag : `defect: ${Cause.pretty(exit.cause)}`
}

// ---------------------------------------------------------------------------------------------
// issue 20: the simulator checks the references a browser or a pool names
// ---------------------------------------------------------------------------------------------

const simulated = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))

describe("harness1920: the simulator's references", () => {
  // the document: profiles "must be created beforehand"; a proxy "must reference a proxy belonging
  // to the caller's org" (the service's createBrowser / createBrowserPool document 400, not 404)
  const unresolved: ReadonlyArray<{
    readonly name: string
    readonly call: Effect.Effect<unknown, { readonly _tag: string }, Layer.Layer.Success<typeof Kernel.layer>>
  }> = [
    { name: "a browser with a profile name nobody created", call: Browsers.create({ profile: { name: "nope" } }) },
    { name: "a browser with a profile id nobody created", call: Browsers.create({ profile: { id: "nope" } }) },
    { name: "a browser with an unknown proxy", call: Browsers.create({ proxy_id: "nope" }) },
    { name: "a browser with an unknown extension", call: Browsers.create({ extensions: [{ name: "nope" }] }) },
    { name: "a pool with an unknown proxy", call: BrowserPools.create({ size: 1, proxy_id: "nope" }) },
    { name: "a pool with an unknown profile", call: BrowserPools.create({ size: 1, profile: { name: "nope" } }) }
  ]
  for (const { call, name } of unresolved) {
    it.effect(`${name} is a BadRequest`, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(call)
        expect(tagOf(exit)).toBe("BadRequest")
      }).pipe(Effect.provide(simulated)))
  }

  it.effect("references that exist are accepted (and a deleted profile no longer is)", () =>
    Effect.gen(function*() {
      const profile = yield* Profiles.create({ name: "harness-profile" })
      const proxy = yield* Proxies.create({ type: "datacenter", name: "harness-proxy" })
      const proxyId = proxy.id ?? ""
      const browser = yield* Browsers.create({ profile: { name: "harness-profile" }, proxy_id: proxyId })
      expect(browser.session_id).toBeTruthy()
      const byId = yield* Browsers.create({ profile: { id: profile.id } })
      expect(byId.session_id).not.toBe(browser.session_id)
      const pool = yield* BrowserPools.create({ size: 1, proxy_id: proxyId })
      expect(pool.available_count).toBe(1)
      yield* Profiles.delete({ idOrName: profile.id })
      expect(tagOf(yield* Effect.exit(Browsers.create({ profile: { id: profile.id } })))).toBe("BadRequest")
    }).pipe(Effect.provide(simulated)))

  // the document: createInvocation answers 404 for an app or version that is not deployed; the
  // simulator ran any name it was given, so a misspelt app name passed the tests and failed in
  // production (this case was an `it.effect.fails` until it was fixed)
  it.effect("an invocation of an app that was never deployed is a NotFound", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Invocations.create({ app_name: "never-deployed", version: "9.9.9", action_name: "run" })
      )
      expect(tagOf(exit)).toBe("NotFound")
    }).pipe(Effect.provide(simulated)))

  it.effect("an app is invocable once deployed, at its version only; a seeded app is invocable", () =>
    Effect.gen(function*() {
      const invoke = (app_name: string, version: string) =>
        Effect.exit(Invocations.create({ app_name, version, action_name: "run" }))
      expect(tagOf(yield* invoke("harness-app", "2.0.0"))).toBe("NotFound")
      yield* Deployments.create({
        file: new TextEncoder().encode("PK\x05\x06" + "\0".repeat(18)),
        entrypoint_rel_path: "src/harness-app.ts",
        version: "2.0.0"
      })
      expect(tagOf(yield* invoke("harness-app", "2.0.0"))).toBe("Success")
      expect(tagOf(yield* invoke("harness-app", "2.0.1"))).toBe("NotFound")
      // the default seed's deployment dep_running serves my-app 1.0.0
      expect(tagOf(yield* invoke("my-app", "1.0.0"))).toBe("Success")
      expect(tagOf(yield* invoke("my-app", "latest"))).toBe("NotFound")
    }).pipe(Effect.provide(simulated)))

  it.effect("an app seeded without a version is invocable as latest only", () =>
    Effect.gen(function*() {
      const sim = yield* KernelSimulator.KernelSimulator
      yield* sim.reset({
        organizations: [{
          id: "org_h",
          token: KernelSimulator.defaultToken,
          deployments: [{ id: "dep_h", state: "running", app_name: "seeded" }]
        }]
      })
      const invoke = Invocations.create({ app_name: "seeded", version: "latest", action_name: "run" })
      expect(tagOf(yield* Effect.exit(invoke))).toBe("Success")
      expect(tagOf(yield* Effect.exit(Invocations.create({ app_name: "seeded", version: "1", action_name: "r" }))))
        .toBe("NotFound")
    }).pipe(Effect.provide(simulated)))
})

// ---------------------------------------------------------------------------------------------
// issue 20: a zip of a directory holds the directory; a zip upload is extracted
// ---------------------------------------------------------------------------------------------

// made by Python's zipfile (deflated): d/, d/x.txt ("hello zip\n"), d/e/y.bin ("deep")
const pythonZip = Buffer.from(
  "UEsDBBQAAAAAABo4eV0AAAAAAAAAAAAAAAACAAAAZC9QSwMEFAAAAAgAGjh5XUjJEUgMAAAACgAAAAcAAABkL3gudHh0y0jNyclXqMos4AIAUEsDBBQAAAAIABo4eV1dWJOTBgAAAAQAAAAJAAAAZC9lL3kuYmluS0lNLQAAUEsBAhQDFAAAAAAAGjh5XQAAAAAAAAAAAAAAAAIAAAAAAAAAAAAQAO1BAAAAAGQvUEsBAhQDFAAAAAgAGjh5XUjJEUgMAAAACgAAAAcAAAAAAAAAAAAAAKSBIAAAAGQveC50eHRQSwECFAMUAAAACAAaOHldXViTkwYAAAAEAAAACQAAAAAAAAAAAAAApIFRAAAAZC9lL3kuYmluUEsFBgAAAAADAAMAnAAAAH4AAAAAAA==",
  "base64"
)
// one entry, "../../escape.txt"
const climbingZip = Buffer.from(
  "UEsDBBQAAAAAABs4eV2DFtyMAQAAAAEAAAAQAAAALi4vLi4vZXNjYXBlLnR4dHhQSwECFAMUAAAAAAAbOHldgxbcjAEAAAABAAAAEAAAAAAAAAAAAAAAgAEAAAAALi4vLi4vZXNjYXBlLnR4dFBLBQYAAAAAAQABAD4AAAAvAAAAAAA=",
  "base64"
)
// one deflated entry, a.bin: 1 MiB + 1 zero bytes in about 1 KiB (Python's zipfile)
const bombZip = Buffer.from(
  "UEsDBBQAAAAIALE4eV0oi6TGCQQAAAEAEAAFAAAAYS5iaW7twTEBAAAAwqD1T20IX6" + "A".repeat(1355) +
    "E4DUEsBAhQDFAAAAAgAsTh5XSiLpMYJBAAAAQAQAAUAAAAAAAAAAAAAAIABAAAAAGEuYmluUEsFBgAAAAABAAEAMwAAACwEAAAAAA==",
  "base64"
)
const text = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>) =>
  Stream.runFold(bytes, "", (all, chunk) => all + Buffer.from(chunk).toString("utf8"))

describe("harness1920: the simulator's API keys", () => {
  it.effect("a created key has its own value, given once, and expires after its creation (or never)", () =>
    Effect.gen(function*() {
      const first = yield* ApiKeys.create({ name: "ci", days_to_expire: 30 })
      const second = yield* ApiKeys.create({ name: "forever" })
      const value = Redacted.value(first.key)
      expect(value).toMatch(/^sk_sim_[0-9a-f]{32}$/)
      expect(Redacted.value(second.key)).not.toBe(value)
      expect(first.masked_key).toBe(`${value.slice(0, 7)}...${value.slice(-4)}`)
      expect(first.expires_at).toBeDefined()
      expect(first.expires_at!.epochMillis - first.created_at.epochMillis).toBe(30 * 24 * 60 * 60 * 1000)
      expect(second.expires_at).toBeNull()
      // read back: the same masked form and expiry
      const read = yield* ApiKeys.retrieve({ id: first.id })
      expect(read.masked_key).toBe(first.masked_key)
      expect(read.expires_at?.epochMillis).toBe(first.expires_at!.epochMillis)
    }).pipe(Effect.provide(simulated)))
})

describe("harness1920: the simulator's zips", () => {
  it.effect("a zip upload is extracted under dest_path; a zip download of it carries the same files", () =>
    Effect.gen(function*() {
      const { session_id: id } = yield* Browsers.create({})
      yield* Filesystem.uploadZip({ id, zip_file: new Uint8Array(pythonZip), dest_path: "/home/up" })
      expect(yield* text(Filesystem.readFileStream({ id, path: "/home/up/d/x.txt" }))).toBe("hello zip\n")
      expect(yield* text(Filesystem.readFileStream({ id, path: "/home/up/d/e/y.bin" }))).toBe("deep")
      // the directory's zip, extracted elsewhere: the same tree
      const zipped = yield* Stream.runFold(
        Filesystem.downloadDirZipStream({ id, path: "/home/up" }),
        Buffer.alloc(0),
        (all, chunk) => Buffer.concat([all, chunk])
      )
      expect(zipped.subarray(0, 4)).toEqual(Buffer.from("PK\x03\x04", "latin1"))
      yield* Filesystem.uploadZip({ id, zip_file: new Uint8Array(zipped), dest_path: "/copy" })
      expect(yield* text(Filesystem.readFileStream({ id, path: "/copy/d/x.txt" }))).toBe("hello zip\n")
      expect(yield* text(Filesystem.readFileStream({ id, path: "/copy/d/e/y.bin" }))).toBe("deep")
      const listed = yield* Filesystem.listFiles({ id, path: "/copy/d" })
      expect(listed.map((f) => `${f.name}:${f.is_dir}`).sort()).toEqual(["e:true", "x.txt:false"])
    }).pipe(Effect.provide(simulated)))

  it.effect("a zip that is not one, or whose entries climb out of dest_path, is a BadRequest", () =>
    Effect.gen(function*() {
      const { session_id: id } = yield* Browsers.create({})
      for (const zip_file of [new TextEncoder().encode("not a zip"), new Uint8Array(climbingZip)]) {
        const exit = yield* Effect.exit(Filesystem.uploadZip({ id, zip_file, dest_path: "/home/x" }))
        expect(tagOf(exit)).toBe("BadRequest")
      }
      expect(tagOf(yield* Effect.exit(Filesystem.fileInfo({ id, path: "/escape.txt" })))).toBe("NotFound")
      // more than 1 MiB once inflated: refused, nothing extracted
      expect(bombZip.length).toBeLessThan(2048)
      const big = new Uint8Array(bombZip)
      expect(tagOf(yield* Effect.exit(Filesystem.uploadZip({ id, zip_file: big, dest_path: "/big" })))).toBe(
        "BadRequest"
      )
      expect(tagOf(yield* Effect.exit(Filesystem.fileInfo({ id, path: "/big/a.bin" })))).toBe("NotFound")
      // a zip of a file (not a directory) is refused; of a missing path, 404
      yield* Filesystem.writeFile({ id, path: "/f.txt", contents: new Uint8Array([1]) })
      const zipOf = (path: string) => Effect.exit(Stream.runDrain(Filesystem.downloadDirZipStream({ id, path })))
      expect(tagOf(yield* zipOf("/f.txt"))).toBe("BadRequest")
      expect(tagOf(yield* zipOf("/nope"))).toBe("NotFound")
    }).pipe(Effect.provide(simulated)))
})

// ---------------------------------------------------------------------------------------------
// issue 19: hostile servers, every transport (one loopback server for the file)
// ---------------------------------------------------------------------------------------------

type Script = (req: Http.IncomingMessage, res: Http.ServerResponse) => void
let script: Script = (_req, res) => res.end()
let requests: Array<{ readonly url: string; readonly headers: Http.IncomingHttpHeaders; body: Buffer }> = []
const handler: Http.RequestListener = (req, res) => {
  const record = { url: req.url ?? "", headers: req.headers, body: Buffer.alloc(0) }
  requests.push(record)
  res.on("error", () => {})
  req.on("error", () => {})
  script(req, res)
}
const server = fileHttpServer(handler)

const set = (next: Script) => {
  script = next
  requests = []
}

/** Reads the whole request body, then answers with `status` and `body`. */
const reading = (status: number, body: string, headers: Record<string, string> = {}): Script => (req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    requests[requests.length - 1]!.body = Buffer.concat(chunks)
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(body)
  })
}

/** The `Content-Disposition` lines of a multipart body, in order. */
const dispositions = (contentType: string, body: Buffer): ReadonlyArray<string> => {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType)
  const delimiter = `--${boundary?.[1] ?? boundary?.[2]}`
  return body.toString("utf8").split(delimiter).slice(1, -1).map((part) =>
    part.split("\r\n").find((line) => line.toLowerCase().startsWith("content-disposition:")) ?? ""
  )
}

const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "harness1920-"))
afterAll(() => Fs.rmSync(tmp, { recursive: true, force: true }))

describe.each(transports)("harness1920: hostile servers on $name", (transport) => {
  const run = <A, E>(
    effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof loopbackLayer>>>,
    options: Parameters<typeof loopbackLayer>[2] = {}
  ) => Effect.runPromiseExit(Effect.provide(effect, loopbackLayer(server.port(), transport.layer, options)))

  it("a file name with quotes, CR LF and non-ASCII cannot forge a part or a header", async () => {
    const file = Path.join(tmp, "upload.bin")
    Fs.writeFileSync(file, Buffer.from([1, 2, 3]))
    const name = "a\"b\r\nContent-Type: text/evil\r\n\r\nX;name=\"y\" ü🙂.txt"
    set(reading(200, "{}"))
    await run(Filesystem.upload({
      id: "b1",
      files: [{ file: KernelFiles.file(file, { name }), dest_path: "/home/a.bin" }]
    }))
    const [request] = requests
    const lines = dispositions(String(request!.headers["content-type"]), request!.body)
    expect(lines).toHaveLength(2)
    // one line each: no CR or LF survives, every quote inside the value is escaped
    expect(lines[0]).toBe(
      `Content-Disposition: form-data; name="files[0][file]"; ` +
        `filename="a%22b%0D%0AContent-Type: text/evil%0D%0A%0D%0AX;name=%22y%22 ü🙂.txt"`
    )
    expect(lines[1]).toBe(`Content-Disposition: form-data; name="files[0][dest_path]"`)
    expect(request!.body.toString("utf8")).not.toContain("text/evil\r\n")
  })

  // docs/events-and-files.md said a download's accessor "succeeds once the status says the body
  // follows, so a NotFound is known before any byte is read": it succeeds at once, sending nothing,
  // and the NotFound fails its stream (the docs now say so; this pins what they say)
  it("a download's accessor sends nothing; its stream's first run meets the NotFound", async () => {
    set((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(`{"code":"not_found","message":"no such file"}`)
    })
    const exit = await run(Effect.gen(function*() {
      const stream = yield* Filesystem.readFile({ id: "b1", path: "/missing" })
      const before = requests.length
      const ran = yield* Effect.exit(Stream.runDrain(stream))
      return { before, ran: tagOf(ran) }
    }))
    expect(Exit.isSuccess(exit) ? exit.value : tagOf(exit)).toEqual({ before: 0, ran: "NotFound" })
    expect(requests).toHaveLength(1)
  })

  // a 200 that is not an event stream (a proxy's or a login portal's page): it was read as an event
  // stream that ended at once, a TransportError blaming the connection (and a drop telemetry resumed)
  // (and one with no content-type at all, an event stream's frames in it: the service always says it)
  const notEventStreams: ReadonlyArray<readonly [string | undefined, string, string]> = [
    ["text/html; charset=utf-8", "<html>sign in</html>", "text/html; charset=utf-8"],
    ["application/json", "{}", "application/json"],
    [undefined, `data: ${JSON.stringify({ seq: 1, event: "sse_heartbeat" })}\n\n`, "got no content-type"],
    // a blank value: the message said "got content-type " with nothing after it
    [" ", `data: ${JSON.stringify({ seq: 1, event: "sse_heartbeat" })}\n\n`, "got an empty content-type"]
  ]
  for (const [contentType, body, named] of notEventStreams) {
    it(`an event stream answered 200 with ${named} is a DecodeError naming it, never resumed`, async () => {
      const answer = (_req: unknown, res: Http.ServerResponse) => {
        res.writeHead(200, contentType === undefined ? {} : { "content-type": contentType })
        res.end(body)
      }
      set(answer)
      const exit = await run(Effect.flatMap(Telemetry.stream({ id: "b1" }), Stream.runDrain))
      expect(tagOf(exit)).toBe("DecodeError")
      expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toContain(named)
      expect(requests).toHaveLength(1)
      set(answer)
      const logs = await run(Effect.flatMap(Logs.stream({ id: "b1", source: "path", path: "/x" }), Stream.runDrain))
      expect(tagOf(logs)).toBe("DecodeError")
    })
  }

  // a server (or a proxy) that echoes the Authorization header in what it answers: the SDK quoted
  // the answer as it came, so the token reached the error's message (hence logs and spans)
  const echoes: ReadonlyArray<{ readonly name: string; readonly script: Script }> = [
    {
      name: "an error body's message",
      script: (req, res) => {
        res.writeHead(401, { "content-type": "application/json" })
        res.end(JSON.stringify({ code: "unauthorized", message: `bad token ${req.headers.authorization}` }))
      }
    },
    {
      name: "an error body that is not JSON",
      script: (req, res) => {
        res.writeHead(500, { "content-type": "text/plain" })
        res.end(`echo ${req.headers.authorization}`)
      }
    },
    {
      name: "an error's details",
      script: (req, res) => {
        res.writeHead(400, { "content-type": "application/json" })
        res.end(JSON.stringify({
          code: "bad_request",
          message: "m",
          details: [{ code: "c", message: String(req.headers.authorization) }],
          inner_error: { code: "i", message: String(req.headers.authorization).slice(7) }
        }))
      }
    },
    {
      name: "a success that does not decode",
      script: (req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.end(
          `data: ${JSON.stringify({ event: "log", timestamp: 1, message: { token: req.headers.authorization } })}\n\n`
        )
      }
    },
    {
      name: "a content type that is not an event stream",
      script: (req, res) => {
        res.writeHead(200, { "content-type": `text/html; a=${String(req.headers.authorization).slice(7)}` })
        res.end("<html>")
      }
    },
    {
      name: "an event that does not decode",
      script: (req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.end(`data: {"x": "${req.headers.authorization}"\n\n`)
      }
    }
  ]
  for (const { name, script } of echoes) {
    it(`a token echoed in ${name} never reaches the error`, async () => {
      set(script)
      const exit = await run(Effect.flatMap(Logs.stream({ id: "b1", source: "path", path: "/x" }), Stream.runDrain))
      expect(Exit.isFailure(exit)).toBe(true)
      const shown = Exit.isFailure(exit) ? `${Cause.pretty(exit.cause)} ${JSON.stringify(exit.cause)}` : ""
      expect(shown).toContain("<redacted>")
      expect(shown).not.toContain("SENTINEL")
    })
  }

  it("bytes beyond Content-Length (a smuggled response) never answer the next call", async () => {
    let served = 0
    set((req, res) => {
      served++
      if (served === 1) {
        // the body declared is 5 bytes; a whole second response follows on the same connection
        req.socket.write(
          "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: 5\r\n\r\nhello" +
            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: 5\r\n\r\nEVIL!"
        )
        return
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": "5" })
      res.end("world")
    })
    const read = (path: string) =>
      Stream.runFold(Filesystem.readFileStream({ id: "b1", path }), "", (text, chunk) => text + Buffer.from(chunk))
    const exit = await run(Effect.gen(function*() {
      const first = yield* read("/a")
      yield* Effect.sleep("50 millis")
      const second = yield* read("/b")
      return [first, second]
    }))
    expect(Exit.isSuccess(exit) ? exit.value : tagOf(exit)).toEqual(["hello", "world"])
    expect(requests.map((r) => r.url)).toEqual([
      "/browsers/b1/fs/read_file?path=%2Fa",
      "/browsers/b1/fs/read_file?path=%2Fb"
    ])
  })
})
