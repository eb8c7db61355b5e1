import type { Reporter } from "vitest/node"

type Task = {
  readonly type: string
  readonly mode: string
  readonly result?: { readonly state?: string }
  readonly tasks?: ReadonlyArray<Task>
}

/** Prints the plain closing line `N passed, N failed, N skipped` that CI reads, after vitest's summary. */
export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<Task> = []) {
    let passed = 0
    let failed = 0
    let skipped = 0
    const visit = (task: Task) => {
      if (task.type === "test") {
        const state = task.result?.state
        if (state === "pass") passed++
        else if (state === "fail") failed++
        else skipped++
      }
      task.tasks?.forEach(visit)
      if (task.type === "suite" && task.result?.state === "fail" && (task.tasks?.length ?? 0) === 0) failed++
    }
    files.forEach(visit)
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
