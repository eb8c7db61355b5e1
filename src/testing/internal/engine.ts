/**
 * The simulator's engine for every operation of the generated table: a generic, stateful answer
 * by convention (collections of resources per organization: create, retrieve, list paged, update,
 * delete; sub-resources as merged singletons; actions answered from the answer schema) and the real
 * behaviours of the areas that have one (browsers, computer, filesystem, processes, replays, pools,
 * credentials' TOTP, deployments, invocations). Every answer is the encoded side of the
 * operation's answer schema, checked by decoding it.
 *
 * @internal
 */
import type * as SchemaAST from "effect/SchemaAST"
import type * as Stream from "effect/Stream"
import type { Answer, Operation } from "../../internal/definition.js"
import { operations } from "../../internal/generated/table.js"
import * as live from "./live.js"
import * as values from "./values.js"

/** A stored resource. */
export interface Resource {
  readonly id: string
  /** The project it was created in (`X-Kernel-Project-Id`), if any. */
  readonly project: string | undefined
  fields: Record<string, unknown>
  deleted: boolean
  /**
   * Deleted on the service's side yet still shown (a deployment stopped and marked for deletion):
   * evicted first, like a deleted one.
   */
  retired?: boolean
}

/** A node of a browser's filesystem. */
export interface FsNode {
  readonly dir: boolean
  readonly bytes: Uint8Array
  mode: string
  modTime: number
  /** The CRC-32 of `bytes` once a zip download needed it (a write makes a new node, so it stays true). */
  crc?: number
}

/** A browser's filesystem: its nodes by path, and the bytes of their contents (for the simulator's byte budget). */
export class FsTree extends Map<string, FsNode> {
  /** The bytes of every file's contents. */
  bytes = 0
  override set(path: string, node: FsNode): this {
    this.bytes += node.bytes.length - (this.get(path)?.bytes.length ?? 0)
    return super.set(path, node)
  }
  override delete(path: string): boolean {
    this.bytes -= this.get(path)?.bytes.length ?? 0
    return super.delete(path)
  }
  override clear(): void {
    this.bytes = 0
    super.clear()
  }
}

/**
 * A new browser's filesystem: the directories a program finds on the service's machine before it writes
 * anything (`/tmp`, the `kernel` user's home), so that a watch of `/tmp` or an `exec` in it does not need a
 * directory made first.
 */
const baseTree = (): FsTree => {
  const tree = new FsTree()
  for (const [path, mode] of [["/", "0755"], ["/home", "0755"], ["/home/kernel", "0755"], ["/tmp", "1777"]]) {
    tree.set(path!, { dir: true, bytes: new Uint8Array(0), mode: mode!, modTime: 0 })
  }
  return tree
}

/** A process spawned in a browser. */
export interface Process {
  readonly id: string
  readonly pid: number
  state: "running" | "exited"
  exitCode: number | null
  /** Interactive (`cat` with no file): what is written to its stdin comes out of its stdout. */
  readonly echoesStdin: boolean
  /** Spawned with a terminal (`allocate_tty`): it can be resized. */
  readonly tty: boolean
  /** `sleep N`: when it exits (0) on the simulator's clock, in epoch milliseconds. */
  readonly endsAt: number | undefined
  /** Its output as it comes, ending with its exit (the backlog bounded). */
  readonly output: live.Hub<ProcessOutput>
}

/** A piece of a process's output, or its exit. */
export type ProcessOutput =
  | { readonly _tag: "Data"; readonly stream: "stdout" | "stderr"; readonly bytes: Uint8Array }
  | { readonly _tag: "Exit"; readonly code: number }

/** What happens in a browser, for its open-ended event streams. */
export type BrowserEvent =
  | {
    readonly _tag: "Fs"
    readonly type: "CREATE" | "WRITE" | "DELETE" | "RENAME"
    readonly path: string
    readonly isDir: boolean
    /**
     * A WRITE's part past the file's previous size, for the log streams that follow the file
     * (`BrowserState.logTails`; none follows it: not kept), however late they read the event.
     */
    readonly appended?: Appended | undefined
  }
  | { readonly _tag: "Log"; readonly at: number; readonly message: string }
  | { readonly _tag: "WatchStopped"; readonly id: string }
  /** A telemetry event (its `type`, `ts` and `data`), numbered by the browser's `seq`. */
  | { readonly _tag: "Telemetry"; readonly seq: number; readonly event: Record<string, unknown> }

/**
 * What a write added to a followed log file: its size before (`from`) and after (`length`), the bytes past
 * the size before (at most a MiB), and when it was written.
 */
export interface Appended {
  readonly from: number
  readonly length: number
  readonly bytes: Uint8Array
  readonly at: number
}

/** The live state of a browser (beyond its stored fields). */
export interface BrowserState {
  readonly id: string
  mouse: { x: number; y: number }
  cursorHidden: boolean
  viewport: { width: number; height: number }
  clipboard: string
  /** Text typed and keys pressed, in order. */
  readonly typed: Array<string>
  readonly fs: FsTree
  readonly processes: Map<string, Process>
  /** What happens in it (files changed, log lines), until it is deleted. */
  readonly events: live.Hub<BrowserEvent>
  /** The `seq` of its last telemetry event. */
  telemetrySeq: number
  /**
   * Whether it captures interaction telemetry: only with a telemetry configuration whose
   * `interaction` category is not disabled (the document: "If omitted, no telemetry capture is
   * started").
   */
  capturesInteractions: boolean
  /** The bytes of output its processes keep (their backlogs), counted in the simulator's byte budget. */
  readonly output: { bytes: number }
  /** Its filesystem watches: what each watches (at most `collectionLimit`, the oldest dropped). */
  readonly watches: Map<string, { readonly path: string; readonly recursive: boolean }>
  /** The log streams (`source=path`, followed) open on each file: its writes carry what they add. */
  readonly logTails: Map<string, number>
}

/** What an organization holds: its resources in bounded collections, and the evictions. */
export interface Store {
  /** Concrete collection path (`/browsers`, `/browsers/b1/fs/watch`...) → resources by id. */
  readonly collections: Map<string, Map<string, Resource>>
  /**
   * Concrete path, its parents named by their ids (`/org/projects/p/limits`, whether the request named
   * the project by id or by name) → the fields of a sub-resource without an id.
   */
  readonly singletons: Map<string, Record<string, unknown>>
  /** A resource's path (`/org/projects/p`) → the singletons under it, which go when it goes ({@link remove}). */
  readonly singletonsOf: Map<string, Set<string>>
  /** The resources dropped to keep a collection under its limit, oldest first (bounded too). */
  readonly evictions: Array<{ readonly collection: string; readonly id: string }>
  /** The collections that were given a resource holding bytes (`__bytes`: an upload, a profile's state). */
  readonly byteCollections: Set<string>
  /** Where new ids come from: shared by a simulator's organizations, so no two resources share an id. */
  readonly ids: Ids
  /** The resource put last, and where (what a create just made, without scanning its collection). */
  lastPut: { readonly collection: string; readonly resource: Resource } | undefined
  /**
   * A top-level resource's path (`/browsers/b1`) → the collections under it (`/browsers/b1/replays`...),
   * so that a resource evicted takes them along without a scan of every collection.
   */
  readonly nested: Map<string, Set<string>>
  /**
   * A project's resources in the top-level collections ({@link projectCollections}), each with its
   * collection, in the order they were put: what `DELETE /org/projects/{id}` looks through instead of
   * every collection. Kept by {@link put} and {@link remove}; an entry whose resource left its
   * collection another way is dropped when next read ({@link projectHolding}).
   */
  readonly byProject: Map<string, Map<Resource, string>>
  /**
   * The deployments by the app they serve (its name when put: a deployment's app never changes), in the
   * order they were put: what an invocation or a new deployment of an app looks through instead of every
   * deployment. Entries are checked again when read ({@link deploymentsOf}).
   */
  readonly byApp: Map<string, Set<Resource>>
  /**
   * Per collection, its resources neither deleted nor retired, in the collection's order: what a list
   * of the current ones walks (a browser's default list, the apps) instead of the deleted ones kept
   * beside them, and what tells {@link put} that a full collection has none to evict first. Kept by
   * {@link put}, {@link remove}, {@link markDeleted} and {@link retire}.
   */
  readonly current: Map<string, Map<string, Resource>>
}

/** The most resources a collection holds; creating more evicts the oldest. */
export const collectionLimit = 1000
/** The most filesystem nodes per browser. */
export const fsLimit = 1000
/** The longest path of a browser's filesystem, in UTF-8 bytes (Linux's `PATH_MAX`). */
export const fsPathBytes = 4096
const evictionLog = 100

/**
 * The ids a simulator gives out: a counter, and the ids its seed gave (a new id never takes one of
 * those: a create next to a seeded `browser_00001` gets another id, not the seeded browser's).
 */
export interface Ids {
  counter: number
  readonly taken: Set<string>
}

/** A counter from zero, with no id taken. */
export const freshIds = (): Ids => ({ counter: 0, taken: new Set() })

/** An organization's empty store; `ids` is shared with the simulator's other organizations. */
export const emptyStore = (ids: Ids = freshIds()): Store => ({
  collections: new Map(),
  singletons: new Map(),
  singletonsOf: new Map(),
  evictions: [],
  byteCollections: new Set(),
  ids,
  lastPut: undefined,
  nested: new Map(),
  byProject: new Map(),
  byApp: new Map(),
  current: new Map()
})

/**
 * Whether a browser's telemetry configuration (`BrowserTelemetryConfig`, or none) captures
 * interactions: a configuration without `browser` captures every category, a category without
 * `enabled` is captured.
 */
export const capturesInteractions = (telemetry: unknown): boolean => {
  if (typeof telemetry !== "object" || telemetry === null) return false
  const categories: unknown = Reflect.get(telemetry, "browser")
  if (typeof categories !== "object" || categories === null) return true
  const interaction: unknown = Reflect.get(categories, "interaction")
  return typeof interaction !== "object" || interaction === null || Reflect.get(interaction, "enabled") !== false
}

export const newBrowserState = (
  id: string,
  init: {
    mouse?: { x: number; y: number }
    cursorHidden?: boolean
    viewport?: { width: number; height: number }
    telemetry?: unknown
  } = {}
): BrowserState => ({
  id,
  mouse: init.mouse ?? { x: 0, y: 0 },
  cursorHidden: init.cursorHidden ?? false,
  viewport: init.viewport ?? { width: 1920, height: 1080 },
  clipboard: "",
  typed: [],
  fs: baseTree(),
  processes: new Map(),
  events: live.make(),
  telemetrySeq: 0,
  capturesInteractions: capturesInteractions(init.telemetry),
  output: { bytes: 0 },
  watches: new Map(),
  logTails: new Map()
})

/**
 * Adds a resource, evicting beyond the limit (recorded) the oldest deleted or retired one (a
 * deleted browser is kept for `include_deleted`, a deleted deployment stays, stopped), or the
 * oldest when there is none: a long-lived resource is never dropped for the sake of deleted ones
 * created after it.
 */
export const put = (
  store: Store,
  collection: string,
  resource: Resource,
  /** What else goes with an evicted resource (its live state): its id, and the resource as it was. */
  onEvict?: (id: string, evicted: Resource) => void
): void => {
  let items = store.collections.get(collection)
  if (items === undefined) {
    items = new Map()
    store.collections.set(collection, items)
    const parts = collection.split("/")
    if (parts.length > 3) {
      entryOf(store.nested, `/${parts[1]}/${parts[2]}`, () => new Set<string>()).add(collection)
    }
  }
  const replaced = items.get(resource.id)
  if (replaced !== undefined) {
    items.delete(resource.id)
    unindex(store, collection, replaced)
  }
  items.set(resource.id, resource)
  index(store, collection, resource)
  if (resource.fields["__bytes"] instanceof Uint8Array) store.byteCollections.add(collection)
  store.lastPut = { collection, resource }
  while (items.size > collectionLimit) {
    let oldest: string | undefined = undefined
    // the oldest deleted or retired one, when the collection holds any (none: no walk of every resource)
    if ((store.current.get(collection)?.size ?? 0) < items.size) {
      for (const item of items.values()) {
        if (item.deleted || item.retired === true) {
          oldest = item.id
          break
        }
      }
    }
    // a project that still holds resources is not evicted while one that holds none can be (its resources
    // would be left to a project that no longer exists, which its delete refuses: 409)
    if (oldest === undefined && collection === "/org/projects") {
      for (const item of items.values()) {
        if (projectHolding(store, item.id, (r) => !r.deleted && r.retired !== true) === undefined) {
          oldest = item.id
          break
        }
      }
    }
    oldest ??= items.keys().next().value
    const evicted = oldest === undefined ? undefined : items.get(oldest)
    if (oldest === undefined || evicted === undefined) break
    remove(store, collection, oldest)
    onEvict?.(oldest, evicted)
    store.evictions.push({ collection, id: oldest })
    if (store.evictions.length > evictionLog) store.evictions.shift()
  }
}

/**
 * The collections a project's resources are looked for in when it is deleted: the top-level ones
 * (`/browsers`, `/org/api_keys`...), projects themselves aside. What a project holds under a resource (a
 * browser's processes, replays, watches) goes with that resource, itself the project's.
 */
export const projectCollections = (): ReadonlySet<string> =>
  topLevelMade ??= new Set(
    [...collectionTemplates()].filter((template) => !template.includes("{") && template !== "/org/projects")
  )

let topLevelMade: ReadonlySet<string> | undefined

/** An app's name from its entrypoint, `src/my-app.ts` → `my-app`. */
const appNameOf = (entrypoint: string): string => entrypoint.split("/").at(-1)!.replace(/\.[^.]*$/, "") || "app"

/**
 * The app a deployment serves: the service reads the app's name from its code, which the simulator
 * does not run, so a deployment that names no app serves one named by its entrypoint's base name (a
 * zip's `entrypoint_rel_path`, a GitHub source's `entrypoint`; `undefined`: it serves none).
 */
export const appName = (d: Pick<Resource, "fields">): string | undefined => {
  const named = d.fields["app_name"]
  const source = d.fields["source"]
  const entrypoint = d.fields["entrypoint_rel_path"] ?? (values.isObject(source) ? source["entrypoint"] : undefined)
  return typeof named === "string" ? named : typeof entrypoint === "string" ? appNameOf(entrypoint) : undefined
}

/** The entry of `key` in an index, made empty when there is none. */
const entryOf = <K, V>(index: Map<K, V>, key: K, make: () => V): V => {
  let entry = index.get(key)
  if (entry === undefined) {
    entry = make()
    index.set(key, entry)
  }
  return entry
}

const index = (store: Store, collection: string, resource: Resource): void => {
  if (!resource.deleted && resource.retired !== true) {
    entryOf(store.current, collection, () => new Map<string, Resource>()).set(resource.id, resource)
  }
  if (resource.project !== undefined && projectCollections().has(collection)) {
    entryOf(store.byProject, resource.project, () => new Map<Resource, string>()).set(resource, collection)
  }
  if (collection === "/deployments") {
    const app = appName(resource)
    if (app !== undefined) entryOf(store.byApp, app, () => new Set<Resource>()).add(resource)
  }
}

const unindex = (store: Store, collection: string, resource: Resource): void => {
  leaveCurrent(store, collection, resource)
  if (resource.project !== undefined) {
    const held = store.byProject.get(resource.project)
    if (held?.get(resource) === collection) {
      held.delete(resource)
      if (held.size === 0) store.byProject.delete(resource.project)
    }
  }
  if (collection === "/deployments") {
    const app = appName(resource)
    const serving = app === undefined ? undefined : store.byApp.get(app)
    if (app !== undefined && serving !== undefined) {
      serving.delete(resource)
      if (serving.size === 0) store.byApp.delete(app)
    }
  }
}

/** Marks a resource deleted (kept in its collection, e.g. for `include_deleted`; no longer current). */
export const markDeleted = (store: Store, collection: string, resource: Resource): void => {
  resource.deleted = true
  leaveCurrent(store, collection, resource)
}

/** Marks a resource retired (still shown, evicted first, e.g. a deployment stopped; no longer current). */
export const retire = (store: Store, collection: string, resource: Resource): void => {
  resource.retired = true
  leaveCurrent(store, collection, resource)
}

const leaveCurrent = (store: Store, collection: string, resource: Resource): void => {
  const current = store.current.get(collection)
  if (current?.get(resource.id) === resource) current.delete(resource.id)
}

/** The resources of a collection neither deleted nor retired, in its order. */
export const currentOf = (store: Store, collection: string): Iterable<Resource> =>
  store.current.get(collection)?.values() ?? []

/** Takes a resource out of its collection (and out of the store's indexes). */
export const remove = (store: Store, collection: string, id: string): void => {
  const items = store.collections.get(collection)
  const resource = items?.get(id)
  if (items === undefined || resource === undefined) return
  items.delete(id)
  unindex(store, collection, resource)
  // its sub-resources without an id (a project's limits) go with it: a resource made later under the
  // same name does not find them, and the store does not keep them
  const owned = store.singletonsOf.get(`${collection}/${id}`)
  if (owned !== undefined) {
    for (const path of owned) store.singletons.delete(path)
    store.singletonsOf.delete(`${collection}/${id}`)
  }
}

/** Whether a resource is still the one its collection holds under its id. */
const stillHeld = (store: Store, collection: string, resource: Resource): boolean =>
  store.collections.get(collection)?.get(resource.id) === resource

/**
 * The first resource of a project in {@link projectCollections} that passes `held`, as a scan of those
 * collections in their order (each in its order) finds it, with its collection.
 */
export const projectHolding = (
  store: Store,
  project: string,
  held: (resource: Resource) => boolean
): { readonly collection: string; readonly resource: Resource } | undefined => {
  const resources = store.byProject.get(project)
  if (resources === undefined) return undefined
  let found: { readonly collection: string; readonly resource: Resource } | undefined = undefined
  let rank = Number.POSITIVE_INFINITY
  const order = [...projectCollections()]
  for (const [resource, collection] of resources) {
    if (!stillHeld(store, collection, resource)) {
      resources.delete(resource)
      continue
    }
    if (!held(resource)) continue
    // the first collection's first resource: the index keeps each collection's order (the order of puts)
    const at = order.indexOf(collection)
    if (at < rank) {
      rank = at
      found = { collection, resource }
    }
  }
  if (resources.size === 0) store.byProject.delete(project)
  return found
}

/** The deployments put as serving the app `app` (see {@link Store.byApp}), still held, in their order. */
export const deploymentsOf = (store: Store, app: string): ReadonlyArray<Resource> => {
  const serving = store.byApp.get(app)
  if (serving === undefined) return []
  const out: Array<Resource> = []
  for (const resource of serving) {
    if (stillHeld(store, "/deployments", resource)) out.push(resource)
    else serving.delete(resource)
  }
  if (serving.size === 0) store.byApp.delete(app)
  return out
}

/**
 * The bytes an organization's world holds as contents: its browsers' files, the output their processes
 * keep, and the bytes its resources keep (uploaded extensions, saved profiles...).
 */
export const storedBytes = (store: Store, browsers: Iterable<BrowserState>): number => {
  let total = 0
  for (const browser of browsers) total += browser.fs.bytes + browser.output.bytes
  for (const collection of store.byteCollections) {
    for (const resource of store.collections.get(collection)?.values() ?? []) {
      const bytes = resource.fields["__bytes"]
      if (bytes instanceof Uint8Array) total += bytes.length
    }
  }
  return total
}

/** Drops the collections under a top-level resource (`/browsers/b1` → `/browsers/b1/replays`...). */
export const dropNested = (store: Store, owner: string): void => {
  for (const collection of store.nested.get(owner) ?? []) {
    store.collections.delete(collection)
    store.current.delete(collection)
  }
  store.nested.delete(owner)
}

/**
 * The ISO text of a time (epoch milliseconds), as `Date.prototype.toISOString` writes it: the last one
 * made is kept (the requests of one millisecond share it).
 */
export const isoAt = (millis: number): string => {
  if (millis !== lastIso[0]) lastIso = [millis, new Date(millis).toISOString()]
  return lastIso[1]
}

let lastIso: readonly [number, string] = [Number.NaN, ""]

/** A new id (`browser_0000a`): unique across the simulator's organizations, never a seeded one. */
export const nextId = (store: Store, prefix: string): string => {
  let id: string
  do {
    id = `${prefix}_${(++store.ids.counter).toString(36).padStart(5, "0")}`
  } while (store.ids.taken.has(id))
  return id
}

/** Marks every id the store holds as taken (after its seed is put): {@link nextId} gives none of them. */
export const reserveIds = (store: Store): void => {
  for (const items of store.collections.values()) {
    for (const id of items.keys()) store.ids.taken.add(id)
  }
}

// ---------------------------------------------------------------------------------------------
// conventions derived from the table

const templatesByPath = (() => {
  let made: Map<string, Map<string, Operation>> | undefined
  return () => {
    if (made !== undefined) return made
    made = new Map()
    const all: ReadonlyArray<Operation> = operations
    for (const op of all) {
      const methods = made.get(op.path) ?? new Map<string, Operation>()
      methods.set(op.method, op)
      made.set(op.path, methods)
    }
    return made
  }
})()

const parentTemplate = (template: string): string => template.slice(0, template.lastIndexOf("/"))
const lastSegment = (template: string): string => template.slice(template.lastIndexOf("/") + 1)
const isParam = (segment: string): boolean => segment.startsWith("{") && segment.endsWith("}")

let collectionsMade: Set<string> | undefined
/** The templates of collections: a path with an item path `<it>/{x}` and a create or list. */
export const collectionTemplates = (): Set<string> => {
  if (collectionsMade !== undefined) return collectionsMade
  const byPath = templatesByPath()
  collectionsMade = new Set(["/browsers/{id}/process"])
  for (const path of byPath.keys()) {
    if (!isParam(lastSegment(path))) continue
    const parent = parentTemplate(path)
    const methods = byPath.get(parent)
    if (methods !== undefined && (methods.has("POST") || methods.has("GET"))) collectionsMade.add(parent)
  }
  return collectionsMade
}

/** What an operation is by convention. */
export type Kind = "create" | "list" | "retrieve" | "update" | "delete" | "action"

export const kindOf = (operation: Operation): Kind => {
  let kind = kinds.get(operation)
  if (kind === undefined) {
    kind = kindOfPath(operation)
    kinds.set(operation, kind)
  }
  return kind
}

/** Each operation's kind, worked out once (every generic answer asks). */
const kinds = new WeakMap<Operation, Kind>()

const kindOfPath = (operation: Operation): Kind => {
  const collections = collectionTemplates()
  if (collections.has(operation.path)) {
    if (operation.method === "POST") return "create"
    if (operation.method === "GET") return "list"
  }
  if (isParam(lastSegment(operation.path)) && collections.has(parentTemplate(operation.path))) {
    if (operation.method === "GET") return "retrieve"
    if (operation.method === "PATCH" || operation.method === "PUT") return "update"
    if (operation.method === "DELETE") return "delete"
  }
  return "action"
}

/** A request as the engine sees it. */
export interface Call {
  readonly operation: Operation
  readonly template: string
  /** The decoded path segments. */
  readonly segments: ReadonlyArray<string>
  readonly query: URLSearchParams
  /** The JSON body (an object when the operation takes one), or the multipart fields. */
  readonly body: Record<string, unknown>
  readonly raw: Uint8Array
  readonly parts: ReadonlyArray<values.Part>
  readonly project: string | undefined
  readonly now: number
  readonly headers: Readonly<Record<string, string | undefined>>
}

/** An answer before it is put on the wire. */
export type Reply =
  | {
    readonly _tag: "Json"
    readonly status: number
    readonly value: unknown
    readonly headers?: Record<string, string>
  }
  | { readonly _tag: "Empty"; readonly status: number }
  /** Bytes, in one piece or in pieces written one after the other (a zip download: its files' bytes not copied). */
  | {
    readonly _tag: "Bytes"
    readonly status: number
    readonly bytes: Uint8Array | ReadonlyArray<Uint8Array>
    readonly contentType: string
  }
  | { readonly _tag: "Events"; readonly status: number; readonly text: string }
  /** An open-ended event stream: its frames as things happen. */
  | {
    readonly _tag: "Live"
    readonly status: number
    readonly frames: Stream.Stream<string>
    /** Its keep-alive frame at a time (epoch milliseconds), sent every 15 s while nothing happens. */
    readonly keepAlive: (now: number) => string
    /** The same frames told without a `Stream` (see `live.follow`): what the HTTP transport sends. */
    readonly follow: live.FollowFrames
    /** What happens at a time while `follow`'s stream is open: waited for by the transport that sends it. */
    readonly deadline?: live.Deadline | undefined
  }
  | { readonly _tag: "Error"; readonly status: number; readonly code: string; readonly message: string }

const notFound = (what: string): Reply => ({
  _tag: "Error",
  status: 404,
  code: "not_found",
  message: `${what} not found`
})
const badRequest = (message: string): Reply => ({ _tag: "Error", status: 400, code: "bad_request", message })

/** The concrete path of a template prefix of `segments`. */
const concrete = (segments: ReadonlyArray<string>, length: number): string => `/${segments.slice(0, length).join("/")}`

/** Whether a resource is seen by a caller naming `project` (a resource of no project is seen by all). */
export const visible = (resource: Resource, project: string | undefined): boolean =>
  project === undefined || resource.project === undefined || resource.project === project

/** A resource of a concrete collection by its id (or name / session id). */
export const find = (
  store: Store,
  collection: string,
  key: string,
  project: string | undefined
): Resource | undefined => {
  const items = store.collections.get(collection)
  if (items === undefined) return undefined
  const direct = items.get(key)
  if (direct !== undefined) return visible(direct, project) ? direct : undefined
  for (const resource of items.values()) {
    if (resource.fields["name"] === key && visible(resource, project)) return resource
  }
  return undefined
}

/**
 * The resource of a collection whose paths name it by id only (`/proxies/{id}`, `/org/api_keys/{id}`: the
 * document's "Proxy ID", "API key ID"), visible to the caller's project; a name finds nothing there, as in
 * the service (a program passing a name where an id goes would pass against the simulator only).
 */
export const findById = (
  store: Store,
  collection: string,
  id: string,
  project: string | undefined
): Resource | undefined => {
  const resource = store.collections.get(collection)?.get(id)
  return resource !== undefined && visible(resource, project) ? resource : undefined
}

/**
 * The resource a path segment names, by the template part it fills: a `{id}` by its id only (not
 * `{id_or_name}`), but for a project, which the simulator finds by id or by name (its limits, see `action`
 * below).
 */
const findByPart = (
  store: Store,
  collection: string,
  part: string | undefined,
  key: string,
  project: string | undefined
): Resource | undefined =>
  part === "{id}" && collection !== "/org/projects"
    ? findById(store, collection, key, project)
    : find(store, collection, key, project)

const singular = (collectionTemplate: string): string => {
  const name = lastSegment(collectionTemplate).replace(/_/g, " ")
  return name === "process" ? "process" : name.endsWith("ies") ? `${name.slice(0, -3)}y` : name.replace(/s$/, "")
}

/** The first documented 2xx answer (preferring a body, and not the 202 of "not ready yet"). */
export const mainAnswer = (operation: Operation): readonly [number, Answer] => {
  let main = mainAnswers.get(operation)
  if (main === undefined) {
    const entries = Object.entries(operation.answers).map(([s, a]) => [Number(s), a] as const).sort((a, b) =>
      a[0] - b[0]
    )
    main = entries.find(([s]) => s !== 202) ?? entries[0]!
    mainAnswers.set(operation, main)
  }
  return main
}

/** Each operation's main answer, worked out once (it is asked several times per request). */
const mainAnswers = new WeakMap<Operation, readonly [number, Answer]>()

const answerSchema = (answer: Answer): SchemaAST.AST | undefined =>
  answer.kind === "json" || answer.kind === "page" || answer.kind === "sse" ? answer.schema.ast : undefined

const itemOf = (ast: SchemaAST.AST): SchemaAST.AST | undefined => {
  let base = ast
  while (base._tag === "Refinement" || base._tag === "Transformation") base = base.from
  return base._tag === "TupleType" && base.rest.length > 0 ? base.rest[0]!.type : undefined
}

/** A value of the answer schema, made of `fields`. */
export const shape = (operation: Operation, status: number, fields: unknown): unknown => {
  const answer = operation.answers[status]
  const ast = answer === undefined ? undefined : answerSchema(answer)
  return ast === undefined ? fields : values.fill(ast, fields)
}

/** Pieces of bytes (a `Bytes` reply in pieces). */
const isChunks = (fields: unknown): fields is ReadonlyArray<Uint8Array> =>
  Array.isArray(fields) && fields.every((chunk) => chunk instanceof Uint8Array)

export const reply = (
  operation: Operation,
  fields: unknown,
  status?: number,
  /** `fields` are a stored resource's (never changed in place): their filled answer is made once (see `values.fillStored`). */
  stored = false
): Reply => {
  const [main, answer] = status === undefined ? mainAnswer(operation) : [status, operation.answers[status]!]
  switch (answer.kind) {
    case "none":
      return { _tag: "Empty", status: main }
    case "bytes":
      return {
        _tag: "Bytes",
        status: main,
        bytes: fields instanceof Uint8Array || isChunks(fields) ? fields : new TextEncoder().encode("simulated"),
        contentType: answer.contentType
      }
    case "sse":
      return { _tag: "Events", status: main, text: events(answer.schema.ast, Array.isArray(fields) ? fields : []) }
    default:
      return {
        _tag: "Json",
        status: main,
        value: stored ? values.fillStored(answer.schema.ast, fields) : values.fill(answer.schema.ast, fields)
      }
  }
}

/**
 * A few `text/event-stream` frames of the event schema: the given events (filled to the schema),
 * or one of each kind of event the schema has; a heartbeat first where the schema has one.
 */
export const events = (ast: SchemaAST.AST, given: ReadonlyArray<unknown>): string => {
  const frames: Array<unknown> = []
  const heartbeat = values.heartbeatOf(ast)
  if (heartbeat !== undefined) {
    // at the time of the first event given, when it has one
    const first: unknown = given[0]
    const at = values.isObject(first) && typeof first["timestamp"] === "string" ? first["timestamp"] : undefined
    frames.push(at === undefined ? heartbeat : values.fill(ast, { ...Object(heartbeat), timestamp: at }))
  }
  if (given.length > 0) { for (const event of given) frames.push(values.fill(ast, event)) }
  else {
    for (const v of values.memberSamples(ast)) {
      if (v !== heartbeat && values.decodes(ast, v)) frames.push(v)
    }
  }
  return frames.map((frame, i) => `id: ${i + 1}\ndata: ${JSON.stringify(frame)}\n\n`).join("")
}

const isObject = values.isObject

const merge = (target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...target }
  for (const [key, value] of Object.entries(patch)) {
    out[key] = isObject(value) && isObject(out[key]) ? merge(out[key], value) : value
  }
  return out
}

const paging = new Set(["limit", "offset", "query", "include_deleted"])

/**
 * The fields a list's `query` searches, as the document says: a profile's name or id, a project's name
 * (not every field: `2026` or `active` would find them all).
 */
const searchedBy = (collection: string): ReadonlyArray<string> =>
  collection === "/org/projects" ? ["name"] : ["name", "id"]

const declaredQueries = new WeakMap<Operation, ReadonlySet<string>>()

/** The names of the query parameters the document declares for an operation (worked out once per operation). */
const declaredQuery = (operation: Operation): ReadonlySet<string> => {
  let names = declaredQueries.get(operation)
  if (names === undefined) {
    names = new Set(operation.parameters.filter((p) => p.in === "query").map((p) => p.name))
    declaredQueries.set(operation, names)
  }
  return names
}

/** A list's filters that name a field under another name (`GET /deployments?app_version=` → `version`). */
const filterAliases: Readonly<Record<string, string>> = { app_version: "version" }

/**
 * `since` (`GET /invocations`, a follow): an RFC 3339 time, or a duration before now (`5m`, `2h`, `30s`,
 * `1d`), as epoch milliseconds (`undefined`: neither).
 */
const sinceMillis = (value: string, now: number): number | undefined => {
  const duration = /^(\d+)(ms|s|m|h|d)$/.exec(value)
  if (duration !== null) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2]!]!
    return now - Number(duration[1]) * unit
  }
  const at = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(at) ? undefined : at
}

/**
 * The request's `since` query parameter at `now`: `{ since }` (`undefined` when it is not given), or the
 * 400 when it is neither a time nor a duration.
 */
export const sinceOf = (query: URLSearchParams, now: number): { readonly since: number | undefined } | Reply => {
  const text = query.get("since")
  if (text === null) return { since: undefined }
  const since = sinceMillis(text, now)
  return since === undefined ? badRequest("invalid input: since: an RFC 3339 time or a duration such as 5m") : { since }
}

/**
 * Whether a resource's fields pass a list's filter `name=value`: the field (or its alias) equals the
 * value; a resource without the field does not pass. `since` keeps what started (or was created) then
 * or later.
 */
const passes = (fields: Record<string, unknown>, name: string, value: string, since: number | undefined): boolean => {
  if (name === "since") {
    const started = fields["started_at"] ?? fields["created_at"]
    return since === undefined || (typeof started === "string" && Date.parse(started) >= since)
  }
  const field = fields[filterAliases[name] ?? name]
  return field !== undefined && field !== null && String(field) === value
}

/** The parent resources a request names must exist (`/browsers/{id}/...` → the browser). */
export const missingParent = (store: Store, call: Call): Reply | undefined => {
  const parts = templateParts(call.template)
  for (const i of parentsOf(call.operation)) {
    const resource = findByPart(store, concrete(call.segments, i), parts[i], call.segments[i]!, call.project)
    if (resource === undefined || resource.deleted) {
      return notFound(singular(`/${parts.slice(0, i).join("/")}`))
    }
  }
  return undefined
}

/**
 * Where the parents are in an operation's path: the index of each path segment naming a resource of a
 * collection above the operation's own (worked out once per operation).
 */
const parentsOf = (operation: Operation): ReadonlyArray<number> => {
  const known = parents.get(operation)
  if (known !== undefined) return known
  const parts = templateParts(operation.path)
  const collections = collectionTemplates()
  const own = kindOf(operation)
  // the resource itself is checked by its own operation; the others are parents
  const last = own === "retrieve" || own === "update" || own === "delete" ? parts.length - 1 : parts.length
  const made: Array<number> = []
  for (let i = 1; i < last; i++) {
    if (isParam(parts[i]!) && collections.has(`/${parts.slice(0, i).join("/")}`)) made.push(i)
  }
  parents.set(operation, made)
  return made
}

const parents = new WeakMap<Operation, ReadonlyArray<number>>()

/** The segments of a path template (`/browsers/{id}` → `browsers`, `{id}`), split once per template. */
export const templateParts = (template: string): ReadonlyArray<string> => {
  let parts = splitTemplates.get(template)
  if (parts === undefined) {
    parts = template.split("/").slice(1)
    splitTemplates.set(template, parts)
  }
  return parts
}

const splitTemplates = new Map<string, ReadonlyArray<string>>()

/**
 * The document's defaults of the fields a create stores and its answers tell (`default:` in the request's
 * schema, or "Defaults to true" / "Default is 3600" in its prose): what a resource made without them reads back.
 */
const createDefaults: Readonly<Record<string, Record<string, unknown>>> = {
  createAuthConnection: {
    save_credentials: true,
    record_session: false,
    health_check_interval: 3600,
    health_checks: true,
    auto_reauth: true
  },
  createProxy: { protocol: "https" }
}

/**
 * The collections of the organization itself, not of a project: a project, a credential provider (unique in
 * the organization) is seen by every caller, whatever project a caller names.
 */
const organizationLevel: ReadonlySet<string> = new Set(["/org/projects", "/org/credential_providers"])

/** The generic answer of an operation, by its kind. */
export const generic = (
  store: Store,
  call: Call,
  prefix: (collection: string) => string,
  /** What else goes with a resource a create evicts (see {@link put}). */
  onEvict?: (id: string) => void
): Reply => {
  const operation = call.operation
  const kind = kindOf(operation)
  const [status] = mainAnswer(operation)
  switch (kind) {
    case "create": {
      const collection = concrete(call.segments, call.segments.length)
      const singularName = prefix(operation.path)
      const id = nextId(store, singularName)
      const stamp = isoAt(call.now)
      // the organization's own resources (projects, credential providers) belong to no project, whoever makes them
      const project = organizationLevel.has(operation.path) ? undefined : call.project
      const fields: Record<string, unknown> = {
        ...createDefaults[operation.name],
        ...call.body,
        ...(call.body["__bytes"] instanceof Uint8Array ? { size_bytes: call.body["__bytes"].length } : {}),
        id,
        // `watch_id`, `replay_id`...: the id under the resource's own name too
        [`${singularName}_id`]: id,
        created_at: stamp,
        updated_at: stamp,
        ...(project === undefined ? {} : { project_id: project })
      }
      const answerAst = answerSchema(operation.answers[status]!)
      const resource: Resource = {
        id,
        project,
        fields: answerAst === undefined ? fields : values.fillForStore(answerAst, fields, id),
        deleted: false
      }
      put(store, collection, resource, onEvict)
      return reply(operation, resource.fields, status, true)
    }
    case "list": {
      const collection = concrete(call.segments, call.segments.length)
      // the operation's own query parameters filter it; one the document does not declare (a client's
      // cache buster, `?name=`) is ignored, as the service ignores it, never an empty list
      const declared = declaredQuery(operation)
      const filters: Array<readonly [string, string]> = []
      for (const [name, value] of call.query) if (!paging.has(name) && declared.has(name)) filters.push([name, value])
      const text = call.query.get("query")?.toLowerCase() ?? ""
      const given = sinceOf(call.query, call.now)
      if (!("since" in given)) return given
      const since = given.since
      return list(
        operation,
        store.collections.get(collection)?.values() ?? [],
        call.query,
        (r) => r.fields,
        (r) =>
          !r.deleted && visible(r, call.project) &&
          filters.every(([name, value]) => passes(r.fields, name, value, since)) &&
          (text === "" || searchedBy(operation.path).some((field) => {
            const value = r.fields[field]
            return typeof value === "string" && value.toLowerCase().includes(text)
          }))
      )
    }
    case "retrieve":
    case "update":
    case "delete": {
      const collectionTemplate = parentTemplate(operation.path)
      const collection = concrete(call.segments, call.segments.length - 1)
      const resource = findByPart(
        store,
        collection,
        templateParts(operation.path).at(-1),
        call.segments[call.segments.length - 1]!,
        call.project
      )
      if (resource === undefined || resource.deleted) return notFound(singular(collectionTemplate))
      if (kind === "retrieve") {
        const answer = operation.answers[status]!
        return answer.kind === "bytes"
          ? reply(operation, resource.fields["__bytes"] instanceof Uint8Array ? resource.fields["__bytes"] : undefined)
          : reply(operation, resource.fields, status, true)
      }
      if (kind === "update") {
        if (call.body["__bytes"] instanceof Uint8Array) store.byteCollections.add(collection)
        resource.fields = merge(resource.fields, { ...call.body, updated_at: isoAt(call.now) })
        return reply(operation, resource.fields, status, true)
      }
      remove(store, collection, resource.id)
      return reply(operation, undefined, status)
    }
    case "action": {
      // the parents by their ids: a project's limits are the same whether it is named by id or by name
      const segments = [...call.segments]
      let owner: string | undefined = undefined
      for (const i of parentsOf(operation)) {
        const parent = find(store, concrete(call.segments, i), call.segments[i]!, call.project)
        if (parent === undefined) continue
        segments[i] = parent.id
        owner = concrete(segments, i + 1)
      }
      const path = concrete(segments, segments.length)
      const current = store.singletons.get(path) ?? {}
      if (operation.method === "PATCH" || operation.method === "PUT") {
        const next = merge(current, call.body)
        store.singletons.set(path, next)
        if (owner !== undefined) entryOf(store.singletonsOf, owner, () => new Set<string>()).add(path)
        return reply(operation, next, status)
      }
      const answer = operation.answers[status]!
      if (answer.kind === "page") return list(operation, [], call.query)
      if (answer.kind === "json" && itemOf(answer.schema.ast) !== undefined) return reply(operation, [], status)
      return reply(operation, { ...current, ...call.body }, status)
    }
  }
}

/**
 * A list answer: paged (`limit`, `offset`, `X-Has-More`, `X-Next-Offset`) or whole. The items are
 * read in order and only as far as the answer needs: a page stops at the first item after it (a
 * collection of a thousand is not copied, nor filtered whole, for a page of five).
 */
/** `X-Limit` / `X-Offset`: the limit and offset a page was made with (as the document's lists send them). */
const pageHeaders = (limit: number, offset: number) => ({ "x-limit": String(limit), "x-offset": String(offset) })

export const list = <A>(
  operation: Operation,
  items: Iterable<A>,
  query: URLSearchParams,
  /** What an item is in the answer, made only for the items of the page. */
  toItem: (item: A) => unknown = (item) => item,
  /** Which items are listed (all by default). */
  keep: (item: A) => boolean = () => true
): Reply => {
  const [status, answer] = mainAnswer(operation)
  if (answer.kind === "page") {
    // where the document sets no bounds (a documented one is checked before: 400): a limit under 1
    // (0, negative, not a number) is the default, one over 100 is 100; an offset under 0 is 0
    const asked = Math.trunc(Number(query.get("limit") ?? 20))
    const limit = asked >= 1 ? Math.min(100, asked) : 20
    const offset = Math.max(0, Math.trunc(Number(query.get("offset") ?? 0)) || 0)
    const page: Array<unknown> = []
    let seen = 0
    let more = false
    for (const item of items) {
      if (!keep(item)) continue
      if (seen >= offset + limit) {
        more = true
        break
      }
      if (seen >= offset) page.push(values.fillStored(answer.schema.ast, toItem(item)))
      seen++
    }
    return {
      _tag: "Json",
      status,
      value: page,
      headers: more
        ? { "x-has-more": "true", "x-next-offset": String(offset + limit), ...pageHeaders(limit, offset) }
        : { "x-has-more": "false", ...pageHeaders(limit, offset) }
    }
  }
  const kept: Array<A> = []
  for (const item of items) if (keep(item)) kept.push(item)
  if (answer.kind === "json") {
    const item = itemOf(answer.schema.ast)
    if (item !== undefined) return { _tag: "Json", status, value: kept.map((i) => values.fillStored(item, toItem(i))) }
  }
  return reply(operation, kept.map(toItem), status)
}

export { badRequest, notFound }
