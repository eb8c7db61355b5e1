/**
 * The fault matrix: what a server or network can do, and the exact outcome the SDK promises.
 * `test/faults.test.ts` runs every row over real loopback HTTP; docs/reliability.md's table is
 * rendered from these rows (and checked against them by the same test).
 */
import type { Duration } from "effect"
import type { KernelConfig } from "effect-kernel"
import type { KernelSimulator } from "effect-kernel/testing"

// the five operations of the fault matrix (the simulator serves every operation)
export type Operation =
  | "downloadReplay"
  | "setCursorVisibility"
  | "getMousePosition"
  | "listBrowserPools"
  | "deleteDeployment"

export interface Row {
  /** What goes wrong, as the docs table says it. */
  readonly fault: string
  readonly operation: Operation
  /** Which replay the download asks for ("ready" 256 KiB, or "forever" still recording). */
  readonly replay?: "ready" | "forever"
  readonly faults?: ReadonlyArray<KernelSimulator.Fault>
  readonly config?: Omit<KernelConfig.Options, "apiKey" | "baseUrl">
  readonly download?: { readonly maxWait?: Duration.DurationInput }
  /** Special set-ups the runner knows. */
  readonly special?: "refused" | "redirect-undici" | "redirect-fetch"
  /** The `_tag` of the failure, or "success". */
  readonly outcome: string
  /** How many requests the simulator must have seen, when that is part of the promise. */
  readonly requests?: number
  /** A minimum elapsed time, in ms, for the waits the server asked for. */
  readonly atLeastMs?: number
  /** Fields the error must carry, exactly. */
  readonly fields?: Readonly<Record<string, string | number>>
  /** Text fields of the error must contain these. */
  readonly contains?: Readonly<Record<string, string>>
  /** What the table says beyond the tag. */
  readonly note: string
}

const once = (fault: Omit<KernelSimulator.Fault, "times">): KernelSimulator.Fault => ({ ...fault, times: 1 })
const noRetry = { maxRetries: 0 }
const tenMegabytes = "x".repeat(10 * 1024 * 1024)

export const rows: ReadonlyArray<Row> = [
  {
    fault: "connection refused (nothing listening)",
    operation: "getMousePosition",
    special: "refused",
    config: noRetry,
    outcome: "TransportError",
    contains: { message: "ECONNREFUSED" },
    note: "message names ECONNREFUSED"
  },
  {
    fault: "connection reset before headers",
    operation: "listBrowserPools",
    faults: [{ route: "listBrowserPools", reset: true }],
    config: noRetry,
    outcome: "TransportError",
    requests: 1,
    note: ""
  },
  {
    fault: "connection reset once, then normal",
    operation: "listBrowserPools",
    faults: [once({ route: "listBrowserPools", reset: true })],
    outcome: "success",
    requests: 2,
    note: "retried"
  },
  {
    fault: "connection reset mid-body of a replay",
    operation: "downloadReplay",
    faults: [{ route: "downloadReplay", resetAt: 100_000 }],
    outcome: "TransportError",
    note: "no file left"
  },
  {
    fault: "replay body truncated (shorter than Content-Length)",
    operation: "downloadReplay",
    faults: [{ route: "downloadReplay", truncateAt: 120_000 }],
    outcome: "TransportError",
    note: "no file left"
  },
  {
    fault: "JSON body truncated",
    operation: "listBrowserPools",
    faults: [{ route: "listBrowserPools", truncateAt: 40 }],
    config: noRetry,
    outcome: "TransportError",
    note: ""
  },
  {
    fault: "headers never come",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", delay: "1 hour" }],
    config: { maxRetries: 1, timeout: "300 millis" },
    outcome: "Timeout",
    requests: 2,
    note: "per attempt, then retried"
  },
  {
    fault: "headers late once, then normal",
    operation: "getMousePosition",
    faults: [once({ route: "getMousePosition", delay: "1 hour" })],
    config: { maxRetries: 1, timeout: "300 millis" },
    outcome: "success",
    requests: 2,
    note: "the slow attempt is abandoned"
  },
  {
    fault: "replay body stalls mid-stream",
    operation: "downloadReplay",
    faults: [{ route: "downloadReplay", stallAt: 70_000 }],
    config: { idleTimeout: "300 millis" },
    outcome: "Timeout",
    note: "idle time-out; no file left"
  },
  {
    fault: "invalid JSON",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 200, body: "{\"x\": 1, " }],
    outcome: "DecodeError",
    note: "not retried"
  },
  {
    fault: "JSON of the wrong shape (an array)",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 200, body: "[1, 2]" }],
    outcome: "DecodeError",
    note: ""
  },
  {
    fault: "a required field missing",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 200, body: "{\"x\": 1}" }],
    outcome: "DecodeError",
    contains: { message: "[\"y\"]" },
    note: "message names `y`"
  },
  {
    fault: "a field of the wrong type",
    operation: "setCursorVisibility",
    faults: [{ route: "setCursorVisibility", status: 200, body: "{\"ok\": \"yes\"}" }],
    outcome: "DecodeError",
    contains: { message: "[\"ok\"]" },
    note: "message names `ok`"
  },
  {
    fault: "extra unknown fields",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 200, body: "{\"x\": 1, \"y\": 2, \"z\": 3, \"meta\": {}}" }],
    outcome: "success",
    note: "tolerated"
  },
  {
    fault: "empty 200 body",
    operation: "listBrowserPools",
    faults: [{ route: "listBrowserPools", status: 200, body: "" }],
    outcome: "DecodeError",
    note: ""
  },
  {
    fault: "HTML 502 from a proxy",
    operation: "listBrowserPools",
    faults: [{
      route: "listBrowserPools",
      status: 502,
      body: "<html><body><h1>502 Bad Gateway</h1></body></html>",
      headers: { "content-type": "text/html" }
    }],
    config: noRetry,
    outcome: "UnexpectedStatus",
    fields: { status: 502 },
    contains: { body: "502 Bad Gateway" },
    note: "status 502, body excerpt"
  },
  {
    fault: "error body that is not the Error shape",
    operation: "deleteDeployment",
    faults: [{ route: "deleteDeployment", status: 404, body: "{\"error\": \"nope\"}" }],
    outcome: "NotFound",
    fields: { status: 404, code: "unknown" },
    note: "code `unknown`"
  },
  {
    fault: "10 MB error body",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 400, body: tenMegabytes }],
    outcome: "BadRequest",
    note: "read bounded to 64 KiB"
  },
  {
    fault: "429 with Retry-After: 1, then normal",
    operation: "listBrowserPools",
    faults: [once({ route: "listBrowserPools", status: 429, headers: { "retry-after": "1" } })],
    outcome: "success",
    requests: 2,
    atLeastMs: 950,
    note: "waits the Retry-After"
  },
  {
    fault: "503 once, then normal",
    operation: "getMousePosition",
    faults: [once({ route: "getMousePosition", status: 503 })],
    outcome: "success",
    requests: 2,
    note: "retried after back-off"
  },
  {
    fault: "503 on every attempt",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 503, headers: { "retry-after-ms": "10" } }],
    config: { maxRetries: 2 },
    outcome: "UnexpectedStatus",
    requests: 3,
    note: "retries exhausted"
  },
  {
    fault: "500 on every attempt",
    operation: "deleteDeployment",
    faults: [{ route: "deleteDeployment", status: 500, headers: { "retry-after-ms": "10" } }],
    config: { maxRetries: 1 },
    outcome: "InternalServerError",
    requests: 2,
    note: "retries exhausted"
  },
  {
    fault: "503 with x-should-retry: false",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 503, headers: { "x-should-retry": "false" } }],
    outcome: "UnexpectedStatus",
    requests: 1,
    note: "not retried"
  },
  {
    fault: "401",
    operation: "listBrowserPools",
    faults: [{ route: "listBrowserPools", status: 401 }],
    outcome: "Unauthorized",
    requests: 1,
    note: "not retried"
  },
  {
    fault: "undocumented status (418)",
    operation: "deleteDeployment",
    faults: [{ route: "deleteDeployment", status: 418 }],
    outcome: "UnexpectedStatus",
    requests: 1,
    note: ""
  },
  {
    fault: "202 forever",
    operation: "downloadReplay",
    replay: "forever",
    download: { maxWait: "1 second" },
    outcome: "ReplayNotReady",
    requests: 2,
    note: "at maxWait; no file"
  },
  ...([
    ["missing", undefined],
    ["0", "0"],
    ["negative", "-3"],
    ["non-numeric", "soon"]
  ] as const).map(([what, value]): Row => ({
    fault: `202 with Retry-After ${what}, then ready`,
    operation: "downloadReplay",
    faults: [
      once({ route: "downloadReplay", status: 202, headers: value === undefined ? {} : { "retry-after": value } })
    ],
    outcome: "success",
    requests: 2,
    atLeastMs: 950,
    note: "waits 1 s"
  })),
  {
    fault: "202 with Retry-After as an HTTP date, then ready",
    operation: "downloadReplay",
    faults: [once({ route: "downloadReplay", status: 202, headers: { "retry-after": "HTTP-DATE+2" } })],
    outcome: "success",
    requests: 2,
    atLeastMs: 950,
    note: "waits until the date"
  },
  {
    fault: "202 with a huge Retry-After, then ready",
    operation: "downloadReplay",
    faults: [once({ route: "downloadReplay", status: 202, headers: { "retry-after": "86400" } })],
    config: { maxRetryAfter: "1 second" },
    outcome: "success",
    requests: 2,
    atLeastMs: 950,
    note: "capped at maxRetryAfter"
  },
  {
    fault: "200 replay with a non-mp4 content type",
    operation: "downloadReplay",
    faults: [{
      route: "downloadReplay",
      status: 200,
      body: "<html>login</html>",
      headers: { "content-type": "text/html" }
    }],
    outcome: "DecodeError",
    note: "no file"
  },
  {
    fault: "redirect to another origin (undici transport)",
    operation: "getMousePosition",
    special: "redirect-undici",
    outcome: "UnexpectedStatus",
    fields: { status: 307 },
    note: "not followed; the other origin sees nothing"
  },
  {
    fault: "redirect to another origin (fetch transport)",
    operation: "getMousePosition",
    special: "redirect-fetch",
    outcome: "UnexpectedStatus",
    fields: { status: 307 },
    note: "not followed (the SDK asks fetch for redirect: \"manual\"); the other origin sees nothing"
  },
  {
    fault: "200 JSON nested 6,000 levels deep",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 200, body: "[".repeat(6000) + "]".repeat(6000) }],
    outcome: "DecodeError",
    note: "bounded message, no RangeError defect"
  },
  {
    fault: "200 JSON with a 10 MB invalid field",
    operation: "getMousePosition",
    faults: [{ route: "getMousePosition", status: 200, body: JSON.stringify({ x: tenMegabytes, y: 1 }) }],
    outcome: "DecodeError",
    contains: { message: `["x"]` },
    note: "message at most 4 KiB, names the field"
  },
  {
    fault: "replay answered 206 Partial Content",
    operation: "downloadReplay",
    faults: [{ route: "downloadReplay", status: 206, body: "fragment", headers: { "content-type": "video/mp4" } }],
    outcome: "UnexpectedStatus",
    fields: { status: 206 },
    note: "a fragment is not the replay; nothing written"
  },
  {
    fault: "replay answered 204 No Content",
    operation: "downloadReplay",
    faults: [{ route: "downloadReplay", status: 204 }],
    outcome: "UnexpectedStatus",
    fields: { status: 204 },
    note: "nothing written"
  },
  {
    fault: "replay sent with Content-Encoding: gzip",
    operation: "downloadReplay",
    faults: [{
      route: "downloadReplay",
      status: 200,
      body: "compressed",
      headers: { "content-type": "video/mp4", "content-encoding": "gzip" }
    }],
    outcome: "DecodeError",
    contains: { message: "content-encoding" },
    note: "decided by the header on every transport; nothing written"
  },
  {
    fault: "200 video/mp4 whose body is not an mp4",
    operation: "downloadReplay",
    faults: [{
      route: "downloadReplay",
      status: 200,
      body: "<html>oops</html>",
      headers: { "content-type": "video/mp4" }
    }],
    outcome: "DecodeError",
    contains: { message: "ftyp" },
    note: "the first box must be ftyp; nothing written"
  }
]

/** The table of docs/reliability.md. */
export const renderTable = (): string =>
  [
    "| # | fault | operation | outcome | |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map((row, i) =>
      `| ${i + 1} | ${row.fault} | ${row.operation} | ${
        row.outcome === "success" ? "success" : `\`${row.outcome}\``
      } | ${row.note} |`
    )
  ].join("\n")
