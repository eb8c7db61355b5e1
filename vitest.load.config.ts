import { defineConfig } from "vitest/config"
import { makeConfig } from "./vitest.shared.js"

const config = makeConfig("load")

// one load test at a time: each measures a process's memory and rate, which a neighbour's load skews
export default defineConfig({ ...config, test: { ...config.test, fileParallelism: false } })
