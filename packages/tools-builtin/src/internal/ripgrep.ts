/**
 * Running ripgrep for Glob and Grep: the binary shipped by `@vscode/ripgrep`, the flags both tools
 * share, and a scoped run that streams stdout line by line, stops rg once enough lines arrived, and
 * kills it whenever the call ends early (interruption, failure): a call never leaves an rg behind.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { ToolErrors, ToolPlugin, ToolProgress } from "@toolwright/core"
import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"

let rgPathLoaded: Promise<string> | undefined

/**
 * Where the rg binary `@vscode/ripgrep` ships is, loaded at the first search: resolving the package (an ES
 * module that looks up its platform package) cost every start of the CLI ~4 ms.
 */
export const rgPath = (): Promise<string> =>
  rgPathLoaded ??= ToolPlugin.importModule("@vscode/ripgrep", () => import("@vscode/ripgrep")).then((module) =>
    module.rgPath
  )

/** Version-control directories hidden from results even though hidden files are shown. */
export const VCS_DIRECTORIES = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"] as const

/**
 * Flags both tools pass: hidden files are searched (a model expects `.github/`, `.env.example`), VCS
 * internals are not, and `.gitignore` files apply even outside a git repository.
 */
export const commonArgs: ReadonlyArray<string> = [
  "--hidden",
  "--no-require-git",
  ...VCS_DIRECTORIES.flatMap((dir) => ["--glob", `!${dir}`])
]

export interface RunOptions {
  readonly cwd: string
  /** Keeps only the lines this accepts (Glob's pattern match); all lines count as scanned. */
  readonly accept?: (line: string) => boolean
  /** Stop rg once this many lines were kept. */
  readonly maxLines?: number
  /** Stop rg once the kept lines hold this many characters: the memory bound of a search without a line limit. */
  readonly maxChars?: number
  /** Reports `{ [progressKey]: count }` at most this often while rg runs, when the count moved; off when absent. */
  readonly progressEvery?: Duration.DurationInput
  /** The progress field: `filesScanned` (Glob, every listed file) unless named (Grep: `filesWithMatches`). */
  readonly progressKey?: string
  /** Which stdout lines the progress counts; all of them when absent. */
  readonly countScanned?: (line: string) => boolean
}

export interface RunResult {
  readonly lines: Array<string>
  /** The stdout lines `countScanned` counted (all by default), kept or not. */
  readonly scanned: number
  /** rg's exit code; `undefined` when it was stopped after `maxLines`. */
  readonly exitCode: number | undefined
  readonly stderr: string
  /** True when rg was stopped because `maxLines` lines, or `maxChars` characters, were kept. */
  readonly stoppedEarly: boolean
  /** True when it was `maxChars`: the lines are a prefix of what rg would have printed. */
  readonly overChars: boolean
}

/**
 * Reports `{ [key]: count() }` every `every` while the scope is open, only when the count moved since
 * the last report: a fast call reports nothing, a long one at most once per interval.
 */
export const reportProgress = (
  count: () => number,
  every: Duration.DurationInput,
  key: string
): Effect.Effect<void, never, Scope.Scope | ToolProgress.ToolProgress> => {
  let reported = 0
  return Effect.suspend(() => {
    const now = count()
    if (now === reported) return Effect.void
    reported = now
    return ToolProgress.report({ [key]: now })
  }).pipe(Effect.delay(every), Effect.repeat(Schedule.forever), Effect.forkScoped, Effect.asVoid)
}

const kill = (child: ChildProcess) =>
  Effect.sync(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })

const MAX_STDERR_CHARS = 10_000

/**
 * Runs rg with `args` in `cwd` and collects its stdout lines. The process is released with the
 * scope; stopping early (maxLines) kills it at once instead of reading the rest.
 */
export const run = (
  args: ReadonlyArray<string>,
  options: RunOptions
): Effect.Effect<RunResult, ToolErrors.ToolError, Scope.Scope | ToolProgress.ToolProgress> =>
  Effect.gen(function*() {
    const rg = yield* Effect.tryPromise({
      try: rgPath,
      catch: (error) =>
        new ToolErrors.ToolError({
          message: `Could not find ripgrep (the @vscode/ripgrep package): ${String(error)}. Reinstall toolwright.`
        })
    })
    const child = yield* Effect.acquireRelease(
      Effect.try({
        try: () => spawn(rg, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] }),
        catch: (error) => new ToolErrors.ToolError({ message: `Could not start ripgrep (${rg}): ${String(error)}` })
      }),
      kill
    )
    const state = { scanned: 0 }
    if (options.progressEvery !== undefined) {
      yield* reportProgress(() => state.scanned, options.progressEvery, options.progressKey ?? "filesScanned")
    }
    return yield* Effect.async<RunResult, ToolErrors.ToolError>((resume) => {
      const lines: Array<string> = []
      let keptChars = 0
      let overChars = false
      let partial = ""
      let stderr = ""
      let done = false
      const { accept, countScanned, maxChars, maxLines } = options
      const finish = (result: Effect.Effect<RunResult, ToolErrors.ToolError>) => {
        if (done) return
        done = true
        resume(result)
      }
      const take = (line: string): boolean => {
        if (countScanned === undefined || countScanned(line)) state.scanned++
        if (accept !== undefined && !accept(line)) return false
        lines.push(line)
        keptChars += line.length
        if (maxChars !== undefined && keptChars >= maxChars) overChars = true
        return overChars || (maxLines !== undefined && lines.length >= maxLines)
      }
      const stopEarly = () => {
        child.kill("SIGKILL")
        const result = { lines, scanned: state.scanned, exitCode: undefined, stderr, stoppedEarly: true, overChars }
        finish(Effect.succeed(result))
      }
      child.stdout?.setEncoding("utf8")
      child.stderr?.setEncoding("utf8")
      // The callers' callbacks run inside this event handler, where an exception would escape the call
      // (an uncaught error, not a result): it ends the call with the error instead, and rg with it.
      const guarded = (handle: () => void) => {
        try {
          handle()
        } catch (error) {
          child.kill("SIGKILL")
          const reason = error instanceof Error ? error.message : String(error)
          const message = `Could not process ripgrep's output: ${reason}`
          finish(Effect.fail(new ToolErrors.ToolError({ message })))
        }
      }
      child.stdout?.on("data", (chunk: string) =>
        guarded(() => {
          if (done) return
          let start = 0
          for (;;) {
            const newline = chunk.indexOf("\n", start)
            if (newline === -1) break
            const line = partial + chunk.slice(start, newline)
            partial = ""
            start = newline + 1
            if (take(line)) return stopEarly()
          }
          partial += chunk.slice(start)
        })
      )
      child.stderr?.on("data", (chunk: string) => {
        if (stderr.length < MAX_STDERR_CHARS) stderr += chunk
      })
      child.on("error", (error) => {
        const message = `ripgrep (${rg}) failed to run: ${error.message}`
        finish(Effect.fail(new ToolErrors.ToolError({ message })))
      })
      child.on("close", (code) =>
        guarded(() => {
          if (partial !== "" && !done && take(partial)) return stopEarly()
          const exitCode = code ?? 2
          finish(Effect.succeed({ lines, scanned: state.scanned, exitCode, stderr, stoppedEarly: false, overChars }))
        })
      )
      return kill(child)
    })
  })

const NOTHING_SEARCHED = "No files were searched"

/**
 * rg's exit codes: 0 found, 1 found nothing, 2 an error. An error with output (an unreadable file among
 * readable ones) still has results; an error without output is the call's failure, in rg's own words.
 */
export const checkExit = (result: RunResult): Effect.Effect<RunResult, ToolErrors.ToolError> => {
  if (result.stoppedEarly || result.exitCode === 0 || result.exitCode === 1) return Effect.succeed(result)
  if (result.lines.length > 0) return Effect.succeed(result)
  // rg's exit 2 for a tree with nothing searchable (empty, all ignored, only symlinks) is no match, not an error.
  if (result.stderr.includes(NOTHING_SEARCHED)) return Effect.succeed(result)
  const text = result.stderr.trim()
  return Effect.fail(
    new ToolErrors.ToolError({ message: text === "" ? `ripgrep exited with code ${result.exitCode}` : text })
  )
}

/** Default progress interval for big trees. */
export const PROGRESS_INTERVAL = Duration.millis(100)
