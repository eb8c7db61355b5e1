import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer, Option } from "effect"
import { KernelFiles, Profiles, Replays } from "effect-kernel"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { afterAll } from "vitest"
import { fileHttpServer, loopbackLayer } from "./utils/loopback.js"
import { asMp4 } from "./utils/mp4.js"
import { transports } from "./utils/transports.js"

// `downloadToFile`'s progress carries the declared total (Content-Length) whatever the shape the
// download is handed over in: a profile's `Ok` stream opened before `downloadToFile` runs (the
// documented pattern), a replay's stream given to `KernelFiles.downloadToFile`, and
// `Replays.downloadToFile` itself (its options copied before they were read, the total was lost).
const size = 200 * 1024 + 3
const mp4 = asMp4(new Uint8Array(size).fill(5))
const profile = new Uint8Array(size).fill(9)
const server = fileHttpServer((req, res) => {
  req.resume()
  const body = req.url?.startsWith("/profiles/") ? profile : mp4
  res.writeHead(200, {
    "content-type": req.url?.startsWith("/profiles/") ? "application/octet-stream" : "video/mp4",
    "content-length": String(body.length)
  })
  res.end(body)
})
const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "effect-kernel-totals-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

type OnProgress = (progress: KernelFiles.Progress) => Effect.Effect<void>
type Provided = Layer.Layer.Success<ReturnType<typeof loopbackLayer>>
const shapes: ReadonlyArray<{
  readonly name: string
  readonly length: number
  readonly write: (
    target: string,
    onProgress: OnProgress
  ) => Effect.Effect<KernelFiles.DownloadedFile, { readonly _tag: string; readonly message: string }, Provided>
}> = [
  {
    name: "a profile's Ok stream, opened before downloadToFile (the documented pattern)",
    length: profile.length,
    write: (target: string, onProgress: OnProgress) =>
      Effect.flatMap(
        Profiles.download({ idOrName: "p1" }),
        (outcome) =>
          outcome._tag === "Ok"
            ? KernelFiles.downloadToFile(outcome.value, target, { onProgress })
            : Effect.dieMessage("no saved state")
      )
  },
  {
    name: "KernelFiles.downloadToFile(Replays.download(...))",
    length: mp4.length,
    write: (target: string, onProgress: OnProgress) =>
      KernelFiles.downloadToFile(Replays.download({ id: "b1", replayId: "r1" }), target, { onProgress })
  },
  {
    name: "Replays.downloadToFile",
    length: mp4.length,
    write: (target: string, onProgress: OnProgress) =>
      Replays.downloadToFile({ id: "b1", replayId: "r1" }, target, { onProgress })
  }
]

describe.each(transports)("downloadToFile's total over $name", (transport) => {
  it.each(shapes)("$name: every progress has the declared total", (shape) =>
    Effect.runPromise(Effect.gen(function*() {
      const target = nodePath.join(dir, `${transport.name}-${shapes.indexOf(shape)}`)
      const progress: Array<KernelFiles.Progress> = []
      const exit = yield* Effect.exit(Effect.provide(
        shape.write(target, (p) => Effect.sync(() => progress.push(p))),
        loopbackLayer(server.port(), transport.layer)
      ))
      if (Exit.isFailure(exit)) {
        throw new Error(Option.match(Cause.failureOption(exit.cause), {
          onNone: () => Cause.pretty(exit.cause),
          onSome: (e) => `${e._tag}: ${e.message}`
        }))
      }
      expect(exit.value.bytes).toBe(shape.length)
      expect(progress.length).toBeGreaterThan(0)
      expect(progress.at(-1)).toEqual({ bytes: shape.length, total: shape.length })
      expect(progress.filter((p) => p.total !== shape.length)).toEqual([])
    })))
})
