/** Reads the mouse position of a browser. Usage: tsx examples/get-mouse-position.ts BROWSER_ID */
import { Console, Effect } from "effect"
import { Computer } from "effect-kernel"
import { arg, runExample } from "./runtime.js"

const program = Computer.getMousePosition({ id: arg(0, "browser_1") }).pipe(
  Effect.flatMap(({ x, y }) => Console.log(`cursor at (${x}, ${y})`)),
  Effect.catchTag("NotFound", (error) => Console.error(`no such browser: ${error.message}`))
)

runExample(program)
