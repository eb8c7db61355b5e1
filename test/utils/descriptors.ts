import * as fs from "node:fs"

/** How many of this process's descriptors are open on `path` (Linux: `/proc/self/fd`). */
export const openOn = (path: string): number =>
  fs.readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === path
    } catch {
      return false
    }
  }).length
