/**
 * Computer controls of a browser session: the mouse (position, move, click, drag, scroll), the keyboard
 * (typed text, keys), the cursor's visibility, screenshots, the clipboard and batches of actions.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as internal from "./internal/client.js"
import type { ModelClass } from "./internal/declaredClass.js"
import type { OperationError } from "./internal/defineOperation.js"
import * as Generated from "./internal/generated/modules/Computer.js"
import * as OperationsTable from "./internal/operations.js"
import * as Surface from "./internal/surface.js"
import { KernelClient } from "./KernelClient.js"
import type * as KernelError from "./KernelError.js"

/**
 * The generated part of the module: the schemas and the operations of the area that are not
 * written here (see scripts/generate).
 *
 * @since 0.2.0
 */
export * from "./internal/generated/modules/Computer.js"

// the models' declared types written out, as the error classes' are (internal/declaredClass.ts): a
// `Schema.Class`'s instance is `Struct.Type` of its fields, which tsc resolves wherever two success
// types are compared (an `Effect.gen` that yields `getMousePosition` and another operation)
const mousePositionFields = { x: Schema.Int, y: Schema.Int }

const MousePositionBase: ModelClass<
  MousePosition,
  typeof mousePositionFields,
  { readonly x: number; readonly y: number }
> = Schema.Class<MousePosition>("effect-kernel/MousePosition")(mousePositionFields)

const okFields = { ok: Schema.Boolean }

const OkBase: ModelClass<Ok, typeof okFields, { readonly ok: boolean }> = Schema.Class<Ok>("effect-kernel/Ok")(okFields)

/**
 * The mouse cursor's position, in pixels from the top-left corner of the screen.
 *
 * @since 0.1.0
 * @category Schemas
 */
export class MousePosition extends MousePositionBase {}

/**
 * The generic OK response.
 *
 * @since 0.1.0
 * @category Schemas
 */
export class Ok extends OkBase {}

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
 * The input of {@link getMousePosition} (the naming rule's `<Operation>Params`, as every
 * generated operation has).
 *
 * @since 0.2.0
 * @category Models
 */
export type GetMousePositionParams = BrowserParams

/**
 * What {@link getMousePosition} succeeds with.
 *
 * @since 0.2.0
 * @category Models
 */
export type GetMousePositionSuccess = MousePosition

/**
 * What {@link setCursorVisibility} succeeds with.
 *
 * @since 0.2.0
 * @category Models
 */
export type SetCursorVisibilitySuccess = Ok

/**
 * Everything the computer-control operations can fail with: 400, 404, the common errors, a body
 * that does not decode, and input rejected before sending.
 *
 * @since 0.1.0
 * @category Errors
 */
export type ComputerError = GetMousePositionError | SetCursorVisibilityError

/**
 * Errors of {@link getMousePosition}.
 *
 * @since 0.1.0
 * @category Errors
 */
export type GetMousePositionError = OperationError<KernelError.BadRequest | KernelError.NotFound>

/**
 * Errors of {@link setCursorVisibility}.
 *
 * @since 0.1.0
 * @category Errors
 */
export type SetCursorVisibilityError = OperationError<KernelError.BadRequest | KernelError.NotFound>

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
{
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/GetMousePosition"
}

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
{
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/SetCursorVisibility"
}

// prepared on first use, not when the module is imported
const callGetMousePosition = Surface.lazy(() =>
  internal.makeCall(OperationsTable.getMousePosition, internal.decodeJson(MousePosition))
)
const callSetCursorVisibility = Surface.lazy(() =>
  internal.makeCall(OperationsTable.setCursorVisibility, internal.decodeJson(Ok))
)

/**
 * Builds the get-mouse-position operation on the shared client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeGetMousePosition: Effect.Effect<GetMousePositionService, never, KernelClient> = Effect.map(
  KernelClient,
  (client) => ({ getMousePosition: Surface.onFirstCall(callGetMousePosition, client) })
)

/**
 * Builds the set-cursor-visibility operation on the shared client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeSetCursorVisibility: Effect.Effect<SetCursorVisibilityService, never, KernelClient> = Effect.map(
  KernelClient,
  (client) => ({ setCursorVisibility: Surface.onFirstCall(callSetCursorVisibility, client) })
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
 * Retried on a transient failure (a 5xx, a time-out, a lost connection): repeating it is harmless.
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
 * Retried on a transient failure (a 5xx, a time-out, a lost connection): repeating it is harmless (it sets a state).
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

/**
 * Builds every Computer operation on the shared client, the generated ones and the hand-written ones,
 * as one context.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const make: Effect.Effect<
  Context.Context<Layer.Layer.Success<typeof Generated.layer> | GetMousePosition | SetCursorVisibility>,
  never,
  KernelClient
> = /*#__PURE__*/ Effect.zipWith(
  Effect.zipWith(
    Generated.make,
    makeGetMousePosition,
    (context, service) => Context.add(context, GetMousePosition, service)
  ),
  makeSetCursorVisibility,
  (context, service) => Context.add(context, SetCursorVisibility, service)
)

/**
 * Every Computer operation as one layer over the shared client (one context, not a merge of layers).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layer: Layer.Layer<
  Layer.Layer.Success<typeof Generated.layer> | GetMousePosition | SetCursorVisibility,
  never,
  KernelClient
> = /*#__PURE__*/ Layer.effectContext(make)
