/**
 * A remote resource tied to a scope: created (or acquired) once, deleted (or released) once when
 * the scope closes, however it closes (success, failure, interruption), and never lost to an
 * interruption in between.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { undecodedSecrets } from "./responseBody.js"
import { currentRetryStop } from "./retryPolicy.js"
import { isSecretKey, redactAll, sentSecrets } from "./secrets.js"

/**
 * Runs `effect` on a fiber of its own, interruptible (so the call's own time-outs still abort its
 * request), and waits for it: called where the caller is uninterruptible (the acquisition and the
 * finalizer of `Effect.acquireRelease`), an interruption of the caller waits for the request to
 * end instead of abandoning it half-way (a browser created on the server whose id never arrived).
 */
const detached = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.forkDaemon(Effect.interruptible(effect)), Fiber.join)

/**
 * An acquisition run as {@link detached}, but for its caller's interruption: the caller then stops its
 * retries (`currentRetryStop`: a wait between attempts ends at once, and no attempt follows, as nothing was
 * made by one that is retried), waits for the attempt in flight, and releases what it made (`orphan`), since
 * the caller, interrupted, never gets it. The interruption then goes on.
 */
const acquiredDetached = <A, E, R, R2>(
  effect: Effect.Effect<A, E, R>,
  orphan: (resource: A) => Effect.Effect<void, never, R2>
): Effect.Effect<A, E, R | R2> =>
  Effect.flatMap(Deferred.make<void>(), (stop) =>
    Effect.flatMap(
      Effect.forkDaemon(Effect.interruptible(Effect.locally(effect, currentRetryStop, Option.some(stop)))),
      (fiber) =>
        Effect.onInterrupt(
          Effect.interruptible(Fiber.join(fiber)),
          () =>
            Effect.zipRight(
              Deferred.succeed(stop, undefined),
              Effect.flatMap(Fiber.await(fiber), (exit) => Exit.isSuccess(exit) ? orphan(exit.value) : Effect.void)
            )
        )
    ))

/**
 * What a resource holds as `Redacted` (`sentSecrets`: a value the caller wiped has nothing left to hide),
 * with the values of the credential parameters of those that are URLs (a `?jwt=` alone), the longest
 * first: a release's failure must not show them, should the server's message quote them (a browser's
 * CDP URL echoed by a failed delete). An error's message is otherwise the server's words as written
 * (errors.md). Read only when the release failed, after it ran.
 */
const secretsOf = (resource: unknown): Array<string> => withUrlParameters(sentSecrets(resource))

/** The secrets, with the values of the credential parameters of those that are URLs, the longest first. */
const withUrlParameters = (found: ReadonlyArray<string>): Array<string> => {
  const secrets = [...found]
  for (const secret of found) {
    if (!URL.canParse(secret)) continue
    for (const [name, parameter] of new URL(secret).searchParams) if (isSecretKey(name)) secrets.push(parameter)
  }
  return secrets.sort((a, b) => b.length - a.length)
}

/**
 * A release run to its end that cannot fail: its failure is logged at `Warning` level (`what`, and
 * the error's tag and message, without the resource's `secrets`), unless `ignore` says the resource
 * is already gone (a 404).
 */
const releaseLogged = <E2, R2>(
  release: Effect.Effect<unknown, E2, R2>,
  what: string,
  ignore: ((error: E2) => boolean) | undefined,
  secrets: () => ReadonlyArray<string> = () => []
): Effect.Effect<void, never, R2> =>
  detached(release).pipe(
    Effect.asVoid,
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      if (failure._tag === "Some" && ignore?.(failure.value) === true) return Effect.void
      const error: unknown = failure._tag === "Some" ? failure.value : Cause.squash(cause)
      const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect"
      const message = error instanceof Error ? error.message : String(error)
      return Effect.logWarning(`${what} failed (${tag}): ${redactAll(message, secrets())}`)
    })
  )

/**
 * `Effect.acquireRelease` for a resource of the API:
 * - `acquire` runs to its end even when the caller is interrupted meanwhile (the caller waits for
 *   the attempt in flight, at most the call's time-outs, and releases what it made; no retry follows:
 *   see {@link acquiredDetached}); once it succeeded, the release is registered in the scope
 *   in the same uninterruptible step, so no interruption falls between the two;
 * - `release` runs once, when the scope closes, and to its end (an interruption of the fiber
 *   closing the scope does not cut it short); it cannot fail the scope: its failure is logged at
 *   `Warning` level (`what`, and the error's tag and message without the resource's secrets:
 *   {@link secretsOf}), unless `ignore` says the resource is already gone (a 404);
 * - `orphan`: when `acquire` fails although the resource was made (its answer did not decode, yet
 *   names it), the release of what it made, run at once in the same way; the failure stays the
 *   acquisition's.
 *
 * @internal
 */
export const scopedResource = <A, E, R, E2, R2>(
  acquire: Effect.Effect<A, E, R>,
  release: (resource: A, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<unknown, E2, R2>,
  options: {
    readonly what: (resource: A) => string
    readonly ignore?: (error: E2) => boolean
    readonly orphan?: (
      error: E
    ) => { readonly release: Effect.Effect<unknown, E2, R2>; readonly what: string } | undefined
  }
): Effect.Effect<A, E, R | R2 | Scope.Scope> => {
  const orphan = options.orphan
  const acquired = orphan === undefined ? acquire : Effect.tapError(acquire, (error) => {
    const made = orphan(error)
    // what the answer that did not decode holds (no `Redacted` there) is blanked as a resource's secrets are
    return made === undefined
      ? Effect.void
      : releaseLogged(made.release, made.what, options.ignore, () => withUrlParameters(undecodedSecrets(error)))
  })
  const released = (resource: A, exit: Exit.Exit<unknown, unknown>) =>
    releaseLogged(release(resource, exit), options.what(resource), options.ignore, () => secretsOf(resource))
  return Effect.acquireRelease(
    acquiredDetached(acquired, (resource) => released(resource, Exit.interrupt(FiberId.none))),
    released
  )
}
