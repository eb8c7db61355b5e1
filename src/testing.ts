/**
 * Testing helpers.
 *
 * @since 0.1.0
 */
export {}
