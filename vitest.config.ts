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
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
