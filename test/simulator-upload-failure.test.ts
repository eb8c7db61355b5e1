/**
 * The in-memory simulator and an upload whose `Stream` fails part-way: the call fails with a
 * `TransportError` carrying the stream's error, as it does over HTTP on every transport (the
 * simulator took an empty body: `writeFile` succeeded with an empty file, a multipart upload was
 * "body: is required").
 */
import { describe, expect, it } from "@effect/vitest"
import { Data, Effect, Layer, Stream } from "effect"
import { Deployments, Extensions, Filesystem, Kernel, KernelError } from "effect-kernel"
import { KernelSimulator } from "effect-kernel/testing"

class SourceFailed extends Data.TaggedError("SourceFailed")<Record<never, never>> {}

const failing = () => Stream.make(new Uint8Array([1, 2])).pipe(Stream.concat(Stream.fail(new SourceFailed())))

const layer = Kernel.layer.pipe(Layer.provideMerge(KernelSimulator.layer()))

describe("an upload whose Stream fails part-way, in memory", () => {
  const calls: ReadonlyArray<
    readonly [string, () => Effect.Effect<unknown, KernelError.KernelError, Kernel.Services>]
  > = [
    ["Filesystem.writeFile", () => Filesystem.writeFile({ id: "browser_1", path: "/tmp/x", contents: failing() })],
    [
      "Filesystem.upload",
      () => Filesystem.upload({ id: "browser_1", files: [{ dest_path: "/tmp/m", file: failing() }] })
    ],
    ["Filesystem.uploadZip", () => Filesystem.uploadZip({ id: "browser_1", dest_path: "/tmp/z", zip_file: failing() })],
    ["Extensions.upload", () => Extensions.upload({ name: "ext", file: failing() })],
    ["Deployments.create", () => Deployments.create({ file: failing(), entrypoint_rel_path: "index.ts" })]
  ]
  it.effect.each(calls)(
    "%s: TransportError with the stream's error as its cause, nothing stored",
    ([, call]) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(call())
        expect(error._tag).toBe("TransportError")
        expect(KernelError.isKernelError(error)).toBe(true)
        expect(String(error.message)).toContain("SourceFailed")
        // writeFile's file was not made (an empty one was)
        const read = yield* Effect.flip(
          Effect.flatMap(Filesystem.readFile({ id: "browser_1", path: "/tmp/x" }), Stream.runDrain)
        )
        expect(read._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer))
  )
})
