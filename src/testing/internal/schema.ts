/**
 * Schemas of the simulator's inputs: seeds (in process, from a file, over HTTP) and faults (over
 * HTTP). Errors name the field by its path, e.g. `organizations[0].browsers[0].mouse.x`.
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { BrowserTelemetryConfig } from "../../internal/generated/schemas/Common.js"
import { encodeSegment } from "../../internal/path.js"
import { collectionLimit } from "./engine.js"
import * as mp4 from "./mp4.js"
import { nameByOperationId, names, operationIdOf } from "./values.js"

const Int = (min?: number, max?: number) => {
  let schema: Schema.Schema<number> = Schema.Int
  if (min !== undefined) schema = schema.pipe(Schema.greaterThanOrEqualTo(min))
  if (max !== undefined) schema = schema.pipe(Schema.lessThanOrEqualTo(max))
  return schema
}

// an id is a path segment of the API (`/browsers/{id}`), by the rule the SDK sends one by: `.` and `..` name
// another path, a string that is not well-formed Unicode cannot be encoded
const Id = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(1024),
  Schema.filter((id) => {
    const encoded = encodeSegment("the id", id)
    return typeof encoded === "string" || `${encoded.message}: a path segment of the API`
  })
)

/** A bearer token: visible ASCII without spaces, so it fits an Authorization header. */
export const Token = Schema.String.pipe(
  Schema.pattern(/^[\x21-\x7e]{1,512}$/, { message: () => "a token is 1 to 512 visible ASCII characters, no spaces" })
)

/** Anything `Duration.decode` accepts: a `Duration`, milliseconds, `"5 seconds"`... */
export const DurationInput: Schema.Schema<Duration.DurationInput> = Schema.declare(
  (u: unknown): u is Duration.DurationInput =>
    // never negative, however written (`"-5 seconds"` and `[-5, 0]` decode, to a time that has passed)
    (typeof u === "number"
      ? u >= 0
      : typeof u === "string"
      ? !u.trimStart().startsWith("-")
      : Array.isArray(u)
      ? u.every((part) => typeof part === "number" && part >= 0)
      : Duration.isDuration(u)) &&
    Duration.decodeUnknown(u)._tag === "Some",
  { description: "a duration: milliseconds >= 0 or a string such as \"5 seconds\"" }
)

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

/**
 * Whether the date and time of an `isoUtc` text exist: `Date.parse` rolls a February 30 over to March 2
 * (and 24:00 to the next day), which the simulator would then have answered as given, not a `date-time`.
 */
const exists = (s: string): boolean => {
  const millis = Date.parse(s)
  return !Number.isNaN(millis) && new Date(millis).toISOString().slice(0, 19) === s.slice(0, 19)
}

/** An ISO 8601 UTC date-time such as `2026-11-01T09:00:00Z`, a date and time that exist. */
export const IsoUtc = Schema.String.pipe(
  Schema.filter((s) => isoUtc.test(s) && exists(s), {
    message: () => "an ISO 8601 UTC date-time such as 2026-11-01T09:00:00Z"
  })
)

const Name = Schema.String.pipe(Schema.pattern(/^[a-zA-Z0-9._-]{1,255}$/))

/**
 * A seeded collection holds at most what the simulator holds of it ({@link collectionLimit}); more would be
 * evicted, the oldest first, as the world starts.
 */
const atMost = {
  message: () => `at most ${collectionLimit} items (what the simulator holds of a collection)`
}

/** The seed of a replay; its size must hold the mp4 boxes. */
export const ReplaySeed = Schema.Struct({
  id: Id,
  size: Schema.optional(
    Schema.Number.pipe(
      Schema.int(),
      Schema.greaterThanOrEqualTo(mp4.minimumSize, {
        message: () => `an integer >= ${mp4.minimumSize} (the mp4 boxes ftyp, moov and mdat)`
      }),
      Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
    )
  ),
  retryAfter: Schema.optional(Int(1, 86_400)),
  pendingPolls: Schema.optional(Int(0)),
  readyAfter: Schema.optional(DurationInput)
}).annotations({ identifier: "ReplaySeed" })

const Mouse = Schema.Struct({ x: Schema.Int, y: Schema.Int }).annotations({ identifier: "Mouse" })

const Viewport = Schema.Struct({
  width: Int(320, 7680),
  height: Int(240, 4320),
  refresh_rate: Schema.optional(Int(1))
})

export const BrowserSeed = Schema.Struct({
  id: Id,
  mouse: Schema.optional(Mouse),
  cursorHidden: Schema.optional(Schema.Boolean),
  replays: Schema.optional(Schema.Array(ReplaySeed).pipe(Schema.maxItems(collectionLimit, atMost))),
  viewport: Schema.optional(Viewport),
  headless: Schema.optional(Schema.Boolean),
  stealth: Schema.optional(Schema.Boolean),
  project: Schema.optional(Id),
  /**
   * Its telemetry configuration (the document's `BrowserTelemetryConfig`): omitted, `{}` (every
   * category captured); `null`, none (its telemetry stream delivers no event, as the service's for a
   * session created without one).
   */
  telemetry: Schema.optional(Schema.NullOr(BrowserTelemetryConfig))
}).annotations({ identifier: "BrowserSeed" })

/** A TOTP secret the simulator accepts: base32 (A-Z, 2-7; spaces and padding allowed), 8 to 256 characters. */
export const base32Secret = /^[A-Za-z2-7=\s]{8,256}$/

/** A credential; with `totp_secret` (base32) its TOTP codes are real (RFC 6238). */
export const CredentialSeed = Schema.Struct({
  id: Id,
  name: Schema.optional(Name),
  domain: Schema.optional(Schema.String),
  totp_secret: Schema.optional(
    Schema.String.pipe(Schema.pattern(base32Secret, { message: () => "a base32 secret (A-Z, 2-7)" }))
  ),
  project: Schema.optional(Id)
}).annotations({ identifier: "CredentialSeed" })

const ProfileOrExtension = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.optional(Name)
})

const Profile = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.optional(Name),
  save_changes: Schema.optional(Schema.Boolean)
})

/** A pool's configuration, with the bounds of the service's document. */
export const PoolConfigSeed = Schema.Struct({
  size: Schema.optional(Int(1)),
  name: Schema.optional(Name),
  fill_rate_per_minute: Schema.optional(Int(0, 25)),
  timeout_seconds: Schema.optional(Int(60, 86_400)),
  stealth: Schema.optional(Schema.Boolean),
  headless: Schema.optional(Schema.Boolean),
  profile: Schema.optional(Profile),
  extensions: Schema.optional(Schema.Array(ProfileOrExtension).pipe(Schema.maxItems(20))),
  proxy_id: Schema.optional(Schema.String),
  viewport: Schema.optional(Viewport),
  kiosk_mode: Schema.optional(Schema.Boolean),
  chrome_policy: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "PoolConfigSeed" })

export const PoolSeed = Schema.Struct({
  id: Id,
  name: Schema.optional(Name),
  available_count: Schema.optional(Int(0)),
  acquired_count: Schema.optional(Int(0)),
  created_at: Schema.optional(IsoUtc),
  browser_pool_config: Schema.optional(PoolConfigSeed),
  project: Schema.optional(Id)
}).annotations({ identifier: "PoolSeed" })

export const DeploymentState = Schema.Literal("queued", "in_progress", "running", "stopped", "failed")

export const DeploymentSeed = Schema.Struct({
  id: Id,
  state: DeploymentState,
  project: Schema.optional(Id),
  app_name: Schema.optional(Name),
  version: Schema.optional(Name),
  /** The actions its app registers: an invocation of another is 404 (none given: any action is taken). */
  actions: Schema.optional(Schema.Array(Name).pipe(Schema.minItems(1), Schema.maxItems(collectionLimit, atMost)))
}).annotations({ identifier: "DeploymentSeed" })

export const OrganizationSeed = Schema.Struct({
  id: Id,
  token: Token,
  plan: Schema.optional(Schema.Literal("paid", "free")),
  browsers: Schema.optional(Schema.Array(BrowserSeed).pipe(Schema.maxItems(collectionLimit, atMost))),
  pools: Schema.optional(Schema.Array(PoolSeed).pipe(Schema.maxItems(collectionLimit, atMost))),
  deployments: Schema.optional(Schema.Array(DeploymentSeed).pipe(Schema.maxItems(collectionLimit, atMost))),
  credentials: Schema.optional(Schema.Array(CredentialSeed).pipe(Schema.maxItems(collectionLimit, atMost)))
}).annotations({ identifier: "OrganizationSeed" })

const duplicate = <A>(items: ReadonlyArray<A>, key: (a: A) => string): number => {
  const seen = new Set<string>()
  for (const [i, item] of items.entries()) {
    if (seen.has(key(item))) return i
    seen.add(key(item))
  }
  return -1
}

/** The index of the first item named as an earlier one of the same project (or of none, seen by every project), or -1. */
const sharedName = (
  items: ReadonlyArray<{ readonly name?: string | undefined; readonly project?: string | undefined }>
): number => {
  // per name: the projects it is used in ("" for none)
  const seen = new Map<string, Set<string>>()
  for (const [i, item] of items.entries()) {
    if (item.name === undefined) continue
    const projects = seen.get(item.name) ?? new Set<string>()
    const project = item.project ?? ""
    if (projects.has("") || projects.has(project) || (project === "" && projects.size > 0)) return i
    projects.add(project)
    seen.set(item.name, projects)
  }
  return -1
}

export const Seed = Schema.Struct({
  organizations: Schema.optional(Schema.Array(OrganizationSeed))
}).annotations({ identifier: "Seed" }).pipe(
  Schema.filter((seed) => {
    const orgs = seed.organizations ?? []
    const issues: Array<{ readonly path: ReadonlyArray<string | number>; readonly message: string }> = []
    const token = duplicate(orgs, (o) => o.token)
    if (token >= 0) {
      issues.push({ path: ["organizations", token, "token"], message: "another organization has this token" })
    }
    const orgId = duplicate(orgs, (o) => o.id)
    if (orgId >= 0) issues.push({ path: ["organizations", orgId, "id"], message: "another organization has this id" })
    // ids are unique within their organization (and replays within their browser): nothing is silently replaced
    for (const [o, org] of orgs.entries()) {
      const browsers = org.browsers ?? []
      for (
        const [field, items] of [["browsers", browsers], ["pools", org.pools ?? []], [
          "deployments",
          org.deployments ?? []
        ], ["credentials", org.credentials ?? []]] as const
      ) {
        const at = duplicate(items, (item: { readonly id: string }) => item.id)
        if (at >= 0) {
          issues.push({ path: ["organizations", o, field, at, "id"], message: `another item of ${field} has this id` })
        }
      }
      // names are unique where the API refuses a second one (409): a pool's and a credential's within their
      // project, one of no project counting in every project
      for (const [field, items] of [["pools", org.pools ?? []], ["credentials", org.credentials ?? []]] as const) {
        const at = sharedName(items)
        if (at >= 0) {
          issues.push({
            path: ["organizations", o, field, at, "name"],
            message: `another item of ${field} has this name`
          })
        }
      }
      // an app's version is served by one deployment (the API refuses a second without `force`, which stops
      // the first): two seeded deployments serving it, where a caller sees both, is a world the service never is
      const serving = (org.deployments ?? []).map((d) =>
        d.app_name === undefined || d.state === "stopped" || d.state === "failed"
          ? {}
          : { name: `${d.app_name} version ${d.version ?? "latest"}`, project: d.project }
      )
      const served = sharedName(serving)
      if (served >= 0) {
        issues.push({
          path: ["organizations", o, "deployments", served, "app_name"],
          message: `another deployment serves ${
            serving[served]!.name ?? ""
          } (only one may: stop or fail the other, or put them in different projects)`
        })
      }
      // a pool keeps `size` browsers: its counts cannot add up to more
      for (const [p, pool] of (org.pools ?? []).entries()) {
        // what a pool's browsers are made with must exist, as the API checks it (400): proxies, profiles and
        // extensions are made through the API, never seeded
        const config = pool.browser_pool_config
        for (
          const [field, what] of [["proxy_id", "proxy"], ["profile", "profile"], ["extensions", "extension"]] as const
        ) {
          if (config?.[field] === undefined) continue
          issues.push({
            path: ["organizations", o, "pools", p, "browser_pool_config", field],
            message:
              `names a ${what}, which a seed cannot hold (made through the API): seed the pool without it, then update the pool`
          })
        }
        const size = pool.browser_pool_config?.size ?? 1
        const held = (pool.available_count ?? size) + (pool.acquired_count ?? 0)
        if (held > size) {
          issues.push({
            path: ["organizations", o, "pools", p, "available_count"],
            message:
              `available_count + acquired_count is ${held}, more than the pool's size ${size} (browser_pool_config.size, default 1)`
          })
        }
      }
      // the browsers its pools hold acquired are browsers of the organization too, within what it holds
      const leased = (org.pools ?? []).reduce((n, pool) => n + (pool.acquired_count ?? 0), 0)
      if (leased > 0 && browsers.length + leased > collectionLimit) {
        issues.push({
          path: ["organizations", o, "pools"],
          message:
            `${browsers.length} browsers and ${leased} acquired from its pools: more than the ${collectionLimit} browsers an organization holds`
        })
      }
      for (const [b, browser] of browsers.entries()) {
        // the mouse is on the screen, as every move keeps it (0 to the viewport's size less one)
        const viewport = browser.viewport ?? { width: 1920, height: 1080 }
        for (const [axis, size] of [["x", viewport.width], ["y", viewport.height]] as const) {
          const at = browser.mouse?.[axis]
          if (at !== undefined && (at < 0 || at >= size)) {
            issues.push({
              path: ["organizations", o, "browsers", b, "mouse", axis],
              message: `is ${at}, off the viewport (${viewport.width}×${viewport.height}: 0 to ${size - 1})`
            })
          }
        }
        const at = duplicate(browser.replays ?? [], (r) => r.id)
        if (at >= 0) {
          issues.push({
            path: ["organizations", o, "browsers", b, "replays", at, "id"],
            message: "another replay of this browser has this id"
          })
        }
      }
    }
    return issues.length === 0 ? undefined : issues
  })
).annotations({ identifier: "Seed" })

/** An operation named by the document's `operationId` (`getBrowsers`), decoded to the table's name. */
const ByOperationId = Schema.transformOrFail(Schema.String, Schema.Literal(...names), {
  strict: true,
  decode: (id, _, ast) => {
    const name = nameByOperationId.get(id)
    return name === undefined ? ParseResult.fail(new ParseResult.Type(ast, id)) : ParseResult.succeed(name)
  },
  encode: (name) => ParseResult.succeed(operationIdOf.get(name) ?? name)
})

/**
 * The operation a fault acts on: the table's name (as listBrowserPools; `GET /_simulator/operations` lists
 * them), the document's `operationId`, or `"*"` (any).
 */
export const Route = Schema.Union(Schema.Literal(...names, "*"), ByOperationId).annotations({
  // the 118 names would be cut from the message: where to find them instead
  message: (issue) => ({
    message:
      `expected an operation's name (as listBrowserPools; GET /_simulator/operations lists them), its operationId, or "*", got ${
        JSON.stringify(issue.actual)?.slice(0, 100)
      }`,
    override: true
  })
})

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/

/** Whether a header name and value can be sent over HTTP/1.1 (Node and `fetch` accept them). */
export const isValidHeader = (name: string, value: string): boolean => headerName.test(name) && headerValue.test(value)

/**
 * Headers that can be sent: token names, values without control characters (tab aside). A name is
 * checked by a filter of the record, not by its key schema: a key that fails that is an unknown field
 * to `Schema` ("is not allowed"), which says nothing of why.
 */
export const Headers = Schema.Record({
  key: Schema.String,
  value: Schema.String.pipe(
    Schema.pattern(headerValue, { message: () => "a header value has no control characters (CR, LF, NUL...)" }),
    Schema.maxLength(8192)
  )
}).pipe(Schema.filter((headers) => {
  const name = Object.keys(headers).find((key) => !headerName.test(key))
  return name === undefined ||
    { path: [name], message: "a header name is an HTTP token (letters, digits, !#$%&'*+-.^_`|~)" }
}))

/** The issues of a seed whose organization has the admin token: the two tokens never cross. */
export const adminTokenClash = (
  seed: { readonly organizations?: ReadonlyArray<{ readonly token: string }> | undefined },
  adminToken: string
): ReadonlyArray<{ readonly path: string; readonly message: string }> =>
  (seed.organizations ?? []).flatMap((org, i) =>
    org.token === adminToken ? [{ path: `organizations[${i}].token`, message: "must differ from the admin token" }] : []
  )

export const Fault = Schema.Struct({
  route: Route,
  times: Schema.optional(Int(1)),
  delay: Schema.optional(DurationInput),
  reset: Schema.optional(Schema.Boolean),
  status: Schema.optional(Int(200, 599)),
  body: Schema.optional(Schema.String.pipe(Schema.maxLength(64 * 1024))),
  headers: Schema.optional(Headers),
  truncateAt: Schema.optional(Int(0)),
  stallAt: Schema.optional(Int(0)),
  resetAt: Schema.optional(Int(0)),
  probability: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  retryAfter: Schema.optional(Int(1, 86_400)),
  gateway: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "Fault" }).pipe(
  // `body`, `retryAfter` and `gateway` shape an injected status's answer: without one they would do nothing
  Schema.filter((fault) => {
    if (fault.status !== undefined) return undefined
    const given = [
      ...(fault.body === undefined ? [] : ["body"]),
      ...(fault.retryAfter === undefined ? [] : ["retryAfter"]),
      ...(fault.gateway === true ? ["gateway"] : [])
    ]
    return given.length === 0
      ? undefined
      : given.map((field) => ({ path: [field], message: "needs a status (it shapes the injected status's answer)" }))
  })
).annotations({ identifier: "Fault" })

const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) =>
      typeof key === "number"
        ? `${out}[${key}]`
        : out === ""
        ? String(key)
        : `${out}.${String(key)}`,
    ""
  )

const bound = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max)}…`

/**
 * The issues of a parse error, each `{ path, message }` with the path rendered as `a[0].b`. The
 * "Expected undefined" branches of optional fields are dropped, and the alternatives of a union
 * at one path are merged into one issue.
 */
export const issues = (
  error: ParseResult.ParseError
): ReadonlyArray<{ readonly path: string; readonly message: string }> => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: renderPath(issue.path),
    message: issue._tag === "Unexpected" ? "is not allowed (unknown field)" : issue.message.replace(/\s+/g, " ")
  }))
  const useful = all.filter((i) => !i.message.startsWith("Expected undefined, actual"))
  const byPath = new Map<string, Array<string>>()
  for (const issue of useful.length > 0 ? useful : all) {
    const list = byPath.get(issue.path) ?? []
    if (!list.includes(issue.message)) list.push(issue.message)
    byPath.set(issue.path, list)
  }
  return Array.from(byPath, ([path, messages]) => {
    const alternatives = messages.map((m) => /^Expected (.*), actual (.*)$/.exec(m))
    const merged = messages.length > 1 && alternatives.every((m) => m !== null && m[2] === alternatives[0]![2])
      ? `Expected ${alternatives.map((m) => m![1]).join(" | ")}, actual ${alternatives[0]![2]}`
      : messages.join("; ")
    return { path, message: bound(merged, 300) }
  }).slice(0, 20)
}

const options = { errors: "all", onExcessProperty: "error" } as const

/** The nesting allowed in a decoded input; deeper (or cyclic) input is refused before decoding. */
export const maxDepth = 64

/**
 * Whether `input` nests deeper than `max` levels or holds more than a million values (a cycle is
 * either), checked without recursion. Shared sub-objects are fine.
 *
 * @internal
 */
export const tooDeep = (input: unknown, max: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[input, 0]]
  let visits = 0
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (typeof value !== "object" || value === null) continue
    if (depth >= max || ++visits > 1_000_000) return true
    for (const child of Object.values(value)) stack.push([child, depth + 1])
  }
  return false
}

const decode = <A, I>(schema: Schema.Schema<A, I>) => {
  const run = Schema.decodeUnknownEither(schema, options)
  return (input: unknown): Either.Either<A, ReadonlyArray<{ readonly path: string; readonly message: string }>> => {
    if (tooDeep(input, maxDepth)) {
      return Either.left([{ path: "", message: `nests deeper than ${maxDepth} levels, is cyclic or is too large` }])
    }
    try {
      return Either.mapLeft(run(input), issues)
    } catch (error) {
      // total: whatever the input, an issue rather than a defect
      return Either.left([{ path: "", message: bound(`cannot be decoded: ${String(error)}`, 300) }])
    }
  }
}

export const decodeSeed = decode(Seed)
export const decodeFault = decode(Fault)

/** One line: `path: message; path: message`. */
export const summary = (list: ReadonlyArray<{ readonly path: string; readonly message: string }>): string =>
  bound(list.map((i) => `${i.path === "" ? "(root)" : i.path}: ${i.message}`).join("; "), 2000)

export const decodeToken = Schema.decodeUnknownEither(Token)
