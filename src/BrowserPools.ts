/**
 * Browser pools: pools of identically configured browsers owned by the caller's organization.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/client.js"
import { type ErrorClass, withMessage } from "./internal/declaredClass.js"
import type { OperationError } from "./internal/defineOperation.js"
import * as Generated from "./internal/generated/modules/BrowserPools.js"
import * as OperationsTable from "./internal/operations.js"
import * as Resource from "./internal/resource.js"
import * as ResponseBody from "./internal/responseBody.js"
import * as Surface from "./internal/surface.js"
import * as internalTimestamp from "./internal/timestamp.js"
import { KernelClient } from "./KernelClient.js"
import type * as KernelError from "./KernelError.js"

/**
 * The generated part of the module: the schemas and the operations of the area that are not
 * written here (see scripts/generate).
 *
 * @since 0.2.0
 */
export * from "./internal/generated/modules/BrowserPools.js"

export {
  /**
   * A pool as the document describes it, its schema and its type: what `create`, `retrieve` and
   * `update` answer (`list`, one of the five operations of 0.1.0, answers {@link BrowserPool}, as
   * browser-cloud-service.md describes it). Exported under this name, the module's own `BrowserPool`
   * being the list's: a user's declarations name it here (TS2742 otherwise).
   *
   * @since 0.2.0
   * @category Schemas
   */
  BrowserPool as BrowserPoolResource
} from "./internal/generated/schemas/BrowserPools.js"

/**
 * The profile loaded into the pool's browsers.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const BrowserProfile = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  save_changes: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "BrowserProfile" })

// The models below are written out rather than `Schema.Schema.Type<typeof X>`: a program whose
// `Effect.gen` yields `BrowserPools.list()` and another list made tsc resolve each struct's type to
// compare the two arrays (129 ms of one 20-operation program's check). test/models.test.ts checks that
// each is exactly its schema's type. Type aliases, not interfaces: like the empty interfaces they
// replace, they are assignable to `Record<string, unknown>` (an interface with its members is not).

/**
 * The type of {@link BrowserProfile}.
 *
 * @since 0.1.0
 * @category Models
 */
export type BrowserProfile = {
  readonly id?: string | undefined
  readonly name?: string | undefined
  readonly save_changes?: boolean | undefined
}

/**
 * An extension loaded into the pool's browsers.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const BrowserExtension = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String)
}).annotations({ identifier: "BrowserExtension" })

/**
 * The type of {@link BrowserExtension}.
 *
 * @since 0.1.0
 * @category Models
 */
export type BrowserExtension = {
  readonly id?: string | undefined
  readonly name?: string | undefined
}

/**
 * The browser window size of the pool's browsers.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const BrowserViewport = Schema.Struct({
  width: Schema.Int,
  height: Schema.Int,
  refresh_rate: Schema.optional(Schema.Int)
}).annotations({ identifier: "BrowserViewport" })

/**
 * The type of {@link BrowserViewport}.
 *
 * @since 0.1.0
 * @category Models
 */
export type BrowserViewport = {
  readonly width: number
  readonly height: number
  readonly refresh_rate?: number | undefined
}

/**
 * A JSON value (the values of `chrome_policy`), left as it is.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const JsonValue: Schema.Schema<unknown> = Schema.Unknown.annotations({
  identifier: "JsonValue",
  arbitrary: () => (fc) => fc.jsonValue()
})

/**
 * A JSON object kept as the body sent it: every key is data, `__proto__` included (decoding
 * never copies it key by key, so no key can replace the object's prototype).
 *
 * @since 0.2.0
 * @category Schemas
 */
export const JsonObject: Schema.Schema<{ readonly [key: string]: unknown }> = Schema.declare(
  (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u),
  {
    identifier: "JsonObject",
    description: "a JSON object",
    arbitrary: () => (fc) => fc.dictionary(fc.string(), fc.jsonValue()),
    pretty: () => (value) => JSON.stringify(value),
    equivalence: () => (a, b) => JSON.stringify(a) === JSON.stringify(b)
  }
)

/**
 * An RFC 3339 `date-time` (the OpenAPI format; the spec: "ISO 8601 UTC timestamp"), e.g.
 * `2025-01-02T03:04:05Z` or `2025-01-02T03:04:05.123+02:00`, decoded to a `DateTime.Utc`.
 * Anything else (`"0"`, `"yesterday"`, a date without a time or zone) is refused.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const Timestamp: Schema.Schema<DateTime.Utc, string> = internalTimestamp.Timestamp

/**
 * The configuration every browser of a pool is created with. The specification does not say which
 * fields are required; only `size` is (as in the service's OpenAPI document). `chrome_policy` is
 * free-form.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const BrowserPoolConfig = Schema.Struct({
  size: Schema.Int,
  name: Schema.optional(Schema.String),
  fill_rate_per_minute: Schema.optional(Schema.Int),
  timeout_seconds: Schema.optional(Schema.Int),
  stealth: Schema.optional(Schema.Boolean),
  headless: Schema.optional(Schema.Boolean),
  profile: Schema.optional(BrowserProfile),
  extensions: Schema.optional(Schema.Array(BrowserExtension)),
  proxy_id: Schema.optional(Schema.String),
  viewport: Schema.optional(BrowserViewport),
  kiosk_mode: Schema.optional(Schema.Boolean),
  chrome_policy: Schema.optional(JsonObject),
  start_url: Schema.optional(Schema.String)
}).annotations({ identifier: "BrowserPoolConfig" })

/**
 * The type of {@link BrowserPoolConfig}.
 *
 * @since 0.1.0
 * @category Models
 */
export type BrowserPoolConfig = {
  readonly size: number
  readonly name?: string | undefined
  readonly fill_rate_per_minute?: number | undefined
  readonly timeout_seconds?: number | undefined
  readonly stealth?: boolean | undefined
  readonly headless?: boolean | undefined
  readonly profile?: BrowserProfile | undefined
  readonly extensions?: ReadonlyArray<BrowserExtension> | undefined
  readonly proxy_id?: string | undefined
  readonly viewport?: BrowserViewport | undefined
  readonly kiosk_mode?: boolean | undefined
  readonly chrome_policy?: { readonly [key: string]: unknown } | undefined
  readonly start_url?: string | undefined
}

/**
 * A browser pool. `created_at` decodes to a `DateTime.Utc`; unknown extra fields are ignored.
 * (The pool schemas are structs, not classes: decoding 10,000 pools is a hot path, and class
 * instances cost a third more there.)
 *
 * @since 0.1.0
 * @category Schemas
 */
export const BrowserPool = Schema.Struct({
  id: Schema.String,
  name: Schema.optional(Schema.String),
  available_count: Schema.Int,
  acquired_count: Schema.Int,
  created_at: Timestamp,
  browser_pool_config: BrowserPoolConfig
}).annotations({ identifier: "BrowserPool" })

/**
 * The type of {@link BrowserPool}.
 *
 * @since 0.1.0
 * @category Models
 */
export type BrowserPool = {
  readonly id: string
  readonly name?: string | undefined
  readonly available_count: number
  readonly acquired_count: number
  readonly created_at: DateTime.Utc
  readonly browser_pool_config: BrowserPoolConfig
}

/**
 * The body of a successful list: an array of pools.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const BrowserPoolList = Schema.Array(BrowserPool)

/**
 * Everything `list` can fail with: 403 (plan without access) and the common errors.
 *
 * @since 0.1.0
 * @category Errors
 */
export type ListBrowserPoolsError = OperationError<KernelError.Forbidden>

/**
 * What {@link list} succeeds with (the naming rule's `<Operation>Success`, as every generated
 * operation has): every pool, in one answer (the list is not paged).
 *
 * @since 0.2.0
 * @category Models
 */
export type ListBrowserPoolsSuccess = ReadonlyArray<BrowserPool>

/**
 * The list-browser-pools operation (`GET /browser_pools`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ListBrowserPoolsService {
  readonly list: () => Effect.Effect<ReadonlyArray<BrowserPool>, ListBrowserPoolsError>
}

/**
 * The list-browser-pools operation as a service.
 *
 * @since 0.1.0
 * @category Tags
 */
export class ListBrowserPools
  extends Context.Tag("effect-kernel/ListBrowserPools")<ListBrowserPools, ListBrowserPoolsService>()
{
  /**
   * Type-level only, no run-time property (the key at run time is `key`): the base's
   * `Id`, restated so that tsc reads this class as itself, not as its base.
   *
   * @since 0.2.0
   */
  declare readonly Id: "effect-kernel/ListBrowserPools"
}

// prepared on first use, not when the module is imported
const callList = Surface.lazy(() =>
  internal.makeCall(OperationsTable.listBrowserPools, internal.decodeJson(BrowserPoolList))
)

/**
 * Builds the operation on the shared client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeList: Effect.Effect<ListBrowserPoolsService, never, KernelClient> = Effect.map(
  KernelClient,
  (client) => {
    const call = Surface.onFirstCall(callList, client)
    return { list: () => call(undefined) }
  }
)

/**
 * {@link makeList} under the name the naming rule gives it (`make<Operation>`).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const makeListBrowserPools: Effect.Effect<ListBrowserPoolsService, never, KernelClient> = makeList

/**
 * The operation as a layer over the shared client.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerList: Layer.Layer<ListBrowserPools, never, KernelClient> = Layer.effect(ListBrowserPools, makeList)

/**
 * {@link layerList} under the name the naming rule gives it (`layer<Operation>`).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerListBrowserPools: Layer.Layer<ListBrowserPools, never, KernelClient> = layerList

/**
 * Lists the browser pools of the caller's organization.
 *
 * Retried on a transient failure (a 5xx, a time-out, a lost connection): repeating it is harmless.
 *
 * @since 0.1.0
 * @category Accessors
 * @example
 * ```ts
 * import { BrowserPools } from "effect-kernel"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const pools = yield* BrowserPools.list()
 *   for (const pool of pools) console.log(pool.id, pool.available_count)
 * })
 * ```
 */
export const list = (): Effect.Effect<ReadonlyArray<BrowserPool>, ListBrowserPoolsError, ListBrowserPools> =>
  Effect.flatMap(ListBrowserPools, (service) => service.list())

/**
 * {@link list} under the operation's name (`listBrowserPools`).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const listBrowserPools: () => Effect.Effect<
  ReadonlyArray<BrowserPool>,
  ListBrowserPoolsError,
  ListBrowserPools
> = list

/**
 * Builds every BrowserPools operation on the shared client, the generated ones and the hand-written ones,
 * as one context.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const make: Effect.Effect<
  Context.Context<Layer.Layer.Success<typeof Generated.layer> | ListBrowserPools>,
  never,
  KernelClient
> = /*#__PURE__*/ Effect.zipWith(
  Generated.make,
  makeList,
  (context, service) => Context.add(context, ListBrowserPools, service)
)

/**
 * Every BrowserPools operation as one layer over the shared client (one context, not a merge of layers).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layer: Layer.Layer<Layer.Layer.Success<typeof Generated.layer> | ListBrowserPools, never, KernelClient> =
  /*#__PURE__*/ Layer.effectContext(make)

const noBrowserAvailableFields = { idOrName: Schema.String }

// its declared type written out, as the KernelError classes' are (internal/declaredClass.ts)
const NoBrowserAvailableBase: ErrorClass<
  NoBrowserAvailable,
  "NoBrowserAvailable",
  typeof noBrowserAvailableFields,
  { readonly idOrName: string }
> = Schema.TaggedError<NoBrowserAvailable>("effect-kernel/NoBrowserAvailable")(
  "NoBrowserAvailable",
  noBrowserAvailableFields
)

/**
 * {@link acquireScoped} found no browser in the pool within the wait (`acquire` answered 204 No
 * Content: none became available within `acquire_timeout_seconds`). Nothing was acquired, so
 * nothing is released.
 *
 * @since 0.2.0
 * @category Errors
 */
export class NoBrowserAvailable extends NoBrowserAvailableBase {
  /** @since 0.2.0 */
  override get message(): string {
    return `no browser of the pool ${this.idOrName} became available within the wait`
  }

  /**
   * The fields and the message (computed from them, so `Data.Error`'s JSON of the fields leaves it
   * out): what `JSON.stringify` and a JSON logger print.
   *
   * @since 0.2.0
   */
  override toJSON(): unknown {
    return withMessage(super.toJSON(), this.message)
  }
}

/**
 * The input of {@link acquireScoped}: the acquisition's (`idOrName`, `acquire_timeout_seconds`),
 * and `reuse`, which the release sends (whether the browser goes back to the pool as it is, the
 * service's default, or is recreated).
 *
 * @since 0.2.0
 * @category Models
 */
export interface AcquireScopedParams extends Generated.AcquireBrowserParams {
  readonly reuse?: boolean | undefined
}

/**
 * Acquires a browser from a pool (as {@link Generated.acquire | acquire}) and releases it back
 * (as {@link Generated.release | release}, its `session_id`) when the scope closes: on success,
 * failure or interruption, exactly once.
 *
 * - The pool answering 204 (no browser became available within `acquire_timeout_seconds`) fails
 *   with {@link NoBrowserAvailable}: there is no lease, so nothing is released.
 * - Acquiring runs to its end even if the fiber is interrupted meanwhile: the interruption waits
 *   for the long poll in flight to answer (at most its wait and the call's time-outs), so a lease
 *   the server granted is never left behind (it is released at once), but no further attempt is
 *   made (a wait before a retry ends at once); once acquired, its release is registered in the
 *   same uninterruptible step.
 * - An acquisition answered 200 whose answer does not decode (`DecodeError`), or with a 2xx it does
 *   not document (a 201: `UnexpectedStatus`), still leased the browser its `session_id` names: it is
 *   released at once, and `acquireScoped` fails with that error.
 * - Releasing runs to its end too. It cannot fail the scope: a 404 (pool or lease already gone) is
 *   ignored, any other failure is logged at `Warning` level (its tag and message).
 *
 * @since 0.2.0
 * @category Resources
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { BrowserPools } from "effect-kernel"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function*() {
 *     const browser = yield* BrowserPools.acquireScoped({ idOrName: "my-pool", acquire_timeout_seconds: 30 })
 *     yield* Effect.log(`leased ${browser.session_id}`)
 *     // ... use it: the lease is released when this scope closes
 *   })
 * )
 * ```
 */
export const acquireScoped = (
  params: AcquireScopedParams
): Effect.Effect<
  Generated.Browser,
  Generated.AcquireBrowserError | NoBrowserAvailable,
  Generated.AcquireBrowser | Generated.ReleaseBrowser | Scope.Scope
> => {
  const { reuse, ...acquisition } = params
  return Resource.scopedResource(
    Effect.flatMap(
      Generated.acquire(acquisition),
      (outcome): Effect.Effect<Generated.Browser, NoBrowserAvailable> =>
        outcome._tag === "Ok"
          ? Effect.succeed(outcome.value)
          : Effect.fail(new NoBrowserAvailable({ idOrName: params.idOrName }))
    ),
    (browser) =>
      Generated.release({
        idOrName: params.idOrName,
        session_id: browser.session_id,
        ...(reuse === undefined ? {} : { reuse })
      }),
    {
      what: (browser) => `BrowserPools.acquireScoped: releasing browser ${browser.session_id} to ${params.idOrName}`,
      ignore: (error) => error._tag === "NotFound",
      // a 200 whose answer does not decode (or an undocumented 2xx) still leased the browser it names: released at once
      orphan: (error) => {
        const id = ResponseBody.undecodedSessionId(error)
        return id !== undefined
          ? {
            release: Generated.release({
              idOrName: params.idOrName,
              session_id: id,
              ...(reuse === undefined ? {} : { reuse })
            }),
            what: `BrowserPools.acquireScoped: releasing browser ${id} to ${params.idOrName} (its answer ${
              error._tag === "DecodeError" ? "did not decode" : "was an undocumented success"
            })`
          }
          : undefined
      }
    }
  )
}
