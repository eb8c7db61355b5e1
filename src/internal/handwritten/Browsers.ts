/**
 * The hand-written part of the Browsers module (`src/Browsers.ts`, generated, re-exports it):
 * a browser that deletes itself when its scope closes.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Browsers from "../../Browsers.js"
import * as Resource from "../resource.js"
import * as ResponseBody from "../responseBody.js"

/**
 * Creates a browser (as {@link Browsers.create}) that is deleted (as {@link Browsers.delete}) when
 * the scope closes: on success, failure or interruption, exactly once.
 *
 * - Creating runs to its end even if the fiber is interrupted meanwhile: the interruption waits
 *   for the attempt in flight (at most the call's time-outs), so a browser the server created is
 *   never left behind without its id (it is deleted at once), but no further attempt is made (a
 *   wait before a retry, a 429's `Retry-After`, ends at once: the attempt retried made nothing);
 *   once created, its deletion is registered in the same uninterruptible step. A create whose
 *   answer never arrives (its connection cut after the request was sent: not retried) may have
 *   made a browser the SDK cannot name; its `timeout_seconds` ends it. A create answered 2xx whose
 *   answer does not decode (`DecodeError`), or with a 2xx it does not document (a 201:
 *   `UnexpectedStatus`), still made the browser its `session_id` names: it is deleted at once, and
 *   `scoped` fails with that error.
 * - Deleting runs to its end too (an interruption of the fiber closing the scope does not cut it
 *   short). It cannot fail the scope: a 404 (the browser is already gone) is ignored, any other
 *   failure is logged at `Warning` level (its tag and message; the browser's secrets are never
 *   logged).
 *
 * Needs the services of both operations (`Kernel.layer` or `Browsers.layer` provide them) and a
 * `Scope`.
 *
 * @since 0.2.0
 * @category Resources
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Browsers } from "effect-kernel"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function*() {
 *     const browser = yield* Browsers.scoped({ headless: true })
 *     yield* Effect.log(`browser ${browser.session_id}`)
 *     // ... use it: it is deleted when this scope closes
 *   })
 * )
 * ```
 */
export const scoped = (
  params: Browsers.CreateBrowserParams = {}
): Effect.Effect<
  Browsers.CreateBrowserSuccess,
  Browsers.CreateBrowserError,
  Browsers.CreateBrowser | Browsers.DeleteBrowser | Scope.Scope
> =>
  Resource.scopedResource(
    Browsers.create(params),
    (browser) => Browsers.delete({ id: browser.session_id }),
    {
      what: (browser) => `Browsers.scoped: deleting browser ${browser.session_id}`,
      ignore: (error) => error._tag === "NotFound",
      // a 2xx whose answer does not decode (or undocumented) still made the browser it names: deleted at once
      orphan: (error) => {
        const id = ResponseBody.undecodedSessionId(error)
        return id !== undefined
          ? {
            release: Browsers.delete({ id }),
            what: `Browsers.scoped: deleting browser ${id} (its answer ${
              error._tag === "DecodeError" ? "did not decode" : "was an undocumented success"
            })`
          }
          : undefined
      }
    }
  )
