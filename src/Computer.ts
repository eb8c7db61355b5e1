/**
 * Computer controls of a browser session: the mouse position and the cursor's visibility.
 *
 * @since 0.1.0
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as internal from "./internal/client.js"
import { params, segment } from "./internal/path.js"
import { KernelClient } from "./KernelClient.js"
import type * as KernelError from "./KernelError.js"
import { BadRequest, InvalidInput, NotFound } from "./KernelError.js"

/**
 * The mouse cursor's position, in pixels from the top-left corner of the screen.
 *
 * @since 0.1.0
 * @category Schemas
 */
export class MousePosition extends Schema.Class<MousePosition>("effect-kernel/MousePosition")({
  x: Schema.Int,
  y: Schema.Int
}) {}

/**
 * The generic OK response.
 *
 * @since 0.1.0
 * @category Schemas
 */
export class Ok extends Schema.Class<Ok>("effect-kernel/Ok")({
  ok: Schema.Boolean
}) {}

/**
 * Identifies a browser session.
 *
 * @since 0.1.0
 * @category Models
 */
export interface BrowserParams {
  /** The browser session id. */
  readonly id: string
}

/**
 * The input of {@link setCursorVisibility}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface SetCursorVisibilityParams extends BrowserParams {
  /** `true` hides the cursor, `false` shows it. */
  readonly hidden: boolean
}

/**
 * Everything the computer-control operations can fail with: 400, 404, the common errors, a body
 * that does not decode, and input rejected before sending.
 *
 * @since 0.1.0
 * @category Errors
 */
export type ComputerError =
  | BadRequest
  | NotFound
  | KernelError.CommonError
  | KernelError.DecodeError
  | KernelError.InvalidInput

/**
 * Errors of {@link getMousePosition}.
 *
 * @since 0.1.0
 * @category Errors
 */
export type GetMousePositionError = ComputerError

/**
 * Errors of {@link setCursorVisibility}.
 *
 * @since 0.1.0
 * @category Errors
 */
export type SetCursorVisibilityError = ComputerError

/**
 * The get-mouse-position operation (`POST /browsers/{id}/computer/get_mouse_position`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface GetMousePositionService {
  readonly getMousePosition: (params: BrowserParams) => Effect.Effect<MousePosition, GetMousePositionError>
}

/**
 * The get-mouse-position operation as a service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class GetMousePosition
  extends Context.Tag("effect-kernel/GetMousePosition")<GetMousePosition, GetMousePositionService>()
{}

/**
 * The set-cursor-visibility operation (`POST /browsers/{id}/computer/cursor`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface SetCursorVisibilityService {
  readonly setCursorVisibility: (params: SetCursorVisibilityParams) => Effect.Effect<Ok, SetCursorVisibilityError>
}

/**
 * The set-cursor-visibility operation as a service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class SetCursorVisibility
  extends Context.Tag("effect-kernel/SetCursorVisibility")<SetCursorVisibility, SetCursorVisibilityService>()
{}

const documented: ReadonlyArray<internal.StatusErrorClass<BadRequest | NotFound>> = [BadRequest, NotFound]
const decodePosition = internal.decodeJson(MousePosition)
const decodeOk = internal.decodeJson(Ok)

/**
 * Builds the get-mouse-position operation on the shared client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeGetMousePosition: Effect.Effect<GetMousePositionService, never, KernelClient> = Effect.map(
  KernelClient,
  ({ config, httpClient }) => ({
    getMousePosition: (input) =>
      Effect.flatMap(Effect.flatMap(params(input), ({ id }) => segment("id", id)), (browser) => {
        const id = input.id
        const request = HttpClientRequest.post(`/browsers/${browser}/computer/get_mouse_position`)
        const op = internal.operation("getMousePosition", documented, { "kernel.browser.id": id })
        return internal.execute(httpClient, config, op, request, decodePosition(request))
      })
  })
)

/**
 * Builds the set-cursor-visibility operation on the shared client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeSetCursorVisibility: Effect.Effect<SetCursorVisibilityService, never, KernelClient> = Effect.map(
  KernelClient,
  ({ config, httpClient }) => ({
    setCursorVisibility: (input) =>
      typeof input !== "object" || input === null
        ? params(input)
        : typeof input.hidden !== "boolean"
        ? Effect.fail(new InvalidInput({ field: "hidden", message: "hidden must be a boolean" }))
        : Effect.flatMap(segment("id", input.id), (browser) => {
          const { hidden, id } = input
          const request = HttpClientRequest.post(`/browsers/${browser}/computer/cursor`).pipe(
            HttpClientRequest.bodyUnsafeJson({ hidden })
          )
          const op = internal.operation("setCursorVisibility", documented, {
            "kernel.browser.id": id,
            "kernel.cursor.hidden": hidden
          })
          return internal.execute(httpClient, config, op, request, decodeOk(request))
        })
  })
)

/**
 * The get-mouse-position operation as a layer over the shared client.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerGetMousePosition: Layer.Layer<GetMousePosition, never, KernelClient> = Layer.effect(
  GetMousePosition,
  makeGetMousePosition
)

/**
 * The set-cursor-visibility operation as a layer over the shared client.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerSetCursorVisibility: Layer.Layer<SetCursorVisibility, never, KernelClient> = Layer.effect(
  SetCursorVisibility,
  makeSetCursorVisibility
)

/**
 * Reads the mouse cursor's position in a browser session.
 *
 * @since 0.1.0
 * @category Accessors
 * @example
 * ```ts
 * import { Computer } from "effect-kernel"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const { x, y } = yield* Computer.getMousePosition({ id: "browser-id" })
 *   yield* Effect.log(`cursor at ${x},${y}`)
 * })
 * ```
 */
export const getMousePosition = (
  params: BrowserParams
): Effect.Effect<MousePosition, GetMousePositionError, GetMousePosition> =>
  Effect.flatMap(GetMousePosition, (service) => service.getMousePosition(params))

/**
 * Hides (`hidden: true`) or shows the mouse cursor in a browser session.
 *
 * @since 0.1.0
 * @category Accessors
 * @example
 * ```ts
 * import { Computer } from "effect-kernel"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const { ok } = yield* Computer.setCursorVisibility({ id: "browser-id", hidden: true })
 * })
 * ```
 */
export const setCursorVisibility = (
  params: SetCursorVisibilityParams
): Effect.Effect<Ok, SetCursorVisibilityError, SetCursorVisibility> =>
  Effect.flatMap(SetCursorVisibility, (service) => service.setCursorVisibility(params))
