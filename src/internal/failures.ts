/**
 * What a transport failure is, in one table: whether a second attempt can succeed (transient) and
 * the message that names its cause. Every transport's error (undici's, fetch's, the platform's)
 * is classified by the codes and messages found along its `cause` chain.
 *
 * @internal
 */

/** What was found along a failure's `cause` chain. */
export interface Evidence {
  readonly codes: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
  readonly messages: ReadonlyArray<string>
}

/** One row of the table. */
export interface Rule {
  readonly name: string
  readonly transient: boolean
  /** The code the row matched, if it matches. */
  readonly matches: (evidence: Evidence) => string | undefined
  /** The message of the failure, for a request to `origin` (the base URL's origin, never a credential). */
  readonly describe: (origin: string, code: string) => string
}

/** TLS verification failures (OpenSSL's codes, Node's host-name check): the same certificate fails again. */
const certificateCodes: ReadonlySet<string> = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_CHAIN_TOO_LONG",
  "INVALID_CA",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID"
])

/** OpenSSL's codes for a TLS handshake answered in plain text: an https URL to a server that speaks http. */
const plainTextCodes: ReadonlySet<string> = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG"])

const headerOverflowCodes: ReadonlySet<string> = new Set(["UND_ERR_HEADERS_OVERFLOW", "HPE_HEADER_OVERFLOW"])
const closedCodes: ReadonlySet<string> = new Set(["UND_ERR_DESTROYED", "UND_ERR_CLOSED"])

const descriptorCodes: ReadonlySet<string> = new Set(["EMFILE", "ENFILE"])

const firstCode = (evidence: Evidence, codes: ReadonlySet<string>): string | undefined =>
  evidence.codes.find((code) => codes.has(code))

/**
 * The table, first matching row wins; a failure no row matches is transient (a connection reset, a
 * socket closed mid-request, a DNS `EAI_AGAIN`, a time-out: what a second attempt can cure).
 *
 * @internal
 */
export const rules: ReadonlyArray<Rule> = [
  {
    name: "certificate refused",
    transient: false,
    matches: (evidence) => firstCode(evidence, certificateCodes),
    describe: (origin, code) =>
      `the TLS certificate of ${origin} was refused (${code}); retrying cannot help: check the host of ` +
      "KERNEL_BASE_URL, or trust the server's CA (KernelTransport.layerUndiciWith({ tls: { ca } }), NODE_EXTRA_CA_CERTS)"
  },
  {
    name: "not a TLS server",
    transient: false,
    matches: (evidence) => firstCode(evidence, plainTextCodes),
    describe: (origin, code) =>
      `${origin} answered the TLS handshake in plain text (${code}): the server there speaks http, not https; ` +
      "retrying cannot help: check the scheme of KERNEL_BASE_URL (the simulator serves http://)"
  },
  {
    name: "header block too large",
    transient: false,
    matches: (evidence) => firstCode(evidence, headerOverflowCodes),
    describe: (origin, code) =>
      `the response of ${origin} has a header block larger than the client accepts (${code}); retrying cannot help`
  },
  {
    name: "closed mid-response",
    // the socket ended inside an answer that was to end with it (`Connection: close`: a chunk or the
    // chunked framing cut short): undici's parser reports that as an `HTTPParserError`, yet the answer
    // was not malformed, its connection dropped (a proxy or an upstream that died mid-answer), and a
    // second attempt can cure it (one a non-idempotent call still does not make: the request was sent)
    transient: true,
    matches: (evidence) =>
      evidence.codes.includes("HPE_INVALID_EOF_STATE") ||
        evidence.messages.some((message) => message.includes("(Invalid EOF state)"))
        ? "HPE_INVALID_EOF_STATE"
        : undefined,
    describe: (origin, code) =>
      `the connection to ${origin} closed before the response ended (${code}): the answer was cut short, ` +
      "as when a proxy or the server drops a connection mid-answer"
  },
  {
    name: "malformed response",
    transient: false,
    matches: (evidence) =>
      evidence.codes.find((code) => code.startsWith("HPE_") || code === "UND_ERR_INFO") ??
        (evidence.names.includes("HTTPParserError") ? "HTTPParserError" : undefined) ??
        (evidence.codes.includes("UND_ERR_SOCKET") &&
            evidence.messages.some((message) => message === "bad response" || message === "bad upgrade")
          ? "UND_ERR_SOCKET"
          : undefined) ??
        (evidence.messages.some((message) => /status.*range of 200 to 599|invalid status/i.test(message))
          ? "ERR_INVALID_STATUS"
          : undefined),
    describe: (origin, code) =>
      `the response of ${origin} is not valid HTTP/1.1 (${code}: malformed framing, an invalid status, or an ` +
      "unasked-for 100 Continue, which undici 7 refuses: KernelTransport skips it); retrying cannot help"
  },
  {
    name: "too many content codings",
    transient: false,
    // undici's fetch refuses a body with more than 5 content codings (before reading it)
    matches: (evidence) =>
      evidence.messages.some((message) => /too many content-encodings/i.test(message))
        ? "TOO_MANY_CONTENT_CODINGS"
        : undefined,
    describe: (origin) =>
      `the response of ${origin} has more content codings than the client decodes (at most 5); retrying cannot help`
  },
  {
    name: "port blocked by fetch",
    transient: false,
    // the Fetch standard's "bad port" list (6000, 6667, 5060...): fetch refuses the request before it connects
    matches: (evidence) => evidence.messages.includes("bad port") ? "BAD_PORT" : undefined,
    describe: (origin) =>
      `fetch refuses to connect to the port of ${origin} (a port the Fetch standard blocks, such as 6000 or ` +
      "6667); retrying cannot help: serve on another port, or use KernelTransport.layerUndici, which connects to any port"
  },
  {
    name: "transport closed",
    transient: false,
    // undici's client (agent, pool) destroyed or closed: the layer's scope ended (a fiber that outlived
    // its runtime); no request can go through it any more
    matches: (evidence) => firstCode(evidence, closedCodes),
    describe: (origin, code) =>
      `the transport's connections to ${origin} are closed for good (${code}): the layer that made them has ` +
      "ended (its scope closed); retrying cannot help: run the call within the layer's lifetime"
  },
  {
    name: "out of file descriptors",
    transient: true,
    matches: (evidence) => firstCode(evidence, descriptorCodes),
    describe: (origin, code) =>
      `the process ran out of file descriptors (${code}) opening a connection to ${origin}: lower the number of ` +
      "calls in flight, or KernelTransport's `connections` per origin, or raise the limit (`ulimit -n`)"
  },
  {
    name: "host not found",
    // DNS may answer differently a moment later (a service being registered): retried
    transient: true,
    matches: (evidence) => evidence.codes.includes("ENOTFOUND") ? "ENOTFOUND" : undefined,
    describe: (origin, code) =>
      `could not resolve the host of ${origin} (${code}). Check KERNEL_BASE_URL (or the baseUrl option) for a ` +
      "typo, and that this machine's DNS can resolve it"
  },
  {
    name: "connection refused",
    transient: true,
    matches: (evidence) => evidence.codes.includes("ECONNREFUSED") ? "ECONNREFUSED" : undefined,
    describe: (origin, code) =>
      `could not connect to ${origin}: connection refused (${code}). Check KERNEL_BASE_URL (or the baseUrl ` +
      "option) and that the server is running there (the simulator: npx effect-kernel-simulator --port <port>)"
  }
]

/**
 * The codes (`code`, `errno` names) and messages along a failure's `cause` chain (and the `errors`
 * of an `AggregateError`), a bounded walk.
 *
 * @internal
 */
export const evidenceOf = (failure: unknown): Evidence => {
  const codes: Array<string> = []
  const names: Array<string> = []
  const messages: Array<string> = []
  const seen = new Set<unknown>()
  const visit = (value: unknown, depth: number): void => {
    if (depth > 8 || typeof value !== "object" || value === null || seen.has(value)) return
    seen.add(value)
    if ("code" in value && typeof value.code === "string") codes.push(value.code)
    if ("name" in value && typeof value.name === "string") names.push(value.name)
    if ("message" in value && typeof value.message === "string") messages.push(value.message)
    if ("errors" in value && Array.isArray(value.errors)) {
      for (const inner of value.errors.slice(0, 8)) visit(inner, depth + 1)
    }
    if ("cause" in value) visit(value.cause, depth + 1)
  }
  visit(failure, 0)
  return { codes, names, messages }
}

/** The row a failure matches, and the code it matched by. @internal */
export const classify = (failure: unknown): { readonly rule: Rule; readonly code: string } | undefined => {
  const evidence = evidenceOf(failure)
  for (const rule of rules) {
    const code = rule.matches(evidence)
    if (code !== undefined) return { rule, code }
  }
  return undefined
}
