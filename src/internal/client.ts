/**
 * The operations' client, one execution pipeline in small modules (this module re-exports them):
 *
 * - `authenticate.ts`: the transport with the base URL and credentials applied (the token only to
 *   the base's origin), the escape hatch's responses pumped and redacted;
 * - `request.ts`: a definition and its input turned into the request (`makeCall`, `requestOf`);
 * - `execute.ts`: the operation around its attempts (credentials checked, retries, span) and one
 *   attempt (its deadline, the request owned and released when it ends);
 * - `retryPolicy.ts`: which failures are retried, by the operation's idempotency;
 * - `responseBody.ts`: a JSON answer read within its bound, content codings undone, decoded;
 * - `statusError.ts` and `errors.ts`: non-2xx answers and transport failures as the SDK's errors,
 *   with no credential in them (`redact.ts`).
 *
 * @internal
 */
export * from "./authenticate.js"
export * from "./errors.js"
export * from "./execute.js"
export * from "./redact.js"
export * from "./request.js"
export * from "./responseBody.js"
export * from "./retryPolicy.js"
export * from "./statusError.js"
