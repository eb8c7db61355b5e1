/**
 * The simulator's computer controls: the mouse, keys and text typed, the clipboard, batches of
 * actions, and a real PNG screenshot of the viewport.
 *
 * @internal
 */
import * as live from "../live.js"
import * as values from "../values.js"
import type { Browser, Handlers } from "./shared.js"
import { error, num, obj, ok, onBrowser, strings } from "./shared.js"

/** The mouse at `(x, y)` (a point on the screen: {@link offScreen} refused the others). */
const mouseAt = (browser: Browser, x: number, y: number): void => {
  browser.mouse = { x, y }
}

/**
 * Why a point is refused, as the browser's own server words it (`kernel-images`' computer.go: a point off the
 * screen is a 400, never moved to its edge), or `undefined`.
 */
const offScreen = (browser: Browser, x: number, y: number): string | undefined =>
  x < 0 || y < 0
    ? "coordinates must be non-negative"
    : x >= browser.viewport.width || y >= browser.viewport.height
    ? `coordinates exceed screen bounds (max: ${browser.viewport.width - 1}x${browser.viewport.height - 1})`
    : undefined

/** A drag's points (`[x, y]` each), or why the path is refused (the browser's server's words). */
const dragPoints = (browser: Browser, path: unknown): ReadonlyArray<readonly [number, number]> | string => {
  const points = Array.isArray(path) ? path : []
  if (points.length < 2) return "path must contain at least two points"
  const out: Array<readonly [number, number]> = []
  for (const [i, point] of points.entries()) {
    if (!Array.isArray(point) || point.length !== 2) return `path[${i}] must be [x,y]`
    const [x, y] = [num(point[0], 0), num(point[1], 0)]
    const refused = offScreen(browser, x, y)
    if (refused !== undefined) return refused
    out.push([x, y])
  }
  return out
}

/**
 * Why an action is refused as the browser's server refuses it (a 400 with these words), checked before it
 * does anything: points off the screen, a scroll without a delta, a key press without keys; or `undefined`.
 */
const refusal = (browser: Browser, type: string, action: Record<string, unknown>): string | undefined => {
  switch (type) {
    case "click_mouse":
    case "move_mouse":
      return offScreen(browser, num(action["x"], 0), num(action["y"], 0))
    case "scroll":
      return num(action["delta_x"], 0) === 0 && num(action["delta_y"], 0) === 0
        ? "at least one of delta_x or delta_y must be non-zero"
        : offScreen(browser, num(action["x"], 0), num(action["y"], 0))
    case "drag_mouse": {
      const points = dragPoints(browser, action["path"])
      return typeof points === "string" ? points : undefined
    }
    case "press_key":
      return strings(action["keys"]).length === 0 ? "keys must contain at least one key symbol" : undefined
  }
  return undefined
}

/** The most characters of typed text and pressed keys a browser keeps (the oldest are dropped first). */
export const typedLimit = 65_536

/** Text typed or keys pressed, recorded in order; what is kept stays within {@link typedLimit} characters. */
const record = (browser: Browser, entries: ReadonlyArray<string>): void => {
  browser.typed.push(...entries)
  let kept = 0
  for (const entry of browser.typed) kept += entry.length
  let drop = 0
  while (kept > typedLimit && drop < browser.typed.length) kept -= browser.typed[drop++]!.length
  if (drop > 0) browser.typed.splice(0, drop)
}

/** A telemetry event of the browser, as it happens. */
const telemetry = (browser: Browser, now: number, type: string, data: Record<string, unknown>): void => {
  // without a telemetry configuration that captures interactions, nothing is delivered
  if (!browser.capturesInteractions) return
  browser.telemetrySeq++
  live.publish(browser.events, {
    _tag: "Telemetry",
    seq: browser.telemetrySeq,
    // the document: "Event timestamp in Unix microseconds"
    event: { type, ts: now * 1000, source: { kind: "cdp" }, data }
  })
}

/**
 * The most `interaction_key` events one action tells (a long text typed tells its first keys): well under
 * the browser's backlog of events, so one action does not push every earlier event out of a resume's reach.
 */
const keyEventsPerAction = 32

/** An `interaction_key` event per key (`data.key`, the KeyboardEvent's key value), at most {@link keyEventsPerAction}. */
const keyTelemetry = (browser: Browser, now: number, keys: ReadonlyArray<string>): void => {
  for (const key of keys.slice(0, keyEventsPerAction)) telemetry(browser, now, "interaction_key", { key })
}

/** The KeyboardEvent `key` values of the characters typed (a newline is `Enter`, a tab `Tab`). */
const typedKeys = (text: string): ReadonlyArray<string> =>
  Array.from(
    text.slice(0, keyEventsPerAction * 2),
    (char) => char === "\n" || char === "\r" ? "Enter" : char === "\t" ? "Tab" : char
  )

/**
 * The KeyboardEvent `key` values of keys pressed as the document names them (xdotool's: `Return`,
 * `Ctrl+t`): each key of a combination (`Control`, then `t`).
 */
const pressedKeys = (keys: ReadonlyArray<string>): ReadonlyArray<string> =>
  keys.flatMap((combination) =>
    combination.split("+").filter((name) => name !== "").map((name) => keyNames.get(name.toLowerCase()) ?? name)
  )

// a map, not an object: a key named `constructor` or `__proto__` is its own name, not a prototype's property
const keyNames: ReadonlyMap<string, string> = new Map(Object.entries({
  ctrl: "Control",
  control: "Control",
  control_l: "Control",
  control_r: "Control",
  shift: "Shift",
  shift_l: "Shift",
  shift_r: "Shift",
  alt: "Alt",
  alt_l: "Alt",
  alt_r: "Alt",
  super: "Meta",
  super_l: "Meta",
  meta: "Meta",
  cmd: "Meta",
  return: "Enter",
  enter: "Enter",
  kp_enter: "Enter",
  backspace: "Backspace",
  tab: "Tab",
  escape: "Escape",
  esc: "Escape",
  space: " ",
  delete: "Delete",
  insert: "Insert",
  home: "Home",
  end: "End",
  page_up: "PageUp",
  prior: "PageUp",
  page_down: "PageDown",
  next: "PageDown",
  up: "ArrowUp",
  down: "ArrowDown",
  left: "ArrowLeft",
  right: "ArrowRight",
  caps_lock: "CapsLock"
}))

/**
 * One computer action, done as its own operation does it (the mouse, keys, cursor, and their telemetry):
 * `action` is the operation's body, `type` a batch action's type (`click_mouse`...).
 */
const act = (browser: Browser, now: number, type: string, action: Record<string, unknown>): void => {
  switch (type) {
    case "click_mouse":
    case "move_mouse":
    case "scroll": {
      mouseAt(browser, num(action["x"], browser.mouse.x), num(action["y"], browser.mouse.y))
      if (type === "click_mouse") telemetry(browser, now, "interaction_click", { ...browser.mouse })
      if (type === "scroll") telemetry(browser, now, "interaction_scroll_settled", {})
      return
    }
    case "drag_mouse": {
      const points = dragPoints(browser, action["path"])
      if (typeof points !== "string") mouseAt(browser, ...points[points.length - 1]!)
      return
    }
    case "type_text":
      record(browser, [String(action["text"] ?? "")])
      if (browser.capturesInteractions) keyTelemetry(browser, now, typedKeys(String(action["text"] ?? "")))
      return
    case "press_key":
      record(browser, strings(action["keys"]).map((k) => `<${k}>`))
      if (browser.capturesInteractions) keyTelemetry(browser, now, pressedKeys(strings(action["keys"])))
      return
    case "set_cursor":
      browser.cursorHidden = action["hidden"] === true
      return
  }
}

/**
 * Why a batch's action is refused (the document: "Exactly one action field matching the type must be
 * provided"), or `undefined`.
 */
const actionIssue = (action: Record<string, unknown>, index: number): string | undefined => {
  // the body passed its schema: the keys beside `type` are action fields
  const given = Object.keys(action).filter((name) => name !== "type" && action[name] !== undefined)
  const type = String(action["type"])
  return given.length === 1 && given[0] === type
    ? undefined
    : `actions[${index}]: exactly one action field matching its type (${type}) must be provided, found ${
      given.length === 0 ? "none" : given.join(", ")
    }`
}

/** A direct computer action: `type` is its batch type. */
const direct = (type: string) =>
  onBrowser(({ body, call, op }, browser) => {
    const refused = refusal(browser, type, body)
    if (refused !== undefined) return error(400, "bad_request", refused)
    act(browser, call.now, type, body)
    return ok(op)
  })

export const handlers: Handlers = {
  clickMouse: direct("click_mouse"),
  moveMouse: direct("move_mouse"),
  scrollMouseWheel: direct("scroll"),
  dragMouse: direct("drag_mouse"),
  typeText: direct("type_text"),
  pressKey: direct("press_key"),
  batchComputerActions: onBrowser(({ body, call, op }, browser) => {
    const actions = Array.isArray(body["actions"]) ? body["actions"].map(obj) : []
    // in order, as the browser's server does them: the first refused ends the batch with its 400, the actions
    // before it done; a `sleep` is not waited: the simulator answers at once (a test on a `TestClock` never hangs)
    for (const [i, action] of actions.entries()) {
      const issue = actionIssue(action, i)
      if (issue !== undefined) return error(400, "bad_request", issue)
      const type = String(action["type"])
      const refused = refusal(browser, type, obj(action[type]))
      if (refused !== undefined) return error(400, "bad_request", `actions[${i}] (${type}): ${refused}`)
      act(browser, call.now, type, obj(action[type]))
    }
    return ok(op)
  }),
  writeClipboard: onBrowser(({ body, op }, browser) => {
    browser.clipboard = String(body["text"] ?? "")
    return ok(op)
  }),
  readClipboard: onBrowser(({ op }, browser) => ok(op, { text: browser.clipboard })),
  captureScreenshot: onBrowser(({ body, op }, browser) => {
    if (body["region"] === undefined) return ok(op, values.png(browser.viewport.width, browser.viewport.height))
    // a region wholly on the screen, as the browser's server checks it (its words)
    const region = obj(body["region"])
    const [x, y, width, height] = [
      num(region["x"], 0),
      num(region["y"], 0),
      num(region["width"], 0),
      num(region["height"], 0)
    ]
    if (x < 0 || y < 0 || width <= 0 || height <= 0) return error(400, "bad_request", "invalid region dimensions")
    if (x + width > browser.viewport.width || y + height > browser.viewport.height) {
      return error(400, "bad_request", "region exceeds screen bounds")
    }
    return ok(op, values.png(width, height))
  })
}
