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

/** The mouse at `(x, y)`, kept on the screen (a point outside the viewport is its nearest edge). */
const mouseAt = (browser: Browser, x: number, y: number): void => {
  browser.mouse = {
    x: Math.max(0, Math.min(browser.viewport.width - 1, x)),
    y: Math.max(0, Math.min(browser.viewport.height - 1, y))
  }
}

const dragTo = (browser: Browser, path: unknown): void => {
  if (!Array.isArray(path) || path.length === 0) return
  const last: unknown = path[path.length - 1]
  if (Array.isArray(last) && last.length >= 2) mouseAt(browser, num(last[0], 0), num(last[1], 0))
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
    case "drag_mouse":
      dragTo(browser, action["path"])
      return
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
    for (let i = 0; i < actions.length; i++) {
      const issue = actionIssue(actions[i]!, i)
      if (issue !== undefined) return error(400, "bad_request", issue)
    }
    // in order; a `sleep` is not waited: the simulator answers at once (a test on a `TestClock` never hangs)
    for (const action of actions) {
      const type = String(action["type"])
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
    // the region as the screen shows it: its part inside the viewport, or a 400 when none is
    const region = obj(body["region"])
    const x = num(region["x"], 0)
    const y = num(region["y"], 0)
    const width = Math.min(x + num(region["width"], 0), browser.viewport.width) - Math.max(x, 0)
    const height = Math.min(y + num(region["height"], 0), browser.viewport.height) - Math.max(y, 0)
    return width >= 1 && height >= 1
      ? ok(op, values.png(width, height))
      : error(
        400,
        "bad_request",
        `the region (${x}, ${y}, ${num(region["width"], 0)} × ${num(region["height"], 0)}) has no part inside the ` +
          `${browser.viewport.width} × ${browser.viewport.height} viewport`
      )
  })
}
