/** Deletes a deployment (idempotent). Usage: tsx examples/delete-deployment.ts DEPLOYMENT_ID */
import { Console, Effect } from "effect"
import { Deployments } from "effect-kernel"
import { arg, runExample } from "./runtime.js"

const id = arg(0, "dep_running")

const program = Deployments.delete({ id }).pipe(
  Effect.zipRight(Console.log(`deployment ${id} stopped and marked for deletion`)),
  // deleting twice is fine; a deployment that does not exist is a typed NotFound
  Effect.catchTag("NotFound", () => Console.log(`deployment ${id} does not exist`))
)

runExample(program)
