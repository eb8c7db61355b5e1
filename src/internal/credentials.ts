/**
 * What can be sent as credentials: one rule, used by `KernelConfig` (a `ConfigError` at
 * configuration time) and by every request (an `InvalidInput` when a configuration was built
 * without that check).
 */

/**
 * A bearer token: visible ASCII only (no space, no control character, no line break).
 *
 * @internal
 */
export const isSendableToken = (value: string): boolean => /^[\x21-\x7e]+$/.test(value)

/**
 * A header value: visible ASCII and inner spaces.
 *
 * @internal
 */
export const isSendableHeaderValue = (value: string): boolean => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value)
