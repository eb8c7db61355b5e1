/**
 * Deployments of apps: create (a multipart upload), list, retrieve, follow as they run, delete.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/client.js"
import type { OperationErrorNoContent } from "./internal/defineOperation.js"
import * as Generated from "./internal/generated/modules/Deployments.js"
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
export * from "./internal/generated/modules/Deployments.js"

/**
 * Identifies a deployment.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DeploymentParams {
  /** The deployment id. */
  readonly id: string
}

/**
 * Everything deleting a deployment can fail with: 404, the common errors, and input rejected
 * before sending.
 *
 * @since 0.1.0
 * @category Errors
 */
export type DeleteDeploymentError = OperationErrorNoContent<KernelError.NotFound>

/**
 * The input of {@link delete} (the naming rule's `<Operation>Params`, as every generated operation
 * has).
 *
 * @since 0.2.0
 * @category Models
 */
export type DeleteDeploymentParams = DeploymentParams

/**
 * What {@link delete} succeeds with: nothing (204).
 *
 * @since 0.2.0
 * @category Models
 */
export type DeleteDeploymentSuccess = void

/**
 * The delete-deployment operation (`DELETE /deployments/{id}`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface DeleteDeploymentService {
  readonly delete: (params: DeploymentParams) => Effect.Effect<void, DeleteDeploymentError>
}

/**
 * The delete-deployment operation as a service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class DeleteDeployment
  extends Context.Tag("effect-kernel/DeleteDeployment")<DeleteDeployment, DeleteDeploymentService>()
{
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/DeleteDeployment"
}

// prepared on first use, not when the module is imported
const callDelete = Surface.lazy(() =>
  internal.makeCall(
    OperationsTable.deleteDeployment,
    // whatever a 2xx carries is not kept: up to 64 KiB is read (the connection may then be reused),
    // past that it is dropped with its connection
    () => (response) => internal.discardBody(response)
  )
)

/**
 * Builds the operation on the shared client. Any 2xx answer is success; its body is discarded
 * (at most 64 KiB of it is read).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeDelete: Effect.Effect<DeleteDeploymentService, never, KernelClient> = Effect.map(
  KernelClient,
  (client) => ({ delete: Surface.onFirstCall(callDelete, client) })
)

/**
 * {@link makeDelete} under the name the naming rule gives it (`make<Operation>`).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const makeDeleteDeployment: Effect.Effect<DeleteDeploymentService, never, KernelClient> = makeDelete

/**
 * The operation as a layer over the shared client.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerDelete: Layer.Layer<DeleteDeployment, never, KernelClient> = Layer.effect(
  DeleteDeployment,
  makeDelete
)

/**
 * {@link layerDelete} under the name the naming rule gives it (`layer<Operation>`).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerDeleteDeployment: Layer.Layer<DeleteDeployment, never, KernelClient> = layerDelete

const del = (params: DeploymentParams): Effect.Effect<void, DeleteDeploymentError, DeleteDeployment> =>
  Effect.flatMap(DeleteDeployment, (service) => service.delete(params))

export {
  /**
   * Deletes a deployment: a running one is stopped and marked for deletion; one that is already
   * stopped or failed is left as it is and the call returns at once. Safe to retry.
   *
   * Retried on a transient failure (a 5xx, a time-out, a lost connection): repeating it is harmless.
   *
   * @since 0.1.0
   * @category Accessors
   * @example
   * ```ts
   * import { Deployments } from "effect-kernel"
   *
   * const program = Deployments.delete({ id: "deployment-id" })
   * ```
   */
  del as delete
}

/**
 * `Deployments.delete` under the operation's name (`deleteDeployment`).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const deleteDeployment: (
  params: DeploymentParams
) => Effect.Effect<void, DeleteDeploymentError, DeleteDeployment> = del

/**
 * Builds every Deployments operation on the shared client, the generated ones and the hand-written ones,
 * as one context.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const make: Effect.Effect<
  Context.Context<Layer.Layer.Success<typeof Generated.layer> | DeleteDeployment>,
  never,
  KernelClient
> = /*#__PURE__*/ Effect.zipWith(
  Generated.make,
  makeDelete,
  (context, service) => Context.add(context, DeleteDeployment, service)
)

/**
 * Every Deployments operation as one layer over the shared client (one context, not a merge of layers).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layer: Layer.Layer<Layer.Layer.Success<typeof Generated.layer> | DeleteDeployment, never, KernelClient> =
  /*#__PURE__*/ Layer.effectContext(make)
