import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/** The test configuration: the default suite, or (`load`) only the load test. */
export const makeConfig = (suite: "default" | "load") =>
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
      include: suite === "load" ? ["test/load/**/*.test.ts"] : ["test/**/*.test.ts", ".tmp/snippets/*.test.ts"],
      exclude: suite === "load" ? ["node_modules/**"] : ["test/load/**", "node_modules/**"],
      ...(suite === "load" ? { pool: "forks" as const, poolOptions: { forks: { execArgv: ["--expose-gc"] } } } : {}),
      testTimeout: 30_000,
      hookTimeout: 30_000
    }
  })
