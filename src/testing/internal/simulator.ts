import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import type * as Stream from "effect/Stream"
import type { Operation } from "../../internal/definition.js"
import { operations } from "../../internal/generated/table.js"
import { illFormedAt } from "../../internal/path.js"
import type * as Sim from "../KernelSimulator.js"
import * as engine from "./engine.js"
import * as behaviours from "./handlers/index.js"
import { endBrowser, endPoolWaiters, recording } from "./handlers/shared.js"
import * as live from "./live.js"
import * as mp4 from "./mp4.js"
import * as redaction from "./redact.js"
import { isValidHeader, maxDepth, tooDeep } from "./schema.js"
import * as values from "./values.js"

/** A request's query as the log records it: undefined when there is none, cut like the path. */
const recordedQuery = (query: string | undefined): string | undefined => {
  if (query === undefined || query === "") return undefined
  // a name written with escapes (`tok%65n`) is read decoded
  // (a query naming none, in its names or its values, is kept as it is without a walk)
  const kept = redaction.credentialName.test(query) || query.includes("%") || redaction.mayNameSecret(query)
    ? query.split("&").map((pair) => {
      const equals = pair.indexOf("=")
      if (equals < 0) return pair
      const name = pair.slice(0, equals)
      const decoded = redaction.decodedName(name)
      return redaction.credentialName.test(decoded) || redaction.isSecretKey(decoded) ? `${name}=<redacted>` : pair
    }).join("&")
    : query
  return kept.length > 65_536 ? `${kept.slice(0, 65_536)}…` : kept
}

/** What a transport hands the simulator. */
export interface SimRequest {
  readonly method: string
  /** The path as sent, still percent-encoded, without query. */
  readonly path: string
  /** The query string, without `?` (empty when none). */
  readonly query?: string | undefined
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /**
   * Reads the body, called only once the request is authenticated and routed: at most `limit`
   * bytes are read; a longer body is `TooLarge` and is not read whole.
   */
  readonly readBody: (limit: number) => Effect.Effect<BodyRead>
}

/** The outcome of reading a request body under a limit. */
export type BodyRead = { readonly _tag: "Read"; readonly bytes: Uint8Array } | { readonly _tag: "TooLarge" }

/** Limits of a simulator. */
export interface Limits {
  /** Request bodies longer than this are answered 413 (JSON bodies; uploads have their own). */
  readonly maxBodyBytes: number
  /** The same for the bodies of uploads (multipart or raw bytes). */
  readonly maxUploadBytes: number
  /** The most bytes the world stores (files, uploads, saved profiles); a write beyond is 400. */
  readonly maxStoredBytes: number
  /** How many requests the log keeps (the oldest are dropped). */
  readonly requestLogSize: number
  /** Recorded bodies are cut after this many bytes. */
  readonly recordedBodyBytes: number
  /** The log's total size (paths, headers and bodies, in characters): the oldest are dropped beyond it. */
  readonly requestLogBytes: number
}

/** The documented defaults. */
export const defaultLimits: Limits = {
  maxBodyBytes: 64 * 1024,
  maxUploadBytes: 16 * 1024 * 1024,
  maxStoredBytes: 256 * 1024 * 1024,
  requestLogSize: 1000,
  recordedBodyBytes: 4096,
  requestLogBytes: 8 * 1024 * 1024
}

/** What the simulator answers; the transports turn it into bytes on the wire (or in memory). */
export interface SimResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body:
    | { readonly _tag: "Empty" }
    | { readonly _tag: "Text"; readonly text: string }
    | { readonly _tag: "Replay"; readonly size: number }
    /** Bytes in one piece, or in pieces written one after the other (with back-pressure over HTTP). */
    | { readonly _tag: "Bytes"; readonly bytes: Uint8Array | ReadonlyArray<Uint8Array> }
    /** An open-ended event stream: its frames as things happen, until its source ends or the client goes. */
    | {
      readonly _tag: "Live"
      readonly frames: Stream.Stream<string>
      /** Its keep-alive frame at a time (epoch milliseconds): the transport sends one every 15 s while nothing happens. */
      readonly keepAlive: (now: number) => string
      /** The same frames told without a `Stream` (a stream following a hub): what the HTTP transport sends. */
      readonly follow: live.FollowFrames
      /** What happens at a time while `follow`'s stream is open: the transport waits for it as it sends. */
      readonly deadline?: live.Deadline | undefined
    }
  /** Network-level misbehaviour the transport must act out. */
  readonly network: {
    readonly reset: boolean
    /** Stop the body after this many bytes and close the connection. */
    readonly truncateAt: number | undefined
    /** Stop sending the body after this many bytes, keeping the connection open. */
    readonly stallAt: number | undefined
    /** Reset the connection (RST) after this many body bytes. */
    readonly resetAt: number | undefined
  }
}

const normal: SimResponse["network"] = { reset: false, truncateAt: undefined, stallAt: undefined, resetAt: undefined }

/** How a body ends early, if it does: the first of the cut-offs, and where. */
export const bodyEnding = (
  network: SimResponse["network"]
): { readonly kind: "truncate" | "stall" | "reset"; readonly at: number } | undefined => {
  const candidates = [
    { kind: "truncate" as const, at: network.truncateAt },
    { kind: "stall" as const, at: network.stallAt },
    { kind: "reset" as const, at: network.resetAt }
  ].filter((c): c is { kind: "truncate" | "stall" | "reset"; at: number } => c.at !== undefined)
  return candidates.reduce<{ kind: "truncate" | "stall" | "reset"; at: number } | undefined>(
    (first, c) => first === undefined || c.at < first.at ? c : first,
    undefined
  )
}

const jsonResponse = (status: number, value: unknown, headers: Record<string, string> = {}): SimResponse => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: { _tag: "Text", text: JSON.stringify(value) },
  network: normal
})

/**
 * The documented error answers whose body is not the service's Error shape (spec/kernel-openapi.yml),
 * by `<operation> <status>`: what a fault of that status injected on that operation answers.
 */
const otherErrorBodies: Readonly<Record<string, unknown>> = {
  // BrowserCurlTransportError, with no other property (additionalProperties: false)
  "curlBrowser 502": {
    message: "the request could not reach its destination",
    net_error: -105,
    net_error_name: "ERR_NAME_NOT_RESOLVED"
  },
  // the Error fields and the id of the connection that already exists for the profile and domain
  "createAuthConnection 409": {
    code: "already_exists",
    message: "Auth connection already exists for this profile and domain",
    existing_id: "auth_existing"
  }
}

/** An answer in the service's Error shape `{ code, message, details? }`. */
export const errorResponse = (
  status: number,
  code: string,
  message: string,
  detail?: { readonly code: string; readonly message: string },
  headers: Record<string, string> = {}
): SimResponse =>
  jsonResponse(status, detail === undefined ? { code, message } : { code, message, details: [detail] }, headers)

type Organization = behaviours.Organization

interface ActiveFault {
  readonly fault: Sim.Fault
  remaining: number
}

type Routed = ReturnType<typeof values.routeOf>

/** The route of a request: a method map per path template of the generated table. */
const routeOf = values.routeOf

/**
 * The headers as the log keeps them, and their size in the log's budget (each header's name and value,
 * and 8 more).
 */
const redactHeaders = (
  headers: SimRequest["headers"]
): { readonly headers: Record<string, string>; readonly cost: number } => {
  const out: Record<string, string> = {}
  let cost = 0
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined) continue
    const kept = name === "authorization"
      ? (/^bearer\s/i.test(value) ? `${value.slice(0, 6)} <redacted>` : "<redacted>")
      : redaction.credentialHeaderNames.has(name) || redaction.isSecretKey(name)
      ? "<redacted>"
      // a URL's credentials, in any header (a `Referer`), taken out before the value is cut
      : bounded(redaction.withoutUrlCredentials(value))
    out[name] = kept
    cost += name.length + kept.length + 8
  }
  return { headers: out, cost }
}

/** A header's value as the log keeps it: its first 1,024 characters. */
const bounded = (value: string): string => value.length > 1024 ? `${value.slice(0, 1024)}…` : value

const decodeSegments = (path: string): Option.Option<ReadonlyArray<string>> => {
  const segments = path.split("/").slice(1)
  // nothing to decode without a `%`
  if (!path.includes("%")) return Option.some(segments)
  try {
    return Option.some(segments.map(decodeURIComponent))
  } catch {
    return Option.none()
  }
}

/** Whether every name and value of the query is percent-encoded UTF-8 (what `decodeURIComponent` reads). */
const percentEncoded = (query: string): boolean => {
  try {
    for (const pair of query.split("&")) decodeURIComponent(pair)
    return true
  } catch {
    return false
  }
}

/** What a request bearing an API key created in the simulator is: its organization's, its project's. */
interface CreatedKey {
  readonly org: Organization
  readonly project: string | undefined
  /** When it expires (epoch milliseconds), if it does. */
  readonly expiresAt: number | undefined
}

/** A simulator's world, built from a seed. */
const build = (seed: Sim.Seed, startedAt: number, budget: behaviours.ByteBudget): Map<string, Organization> => {
  const organizations = new Map<string, Organization>()
  const ids = engine.freshIds()
  for (const org of seed.organizations ?? []) {
    const store = engine.emptyStore(ids)
    const stamp = new Date(startedAt).toISOString()
    const browsers = new Map<string, behaviours.Browser>()
    for (const b of org.browsers ?? []) {
      // a seeded browser captures every category of telemetry unless its seed says otherwise
      const telemetry = b.telemetry === undefined ? {} : b.telemetry
      const state = engine.newBrowserState(b.id, {
        mouse: { x: b.mouse?.x ?? 0, y: b.mouse?.y ?? 0 },
        cursorHidden: b.cursorHidden ?? false,
        telemetry,
        ...(b.viewport === undefined ? {} : { viewport: { width: b.viewport.width, height: b.viewport.height } })
      })
      browsers.set(b.id, {
        ...state,
        replays: new Map(
          (b.replays ?? []).map((r) => [r.id, {
            id: r.id,
            size: Math.max(r.size ?? 1024 * 1024, mp4.minimumSize),
            retryAfter: r.retryAfter ?? 1,
            pollsLeft: r.pendingPolls ?? 0,
            readyAt: startedAt + (r.readyAfter === undefined ? 0 : Duration.toMillis(r.readyAfter)),
            startedAt: stamp,
            stopped: true,
            // finished once it is ready (after `readyAfter`; after `pendingPolls`: see the download)
            finishedAt: r.readyAfter === undefined
              ? stamp
              : new Date(startedAt + Duration.toMillis(r.readyAfter)).toISOString()
          }])
        ),
        // a seeded browser does not time out
        activeAt: startedAt,
        idleMs: Number.POSITIVE_INFINITY
      })
      for (const r of b.replays ?? []) {
        engine.put(store, `/browsers/${b.id}/replays`, {
          id: r.id,
          project: b.project,
          deleted: false,
          fields: { id: r.id }
        })
      }
      engine.put(store, "/browsers", {
        id: b.id,
        project: b.project,
        deleted: false,
        fields: behaviours.browserFields(b.id, {
          headless: b.headless ?? false,
          stealth: b.stealth ?? false,
          timeout_seconds: 60,
          created_at: stamp,
          viewport: b.viewport ?? { width: 1920, height: 1080 },
          ...(telemetry === null ? {} : { telemetry })
        })
      })
    }
    for (const pool of org.pools ?? []) {
      engine.put(store, "/browser_pools", {
        id: pool.id,
        project: pool.project,
        deleted: false,
        fields: encodePool(pool)
      })
    }
    for (const d of org.deployments ?? []) {
      engine.put(store, "/deployments", {
        id: d.id,
        project: d.project,
        deleted: false,
        fields: {
          id: d.id,
          status: d.state,
          created_at: stamp,
          region: "aws.us-east-1a",
          ...(d.app_name === undefined ? {} : { app_name: d.app_name }),
          ...(d.version === undefined ? {} : { version: d.version })
        }
      })
    }
    for (const c of org.credentials ?? []) {
      engine.put(store, "/credentials", {
        id: c.id,
        project: c.project,
        deleted: false,
        fields: {
          id: c.id,
          name: c.name ?? c.id,
          domain: c.domain ?? "example.com",
          created_at: stamp,
          updated_at: stamp,
          has_values: false,
          has_totp_secret: c.totp_secret !== undefined,
          ...(c.totp_secret === undefined ? {} : { totp_secret: c.totp_secret })
        }
      })
    }
    engine.reserveIds(store)
    const made: behaviours.Organization = {
      budget,
      id: org.id,
      token: org.token,
      plan: org.plan ?? "paid",
      store,
      browsers,
      deployments: new Map(
        (org.deployments ?? []).map((
          d
        ) => [d.id, { id: d.id, state: d.state, markedForDeletion: false, actions: d.actions }])
      ),
      poolWaiters: new Map(),
      poolIdle: new Map(),
      idleCheckAt: Number.POSITIVE_INFINITY,
      authFlows: new Map(),
      apiKeys: new Map()
    }
    organizations.set(org.token, made)
  }
  // a seeded pool's acquired browsers exist, as acquires made them: listed, released, deleted; made once every
  // organization's seeded ids are reserved (their ids are new across the simulator), and, as seeded browsers,
  // they do not time out
  for (const org of seed.organizations ?? []) {
    const made = organizations.get(org.token)
    if (made !== undefined) leaseSeeded(made, org.pools ?? [], startedAt)
  }
  return organizations
}

/** The browsers a seed's pools say are acquired, made as acquires make them at `now`, never timing out. */
const leaseSeeded = (org: Organization, pools: ReadonlyArray<Sim.PoolSeed>, now: number): void => {
  for (const pool of pools) {
    const resource = engine.find(org.store, "/browser_pools", pool.id, undefined)
    for (let i = 0; resource !== undefined && i < (pool.acquired_count ?? 0); i++) {
      const id = String(behaviours.takeFromPool(org, resource, now)["id"])
      const state = org.browsers.get(id)
      if (state !== undefined) org.browsers.set(id, { ...state, idleMs: Number.POSITIVE_INFINITY })
    }
  }
}

/**
 * The document's 15 deprecated operations are not simulated; their paths answer which operations replace
 * them (`/agents/auth...`: the auth connections; `/projects...`: the organization's projects), never "no such
 * route", which is for a path the document does not have.
 */
const deprecatedFamily = (segments: ReadonlyArray<string>): string | undefined => {
  const template = deprecatedPaths.find((parts) =>
    parts.length === segments.length &&
    parts.every((part, i) => part === "*" ? segments[i] !== "" : part === segments[i])
  )
  return template === undefined ? undefined : template[0] === "agents" ? "/auth/connections" : "/org/projects"
}

/** The paths of the document's deprecated operations (`*`: a path parameter). */
const deprecatedPaths: ReadonlyArray<ReadonlyArray<string>> = [
  "agents/auth",
  "agents/auth/invocations",
  "agents/auth/*",
  "agents/auth/invocations/*",
  "agents/auth/invocations/*/exchange",
  "agents/auth/invocations/*/submit",
  "projects",
  "projects/*",
  "projects/*/limits"
].map((path) => path.split("/"))

/** The five operations served since the first version, with their own exact rules. */
type Legacy = "downloadReplay" | "setCursorVisibility" | "getMousePosition" | "listBrowserPools" | "deleteDeployment"
const legacy: ReadonlySet<string> = new Set<Legacy>([
  "downloadReplay",
  "setCursorVisibility",
  "getMousePosition",
  "listBrowserPools",
  "deleteDeployment"
])
const isLegacy = (name: string): name is Legacy => legacy.has(name)

const definitionOf = (name: string): Operation => all.find((o) => o.name === name)!

const all: ReadonlyArray<Operation> = operations

const none = new URLSearchParams()

const visibleItems = (org: Organization, collection: string, project: string | undefined) =>
  [...(org.store.collections.get(collection)?.values() ?? [])]
    .filter((r) => !r.deleted && (project === undefined || r.project === undefined || r.project === project))
    .map((r) => r.fields)

/**
 * An answer the operation documents: a missing resource (404) on an operation whose only documented
 * client error is 400 (`createDirectory`, `executePlaywrightCode` of a browser that does not exist) is
 * that 400, with the same message.
 */
const documentedOnly = (operation: Operation, reply: engine.Reply): engine.Reply =>
  reply._tag === "Error" && reply.status === 404 && !operation.errors.some((error) => error.status === 404)
    ? { ...reply, status: 400, code: "bad_request" }
    : reply

/** A reply of the engine on the wire. */
const toResponse = (reply: engine.Reply): SimResponse => {
  switch (reply._tag) {
    case "Json":
      return jsonResponse(reply.status, reply.value, reply.headers)
    case "Empty":
      return { status: reply.status, headers: {}, body: { _tag: "Empty" }, network: normal }
    case "Bytes":
      return {
        status: reply.status,
        headers: {
          "content-type": reply.contentType,
          "content-length": String(
            reply.bytes instanceof Uint8Array ? reply.bytes.length : reply.bytes.reduce((n, c) => n + c.length, 0)
          )
        },
        body: { _tag: "Bytes", bytes: reply.bytes },
        network: normal
      }
    case "Events":
    case "Live":
      return {
        status: reply.status,
        // the data's media type, as the service says it (the document declares it on three of the streams)
        headers: {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
          "x-sse-content-type": "application/json"
        },
        body: reply._tag === "Events"
          ? { _tag: "Text", text: reply.text }
          : {
            _tag: "Live",
            frames: reply.frames,
            keepAlive: reply.keepAlive,
            follow: reply.follow,
            deadline: reply.deadline
          },
        network: normal
      }
    case "Error":
      return errorResponse(reply.status, reply.code, reply.message)
  }
}

/** Headers without the ones that frame the body (`content-length`, `transfer-encoding`), in any case; names in lower case. */
const withoutFraming = (headers: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    // by its lower-case name, as the simulator's own headers are: `Content-Type` replaces the answer's
    // `content-type` rather than being sent beside it
    if (lower !== "content-length" && lower !== "transfer-encoding") out[lower] = value
  }
  return out
}

/** The path parameters the document types `format: uuid` (a process's id). */
const uuidParameters: ReadonlySet<string> = new Set(["process_id"])

/**
 * The path's segments with each UUID (checked as one before this) in the form the simulator hands
 * them out, lower case without a `urn:uuid:` prefix: a UUID is one whatever the case of its hex digits
 * (RFC 4122), so `Processes.status` of an id written in upper case finds its process.
 */
const canonicalUuids = (
  operation: Operation,
  templateParts: ReadonlyArray<string>,
  segments: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const out = [...segments]
  for (const parameter of operation.parameters) {
    if (parameter.in !== "path" || !uuidParameters.has(parameter.name)) continue
    const at = templateParts.indexOf(`{${parameter.field}}`)
    const given = out[at]
    if (given !== undefined) out[at] = given.toLowerCase().replace(/^urn:uuid:/, "")
  }
  return out
}

const invalidInput = (message: string): engine.Reply => ({
  _tag: "Error",
  status: 400,
  code: "bad_request",
  message: `invalid input: ${message}`
})

/** Whether query values (strings) are valid for the parameter's schema, read as their JSON types. */
const readParameter = (v: string): ReadonlyArray<unknown> => [
  v,
  ...(v !== "" && Number.isFinite(Number(v)) ? [Number(v)] : []),
  ...(v === "true" ? [true] : v === "false" ? [false] : [])
]

const queryValid = (schema: Operation["parameters"][number]["schema"], given: ReadonlyArray<string>): boolean => {
  // one value: as text, as a number, as a boolean (the readings of `readParameter`, in its order, none allocated)
  if (given.length === 1) {
    const v = given[0]!
    if (values.accepts(schema.ast, v)) return true
    if (v !== "" && Number.isFinite(Number(v)) && values.accepts(schema.ast, Number(v))) return true
    if ((v === "true" || v === "false") && values.accepts(schema.ast, v === "true")) return true
  }
  return values.accepts(schema.ast, given.map((v) => readParameter(v).at(-1)))
}

/** Why a parameter's text is refused (`must be <= 100, got 1000`), read as its most specific type. */
const parameterIssue = (
  name: string,
  schema: Operation["parameters"][number]["schema"],
  given: ReadonlyArray<string>
): string => {
  const allowed = literalsOf(schema.ast)
  // a parameter of one value given several times (`limit=1&limit=2`)
  if (given.length > 1 && !isList(schema.ast)) return `${name}: is given ${given.length} times, once at most`
  if (allowed !== undefined) {
    return `${name}: ${JSON.stringify(given[0]!.slice(0, 100))} is not valid (expected one of ${
      allowed.map((v) => JSON.stringify(v)).join(", ")
    })`
  }
  const value = given.length === 1 ? readingFor(schema.ast, given[0]!) : given.map((v) => readParameter(v).at(-1))
  const why = values.firstIssue(schema, value)?.replace(/^body(?=[.:])/, "")
  return `${name}: ${JSON.stringify(given[0]!.slice(0, 100))} is not valid${
    why === undefined ? "" : ` (${why.replace(/^: /, "")})`
  }`
}

/**
 * A parameter's text read as its schema's type (a string parameter's `mode=999` is the text "999", whose
 * pattern refuses it, not the number 999, which no string is); as its most specific reading otherwise.
 */
const readingFor = (ast: SchemaAST.AST, text: string): unknown =>
  values.unwrap(ast)._tag === "StringKeyword" ? text : readParameter(text).at(-1)

/** The values an enum parameter takes (`"active" | "deleted" | "all"`), `undefined` for another type. */
const literalsOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.LiteralValue> | undefined => {
  const base = values.unwrap(ast)
  if (base._tag === "Literal") return [base.literal]
  if (base._tag !== "Union") return undefined
  const out: Array<SchemaAST.LiteralValue> = []
  for (const member of base.types) {
    const literal = values.unwrap(member)
    if (literal._tag !== "Literal") return undefined
    out.push(literal.literal)
  }
  return out
}

/** Whether a parameter takes several values (an array). */
const isList = (ast: SchemaAST.AST): boolean => values.unwrap(ast)._tag === "TupleType"

const prefixOf = (template: string): string => {
  let prefix = prefixes.get(template)
  if (prefix === undefined) {
    const literal = template.split("/").filter((s) => s !== "" && !s.startsWith("{")).at(-1) ?? "res"
    prefix = literal.replace(/ies$/, "y").replace(/s$/, "")
    prefixes.set(template, prefix)
  }
  return prefix
}

/** The id prefix of each template's resources, worked out once (templates are the table's: a bounded set). */
const prefixes = new Map<string, string>()

const freeForbidden = new Set(["BrowserPools", "Replays"])

/** Validates a request by its definition, then answers it: a behaviour, or by convention. */
const serve = (
  org: Organization,
  operation: Operation,
  template: string,
  segments: ReadonlyArray<string>,
  request: SimRequest,
  bytes: Uint8Array,
  /** The body's text, when it was decoded already (for the log). */
  text: string | undefined,
  project: string | undefined,
  now: number
): engine.Reply | Effect.Effect<engine.Reply> => {
  // `URLSearchParams` reads a bad escape (`%FF`, `%zz`) as U+FFFD or as it is: refused, as a bad path is
  if (request.query !== undefined && request.query.includes("%") && !percentEncoded(request.query)) {
    return invalidInput("the query is not percent-encoded UTF-8")
  }
  const query = new URLSearchParams(request.query ?? "")
  const templateParts = engine.templateParts(template)
  for (const parameter of operation.parameters) {
    if (parameter.in === "path" || parameter.in === "header") {
      const given = parameter.in === "path"
        ? segments[templateParts.indexOf(`{${parameter.field}}`)]
        : request.headers[parameter.name.toLowerCase()]
      if (given !== undefined && !queryValid(parameter.schema, [given])) {
        return invalidInput(parameterIssue(parameter.name, parameter.schema, [given]))
      }
      continue
    }
    if (parameter.in !== "query") continue
    const given = query.getAll(parameter.name)
    // what the document requires in prose only: `path` when `source` is `path` (logs)
    const when = parameter.requiredWhen
    if (when !== undefined && (given[0] ?? "") === "" && query.get(when.field) === when.value) {
      return invalidInput(`${parameter.name}: is required when ${when.field} is ${when.value}`)
    }
    if (given.length === 0) {
      if (parameter.required) return invalidInput(`${parameter.name}: is required`)
      continue
    }
    if (!queryValid(parameter.schema, given)) {
      return invalidInput(parameterIssue(parameter.name, parameter.schema, given))
    }
  }
  segments = canonicalUuids(operation, templateParts, segments)
  const contentType = request.headers["content-type"]
  let body: Record<string, unknown> = {}
  let parts: ReadonlyArray<values.Part> = []
  if (operation.body?.kind === "json") {
    if (bytes.length > 0) {
      if (!isJson(contentType)) {
        return {
          _tag: "Error",
          status: 415,
          code: "unsupported_media_type",
          message: "the request body must be application/json"
        }
      }
      const bodyText = text ?? utf8.decode(bytes)
      const parsed = parseJson(bytes, bodyText)
      if (Option.isNone(parsed)) return invalidInput("body: is not valid JSON")
      const value = parsed.value
      if (!values.isObject(value)) return invalidInput("body: must be a JSON object")
      const unicode = unicodeIssue(bytes, bodyText, value)
      if (unicode !== undefined) return invalidInput(unicode)
      // a field of any JSON (`chrome_policy`) nested thousands deep would be stored, then overflow the
      // stack of every answer that holds it (the control plane's bound, for the same reason)
      if (tooDeep(value, maxDepth)) return invalidInput(`body: nests deeper than ${maxDepth} levels`)
      const issue = values.firstIssue(operation.body.schema, value)
      if (issue !== undefined) return invalidInput(issue)
      // the fields an open object took and ignored are dropped here: behaviours see the listed ones
      const listed = values.listedOnly(operation.body.schema.ast, value)
      body = values.isObject(listed) ? listed : value
    } else if (operation.body.required) {
      return invalidInput("body: is required")
    }
  } else if (operation.body?.kind === "multipart") {
    const schema = operation.body.schema
    // the content type is checked before the body is read (`answer`), as a JSON body's is
    let read: ReadonlyArray<values.Part> = []
    if (bytes.length > 0) {
      const parsed = values.parseMultipart(contentType ?? "", bytes)
      if (parsed === undefined) return invalidInput("body: is not valid multipart/form-data")
      read = parsed
    }
    // the parts as the value they stand for, checked as strictly as a JSON body: required fields
    // (an array's items' too), types, enums, the document's limits, no field it does not name
    const form = values.formValue(schema.ast, read)
    if (typeof form === "string") return invalidInput(form)
    if (bytes.length === 0 && formRequired(operation.body)) return invalidInput("body: is required")
    const issue = values.bodyIssue(schema, form.value)
    if (issue !== undefined) return invalidInput(issue)
    parts = read
    // the fields without their files (and without the parts the form's schema does not name); the first
    // file is kept as the resource's bytes (an extension's download answers it)
    const fields = values.withoutFiles(values.listedOnly(schema.ast, form.value))
    const file = values.filesOf(form.value)[0]
    body = values.isObject(fields) ? { ...fields } : {}
    if (file !== undefined) body["__bytes"] = file
  }
  if (org.plan === "free" && freeForbidden.has(operation.module)) {
    return { _tag: "Error", status: 403, code: "forbidden", message: `your plan does not include ${operation.module}` }
  }
  const call: engine.Call = {
    operation,
    template,
    segments,
    query,
    body,
    raw: bytes,
    parts,
    project,
    now,
    headers: request.headers
  }
  const stored = body["__bytes"]
  return engine.missingParent(org.store, call) ?? behaviours.handle(org, call) ??
    // an upload the resource keeps (an extension's zip...) is held to the byte budget
    (stored instanceof Uint8Array ? behaviours.overBudget(org, stored.length) : undefined) ??
    engine.generic(org.store, call, prefixOf)
}

/** The token of a `Bearer` Authorization header; the scheme is case-insensitive. */
export const bearerToken = (authorization: string | undefined): string | undefined => {
  const match = authorization === undefined ? null : /^bearer +(\S+) *$/i.exec(authorization)
  return match === null ? undefined : match[1]
}

const mediaType = (contentType: string | undefined): string | undefined =>
  contentType?.split(";")[0]!.trim().toLowerCase()

const isJson = (contentType: string | undefined): boolean => mediaType(contentType) === "application/json"

const isMultipart = (contentType: string | undefined): boolean => mediaType(contentType) === "multipart/form-data"

/**
 * Whether a multipart body is required: the table does not say, its schema does (an empty form, `{}`,
 * does not fit it; every multipart body of the document is required and has required fields).
 */
const formRequired = (body: { readonly schema: Schema.Schema.AnyNoContext }): boolean =>
  !values.accepts(body.schema.ast, {})

const gatewayPage = (status: number): string => {
  const reason = status === 429
    ? "Too Many Requests"
    : status === 502
    ? "Bad Gateway"
    : status === 503
    ? "Service Temporarily Unavailable"
    : status === 504
    ? "Gateway Time-out"
    : "Error"
  return `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`
}

/** The most faults injected at once: one more drops the oldest (docs/testing.md). */
const maxFaults = 1000

/** The whole simulated service: state, faults, recording, and the request handler. */
export const make = (seed: Sim.Seed, limits: Limits = defaultLimits) =>
  Effect.map(Clock.currentTimeMillis, (startedAt) => {
    let organizations = new Map<string, Organization>()
    const budget: behaviours.ByteBudget = {
      limit: limits.maxStoredBytes,
      used: () => {
        let total = 0
        for (const org of organizations.values()) total += engine.storedBytes(org.store, org.browsers.values())
        return total
      }
    }
    organizations = build(seed, startedAt, budget)
    const faults: Array<ActiveFault> = []
    // a bounded ring: the oldest records are dropped. The log holds `recorded` from `first` on: a dropped
    // record only moves `first`, and the dropped ones are cut off the arrays once they are as many as
    // the log's size (a splice of the whole log per request cost more than the rest of the log's work)
    const recorded: Array<Sim.RecordedRequest> = []
    // the size of each record, its body counted at the most it can hold; their sum stays under the budget
    const costs: Array<number> = []
    let first = 0
    let totalCost = 0
    /** How many records the log dropped since it was last cleared (`requestsDropped`). */
    let dropped = 0
    const remember = (record: Sim.RecordedRequest, headerCost: number) => {
      // a log of no size drops every request, and says so
      if (limits.requestLogSize <= 0) {
        dropped++
        return
      }
      const cost = 256 + record.path.length + (record.query?.length ?? 0) + limits.recordedBodyBytes + headerCost
      recorded.push(record)
      costs.push(cost)
      totalCost += cost
      while (
        recorded.length - first > 1 &&
        (recorded.length - first > limits.requestLogSize || totalCost > limits.requestLogBytes)
      ) {
        totalCost -= costs[first]!
        first++
        dropped++
      }
      if (first > 0 && first >= recorded.length - first) {
        recorded.splice(0, first)
        costs.splice(0, first)
        first = 0
      }
    }
    const forget = () => {
      recorded.length = 0
      costs.length = 0
      first = 0
      totalCost = 0
      dropped = 0
    }

    const takeFault = (route: Sim.Route | undefined, draw: number): Sim.Fault | undefined => {
      const index = faults.findIndex((f) =>
        (f.fault.route === "*" || f.fault.route === route) && draw < (f.fault.probability ?? 1)
      )
      if (index < 0) return undefined
      const active = faults[index]!
      active.remaining--
      if (active.remaining <= 0) faults.splice(index, 1)
      return active.fault
    }

    const faultAnswer = (given: Sim.Fault, status: number, route: string): SimResponse => {
      // the body's framing is the simulator's: a fault's `content-length` (or `transfer-encoding`) not
      // matching its body would make a keep-alive client read the rest as the next answer
      const fault = given.headers === undefined ? given : { ...given, headers: withoutFraming(given.headers) }
      const retryAfter: Record<string, string> = fault.retryAfter === undefined
        ? {}
        : { "retry-after": String(fault.retryAfter) }
      // a status that carries no content (204, 205, 304) is answered without one, and without a content type
      // (unless the fault names one)
      if (status === 204 || status === 205 || status === 304) {
        return { status, headers: { ...retryAfter, ...fault.headers }, body: { _tag: "Empty" }, network: normal }
      }
      if (fault.body !== undefined) {
        return {
          status,
          headers: { "content-type": "text/plain", ...retryAfter, ...fault.headers },
          body: { _tag: "Text", text: fault.body },
          network: normal
        }
      }
      if (fault.gateway === true) {
        return {
          status,
          headers: { "content-type": "text/html", ...retryAfter, ...fault.headers },
          body: { _tag: "Text", text: gatewayPage(status) },
          network: normal
        }
      }
      const other = otherErrorBodies[`${route} ${status}`]
      const error = other === undefined
        ? errorResponse(status, codeFor(status), messageFor(status))
        : jsonResponse(status, other)
      return { ...error, headers: { ...error.headers, ...retryAfter, ...fault.headers } }
    }

    const applyFault = (
      fault: Sim.Fault,
      route: string,
      answer: Effect.Effect<SimResponse>
    ): Effect.Effect<SimResponse> => {
      const delayed = fault.delay === undefined ? Effect.void : Effect.sleep(fault.delay)
      if (fault.reset === true) {
        return Effect.as(delayed, {
          status: 0,
          headers: {},
          body: { _tag: "Empty" },
          network: { ...normal, reset: true }
        })
      }
      const status = fault.status
      const invalidHeaders = Object.entries(fault.headers ?? {}).some(([name, value]) => !isValidHeader(name, value))
      const base: Effect.Effect<SimResponse> = invalidHeaders
        ? Effect.succeed(errorResponse(500, "internal_error", "the injected headers are not valid HTTP"))
        : status !== undefined
        ? Effect.succeed(faultAnswer(fault, status, route))
        : fault.headers === undefined
        ? answer
        // the real answer with the fault's headers (they were dropped without a `status`)
        : Effect.map(answer, (real) => ({ ...real, headers: { ...real.headers, ...withoutFraming(fault.headers!) } }))
      return Effect.zipRight(
        delayed,
        Effect.map(base, (response) => ({
          ...response,
          network: {
            ...response.network,
            truncateAt: fault.truncateAt,
            stallAt: fault.stallAt,
            resetAt: fault.resetAt
          }
        }))
      )
    }

    const invalid = (field: string, message: string) =>
      errorResponse(400, "bad_request", `invalid input: ${field}: ${message}`, {
        code: "invalid_input",
        message: `${field}: ${message}`
      })

    const route = (
      body: Uint8Array,
      org: Organization,
      route: Legacy,
      id: string,
      sub: string,
      project: string | undefined
    ) =>
      Effect.gen(function*() {
        // the project header scopes these five as it does every other operation: a browser or a
        // deployment of another project is not found
        const browserOf = (id: string) =>
          engine.find(org.store, "/browsers", id, project)?.id === id ? org.browsers.get(id) : undefined
        switch (route) {
          case "listBrowserPools": {
            if (org.plan === "free") return errorResponse(403, "forbidden", "your plan does not include browser pools")
            return toResponse(engine.list(definitionOf(route), visibleItems(org, "/browser_pools", project), none))
          }
          case "deleteDeployment": {
            const stored = engine.find(org.store, "/deployments", id, project)
            const deployment = stored?.id === id ? org.deployments.get(id) : undefined
            if (stored === undefined || deployment === undefined) {
              return errorResponse(404, "not_found", "deployment not found")
            }
            // stopped now: stamped so (what its follow tells as when it reached that state)
            const stopping = deployment.state !== "stopped" && deployment.state !== "failed"
            if (stopping) {
              deployment.state = "stopped"
              deployment.markedForDeletion = true
            }
            stored.fields = {
              ...stored.fields,
              status: deployment.state,
              ...(stopping ? { updated_at: engine.isoAt(yield* Clock.currentTimeMillis) } : {})
            }
            engine.retire(org.store, "/deployments", stored)
            return { status: 204, headers: {}, body: { _tag: "Empty" }, network: normal } satisfies SimResponse
          }
          case "getMousePosition": {
            const browser = browserOf(id)
            if (browser === undefined) {
              return errorResponse(404, "not_found", "browser not found")
            }
            return jsonResponse(200, { x: browser.mouse.x, y: browser.mouse.y })
          }
          case "setCursorVisibility": {
            const parsed = parseJson(body)
            if (Option.isNone(parsed)) {
              return errorResponse(400, "bad_request", "request body is not valid JSON", {
                code: "invalid_input",
                message: "body must be a JSON object"
              })
            }
            const value = parsed.value
            if (typeof value !== "object" || value === null || Array.isArray(value)) {
              return invalid("body", "must be a JSON object")
            }
            const extra = Object.keys(value).find((key) => key !== "hidden")
            if (extra !== undefined) return invalid(extra.slice(0, 100), "is not allowed (additional property)")
            const hidden = "hidden" in value ? value.hidden : undefined
            if (typeof hidden !== "boolean") {
              return invalid("hidden", hidden === undefined ? "is required" : "must be a boolean")
            }
            const browser = browserOf(id)
            if (browser === undefined) return errorResponse(404, "not_found", "browser not found")
            browser.cursorHidden = hidden
            return jsonResponse(200, { ok: true })
          }
          case "downloadReplay": {
            if (org.plan === "free") return errorResponse(403, "forbidden", "your plan does not include replays")
            const browser = browserOf(id)
            if (browser === undefined) return errorResponse(404, "not_found", "browser not found")
            const replay = browser.replays.get(sub)
            if (replay === undefined) return errorResponse(404, "not_found", "replay not found")
            const now = yield* Clock.currentTimeMillis
            // a recording still running (started, not stopped) is the document's 202: "still in progress"
            if (recording(replay, now)) {
              if (replay.pollsLeft > 0) {
                replay.pollsLeft--
                // its last 202 given: finished from then (or when it is ready, if later)
                if (replay.pollsLeft === 0 && replay.stopped) {
                  replay.finishedAt = new Date(Math.max(now, replay.readyAt)).toISOString()
                }
              }
              return {
                status: 202,
                headers: { "retry-after": String(replay.retryAfter) },
                body: { _tag: "Empty" },
                network: normal
              } satisfies SimResponse
            }
            return {
              status: 200,
              headers: { "content-type": "video/mp4", "content-length": String(replay.size) },
              body: { _tag: "Replay", size: replay.size },
              network: normal
            } satisfies SimResponse
          }
        }
      })

    const decoder = new TextDecoder()

    /** The organization, project and expiry (epoch milliseconds) of an API key created in the simulator. */
    const createdKey = (token: string): CreatedKey | undefined => {
      if (!token.startsWith("sk_sim_")) return undefined
      const digest = behaviours.keyDigest(token)
      for (const org of organizations.values()) {
        const id = org.apiKeys.get(digest)
        const resource = id === undefined ? undefined : org.store.collections.get("/org/api_keys")?.get(id)
        if (resource !== undefined && !resource.deleted) {
          const project = resource.fields["project_id"]
          const expires = resource.fields["expires_at"]
          return {
            org,
            project: typeof project === "string" ? project : undefined,
            expiresAt: typeof expires === "string" ? Date.parse(expires) : undefined
          }
        }
      }
      return undefined
    }

    /**
     * Who a token is at `now`: a seeded organization's, or a key created in the simulator (its
     * organization's, its project's) that has not expired on the simulator's clock.
     */
    const callerOf = (
      token: string | undefined,
      now: number
    ): { readonly org: Organization; readonly key: CreatedKey | undefined } | undefined => {
      if (token === undefined) return undefined
      const seeded = organizations.get(token)
      if (seeded !== undefined) return { org: seeded, key: undefined }
      const key = createdKey(token)
      return key === undefined || (key.expiresAt !== undefined && now >= key.expiresAt)
        ? undefined
        : { org: key.org, key }
    }

    const answer = (
      request: SimRequest,
      record: { body: string | undefined; bodyBytes?: number | undefined },
      segments: Option.Option<ReadonlyArray<string>>,
      which: Routed,
      draw: number,
      arrived: number
    ): Effect.Effect<SimResponse> => {
      const token = bearerToken(request.headers["authorization"])
      const name = which?._tag === "Matched" && values.isName(which.operation.name) ? which.operation.name : undefined
      // a fault is served (and spent) only after authentication: a caller with no token, or with an
      // expired key, gets 401
      const known = callerOf(token, arrived) !== undefined
      const fault = known && name !== undefined ? takeFault(name, draw) : undefined
      const real: Effect.Effect<SimResponse> = Effect.suspend(() => {
        // nothing about routes is told before the caller is known
        if (!known) {
          return Effect.succeed(errorResponse(401, "unauthorized", "missing or invalid authorization token"))
        }
        if (Option.isNone(segments)) {
          return Effect.succeed(errorResponse(400, "bad_request", "malformed path", {
            code: "invalid_input",
            message: "a path segment is not valid percent-encoding"
          }))
        }
        if (which === undefined) {
          const replaced = deprecatedFamily(segments.value)
          return Effect.succeed(errorResponse(
            404,
            "not_found",
            replaced === undefined
              ? "no such route in the Kernel API"
              : `a deprecated operation of the Kernel API, not simulated: use ${replaced}`
          ))
        }
        if (which._tag === "WrongMethod") {
          return Effect.succeed(
            errorResponse(405, "method_not_allowed", `${request.method.slice(0, 16)} is not allowed here`, undefined, {
              allow: which.allow
            })
          )
        }
        const operation = which.operation
        const contentType = request.headers["content-type"]
        const jsonBody = operation.body?.kind === "json"
        if (
          (which.operation.name === "setCursorVisibility" || (jsonBody && operation.body.required)) &&
          !isJson(contentType)
        ) {
          return Effect.succeed(
            errorResponse(415, "unsupported_media_type", "the request body must be application/json")
          )
        }
        if (operation.body?.kind === "multipart" && formRequired(operation.body) && !isMultipart(contentType)) {
          return Effect.succeed(
            errorResponse(415, "unsupported_media_type", "the request body must be multipart/form-data")
          )
        }
        // a raw body (`writeFile`'s) sent as another type than the document's (a JSON or form body sent there by
        // mistake); one sent with no type at all is taken as the document's
        if (
          operation.body?.kind === "bytes" && contentType !== undefined &&
          mediaType(contentType) !== operation.body.contentType
        ) {
          return Effect.succeed(
            errorResponse(415, "unsupported_media_type", `the request body must be ${operation.body.contentType}`)
          )
        }
        // an upload (a multipart or raw body: a file, a zip, an extension, an app) may be larger than JSON
        const upload = operation.body !== undefined && operation.body.kind !== "json"
        const bodyLimit = upload ? limits.maxUploadBytes : limits.maxBodyBytes
        return Effect.flatMap(request.readBody(bodyLimit), (read) => {
          if (read._tag === "TooLarge") {
            return Effect.succeed(
              errorResponse(
                413,
                "payload_too_large",
                `${upload ? "uploads" : "request bodies"} are limited to ${bodyLimit} bytes`
              )
            )
          }
          // the body's text when it is decoded whole for the log: the JSON body's parse reads it (not decoded twice)
          let text: string | undefined
          if (read.bytes.length > 0) {
            const body = operation.body
            const schema = body?.kind === "json" || body?.kind === "multipart" ? body.schema : undefined
            if (redaction.holdsSecrets(schema)) {
              // a body that may carry secrets: kept with them replaced (then cut)
              let logged: string
              if (body?.kind === "json") {
                text = decoder.decode(read.bytes)
                logged = redaction.loggedBody(schema, text)
              } else {
                logged = redaction.loggedForm(schema, contentType ?? "", read.bytes)
              }
              const shown = redaction.withoutUrlCredentials(
                body?.kind === "json" ? redaction.withoutCredentialHeaders(logged) : logged
              )
              record.body = shown.length > limits.recordedBodyBytes
                ? `${shown.slice(0, limits.recordedBodyBytes)}…`
                : shown
            } else if (body?.kind === "bytes") {
              // a file's own bytes (`writeFile`): its content, as the program wrote it, cut after the URLs in it
              // lost their credentials (a URL the cut runs through would otherwise keep the head of one)
              const head = read.bytes.subarray(0, limits.recordedBodyBytes + 4096)
              const shown = redaction.withoutUrlCredentials(decoder.decode(head))
              record.body = shown.length > limits.recordedBodyBytes || head.length < read.bytes.length
                ? `${shown.slice(0, limits.recordedBodyBytes)}…`
                : shown
            } else {
              // a field the schema does not list (an open object, a record, any JSON) named as a secret field
              // of the API, however written: its value is not kept (the body rewritten only when it may name
              // one); a body the operation does not take, or that is not what it takes, likewise
              const formSchema = body?.kind === "multipart" ? schema : undefined
              // a form is read as text only within the log's bound (its files may be large): past it, parsed
              const whole = formSchema !== undefined && read.bytes.length > limits.recordedBodyBytes
                ? undefined
                : decoder.decode(read.bytes)
              if (formSchema === undefined) text = whole
              const logged = whole !== undefined && !redaction.mayNameSecret(whole)
                ? whole
                : formSchema !== undefined
                ? redaction.loggedForm(formSchema, contentType ?? "", read.bytes)
                : schema === undefined
                ? redaction.loggedUntyped(whole ?? "")
                : redaction.loggedBody(schema, whole ?? "")
              const shown = redaction.withoutUrlCredentials(
                formSchema !== undefined ? logged : redaction.withoutCredentialHeaders(logged)
              )
              record.body = shown.length > limits.recordedBodyBytes
                ? `${shown.slice(0, limits.recordedBodyBytes)}…`
                : shown
            }
            record.bodyBytes = read.bytes.length
          }
          return Effect.flatMap(Clock.currentTimeMillis, (now) => {
            // the caller as the world knows it now: one reset while the request waited (a fault's delay, a
            // slow body) answers it, and an unknown token (or a key expired meanwhile) is 401, not a
            // request served by the world that was discarded
            const caller = callerOf(token, now)
            if (caller === undefined) {
              return Effect.succeed(errorResponse(401, "unauthorized", "missing or invalid authorization token"))
            }
            const org = caller.org
            // a project's API key is that project's caller; otherwise the header says (empty, it names none)
            const header = request.headers["x-kernel-project-id"]?.trim()
            const project = caller.key?.project ?? (header === "" ? undefined : header)
            // the browsers idle for their `timeout_seconds` end; one a request addresses is active
            behaviours.expireIdle(org, now, segments.value[0] === "browsers" ? segments.value[1] : undefined)
            if (isLegacy(operation.name)) {
              return route(read.bytes, org, operation.name, segments.value[1] ?? "", segments.value[3] ?? "", project)
            }
            const reply = serve(org, operation, which.template, segments.value, request, read.bytes, text, project, now)
            const respond = (made: engine.Reply) => toResponse(documentedOnly(operation, made))
            return Effect.isEffect(reply) ? Effect.map(reply, respond) : Effect.succeed(respond(reply))
          })
        })
      })
      return fault === undefined || name === undefined ? real : applyFault(fault, name, real)
    }

    const handle = (request: SimRequest): Effect.Effect<SimResponse> =>
      Effect.suspend(() => {
        // recorded on arrival, so a request that is never answered is seen too
        const segments = decodeSegments(request.path)
        const which = Option.isSome(segments) ? routeOf(request.method, segments.value) : undefined
        const name = which?._tag === "Matched" && values.isName(which.operation.name) ? which.operation.name : undefined
        const logged = redactHeaders(request.headers)
        const record: { -readonly [K in keyof Sim.RecordedRequest]: Sim.RecordedRequest[K] } = {
          method: request.method.slice(0, 32),
          // as long as the largest request line served (64 KiB), so an HTTP path is never cut
          path: request.path.length > 65_536 ? `${request.path.slice(0, 65_536)}…` : request.path,
          query: recordedQuery(request.query),
          route: name,
          headers: logged.headers,
          body: undefined,
          bodyBytes: undefined,
          status: undefined
        }
        remember(record, logged.cost)
        return Effect.tap(
          // a request the simulator fails on (a bug of ours) is answered, as a 500: never left hanging
          Effect.catchAllDefect(
            Effect.flatMap(
              Random.next,
              (draw) =>
                Effect.flatMap(Clock.currentTimeMillis, (now) => answer(request, record, segments, which, draw, now))
            ),
            () => Effect.succeed(errorResponse(500, "internal_error", "the simulator could not answer this request"))
          ),
          (response) =>
            Effect.sync(() => {
              record.status = response.network.reset ? undefined : response.status
            })
        )
      })

    const control = {
      requests: Effect.sync(() => recorded.slice(first)),
      requestsDropped: Effect.sync(() => dropped),
      clearRequests: Effect.sync(forget),
      injectFault: (fault: Sim.Fault) =>
        Effect.sync(() => {
          // at most `maxFaults` at once, the oldest dropped: every request looks through them, and a
          // fault that is never spent (a `probability` of 0, no `times`) would otherwise pile up
          if (faults.length >= maxFaults) faults.shift()
          faults.push({ fault, remaining: fault.times ?? Infinity })
        }),
      clearFaults: Effect.sync(() => {
        faults.length = 0
      }),
      deployment: (id: string) =>
        Effect.sync(() => {
          for (const org of organizations.values()) {
            const d = org.deployments.get(id)
            if (d !== undefined) {
              return Option.some({ id: d.id, state: d.state, markedForDeletion: d.markedForDeletion })
            }
          }
          return Option.none()
        }),
      browser: (id: string) =>
        Effect.sync(() => {
          for (const org of organizations.values()) {
            const b = org.browsers.get(id)
            if (b !== undefined) {
              return Option.some({
                id: b.id,
                mouse: { ...b.mouse },
                cursorHidden: b.cursorHidden,
                viewport: { ...b.viewport },
                clipboard: b.clipboard,
                typed: b.typed.slice()
              })
            }
          }
          return Option.none()
        }),
      evictions: Effect.sync(() =>
        [...organizations.values()].flatMap((org) =>
          org.store.evictions.map((e) => ({ organization: org.id, collection: e.collection, id: e.id }))
        )
      ),
      /** Back to `next` (a validated seed): a new world, no faults, an empty log. */
      resetTo: (next: Sim.Seed) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          // the old world's open streams end with it, and its waiting acquires get their 204
          for (const org of organizations.values()) {
            for (const browser of org.browsers.values()) endBrowser(browser)
            for (const flow of org.authFlows.values()) live.end(flow)
            endPoolWaiters(org)
          }
          organizations = build(next, now, budget)
          faults.length = 0
          forget()
        }),
      /** How many open event streams are subscribed to something (none once their clients are gone). */
      liveSubscribers: Effect.sync(() => {
        let count = 0
        for (const org of organizations.values()) {
          for (const browser of org.browsers.values()) {
            count += browser.events.subscribers.size
            for (const process of browser.processes.values()) count += process.output.subscribers.size
          }
          for (const flow of org.authFlows.values()) count += flow.subscribers.size
        }
        return count
      })
    } satisfies Omit<Sim.Control, "reset"> & {
      readonly resetTo: (seed: Sim.Seed) => Effect.Effect<void>
      readonly liveSubscribers: Effect.Effect<number>
    }
    return { handle, control, limits }
  })

/** One decoder for every JSON body (a `TextDecoder` made per request cost more than the parse). */
const utf8 = new TextDecoder()

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Why a JSON body is not Unicode text as JSON requires (RFC 8259 §8.1), or `undefined`: bytes that are
 * not UTF-8 (decoded, they would be stored as U+FFFD), or a string escaping a lone surrogate
 * (`"\ud800"`), which, stored and answered back, strict clients cannot decode (a profile's name in every
 * later list). Each test runs only when the text shows a sign of it.
 */
const unicodeIssue = (bytes: Uint8Array, text: string, value: unknown): string | undefined => {
  if (text.includes("\uFFFD")) {
    try {
      fatalUtf8.decode(bytes)
    } catch {
      return "body: is not valid UTF-8"
    }
  }
  const at = /\\u[dD][89a-fA-F]/.test(text) ? illFormedAt(value, "") : undefined
  return at === undefined ? undefined : `${at}: is not well-formed Unicode (a lone surrogate)`
}

const parseJson = (body: Uint8Array | undefined, text?: string): Option.Option<unknown> => {
  if (body === undefined || body.length === 0) return Option.none()
  try {
    return Option.some(JSON.parse(text ?? utf8.decode(body)))
  } catch {
    return Option.none()
  }
}

const codeFor = (status: number): string => {
  switch (status) {
    case 400:
      return "bad_request"
    case 401:
      return "unauthorized"
    case 403:
      return "forbidden"
    case 404:
      return "not_found"
    case 409:
      return "conflict"
    case 413:
      return "payload_too_large"
    case 415:
      return "unsupported_media_type"
    case 429:
      return "rate_limited"
    case 502:
      return "bad_gateway"
    case 503:
      return "service_unavailable"
    case 504:
      return "gateway_timeout"
    default:
      return status >= 500 ? "internal_error" : "error"
  }
}

const messageFor = (status: number): string =>
  status === 429 ? "rate limit exceeded, retry later" : status === 503 ? "service unavailable" : `injected ${status}`

const encodePool = (pool: Sim.PoolSeed) => encodeNamedPool(pool, pool.name ?? pool.browser_pool_config?.name)

// one name, the pool's and its config's, as a created pool has (the seed's own, else its config's)
const encodeNamedPool = (pool: Sim.PoolSeed, name: string | undefined) => ({
  id: pool.id,
  ...(name === undefined ? {} : { name }),
  available_count: pool.available_count ?? pool.browser_pool_config?.size ?? 1,
  acquired_count: pool.acquired_count ?? 0,
  created_at: pool.created_at ?? "2026-01-01T00:00:00Z",
  // as a pool created through the API reads back: the document's defaults where the seed gives none
  browser_pool_config: {
    timeout_seconds: 600,
    fill_rate_per_minute: 10,
    ...pool.browser_pool_config,
    ...(name === undefined ? {} : { name }),
    size: pool.browser_pool_config?.size ?? 1
  }
})
