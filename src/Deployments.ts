/**
 * Deployments of apps.
 *
 * @since 0.1.0
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/client.js"
import { params, segment } from "./internal/path.js"
import { KernelClient } from "./KernelClient.js"
import type * as KernelError from "./KernelError.js"
import { NotFound } from "./KernelError.js"

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
export type DeleteDeploymentError = NotFound | KernelError.CommonError | KernelError.InvalidInput

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
{}

const documented = [NotFound]

/**
 * Builds the operation on the shared client. Any 2xx answer is success; its body is discarded.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeDelete: Effect.Effect<DeleteDeploymentService, never, KernelClient> = Effect.map(
  KernelClient,
  ({ config, httpClient }) => ({
    delete: (input) =>
      Effect.flatMap(Effect.flatMap(params(input), ({ id }) => segment("id", id)), (deployment) => {
        const id = input.id
        const request = HttpClientRequest.del(`/deployments/${deployment}`)
        const op = internal.operation("deleteDeployment", documented, { "kernel.deployment.id": id })
        return internal.execute(httpClient, config, op, request, (response) => Effect.ignore(response.arrayBuffer))
      })
  })
)

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

const del = (params: DeploymentParams): Effect.Effect<void, DeleteDeploymentError, DeleteDeployment> =>
  Effect.flatMap(DeleteDeployment, (service) => service.delete(params))

export {
  /**
   * Deletes a deployment: a running one is stopped and marked for deletion; one that is already
   * stopped or failed is left as it is and the call returns at once. Safe to retry.
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
