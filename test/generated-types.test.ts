/**
 * The public types of the generated accessors, as a program sees them: a streamed answer fails
 * with its operation's own errors (not every `KernelError`), and an operation without content
 * cannot fail with `DecodeError`. Checked by the type-checker (`npm run typecheck`); the runtime
 * assertions only keep vitest from reporting an empty file.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import type { Effect, Stream } from "effect"
import {
  BrowserPools,
  Browsers,
  Computer,
  Deployments,
  Filesystem,
  Invocations,
  type Kernel,
  KernelError,
  Processes,
  Profiles,
  Replays,
  Telemetry
} from "effect-kernel"
import type * as Operations from "../src/internal/operations.js"

type TagOf<E> = E extends { readonly _tag: infer T } ? T : never

type ErrorTags<A extends (...args: never) => Effect.Effect<unknown, unknown, unknown>> = TagOf<
  Effect.Effect.Error<ReturnType<A>>
>

type StreamErrorTags<S> = S extends Stream.Stream<unknown, infer E> ? TagOf<E> : never

const common = [
  "Unauthorized",
  "Conflict",
  "RateLimited",
  "InternalServerError",
  "UnexpectedStatus",
  "TransportError",
  "Timeout",
  "InvalidInput"
] as const
type Common = typeof common[number]

describe("generated accessor types", () => {
  it("a byte stream fails with its operation's errors", () => {
    expectTypeOf<StreamErrorTags<Computer.CaptureScreenshotSuccess>>().toEqualTypeOf<
      Common | "BadRequest" | "NotFound" | "DecodeError"
    >()
    expectTypeOf<StreamErrorTags<Filesystem.ReadFileSuccess>>().toEqualTypeOf<Filesystem.ReadFileError["_tag"]>()
    // the accessor itself sends nothing (the stream does when it runs): it fails only with its input refused
    expectTypeOf<ErrorTags<typeof Filesystem.readFile>>().toEqualTypeOf<"InvalidInput">()
    expectTypeOf<ErrorTags<typeof Computer.captureScreenshot>>().toEqualTypeOf<"InvalidInput">()
    // not, say, a replay's or a pool's errors
    expectTypeOf<Extract<StreamErrorTags<Computer.CaptureScreenshotSuccess>, "ReplayNotReady">>().toEqualTypeOf<never>()
    expect(common.length).toBe(8)
  })

  it("an event stream fails with its operation's errors", () => {
    expectTypeOf<StreamErrorTags<Processes.StreamProcessStdoutSuccess>>().toEqualTypeOf<
      Processes.StreamProcessStdoutError["_tag"]
    >()
    expectTypeOf<StreamErrorTags<Invocations.FollowInvocationSuccess>>().toEqualTypeOf<
      Invocations.FollowInvocationError["_tag"]
    >()
    // the accessors fail only with their input refused: a status, the transport fail the stream
    expectTypeOf<ErrorTags<typeof Processes.stdoutStream>>().toEqualTypeOf<"InvalidInput">()
    expectTypeOf<ErrorTags<typeof Invocations.follow>>().toEqualTypeOf<"InvalidInput">()
    expectTypeOf<ErrorTags<typeof Telemetry.stream>>().toEqualTypeOf<"InvalidInput">()
    // an operation that sends its request in the call (a profile's download: 200 or 202) keeps its errors there
    expectTypeOf<Extract<ErrorTags<typeof Profiles.download>, "NotFound">>().toEqualTypeOf<"NotFound">()
  })

  it("an operation without content has no DecodeError", () => {
    expectTypeOf<ErrorTags<typeof Browsers.delete>>().toEqualTypeOf<Common | "BadRequest" | "NotFound">()
    expectTypeOf<ErrorTags<typeof Computer.clickMouse>>().toEqualTypeOf<Common | "BadRequest" | "NotFound">()
    // one with a body keeps it
    expectTypeOf<ErrorTags<typeof Browsers.retrieve>>().toEqualTypeOf<Common | "NotFound" | "DecodeError">()
    expect(KernelError.DecodeError).toBeDefined()
  })

  it("a page of a list can be named: Kernel.Page", () => {
    expectTypeOf<Browsers.ListBrowsersSuccess>().toEqualTypeOf<Kernel.Page<Browsers.Browser>>()
    expectTypeOf<Invocations.ListInvocationsSuccess>().toEqualTypeOf<Kernel.Page<Invocations.Invocation>>()
  })

  it("an accessor takes its operation's params: optional ones as optional, not as any object", () => {
    expectTypeOf<Parameters<typeof Browsers.list>>().toEqualTypeOf<[params?: Browsers.ListBrowsersParams]>()
    expectTypeOf<Parameters<typeof Browsers.listAll>>().toEqualTypeOf<[params?: Browsers.ListBrowsersParams]>()
    expectTypeOf<Parameters<typeof Processes.exec>>().toEqualTypeOf<[params: Processes.ExecProcessParams]>()
    // @ts-expect-error a field the operation does not have
    const wrong = () => Browsers.list({ limit: 1, nope: true })
    expect(typeof wrong).toBe("function")
  })

  it("every download has a Stream form of one shape: Stream<Uint8Array, its error, its tag>", () => {
    expectTypeOf(Filesystem.readFileStream).returns.toEqualTypeOf<
      Stream.Stream<Uint8Array, Filesystem.ReadFileError, Filesystem.ReadFile>
    >()
    expectTypeOf(Computer.captureScreenshotStream).returns.toEqualTypeOf<
      Stream.Stream<Uint8Array, Computer.CaptureScreenshotError, Computer.CaptureScreenshot>
    >()
    expectTypeOf(Replays.downloadStream).returns.toEqualTypeOf<
      Stream.Stream<Uint8Array, Replays.DownloadReplayError, Replays.DownloadReplay>
    >()
    expect(Replays.downloadStream).toBe(Replays.download)
  })

  it("the five 0.1.0 operations' error unions, written out, are what their definitions give", () => {
    // written out so that a program's type-check does not compute them from the definitions' types
    expectTypeOf<BrowserPools.ListBrowserPoolsError>().toEqualTypeOf<
      Operations.ErrorOf<typeof Operations.listBrowserPools>
    >()
    expectTypeOf<Computer.GetMousePositionError>().toEqualTypeOf<
      Operations.ErrorOf<typeof Operations.getMousePosition>
    >()
    expectTypeOf<Computer.SetCursorVisibilityError>().toEqualTypeOf<
      Operations.ErrorOf<typeof Operations.setCursorVisibility>
    >()
    expectTypeOf<Deployments.DeleteDeploymentError>().toEqualTypeOf<
      Operations.ErrorOf<typeof Operations.deleteDeployment>
    >()
    expectTypeOf<Replays.DownloadReplayError>().toEqualTypeOf<
      Operations.ErrorOf<typeof Operations.downloadReplay> | KernelError.ReplayNotReady
    >()
  })

  it("the five 0.1.0 operations have the <Operation>Params and <Operation>Success of the naming rule", () => {
    // as every generated operation has (Processes.ExecProcessParams, Browsers.ListBrowsersSuccess...):
    // a fake or a helper typed by them is written the same way for every operation
    expectTypeOf<Parameters<typeof Computer.getMousePosition>>().toEqualTypeOf<
      [params: Computer.GetMousePositionParams]
    >()
    expectTypeOf(Computer.getMousePosition).returns.toEqualTypeOf<
      Effect.Effect<Computer.GetMousePositionSuccess, Computer.GetMousePositionError, Computer.GetMousePosition>
    >()
    expectTypeOf(Computer.setCursorVisibility).returns.toEqualTypeOf<
      Effect.Effect<
        Computer.SetCursorVisibilitySuccess,
        Computer.SetCursorVisibilityError,
        Computer.SetCursorVisibility
      >
    >()
    expectTypeOf(BrowserPools.list).returns.toEqualTypeOf<
      Effect.Effect<
        BrowserPools.ListBrowserPoolsSuccess,
        BrowserPools.ListBrowserPoolsError,
        BrowserPools.ListBrowserPools
      >
    >()
    expectTypeOf<Parameters<typeof Deployments.delete>>().toEqualTypeOf<[params: Deployments.DeleteDeploymentParams]>()
    expectTypeOf(Deployments.delete).returns.toEqualTypeOf<
      Effect.Effect<
        Deployments.DeleteDeploymentSuccess,
        Deployments.DeleteDeploymentError,
        Deployments.DeleteDeployment
      >
    >()
    expectTypeOf<Parameters<typeof Replays.download>[0]>().toEqualTypeOf<Replays.DownloadReplayParams>()
    expectTypeOf<ReturnType<Replays.DownloadReplayService["download"]>>().toEqualTypeOf<Replays.DownloadReplaySuccess>()
    expect(Computer.getMousePosition).toBeTypeOf("function")
  })
})

describe("optional parameters take undefined (exactOptionalPropertyTypes)", () => {
  it("a query parameter, like a body field, may be given as undefined", () => {
    const options: { readonly limit?: number | undefined; readonly headless?: boolean | undefined } = {}
    // each a type error before: `limit?: number` refused `number | undefined`
    const calls = [
      Browsers.list({ limit: options.limit, offset: options.limit }),
      Browsers.create({ headless: options.headless }),
      Invocations.list({ limit: options.limit })
    ]
    expect(calls).toHaveLength(3)
    expectTypeOf<Browsers.ListBrowsersParams["limit"]>().toEqualTypeOf<number | undefined>()
  })
})
