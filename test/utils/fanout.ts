// A large fan-out in one process, run by test/transport.production.test.ts under `ulimit -n`:
// a loopback node:http server and `calls` concurrent getMousePosition calls on KernelTransport with
// the given `connections` ("default" or a number, "Infinity" included). Prints one JSON line: the
// number of successes, and the failures by their message's first words.
import { Effect, Layer, Redacted } from "effect"
import { Computer, Kernel, KernelConfig, KernelTransport } from "effect-kernel"
import * as Http from "node:http"

const [connectionsArg = "default", callsArg = "1000"] = process.argv.slice(2)
const calls = Number(callsArg)

const server = Http.createServer((_req, res) => {
  setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end("{\"x\":1,\"y\":2}"), 20)
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  const transport = connectionsArg === "default"
    ? KernelTransport.layerUndici
    : Layer.orDie(KernelTransport.layerUndiciWith({ connections: Number(connectionsArg) }))
  const layer = Kernel.layer.pipe(
    Layer.provide(KernelConfig.layer({
      apiKey: Redacted.make("sk_fanout_secret"),
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 0,
      timeout: "20 seconds"
    })),
    Layer.provide(transport)
  )
  const program = Effect.forEach(
    Array.from({ length: calls }, (_, i) => i),
    () => Effect.either(Computer.getMousePosition({ id: "b1" })),
    { concurrency: "unbounded" }
  ).pipe(Effect.provide(layer))
  Effect.runPromise(program).then((results) => {
    const failures: Record<string, number> = {}
    let ok = 0
    for (const result of results) {
      if (result._tag === "Right") ok++
      else {
        const key = result.left.message.split(" ").slice(0, 9).join(" ")
        failures[key] = (failures[key] ?? 0) + 1
      }
    }
    process.stdout.write(`${JSON.stringify({ ok, failures })}\n`)
    server.close()
    process.exit(0)
  })
})
