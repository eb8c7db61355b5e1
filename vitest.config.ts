import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    alias: [
      { find: /^effect-kernel\/testing$/, replacement: fileURLToPath(new URL("./src/testing.ts", import.meta.url)) },
      { find: /^effect-kernel$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
    ]
  },
  test: {
    reporters: ["default", "./test/utils/summary-reporter.ts"],
    // .tmp/snippets: the test snippets of README.md and docs/, extracted by `npm run check:docs`
    include: ["test/**/*.test.ts", ".tmp/snippets/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
