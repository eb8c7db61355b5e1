import { makeConfig } from "./vitest.shared.js"

export default makeConfig("quick")
