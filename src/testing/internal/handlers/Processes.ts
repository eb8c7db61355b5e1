/**
 * The simulator's processes: deterministic `echo`, `true`, `false`, `pwd`, `cat` and `ls` over the
 * browser's filesystem; spawn, status, kill, stdin, resize, and the output stream.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as engine from "../engine.js"
import * as live from "../live.js"
import { expiry } from "./Browsers.js"
import type { Browser, Handler, Handlers } from "./shared.js"
import {
  baseName,
  error,
  fileInTheWay,
  liveReply,
  normalize,
  ok,
  onBrowser,
  overBudget,
  parentOf,
  strings,
  wholeReply
} from "./shared.js"

/**
 * The most bytes of a command's stdout (and of its stderr) the simulator makes: the rest is cut, so
 * that a `cat` of a large file named many times cannot make a gigabyte answer.
 */
export const outputLimit = 16 * 1024 * 1024

const encoder = new TextEncoder()

/** Bytes, cut after {@link outputLimit}. */
class Output {
  private readonly parts: Array<Uint8Array> = []
  private length = 0
  add(piece: Uint8Array | string): void {
    const room = outputLimit - this.length
    if (room <= 0) return
    const bytes = typeof piece === "string" ? encoder.encode(piece) : piece
    const kept = bytes.length > room ? bytes.subarray(0, room) : bytes
    this.parts.push(kept)
    this.length += kept.length
  }
  /** The bytes, a copy of none of the files they were read from. */
  bytes(): Uint8Array {
    return this.parts.length === 1 ? new Uint8Array(this.parts[0]!) : new Uint8Array(Buffer.concat(this.parts))
  }
}

const outputOf = (text: string): Uint8Array => {
  const out = new Output()
  out.add(text)
  return out.bytes()
}

/** What a process's output weighs in the byte budget: its bytes. */
const weigh = (piece: engine.ProcessOutput): number => piece._tag === "Data" ? piece.bytes.length : 0

/**
 * Why a command cannot start, as the browser's own server refuses it (a 400), or `undefined`: `as_root`
 * with `as_user`.
 */
const notStarted = (body: Record<string, unknown>): engine.Reply | undefined =>
  body["as_root"] === true && typeof body["as_user"] === "string" && body["as_user"] !== ""
    ? error(400, "bad_request", "cannot specify both as_root and as_user")
    : undefined

/**
 * The deterministic output of a command run in the directory `cwd`: `echo [-n]`, `cat <file of the
 * tree>`, `ls [dir]`, `pwd`, `true`, `false`, `sleep N` (`millis`: the time it took); a relative path
 * is taken from `cwd`.
 */
const run = (
  browser: Browser,
  command: string,
  args: ReadonlyArray<string>,
  cwd: string
): { out: Uint8Array; err: Uint8Array; code: number; millis?: number } => {
  const result = command_(browser, command, args, cwd)
  return {
    ...result,
    out: typeof result.out === "string" ? outputOf(result.out) : result.out,
    err: outputOf(result.err)
  }
}

const command_ = (
  browser: Browser,
  command: string,
  args: ReadonlyArray<string>,
  cwd: string
): { out: string | Uint8Array; err: string; code: number; millis?: number } => {
  // the document's `command`: "Executable or shell command to run" (a command line without `args` is split)
  const words = args.length === 0 && command.includes(" ") ? command.trim().split(/\s+/) : [command, ...args]
  const [program, ...rest] = words
  const absolute = (path: string) => path.startsWith("/") ? path : `${cwd}/${path}`
  const at = (path: string) => normalize(absolute(path))
  // a path through a file (`f.txt/`): Linux's ENOTDIR
  const notDirectory = (path: string) => fileInTheWay(browser.fs, absolute(path)) !== undefined
  switch (program) {
    case "echo":
      return rest[0] === "-n"
        ? { out: rest.slice(1).join(" "), err: "", code: 0 }
        : { out: `${rest.join(" ")}\n`, err: "", code: 0 }
    case "true":
      return { out: "", err: "", code: 0 }
    case "false":
      return { out: "", err: "", code: 1 }
    case "pwd":
      return { out: `${cwd}\n`, err: "", code: 0 }
    case "sleep": {
      // as sleep(1): seconds, a fraction allowed; run by exec, it has taken its time when it answers
      const seconds = rest.length === 1 ? Number(rest[0]) : Number.NaN
      return Number.isFinite(seconds) && seconds >= 0
        ? { out: "", err: "", code: 0, millis: Math.round(seconds * 1000) }
        : { out: "", err: `sleep: invalid time interval '${rest.join(" ")}'\n`, code: 1 }
    }
    case "cat": {
      // as cat(1): each file in turn, byte for byte, a message for each that cannot be read, exit 1
      // when one could not; the output is cut after `outputLimit`
      const out = new Output()
      let err = ""
      for (const file of rest) {
        const node = browser.fs.get(at(file))
        if (notDirectory(file)) err += `cat: ${file}: Not a directory\n`
        else if (node === undefined) err += `cat: ${file}: No such file or directory\n`
        else if (node.dir) err += `cat: ${file}: Is a directory\n`
        else out.add(node.bytes)
      }
      return { out: out.bytes(), err, code: err === "" ? 0 : 1 }
    }
    case "ls": {
      const arg = rest.find((a) => !a.startsWith("-")) ?? cwd
      const dir = at(arg)
      const node = browser.fs.get(dir)
      if (notDirectory(arg)) return { out: "", err: `ls: cannot access '${arg}': Not a directory\n`, code: 2 }
      if (node === undefined) {
        return { out: "", err: `ls: cannot access '${arg}': No such file or directory\n`, code: 2 }
      }
      // a file is listed as itself, named as it was given
      if (!node.dir) return { out: `${arg}\n`, err: "", code: 0 }
      const names = [...browser.fs.keys()].filter((p) => p !== dir && parentOf(p) === dir).map(baseName).sort()
      return { out: names.map((n) => `${n}\n`).join(""), err: "", code: 0 }
    }
    default:
      return { out: "", err: `${program ?? ""}: command not found\n`, code: 127 }
  }
}

/**
 * A behaviour of an operation on one process of the browser: its answer's fields, or the error the
 * service answers (`failed`: what the browser's process API says when the process has exited).
 */
const onProcess = (
  f: (body: Record<string, unknown>, process: engine.Process) => unknown,
  failed?: (process: engine.Process) => engine.Reply | undefined
): Handler =>
  onBrowser(({ body, call, op }, browser) => {
    const process = browser.processes.get(call.segments[3]!)
    if (process === undefined) return error(404, "not_found", "process not found")
    settle(process, call.now)
    return failed?.(process) ?? ok(op, f(body, process))
  })

/**
 * What the browser's process API answers for a process that has exited (its pipes and terminal
 * closed): a signal or a write fails with a 500, as on the service.
 */
const exited = (message: string) => (process: engine.Process): engine.Reply | undefined =>
  process.state === "exited" ? error(500, "internal_error", message) : undefined

/** A `sleep` whose time has come has exited. */
const settle = (process: engine.Process, now: number): void => {
  if (process.state === "running" && process.endsAt !== undefined && now >= process.endsAt) exit(process, 0)
}

export const handlers: Handlers = {
  execProcess: onBrowser(({ body, op }, browser) => {
    const refused = notStarted(body)
    if (refused !== undefined) return refused
    const cwd = workingDirectory(browser, body)
    if (typeof cwd !== "string") return cwd
    const result = run(browser, String(body["command"] ?? ""), strings(body["args"]), cwd)
    // `timeout_sec`: the process is killed at its deadline, and the call fails as the service's does
    const limit = body["timeout_sec"]
    if (typeof limit === "number" && limit > 0 && (result.millis ?? 0) > limit * 1000) {
      return error(500, "internal_error", "process timed out")
    }
    return ok(op, {
      exit_code: result.code,
      stdout_b64: Buffer.from(result.out).toString("base64"),
      stderr_b64: Buffer.from(result.err).toString("base64"),
      duration_ms: result.millis ?? 1
    })
  }),
  spawnProcess: onBrowser(({ body, call, op, org, stamp, store }, browser) => {
    const refused = notStarted(body)
    if (refused !== undefined) return refused
    const command = String(body["command"] ?? "")
    const args = strings(body["args"])
    // `cat` with no file runs until killed, echoing its stdin; `sleep N` runs N seconds of the
    // simulator's clock; the others exit at once with their output
    const words = args.length === 0 ? command.trim().split(/\s+/) : [command.trim(), ...args]
    const seconds = words[0] === "sleep" && words.length === 2 ? Number(words[1]) : Number.NaN
    const sleeps = Number.isFinite(seconds) && seconds > 0
    const interactive = (words[0] === "cat" && words.length === 1) || sleeps
    const cwd = workingDirectory(browser, body)
    if (typeof cwd !== "string") return cwd
    const result = run(browser, command, args, cwd)
    // the output it keeps is held to the byte budget, as files are
    const tooMuch = overBudget(org, result.out.length + result.err.length)
    if (tooMuch !== undefined) return tooMuch
    // the document's process ids are UUIDs
    const n = ++store.ids.counter
    const id = `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
    const process: engine.Process = {
      id,
      pid: 1000 + n,
      // one that is not interactive exits at once (below), its output told first
      state: "running",
      exitCode: null,
      echoesStdin: interactive && !sleeps,
      tty: body["allocate_tty"] === true,
      endsAt: sleeps ? call.now + seconds * 1000 : undefined,
      output: live.make({ of: weigh, tally: browser.output })
    }
    if (!interactive) {
      if (result.out.length > 0) {
        live.publish(process.output, { _tag: "Data", stream: "stdout", bytes: result.out })
      }
      if (result.err.length > 0) {
        live.publish(process.output, { _tag: "Data", stream: "stderr", bytes: result.err })
      }
      exit(process, result.code)
    }
    browser.processes.set(id, process)
    engine.put(store, `/browsers/${browser.id}/process`, {
      id,
      project: call.project,
      deleted: false,
      fields: { id }
    }, (evicted) => {
      const gone = browser.processes.get(evicted)
      if (gone !== undefined) {
        live.end(gone.output)
        live.release(gone.output)
      }
      browser.processes.delete(evicted)
    })
    return ok(op, { process_id: id, pid: process.pid, started_at: stamp })
  }),
  getProcessStatus: onProcess((_, process) => ({
    state: process.state,
    exit_code: process.exitCode,
    cpu_pct: 0,
    mem_bytes: 1024 * 1024
  })),
  killProcess: onProcess((_, process) => {
    // killed by a signal: -1, as the browser's server reports it (Go's `WaitStatus.ExitStatus()` of a
    // process a signal ended), whatever the signal
    exit(process, -1)
    return { ok: true }
  }, exited("failed to signal process")),
  writeProcessStdin: onBrowser(({ body, call, op, org }, browser) => {
    const process = browser.processes.get(call.segments[3]!)
    if (process === undefined) return error(404, "not_found", "process not found")
    settle(process, call.now)
    const text = String(body["data_b64"] ?? "")
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
      return error(400, "bad_request", "data_b64: not base64")
    }
    const failed = exited("failed to write to stdin")(process)
    if (failed !== undefined) return failed
    const bytes = Buffer.from(text, "base64")
    if (process.echoesStdin && bytes.length > 0) {
      const tooMuch = overBudget(org, bytes.length, live.freedBy(process.output))
      if (tooMuch !== undefined) return tooMuch
      live.publish(process.output, { _tag: "Data", stream: "stdout", bytes: new Uint8Array(bytes) })
    }
    return ok(op, { written_bytes: bytes.length })
  }),
  // only a process spawned with a terminal (`allocate_tty`) has one to resize
  resizeProcess: onProcess(
    () => ({ ok: true }),
    (process) =>
      !process.tty
        ? error(400, "bad_request", "process is not PTY-backed")
        : exited("failed to resize PTY")(process)
  ),
  // its output from the start, then as it comes, until it exits (or the browser is deleted)
  streamProcessStdout: onBrowser(({ call, op, org }, browser) => {
    const process = browser.processes.get(call.segments[3]!)
    if (process === undefined) return error(404, "not_found", "process not found")
    settle(process, call.now)
    const toEvent = (piece: engine.ProcessOutput) =>
      piece._tag === "Exit"
        ? { event: "exit", exit_code: piece.code }
        : { stream: piece.stream, data_b64: Buffer.from(piece.bytes).toString("base64") }
    // exited: all its output (what the backlog keeps of it) is known
    if (process.output.ended) return wholeReply(op, process.output.backlog.map(toEvent))
    const endsAt = process.endsAt
    return liveReply(op, {
      hub: process.output,
      from: 0,
      select: (piece) => Option.some(toEvent(piece)),
      // a `sleep` exits when its time comes, on the simulator's clock; the browser's idle time-out ends it too
      deadline: live.earliest(
        endsAt === undefined || process.state === "exited" ? undefined : { at: endsAt, run: () => exit(process, 0) },
        expiry(org, browser)
      )
    })
  })
}

/** A command's working directory (`cwd`, default `/`): a directory of the tree, or the 400 when it is not one. */
const workingDirectory = (browser: Browser, body: Record<string, unknown>): string | engine.Reply => {
  const given = body["cwd"]
  // `cwd` is nullable in the document: null is no directory given, as absent
  if (given === undefined || given === null) return "/"
  const cwd = normalize(String(given))
  return browser.fs.get(cwd)?.dir === true
    ? cwd
    : error(400, "bad_request", `cwd: ${String(given).slice(0, 256)} is not a directory of the browser`)
}

/**
 * A running process exits with `code`; one that has exited already keeps its end (a `sleep`'s deadline, run by a
 * stream still open, after a kill: the kill's code stays).
 */
const exit = (process: engine.Process, code: number): void => {
  if (process.state === "exited") return
  process.state = "exited"
  process.exitCode = code
  live.publish(process.output, { _tag: "Exit", code })
  live.end(process.output)
}
