import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel } from "effect"
import { Computer, Kernel, KernelConfig } from "effect-kernel"
import { errorBody, json, mockTransport, token } from "./utils/mock.js"

// KERNEL_LOG governs the SDK's own lines only: the program's lines and minimum level stay its own.
describe("KERNEL_LOG", () => {
  const captured = () => {
    const lines: Array<string> = []
    const logger = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
    )
    return { lines, logger }
  }
  const env = (vars: Record<string, string>) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ KERNEL_API_KEY: token, ...vars }))))
  const flaky = () => {
    let calls = 0
    return () => (++calls % 2 === 1
      ? json(503, errorBody("busy", "later"), { "retry-after-ms": "1" })
      : json(200, { x: 0, y: 0 }))
  }
  const sdkLine = "DEBUG Kernel.getMousePosition: attempt 1 failed with UnexpectedStatus (HTTP 503)"
  // the program: its own lines at each level around one SDK call that is retried once
  const program = Effect.gen(function*() {
    yield* Effect.logDebug("mine debug")
    yield* Effect.logInfo("mine info")
    yield* Computer.getMousePosition({ id: "b" })
    yield* Effect.logError("mine error")
  })
  const run = (vars: Record<string, string>, minimum?: LogLevel.LogLevel) => {
    const { lines, logger } = captured()
    const layer = Kernel.layerConfig().pipe(
      Layer.provide(Layer.succeed(HttpClient.HttpClient, mockTransport(flaky()).client)),
      Layer.provide(env(vars))
    )
    const withMinimum = minimum === undefined ? program : Logger.withMinimumLogLevel(program, minimum)
    return withMinimum.pipe(Effect.provide(layer), Effect.provide(logger), Effect.as(lines))
  }

  it.live("not set: the SDK's debug lines follow the program's minimum level", () =>
    Effect.gen(function*() {
      expect(yield* run({})).toEqual(["INFO mine info", "ERROR mine error"])
      expect(yield* run({}, LogLevel.Debug)).toEqual([
        "DEBUG mine debug",
        "INFO mine info",
        sdkLine,
        "ERROR mine error"
      ])
    }))

  it.live("debug shows the SDK's debug lines without turning on the program's own", () =>
    Effect.gen(function*() {
      expect(yield* run({ KERNEL_LOG: "debug" })).toEqual(["INFO mine info", sdkLine, "ERROR mine error"])
      // even when the program only wants errors
      expect(yield* run({ KERNEL_LOG: "debug" }, LogLevel.Error)).toEqual([sdkLine, "ERROR mine error"])
    }))

  it.live("off drops the SDK's lines only: the program's info and error lines stay", () =>
    Effect.gen(function*() {
      expect(yield* run({ KERNEL_LOG: "off" })).toEqual(["INFO mine info", "ERROR mine error"])
      expect(yield* run({ KERNEL_LOG: "off" }, LogLevel.Debug)).toEqual([
        "DEBUG mine debug",
        "INFO mine info",
        "ERROR mine error"
      ])
    }))

  it.live("warn drops the SDK's debug lines even when the program shows its own", () =>
    Effect.gen(function*() {
      expect(yield* run({ KERNEL_LOG: "warn" }, LogLevel.Debug)).toEqual([
        "DEBUG mine debug",
        "INFO mine info",
        "ERROR mine error"
      ])
    }))

  it.live("is case-insensitive", () =>
    Effect.gen(function*() {
      expect(yield* run({ KERNEL_LOG: "DEBUG" })).toEqual(["INFO mine info", sdkLine, "ERROR mine error"])
      expect(yield* run({ KERNEL_LOG: " Off " }, LogLevel.Debug)).not.toContain(sdkLine)
    }))

  // a compose file's `KERNEL_LOG=${KERNEL_LOG}` for a variable it does not have
  it.live("set but empty or blank is as unset: no warning", () =>
    Effect.gen(function*() {
      expect(yield* run({ KERNEL_LOG: "" })).toEqual(yield* run({}))
      expect(yield* run({ KERNEL_LOG: "  " })).toEqual(yield* run({}))
    }))

  it.live("an invalid value warns once and is otherwise ignored", () =>
    Effect.gen(function*() {
      const first = yield* run({ KERNEL_LOG: "loud" })
      expect(first).toEqual([
        "WARN effect-kernel: ignoring KERNEL_LOG=\"loud\"; expected one of debug, info, warn, error, off (any case)",
        "INFO mine info",
        "ERROR mine error"
      ])
      expect(yield* run({ KERNEL_LOG: "loud" })).toEqual(["INFO mine info", "ERROR mine error"])
    }))

  it.live("Kernel.layerLogLevel sets the same in code", () => {
    const { lines, logger } = captured()
    const layer = Kernel.layer.pipe(
      Layer.provide(Layer.succeed(HttpClient.HttpClient, mockTransport(flaky()).client)),
      Layer.provide(KernelConfig.layerConfig().pipe(Layer.provide(env({})))),
      Layer.merge(Kernel.layerLogLevel("debug"))
    )
    return program.pipe(
      Effect.provide(layer),
      Effect.provide(logger),
      Effect.tap(() => expect(lines).toEqual(["INFO mine info", sdkLine, "ERROR mine error"]))
    )
  })
})
