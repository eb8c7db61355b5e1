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

const dragTo = (browser: Browser, path: unknown): void => {
  if (!Array.isArray(path) || path.length === 0) return
  const last: unknown = path[path.length - 1]
  if (Array.isArray(last) && last.length >= 2) browser.mouse = { x: num(last[0], 0), y: num(last[1], 0) }
}

const applyAction = (browser: Browser, action: Record<string, unknown>): void => {
  const type = action["type"]
  const args = (name: string): Record<string, unknown> => obj(action[name])
  switch (type) {
    case "click_mouse":
    case "move_mouse":
    case "scroll": {
      const a = args(type)
      browser.mouse = { x: num(a["x"], browser.mouse.x), y: num(a["y"], browser.mouse.y) }
      return
    }
    case "drag_mouse":
      dragTo(browser, args(type)["path"])
      return
    case "type_text":
      browser.typed.push(String(args(type)["text"] ?? ""))
      return
    case "press_key":
      browser.typed.push(...strings(args(type)["keys"]).map((k) => `<${k}>`))
      return
    case "set_cursor":
      browser.cursorHidden = args(type)["hidden"] === true
      return
  }
}

/** A telemetry event of the browser, as it happens. */
const telemetry = (browser: Browser, now: number, type: string, data: Record<string, unknown>): void => {
  browser.telemetrySeq++
  live.publish(browser.events, {
    _tag: "Telemetry",
    seq: browser.telemetrySeq,
    event: { type, ts: now, source: { kind: "cdp" }, data }
  })
}

const moveMouse = onBrowser(({ body, call, op }, browser) => {
  browser.mouse = { x: num(body["x"], browser.mouse.x), y: num(body["y"], browser.mouse.y) }
  if (op.name === "clickMouse") telemetry(browser, call.now, "interaction_click", { ...browser.mouse })
  if (op.name === "scrollMouseWheel") telemetry(browser, call.now, "interaction_scroll_settled", {})
  return ok(op)
})

export const handlers: Handlers = {
  clickMouse: moveMouse,
  moveMouse,
  scrollMouseWheel: moveMouse,
  dragMouse: onBrowser(({ body, op }, browser) => {
    dragTo(browser, body["path"])
    return ok(op)
  }),
  typeText: onBrowser(({ body, call, op }, browser) => {
    browser.typed.push(String(body["text"] ?? ""))
    telemetry(browser, call.now, "interaction_key", {})
    return ok(op)
  }),
  pressKey: onBrowser(({ body, call, op }, browser) => {
    browser.typed.push(...strings(body["keys"]).map((k) => `<${k}>`))
    telemetry(browser, call.now, "interaction_key", {})
    return ok(op)
  }),
  batchComputerActions: onBrowser(({ body, op }, browser) => {
    for (const action of Array.isArray(body["actions"]) ? body["actions"].map(obj) : []) {
      applyAction(browser, action)
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
