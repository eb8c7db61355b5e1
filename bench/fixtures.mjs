// What the benchmark's server and the profiling scripts share: the pool list body, and starting
// bench/server.mjs in a child process.
import { spawn } from "node:child_process"

/** The JSON body of `count` browser pools, as the bench server answers `GET /browser_pools`. */
export const poolsJson = (count) =>
  JSON.stringify(Array.from({ length: count }, (_, i) => ({
    id: `pool_${i}`,
    name: `pool-${i}`,
    available_count: i % 10,
    acquired_count: i % 3,
    created_at: "2026-11-01T09:00:00Z",
    browser_pool_config: {
      size: 10,
      name: `pool-${i}`,
      fill_rate_per_minute: 10,
      timeout_seconds: 600,
      stealth: i % 2 === 0,
      headless: true,
      viewport: { width: 1920, height: 1080, refresh_rate: 25 },
      kiosk_mode: false,
      chrome_policy: { HomepageLocation: "https://example.com" }
    }
  })))

/**
 * A browser as `GET /browsers/:id` answers it (the document's fields: ids, its three URLs, two of
 * them secret, the creation time, its settings), for the per-call row of a generated operation.
 */
export const browserJson = (id) =>
  JSON.stringify({
    session_id: id,
    created_at: "2026-11-01T09:00:00Z",
    cdp_ws_url: `wss://proxy.kernel.example/browser/${id}/cdp?jwt=eyJhbGciOiJIUzI1NiJ9.bench`,
    webdriver_ws_url: `wss://proxy.kernel.example/browser/${id}/webdriver`,
    browser_live_view_url: `https://proxy.kernel.example/browser/${id}/live?jwt=eyJhbGciOiJIUzI1NiJ9.bench`,
    headless: false,
    stealth: true,
    kiosk_mode: false,
    timeout_seconds: 600,
    viewport: { width: 1920, height: 1080, refresh_rate: 25 }
  })

/** Starts bench/server.mjs (exiting with this process) with `env` added; resolves once it listens. */
export const startBenchServer = (env = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [new URL("server.mjs", import.meta.url).pathname, "--exit-with-parent"], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, ...env }
    })
    child.stdout.on("data", (data) => {
      const port = /port (\d+)/.exec(data.toString())?.[1]
      if (port !== undefined) resolve({ child, base: `http://127.0.0.1:${port}` })
    })
    child.once("exit", (code) => reject(new Error(`bench server exited ${code}`)))
  })
