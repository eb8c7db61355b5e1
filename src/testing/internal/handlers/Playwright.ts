/**
 * The simulator's Playwright execution: it runs no code, so the run succeeds with no result (the
 * service returns the code's).
 *
 * @internal
 */
import type { Handlers } from "./shared.js"
import { ok } from "./shared.js"

export const handlers: Handlers = {
  executePlaywrightCode: ({ op }) => ok(op, { success: true })
}
