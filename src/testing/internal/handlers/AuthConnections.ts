/**
 * The simulator's managed auth connections, stateful and deterministic: a new connection `NEEDS_AUTH`
 * with no flow; a login of a connection whose credentials are stored (saved by an earlier login, or a
 * `credential` holding the fields) is a `REAUTH` that succeeds by itself; any other starts a `LOGIN` flow
 * that asks for a username and a password
 * (`IN_PROGRESS` / `AWAITING_INPUT`, a second login meanwhile is the document's 409) until its
 * `flow_expires_at` (ten minutes of the simulator's clock; then `EXPIRED`); a submit of those fields
 * moves it to `SUBMITTING`, then `SUCCESS` / `COMPLETED` and the connection to `AUTHENTICATED`. The
 * events stream tells the flow's state now, then each change, and ends with its terminal state.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as engine from "../engine.js"
import type { Reply } from "../engine.js"
import * as live from "../live.js"
import type { Context, Handlers, Organization } from "./shared.js"
import { error, lastOf, liveReply, obj, ok, wholeReply } from "./shared.js"

/** How long a login flow lasts. */
const flowMillis = 10 * 60_000

/** What a login flow asks for (`DiscoveredField`s). */
const asked = [
  { name: "username", type: "text", label: "Username", selector: "input#username", required: true },
  { name: "password", type: "password", label: "Password", selector: "input#password", required: true }
]

/** The flow fields of a connection with no flow in progress (`null`, as the document says). */
const noFlow = {
  discovered_fields: null,
  mfa_options: null,
  sign_in_options: null,
  pending_sso_buttons: null,
  external_action_message: null,
  website_error: null,
  hosted_url: null,
  live_view_url: null,
  browser_session_id: null
}

/** The `managed_auth_state` event of a connection's flow as it is now. */
const stateOf = (fields: Record<string, unknown>, timestamp: string): Record<string, unknown> => {
  const event: Record<string, unknown> = { event: "managed_auth_state", timestamp }
  for (const key of ["flow_status", "flow_step", "flow_type", "discovered_fields", "hosted_url", "live_view_url"]) {
    if (fields[key] !== null && fields[key] !== undefined) event[key] = fields[key]
  }
  if (fields["flow_status"] === "SUCCESS") event["post_login_url"] = fields["post_login_url"]
  if (fields["flow_status"] === "EXPIRED") {
    event["error_code"] = "flow_expired"
    event["error_message"] = "the login flow expired"
  }
  return event
}

/** The connection's flow changes: its fields, an event to its followers, and the end of the flow when terminal. */
const change = (org: Organization, connection: engine.Resource, fields: Record<string, unknown>, stamp: string) => {
  connection.fields = { ...connection.fields, ...fields }
  const flow = org.authFlows.get(connection.id)
  if (flow === undefined) return
  live.publish(flow, stateOf(connection.fields, stamp))
  if (connection.fields["flow_status"] !== "IN_PROGRESS") endFlow(org, connection.id)
}

const endFlow = (org: Organization, id: string): void => {
  const flow = org.authFlows.get(id)
  if (flow !== undefined) live.end(flow)
  org.authFlows.delete(id)
}

/** A connection's flow expires when its time is up (at `now`). */
const expire = (org: Organization, connection: engine.Resource, now: number): void => {
  const expires = connection.fields["flow_expires_at"]
  if (
    connection.fields["flow_status"] === "IN_PROGRESS" && typeof expires === "string" && Date.parse(expires) <= now
  ) {
    change(org, connection, { flow_status: "EXPIRED", ...noFlow }, expires)
  }
}

/** The connection of the call, its flow expired when its time is up; `undefined` when there is none. */
const connectionOf = ({ call, org, store }: Context): engine.Resource | undefined => {
  const connection = engine.find(store, "/auth/connections", call.segments[2]!, call.project)
  if (connection === undefined || connection.deleted) return undefined
  expire(org, connection, call.now)
  return connection
}

const notFound = error(404, "not_found", "auth connection not found")

/**
 * A `login_url` that is not a URI (`format: uri`: an absolute URL): 400, where it was stored and then answered
 * (and copied to `post_login_url`) as the document's answers never are. An update's `""` clears it (the
 * document), so only a create refuses it.
 */
const badLoginUrl = (body: Record<string, unknown>, clears: boolean): Reply | undefined => {
  const url = body["login_url"]
  if (typeof url !== "string" || (clears && url === "")) return undefined
  try {
    new URL(url)
    return undefined
  } catch {
    return error(400, "bad_request", "invalid input: login_url: must be a URI such as https://example.com/login")
  }
}

/**
 * The connections whose credentials were saved by a successful login (`save_credentials`, true by default):
 * their next login re-authenticates by itself. Kept beside the resource (never answered), gone with it.
 */
const savedLogins = new WeakSet<engine.Resource>()

/**
 * Whether a login of the connection re-authenticates by itself (the document: the login "triggers automatic
 * re-auth if credentials are stored"): its credentials saved by an earlier login, or its `credential`
 * naming a stored credential that holds every field the flow asks for.
 */
const storedCredentials = (store: engine.Store, connection: engine.Resource, project: string | undefined): boolean => {
  if (savedLogins.has(connection)) return true
  const name = obj(connection.fields["credential"])["name"]
  const credential = typeof name === "string" ? engine.find(store, "/credentials", name, project) : undefined
  if (credential === undefined || credential.deleted) return false
  const held = obj(credential.fields["values"])
  return asked.every((field) => typeof held[field.name] === "string" && held[field.name] !== "")
}

/** A connection's flow that succeeded now: the connection `AUTHENTICATED`, its followers told. */
const succeed = (org: Organization, connection: engine.Resource, stamp: string): void => {
  const domain = String(connection.fields["domain"])
  change(org, connection, {
    status: "AUTHENTICATED",
    flow_status: "SUCCESS",
    flow_step: "COMPLETED",
    ...noFlow,
    post_login_url: connection.fields["login_url"] ?? `https://${domain}/`,
    last_auth_check_at: stamp,
    last_auth_at: stamp
  }, stamp)
}

/** The choices a submit makes: exactly one of them (the document's `SubmitFieldsRequest`). */
const choices = ["fields", "sso_button_selector", "sso_provider", "mfa_option_id", "sign_in_option_id"]

/**
 * The first reference of a connection's create or update that names nothing of the caller's, as a browser's
 * (the document: its `proxy` "must belong to the caller's org"; its `credential` names a Kernel credential
 * or a credential provider): its 400, or `undefined` when every one resolves.
 */
const unresolvedAuthReference = (
  store: engine.Store,
  body: Record<string, unknown>,
  project: string | undefined
): Reply | undefined => {
  const found = (collection: string, key: unknown, byId = false): engine.Resource | undefined => {
    const resource = typeof key !== "string"
      ? undefined
      : byId
      ? engine.findById(store, collection, key, project)
      : engine.find(store, collection, key, project)
    return resource === undefined || resource.deleted ? undefined : resource
  }
  const exists = (collection: string, key: unknown): boolean =>
    key === undefined || found(collection, key) !== undefined
  // a proxy by id or by name (never both: the body's check refused that)
  const proxy = obj(body["proxy"])
  if (
    (proxy["id"] !== undefined && found("/proxies", proxy["id"], true) === undefined) ||
    !exists("/proxies", proxy["name"])
  ) return error(400, "bad_request", "proxy not found")
  const credential = obj(body["credential"])
  if (!exists("/credentials", credential["name"])) return error(400, "bad_request", "credential not found")
  if (!exists("/org/credential_providers", credential["provider"])) {
    return error(400, "bad_request", "credential provider not found")
  }
  return undefined
}

/** A connection's fields that each name one other resource: an update replaces them whole, never merged. */
const references = ["credential", "proxy"]

export const handlers: Handlers = {
  createAuthConnection: ({ call, op, org, stamp, store }) => {
    const unresolved = badLoginUrl(call.body, false) ?? unresolvedAuthReference(store, call.body, call.project)
    if (unresolved !== undefined) return unresolved
    const reply = engine.generic(store, call, () => "connection", (evicted) => endFlow(org, evicted))
    const created = lastOf(store, "/auth/connections")
    if (reply._tag === "Error" || created === undefined) return reply
    // the document: "If the provided profile_name does not exist, it is created automatically" (in the caller's project)
    const profile = call.body["profile_name"]
    const existing = typeof profile === "string" ? engine.find(store, "/profiles", profile, call.project) : undefined
    if (typeof profile === "string" && (existing === undefined || existing.deleted)) {
      const id = engine.nextId(store, "profile")
      engine.put(store, "/profiles", {
        id,
        project: call.project,
        deleted: false,
        fields: { id, name: profile, created_at: stamp, updated_at: stamp }
      })
    }
    // no flow yet: it needs one to be authenticated
    created.fields = {
      ...created.fields,
      status: "NEEDS_AUTH",
      flow_status: null,
      flow_step: null,
      flow_type: null,
      flow_expires_at: null,
      ...noFlow
    }
    return ok(op, created.fields)
  },
  // a list and an update tell an expired flow as a retrieve does
  listAuthConnections: ({ call, org, store }) => {
    for (const connection of engine.currentOf(store, "/auth/connections")) expire(org, connection, call.now)
    return engine.generic(store, call, () => "connection")
  },
  updateAuthConnection: (context) => {
    const connection = connectionOf(context)
    if (connection === undefined) return notFound
    const body = context.call.body
    const unresolved = badLoginUrl(body, true) ?? unresolvedAuthReference(context.store, body, context.call.project)
    if (unresolved !== undefined) return unresolved
    // a reference given replaces the one stored, whole: `{ provider, auto }` after `{ name }` is not both; a
    // `login_url` of "" clears it ("Set to empty string to clear")
    const replaced = new Set(references.filter((key) => key in body))
    const cleared = body["login_url"] === ""
    connection.fields = Object.fromEntries(
      Object.entries(connection.fields).filter(([key]) => !replaced.has(key) && !(cleared && key === "login_url"))
    )
    if (!cleared) return engine.generic(context.store, context.call, () => "connection")
    const { login_url: _cleared, ...rest } = body
    return engine.generic(context.store, { ...context.call, body: rest }, () => "connection")
  },
  getAuthConnection: (context) => {
    const connection = connectionOf(context)
    return connection === undefined ? notFound : ok(context.op, connection.fields)
  },
  deleteAuthConnection: (context) => {
    const connection = connectionOf(context)
    if (connection !== undefined) endFlow(context.org, connection.id)
    return engine.generic(context.store, context.call, () => "connection")
  },
  loginAuthConnection: (context) => {
    const { call, op, org } = context
    const connection = connectionOf(context)
    if (connection === undefined) return notFound
    if (connection.fields["flow_status"] === "IN_PROGRESS") {
      return error(409, "conflict", "Login flow already in progress")
    }
    // credentials stored: a re-authentication that submits them itself, and succeeds (nothing awaits input)
    const reauth = storedCredentials(context.store, connection, call.project)
    const flow = {
      flow_status: "IN_PROGRESS",
      flow_step: reauth ? "SUBMITTING" : "AWAITING_INPUT",
      flow_type: reauth ? "REAUTH" : "LOGIN",
      flow_expires_at: engine.isoAt(call.now + flowMillis),
      ...noFlow,
      discovered_fields: reauth ? null : asked,
      hosted_url: `https://sim.kernel.local/login/${encodeURIComponent(connection.id)}`,
      live_view_url: `https://sim.kernel.local/login/${encodeURIComponent(connection.id)}/live`
    }
    connection.fields = { ...connection.fields, ...flow }
    // the flow's states, its first published at once: a follow starts from the last one published
    const states = live.make<Record<string, unknown>>()
    live.publish(states, stateOf(connection.fields, engine.isoAt(call.now)))
    org.authFlows.set(connection.id, states)
    if (reauth) succeed(org, connection, engine.isoAt(call.now))
    return ok(op, {
      id: connection.id,
      flow_type: flow.flow_type,
      hosted_url: flow.hosted_url,
      flow_expires_at: flow.flow_expires_at,
      live_view_url: flow.live_view_url
    })
  },
  submitAuthConnection: (context) => {
    const { body, op, org, stamp } = context
    const given = choices.filter((choice) => body[choice] !== undefined)
    if (given.length !== 1) {
      return error(400, "bad_request", `invalid input: provide exactly one of ${choices.join(", ")}`)
    }
    const connection = connectionOf(context)
    if (connection === undefined) return notFound
    // nothing awaits input: not accepted
    if (connection.fields["flow_status"] !== "IN_PROGRESS" || connection.fields["flow_step"] !== "AWAITING_INPUT") {
      return ok(op, { accepted: false })
    }
    const fields = body["fields"]
    if (given[0] !== "fields" || typeof fields !== "object" || fields === null) {
      return error(400, "bad_request", `invalid input: the flow asks for fields (${asked.map((f) => f.name)})`)
    }
    const missing = asked.find((field) => {
      const value: unknown = Object.getOwnPropertyDescriptor(fields, field.name)?.value
      return typeof value !== "string" || value === ""
    })
    if (missing !== undefined) return error(400, "bad_request", `invalid input: fields.${missing.name}: is required`)
    const extra = Object.keys(fields).find((name) => !asked.some((field) => field.name === name))
    if (extra !== undefined) {
      return error(400, "bad_request", `invalid input: fields.${extra.slice(0, 64)}: the flow does not ask for it`)
    }
    change(org, connection, { flow_step: "SUBMITTING", discovered_fields: null }, stamp)
    succeed(org, connection, stamp)
    // the document: `save_credentials` (true when not given) saves them "after every successful login"
    if (connection.fields["save_credentials"] !== false) savedLogins.add(connection)
    return ok(op, { accepted: true })
  },
  followAuthConnection: (context) => {
    const { op, org, stamp } = context
    const connection = connectionOf(context)
    if (connection === undefined) return notFound
    const flow = org.authFlows.get(connection.id)
    const now = stateOf(connection.fields, stamp)
    // no flow in progress: the last flow's (terminal) state, if any, and the end
    if (flow === undefined) {
      return wholeReply(
        op,
        connection.fields["flow_status"] === null || connection.fields["flow_status"] === undefined ? [] : [now]
      )
    }
    // the current state (the last published) and what follows; at `flow_expires_at` (the simulator's clock)
    // the flow expires, told to its followers then, not when a request next touches the connection
    const expiresAt = Date.parse(String(connection.fields["flow_expires_at"]))
    return liveReply(op, {
      hub: flow,
      from: Math.max(0, live.now(flow) - 1),
      select: Option.some,
      deadline: Number.isFinite(expiresAt)
        ? { at: expiresAt, run: () => expire(org, connection, expiresAt) }
        : undefined
    })
  }
}
