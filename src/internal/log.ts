/**
 * The SDK's own log lines. Every line the SDK writes goes through {@link log}, which consults
 * {@link currentLevel} (set by `KERNEL_LOG` or `Kernel.layerLogLevel`): unset, the line follows the
 * program's minimum log level like any other; set, the line is shown when it is at least that level
 * (with the minimum level adjusted for that one line only) and dropped otherwise. The program's own
 * minimum level is never changed.
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"

/** The values `KERNEL_LOG` accepts (in any case). */
export type Setting = "debug" | "info" | "warn" | "error" | "off"

const levels: Record<Setting, LogLevel.LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  off: LogLevel.None
}

/** The settings, as listed in messages. */
export const settings: ReadonlyArray<Setting> = ["debug", "info", "warn", "error", "off"]

const isSetting = (input: string): input is Setting => Object.hasOwn(levels, input)

/** The least level an SDK line needs to be shown; `None` follows the program's minimum level. */
export const currentLevel: FiberRef.FiberRef<Option.Option<LogLevel.LogLevel>> = globalValue(
  Symbol.for("effect-kernel/internal/log/currentLevel"),
  () => FiberRef.unsafeMake<Option.Option<LogLevel.LogLevel>>(Option.none())
)

/** Writes one of the SDK's own lines at `level`. */
export const log = (level: LogLevel.LogLevel, message: string): Effect.Effect<void> =>
  Effect.flatMap(
    FiberRef.get(currentLevel),
    Option.match({
      onNone: () => Effect.logWithLevel(level, message),
      onSome: (least) =>
        LogLevel.lessThan(level, least)
          ? Effect.void
          : Logger.withMinimumLogLevel(Effect.logWithLevel(level, message), least)
    })
  )

/** Writes one of the SDK's own lines at `Debug`. */
export const debug = (message: string): Effect.Effect<void> => log(LogLevel.Debug, message)

/** Parses a setting, ignoring case and surrounding spaces. */
export const parse = (input: string): Option.Option<Setting> => {
  const normalized = input.trim().toLowerCase()
  return isSetting(normalized) ? Option.some(normalized) : Option.none()
}

/** A layer giving the SDK's lines the least level `setting`, for the program it is provided to. */
export const layer = (setting: Setting): Layer.Layer<never> =>
  Layer.locallyScoped(currentLevel, Option.some(levels[setting]))

// the invalid values already warned about, so each is reported once per process
const warned = globalValue(Symbol.for("effect-kernel/internal/log/warned"), () => new Set<string>())

/**
 * `KERNEL_LOG` as a layer: no change when it is not set; an invalid value is reported once with a
 * warning and otherwise ignored.
 */
export const layerConfig = (name = "KERNEL_LOG"): Layer.Layer<never, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.flatMap(
      Config.option(Config.string(name)),
      Option.match({
        onNone: () => Effect.succeed(Layer.empty),
        // set but empty is as unset (a compose file's `KERNEL_LOG=${KERNEL_LOG}`)
        onSome: (input) =>
          input.trim() === "" ? Effect.succeed(Layer.empty) : Option.match(parse(input), {
            onSome: (setting) => Effect.succeed(layer(setting)),
            onNone: () => {
              const first = !warned.has(input)
              warned.add(input)
              return first
                ? Effect.as(
                  Effect.logWarning(
                    `effect-kernel: ignoring ${name}=${JSON.stringify(input.slice(0, 40))}; expected one of ${
                      settings.join(", ")
                    } (any case)`
                  ),
                  Layer.empty
                )
                : Effect.succeed(Layer.empty)
            }
          })
      })
    )
  )
