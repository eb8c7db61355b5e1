import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/**
 * The slow test files `npm run test:quick` leaves out (each takes seconds to minutes on two cores:
 * child processes, Prism, the fault matrix, property runs, stress). `npm test` runs them all.
 */
export const slowTests: ReadonlyArray<string> = [
  "test/build.test.ts",
  "test/bundle.test.ts",
  "test/contract.test.ts",
  "test/demo.test.ts",
  "test/faults.test.ts",
  "test/fuzz.test.ts",
  "test/hardening.test.ts",
  "test/hostile.test.ts",
  "test/official-client.test.ts",
  "test/prism.test.ts",
  "test/simulator-bin.test.ts",
  "test/simulator.test.ts",
  "test/socket.property.test.ts",
  "test/transport.attempt.test.ts",
  "test/transport.crash.test.ts",
  "test/transport.rev17.test.ts",
  "test/transport.stream.test.ts"
]

/**
 * The test configuration: the default suite, (`load`) only the load test, or (`quick`) the default
 * suite without the slow files and without the documentation's snippets.
 */
export const makeConfig = (suite: "default" | "load" | "quick") =>
  defineConfig({
    resolve: {
      alias: [
        { find: /^effect-kernel\/testing$/, replacement: fileURLToPath(new URL("./src/testing.ts", import.meta.url)) },
        { find: /^effect-kernel$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
      ]
    },
    test: {
      reporters: ["default", "./test/utils/summary-reporter.ts"],
      // .tmp/snippets: the test snippets of README.md and docs/, extracted by `npm run check:docs`;
      // the load test runs only from `npm run test:load`
      include: suite === "load"
        ? ["test/load/**/*.test.ts"]
        : suite === "quick"
        ? ["test/**/*.test.ts"]
        : ["test/**/*.test.ts", ".tmp/snippets/*.test.ts"],
      exclude: suite === "load"
        ? ["node_modules/**"]
        : ["test/load/**", "node_modules/**", ...(suite === "quick" ? slowTests : [])],
      ...(suite === "load" ? { pool: "forks" as const, poolOptions: { forks: { execArgv: ["--expose-gc"] } } } : {}),
      testTimeout: 30_000,
      hookTimeout: 30_000
    }
  })
