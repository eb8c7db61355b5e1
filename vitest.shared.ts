import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/**
 * The slow test files `npm run test:quick` leaves out: each took 2.5 s or more in a full `npm test` on two
 * cores (child processes, Prism, the fault matrix, property runs, stress, real sockets; the list taken from
 * the durations a full run prints per file). `npm test` runs them all.
 */
export const slowTests: ReadonlyArray<string> = [
  "test/build.test.ts",
  "test/call.hostile.test.ts",
  "test/call.test.ts",
  "test/contract-prism.test.ts",
  "test/contract.test.ts",
  "test/declarations.test.ts",
  "test/demo.test.ts",
  "test/downloads.open.test.ts",
  "test/events.test.ts",
  "test/fastDecode.test.ts",
  "test/faults.test.ts",
  "test/files.test.ts",
  "test/fuzz.test.ts",
  "test/hardening.test.ts",
  "test/harness18.test.ts",
  "test/hostile.test.ts",
  "test/interruption.test.ts",
  "test/jsonbody.test.ts",
  "test/migrating.test.ts",
  "test/prism.test.ts",
  "test/resources.test.ts",
  "test/resume.test.ts",
  "test/retry.after.hostile.test.ts",
  "test/retry.oneshot.test.ts",
  "test/retry.test.ts",
  "test/retry.unsent.test.ts",
  "test/review-81.test.ts",
  "test/review-cancelers.test.ts",
  "test/review-encoding.test.ts",
  "test/review-intr.test.ts",
  "test/review-prefetch.test.ts",
  "test/simulator-api.test.ts",
  "test/simulator-bin.test.ts",
  "test/simulator-control-http.test.ts",
  "test/simulator-live.test.ts",
  "test/simulator-load.test.ts",
  "test/socket.property.test.ts",
  "test/transport.attempt.test.ts",
  "test/transport.crash.test.ts",
  "test/transport.production.test.ts",
  "test/transport.rev17.test.ts",
  "test/uploads.backpressure.test.ts",
  "test/uploads.changed.test.ts",
  "test/uploads.test.ts"
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
