/**
 * Running one `bash -c` command the way an agent needs: in its own process group, stdout and stderr
 * interleaved into one stream, waited on by process exit (a background job may hold the pipes open for
 * ever), and the whole group killed — SIGTERM, then SIGKILL after a grace period — on timeout, on
 * interruption, and after the leader exits so `cmd &` leftovers die with it. The spawned child is a scoped
 * resource: closing the scope kills its group, whatever ended the call.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { Clock, Data, Duration, Effect, ExecutionStrategy, Exit, Option, Scope } from "effect"
import { procStat } from "../internal/procStat.js"
import { OutputBuffer } from "./OutputBuffer.js"
import * as Spawner from "./Spawner.js"

/**
 * A piped command's output is a Unix socket back to this process, and open() refuses a socket (ENXIO): a
 * command that names its own output as a file (`curl -o /dev/stdout`, `tee /dev/stderr`, `> /dev/fd/2`) gets
 * a real pipe instead, through a `cat` that relays it (a process more, so only for these lines).
 */
const NAMES_OWN_OUTPUT = /\/dev\/(?:stdout|stderr|fd\/[12])(?![\w/])|\/proc\/(?:self|\$\$|\$BASHPID)\/fd\/[12](?!\d)/

/**
 * The script bash runs: stderr joins stdout so the model reads them in the order they were written, the
 * user's command is `eval`ed from a positional parameter (never spliced into the script), and, when asked,
 * the shell's final directory is written on exit so the next call can start there. With `relay`, the output
 * goes through a pipe to `cat`, which the shell waits for on exit so nothing it holds is lost.
 */
const wrapperScript = (trackCwd: boolean, relay: boolean): string => {
  const onExit = [
    ...(trackCwd ? ["pwd -P >| \"$__toolwright_cwd_file\" 2>/dev/null"] : []),
    // Background jobs still holding the pipe would keep `cat` (and so the call) waiting: they end now, as
    // the group is killed after the shell exits without a relay too.
    ...(relay ? ["exec >&- 2>&-", "kill $(jobs -p) 2>/dev/null", "wait \"$__toolwright_relay\""] : [])
  ]
  return [
    ...(relay ? ["exec > >(exec cat) 2>&1", "__toolwright_relay=$!"] : ["exec 2>&1"]),
    ...(trackCwd ? ["__toolwright_cwd_file=$2"] : []),
    "__toolwright_command=$1",
    "set --",
    ...(onExit.length === 0 ? [] : [`trap '${onExit.join("; ")}' EXIT`]),
    "eval \"$__toolwright_command\""
    // One line, the eval on line 1: bash counts the eval'd lines from the eval's line, so its messages and
    // $LINENO then give the command's own line numbers (they read 4-7 lines too far).
  ].join("; ")
}

/** The four scripts, made once: [trackCwd][relay]. */
const WRAPPERS = [
  [wrapperScript(false, false), wrapperScript(false, true)],
  [wrapperScript(true, false), wrapperScript(true, true)]
] as const

/** Where shells leave their final cwd: one directory, so a sandbox can make exactly it writable. */
export const shellStateDir = (): string => path.join(os.tmpdir(), `toolwright-shell-${process.getuid?.() ?? 0}`)

/** A word bash reads back as exactly `text`. */
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`

/**
 * Whether any live process of the group is still there. `kill(-pgid, 0)` also sees zombies, which a
 * container's init may never reap; on Linux `/proc` tells them apart, so a group of zombies counts as gone.
 */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    // EPERM means it exists but belongs to someone else: still alive as far as we are concerned.
    return error instanceof Error && "code" in error && error.code === "EPERM"
  }
  if (process.platform !== "linux") return true
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const stat = procStat(entry)
    if (stat !== undefined && stat.pgrp === pgid && stat.live) return true
  }
  return false
}

const signalGroup = (pgid: number, signal: NodeJS.Signals): boolean => {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/**
 * SIGTERM to the whole group, then SIGKILL to whatever is left after `graceMs`. Returns at once when the
 * group is already empty, which is the common case after a command that started nothing in the background.
 */
export const killGroup = (pgid: number, graceMs: number): Effect.Effect<void> =>
  Effect.asVoid(killGroupGone(pgid, graceMs))

/** As `killGroup`; true when the group is gone for good (it was empty, or emptied within the grace period). */
const killGroupGone = (pgid: number, graceMs: number): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    if (!signalGroup(pgid, "SIGTERM")) return true
    const deadline = (yield* Clock.currentTimeMillis) + graceMs
    // A deadline rather than a timeout: this runs in finalizers, where nothing can be interrupted.
    while (groupAlive(pgid)) {
      if ((yield* Clock.currentTimeMillis) >= deadline) {
        signalGroup(pgid, "SIGKILL")
        return false
      }
      yield* Effect.sleep(Duration.millis(10))
    }
    return true
  }).pipe(Effect.uninterruptible)

export interface SpawnOptions<E = never> {
  readonly command: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Where the output goes: piped to this process, or written straight to a file by the kernel. */
  readonly output: { readonly _tag: "Pipe" } | { readonly _tag: "File"; readonly fd: number }
  /** The grace between SIGTERM and SIGKILL when the group is killed. */
  readonly graceMs: number
  /** Turns the bash command line into the one to run (the sandbox); the line itself when absent. */
  readonly wrap?: ((script: string) => Effect.Effect<string, E>) | undefined
  /**
   * Whether to record the shell's final directory (default true). A caller that knows the command has no
   * `cd` (and nothing opaque that could hide one) skips it: a file less to write, read and remove per call.
   */
  readonly trackCwd?: boolean | undefined
}

/** How the leader ended. */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ShellProcess {
  readonly pid: number
  /** The combined output, when it is piped to this process. */
  readonly stdout: Readable | null
  /** Completes when the leader exits (not when the pipes close); the group is killed right after. */
  readonly exit: Effect.Effect<ExitStatus>
  /** Kills the group (SIGTERM, then SIGKILL after the grace period). */
  readonly kill: Effect.Effect<void>
  /** The shell's working directory when it exited, if it wrote one. */
  readonly finalCwd: Effect.Effect<string | undefined>
}

/** The exit code a shell would report: the status, or 128 + the signal number when a signal ended it. */
export const exitCodeOf = (status: ExitStatus): number => {
  if (status.code !== null) return status.code
  const number = status.signal === null ? undefined : os.constants.signals[status.signal]
  return number === undefined ? 1 : 128 + number
}

/** The command could not be started at all (bash missing, cwd gone). */
export class SpawnError extends Data.TaggedError("SpawnError")<{ readonly message: string }> {}

/** A started command: its group's id, its piped output, and its leader's exit. */
interface Launched {
  readonly pid: number
  readonly stdout: Readable | null
  readonly exited: Promise<ExitStatus>
}

/** Spawns bash from this process. */
const spawnHere = <E>(args: ReadonlyArray<string>, options: SpawnOptions<E>): Effect.Effect<Launched, SpawnError> =>
  Effect.async<Launched, SpawnError>((resume) => {
    const stdio: ChildProcess.StdioOptions = options.output._tag === "Pipe"
      ? ["ignore", "pipe", "ignore"]
      : ["ignore", options.output.fd, "ignore"]
    let proc: ChildProcess.ChildProcess
    try {
      proc = ChildProcess.spawn("bash", args, { cwd: options.cwd, env: options.env, stdio, detached: true })
    } catch (error) {
      resume(Effect.fail(new SpawnError({ message: error instanceof Error ? error.message : String(error) })))
      return
    }
    const exited = new Promise<ExitStatus>((resolve) => {
      proc.once("exit", (code, signal) => resolve({ code, signal }))
    })
    const onError = (error: Error) => resume(Effect.fail(new SpawnError({ message: error.message })))
    proc.once("error", onError)
    proc.once("spawn", () => {
      proc.off("error", onError)
      resume(Effect.succeed({ pid: proc.pid ?? 0, stdout: proc.stdout, exited }))
    })
  })

/**
 * Starts the command in a new process group, bound to the current scope: when the scope closes, the group
 * is killed and the temporary cwd file removed. `exit` waits for the leader, then kills any leftovers.
 */
export const spawn = <E = never>(options: SpawnOptions<E>): Effect.Effect<ShellProcess, SpawnError | E, Scope.Scope> =>
  Effect.gen(function*() {
    const trackCwd = options.trackCwd ?? true
    const stateDir = shellStateDir()
    const cwdFile = trackCwd ? path.join(stateDir, `cwd-${process.pid}-${crypto.randomUUID()}`) : undefined
    // Once the group is empty it stays empty (no member is left to start another), and its id may go to an
    // unrelated group: it is not signalled again. That also spares the usual second kill after the exit (each
    // failed kill builds an ErrnoException with the whole stack, ~0.1 ms).
    let gone = false
    const killOnce = (pgid: number) =>
      Effect.suspend(() =>
        gone ? Effect.void : Effect.map(killGroupGone(pgid, options.graceMs), (empty) => {
          gone = empty
        })
      )
    if (cwdFile !== undefined) yield* Effect.sync(() => fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 }))
    const relay = options.output._tag === "Pipe" && NAMES_OWN_OUTPUT.test(options.command)
    const script = cwdFile === undefined
      ? ["bash", "-c", WRAPPERS[0][relay ? 1 : 0], "toolwright", options.command]
      : ["bash", "-c", WRAPPERS[1][relay ? 1 : 0], "toolwright", options.command, cwdFile]
    const args = options.wrap === undefined ? script.slice(1) : ["-c", yield* options.wrap(script.map(quote).join(" "))]
    const launched = yield* Effect.acquireRelease(
      // Piped commands start from the spawner helper when it is there (a fork of a small process instead of
      // this one's heap); anything it cannot do, including reporting a start error, is done here instead.
      Effect.flatMap(
        options.output._tag === "Pipe" && options.wrap === undefined
          ? Effect.promise(() => Spawner.start({ file: "bash", args, cwd: options.cwd, env: options.env, stateDir }))
          : Effect.succeed(undefined),
        (viaHelper): Effect.Effect<Launched, SpawnError> =>
          viaHelper === undefined
            ? spawnHere(args, options)
            : viaHelper._tag === "Lost"
            ? Effect.fail(new SpawnError({ message: viaHelper.message }))
            : Effect.succeed({ pid: viaHelper.pid, stdout: viaHelper.stdout, exited: viaHelper.exited })
      ),
      (launched) =>
        Effect.gen(function*() {
          if (launched.pid !== 0) yield* killOnce(launched.pid)
          launched.stdout?.destroy()
          if (cwdFile !== undefined) yield* Effect.sync(() => fs.rmSync(cwdFile, { force: true }))
        })
    )
    const { exited, pid } = launched
    const exit = Effect.promise(() => exited).pipe(
      Effect.tap(() => killOnce(pid))
    )
    const finalCwd = Effect.sync(() => {
      if (cwdFile === undefined) return undefined
      try {
        const text = fs.readFileSync(cwdFile, "utf8").trim()
        return text === "" ? undefined : text
      } catch {
        return undefined
      }
    })
    return { pid, stdout: launched.stdout, exit, kill: killOnce(pid), finalCwd } satisfies ShellProcess
  })

/** Progress of a running command: the output since the last report, and how much there is in all. */
export interface Progress {
  readonly output: string
  readonly totalChars: number
  readonly elapsedMs: number
}

export interface RunOptions<E = never> {
  readonly command: string
  readonly trackCwd?: boolean | undefined
  readonly wrap?: ((script: string) => Effect.Effect<string, E>) | undefined
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly graceMs: number
  readonly timeoutMs: number
  readonly maxOutputChars: number
  /** Where the full output is saved when it outgrows `maxOutputChars`. */
  readonly spoolPath: string | undefined
  readonly maxSpoolBytes: number
  /**
   * Characters the caller puts around the output (an exit line, notes): output cut at `maxOutputChars` leaves
   * room for them, so the whole result still fits in `maxOutputChars`.
   */
  readonly reserveChars?: number | undefined
  /** Called at most every `progressIntervalMs` while new output keeps arriving. */
  readonly onProgress: (progress: Progress) => Effect.Effect<void>
  readonly progressIntervalMs: number
  /** Called with the output so far if the run is interrupted, before the group is killed. */
  readonly onInterrupt?: (progress: Progress) => Effect.Effect<void>
  /** Hands a timed-out command over to someone who keeps it running, instead of killing it. */
  readonly detach?: Detach | undefined
}

/** What a timed-out command is handed over with. */
export interface Handoff {
  /** The scope that owns the process: closing it kills the group. */
  readonly scope: Scope.CloseableScope
  /** Completes when the leader exits (leftovers are killed then). */
  readonly exit: Effect.Effect<ExitStatus>
  /** The output so far, as the model would read it. */
  readonly output: string
}

export interface Detach {
  /** Where the process's scope lives from the start: it must outlive the call (the task manager's). */
  readonly scope: Scope.Scope
  /** Takes the process over; answers the file descriptor the rest of the output goes to, and a note. */
  readonly onTimeout: (handoff: Handoff) => Effect.Effect<{ readonly fd: number; readonly note: string }>
}

export interface RunResult {
  /** How the leader ended; after a timeout, how it ended once killed. */
  readonly status: ExitStatus
  readonly timedOut: boolean
  /** The output as the model reads it: whole, or head and tail around a count of what was cut. */
  readonly output: string
  readonly totalChars: number
  /** Where the full output was saved, when it was too long to return whole. */
  readonly spoolPath: string | undefined
  readonly spoolTruncated: boolean
  readonly finalCwd: string | undefined
  /** Set when the timed-out command was handed over instead of killed: what the new owner said. */
  readonly detached: string | undefined
}

/** Runs a command in the foreground to its end or its timeout, streaming throttled progress. */
export const run = <E = never>(options: RunOptions<E>): Effect.Effect<RunResult, SpawnError | E> =>
  Effect.scoped(Effect.gen(function*() {
    const startedAt = Date.now()
    const buffer = new OutputBuffer({
      maxChars: options.maxOutputChars,
      spoolPath: options.spoolPath,
      maxSpoolBytes: options.maxSpoolBytes
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => buffer.end()))
    // The process lives in a scope of its own, so a timed-out command can be handed over whole; unless it
    // is, the scope closes (killing the group) when the call ends, however it ends.
    const owner = options.detach?.scope ?? (yield* Effect.scope)
    const processScope = yield* Scope.fork(owner, ExecutionStrategy.sequential)
    let handedOver = false
    yield* Effect.addFinalizer(() => (handedOver ? Effect.void : Scope.close(processScope, Exit.void)))
    const proc = yield* spawn({ ...options, output: { _tag: "Pipe" } }).pipe(Scope.extend(processScope))
    const stdout = proc.stdout
    let sink = (chunk: Buffer) => buffer.write(chunk)
    const closed = new Promise<void>((resolve) => {
      if (stdout === null) return resolve()
      stdout.on("data", (chunk: Buffer) => sink(chunk))
      // The spawner hands its socket over paused (it read the id line first): a listener alone would not
      // start it again.
      stdout.resume()
      stdout.once("close", () => resolve())
      stdout.once("error", () => resolve())
    })
    // The pipe closes as soon as the group is dead and the kernel's buffer read; only a process that left
    // the group (setsid) could keep it open, and it does not get to hold the call hostage.
    const drain = Effect.promise(() => closed).pipe(Effect.timeoutOption(Duration.millis(500)))
    if (options.onInterrupt !== undefined) {
      const onInterrupt = options.onInterrupt
      yield* Effect.addFinalizer((exit) =>
        Exit.isInterrupted(exit)
          ? Effect.gen(function*() {
            yield* proc.kill
            yield* drain
            const elapsedMs = Date.now() - startedAt
            yield* onInterrupt({ output: buffer.text(), totalChars: buffer.totalChars, elapsedMs })
          })
          : Effect.void
      )
    }
    yield* Effect.suspend(() => {
      const output = buffer.takeDelta()
      return output === ""
        ? Effect.void
        : options.onProgress({ output, totalChars: buffer.totalChars, elapsedMs: Date.now() - startedAt })
    }).pipe(
      Effect.delay(Duration.millis(options.progressIntervalMs)),
      Effect.forever,
      Effect.forkScoped
    )

    const finished = yield* Effect.timeoutOption(proc.exit, Duration.millis(options.timeoutMs))
    if (Option.isNone(finished) && options.detach !== undefined) {
      const handoff = { scope: processScope, exit: proc.exit, output: buffer.text() }
      const { fd, note } = yield* options.detach.onTimeout(handoff)
      handedOver = true
      // From now on the output goes to the new owner's file; the descriptor closes with the pipe.
      sink = (chunk) => fs.writeSync(fd, chunk)
      if (stdout === null || stdout.closed) fs.closeSync(fd)
      else stdout.once("close", () => fs.closeSync(fd))
      return {
        status: { code: null, signal: null },
        timedOut: true,
        output: buffer.text(options.reserveChars),
        totalChars: buffer.totalChars,
        spoolPath: buffer.spoolPath,
        spoolTruncated: buffer.spoolTruncated,
        finalCwd: undefined,
        detached: note
      } satisfies RunResult
    }
    let status: ExitStatus
    if (Option.isSome(finished)) {
      status = finished.value
    } else {
      yield* proc.kill
      status = yield* proc.exit
    }
    yield* drain
    stdout?.destroy()
    buffer.end()
    return {
      status,
      timedOut: Option.isNone(finished),
      output: buffer.text(options.reserveChars),
      totalChars: buffer.totalChars,
      spoolPath: buffer.spoolPath,
      spoolTruncated: buffer.spoolTruncated,
      finalCwd: yield* proc.finalCwd,
      detached: undefined
    } satisfies RunResult
  }))
