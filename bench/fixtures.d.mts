import type { ChildProcess } from "node:child_process"

export declare const poolsJson: (count: number) => string

export declare const browserJson: (id: string) => string

export declare const startBenchServer: (
  env?: Record<string, string>
) => Promise<{ readonly child: ChildProcess; readonly base: string }>
