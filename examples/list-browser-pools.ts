/** Lists the browser pools of your organization. Usage: tsx examples/list-browser-pools.ts */
import { Console, Effect } from "effect"
import { BrowserPools } from "effect-kernel"
import { runExample } from "./runtime.js"

const program = Effect.gen(function*() {
  const pools = yield* BrowserPools.list()
  for (const pool of pools) {
    yield* Console.log(
      `${pool.id}\t${pool.name ?? "-"}\t${pool.available_count}/${pool.browser_pool_config.size} available`
    )
  }
})

runExample(program)
