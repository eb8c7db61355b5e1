/**
 * One client of the per-call rows in a process of its own, driven by the benchmark over IPC (see
 * `isolated` in bench/clients.ts): a user's program runs the SDK on one transport, and its calls share
 * their process with nothing else. Measured in the benchmark's process, every client's calls had met
 * every other client's (three transports' response classes through the SDK's call path, their
 * garbage in one heap): the same build's `getMousePosition` row measured 0.65 and 1.42× raw undici in
 * two runs.
 *
 * Forked as `calls-child.ts CLIENT_INDEX BASE_URL`; it sends `{ ready: ClientShape }`, then runs each
 * `{ id, method, args }` it is sent and answers `{ id, value }` or `{ id, error }`.
 */
import { makeClients } from "./clients.js"

const [index, base] = [Number(process.argv[2]), process.argv[3]!]
const client = makeClients(base)[index]!

type Message = { readonly id: number; readonly method: string; readonly args: ReadonlyArray<number> }

const run = (method: string, args: ReadonlyArray<number>): Promise<unknown> => {
  const [n = 0, inFlight = 1] = args
  switch (method) {
    case "sequential":
      return client.sequential(n)
    case "concurrent":
      return client.concurrent(n, inFlight)
    case "pools":
      return client.pools!()
    case "close":
      return client.close()
    default: {
      const call = Object.entries(client.generated ?? {}).find(([op]) => `generated:${op}` === method)?.[1]
      if (call === undefined) throw new Error(`no method ${method}`)
      return call(n, inFlight)
    }
  }
}

process.on("message", (message: Message) => {
  run(message.method, message.args).then(
    (value) => process.send!({ id: message.id, value }),
    (error) => process.send!({ id: message.id, error: String(error) })
  )
})
process.send!({
  ready: {
    name: client.name,
    generated: Object.keys(client.generated ?? {}),
    pools: client.pools !== undefined,
    stream: client.stream !== undefined
  }
})
// the benchmark gone (its IPC channel closed): this process ends too
process.on("disconnect", () => process.exit(0))
