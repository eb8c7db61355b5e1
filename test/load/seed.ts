/**
 * The world of the bin's mixed load (test/load/mixed-driver.ts), also replayed by
 * test/load/handler-bench.ts: one paid organization with a browser, a pool and a stopped deployment
 * for the five original routes; every other resource is created by the clients' flows.
 */

/** The organization's token. */
export const token = "sk_load_0123456789"

export const seed = {
  organizations: [{
    id: "org_load",
    token,
    plan: "paid",
    browsers: [{
      id: "browser_1",
      mouse: { x: 5, y: 6 },
      // ready at once and small (4 KiB), so the five-route load is as fast as those routes go: the
      // mixed load is compared with per-request costs, not with a big download's
      replays: [{ id: "replay_1", size: 4096, pendingPolls: 0 }]
    }],
    pools: [{
      id: "pool_small",
      name: "small",
      available_count: 2,
      acquired_count: 0,
      browser_pool_config: { size: 2 }
    }],
    deployments: [{ id: "dep_stopped", state: "stopped" }]
  }]
}
