/** Hides or shows the cursor. Usage: tsx examples/set-cursor-visibility.ts BROWSER_ID [hide|show] */
import { Console, Effect } from "effect"
import { Computer } from "effect-kernel"
import { arg, runExample } from "./runtime.js"

const hidden = arg(1, "hide") === "hide"

const program = Computer.setCursorVisibility({ id: arg(0, "browser_1"), hidden }).pipe(
  Effect.flatMap(({ ok }) => Console.log(`cursor ${hidden ? "hidden" : "shown"}: ok=${ok}`))
)

runExample(program)
