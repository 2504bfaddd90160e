/**
 * Bash: runs a command with `bash -c` in its own process group and reports what Claude Code reports —
 * the interleaved output (cut in the middle past `BASH_MAX_OUTPUT_LENGTH`), `Exit code N` for a failure,
 * `Command timed out after Ns`, the shell's cwd carried to the next call (and reset when it leaves the
 * working directories). Its failure cancels parallel siblings; interrupting it kills the whole group.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Permission, PermissionPolicy, Tool, ToolErrors, ToolProgress, ToolResultStorage } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Config, ConfigError, Data, Effect, Either, Schema } from "effect"
import picomatch from "picomatch"
import { expandHome, realPath } from "../internal/paths.js"
import * as CommandSemantics from "./commandSemantics.js"
import * as Prompt from "./prompt.js"
import * as ShellProcess from "./ShellProcess.js"
import { Sandbox } from "./Sandbox.js"
import { ShellState } from "./ShellState.js"
import { TaskManager } from "../tasks/TaskManager.js"

export const BashInput = Schema.Struct({
  command: Schema.String.annotations({ description: "The command to execute" }),
  timeout: Schema.optional(Schema.Number.annotations({ description: "Optional timeout in milliseconds (max 600000)" })),
  description: Schema.optional(Schema.String.annotations({
    description: "Clear, concise description of what this command does in 5-10 words, in active voice."
  })),
  run_in_background: Schema.optional(Schema.Boolean.annotations({
    description: "Set to true to run this command in the background. Use TaskOutput to read the output later."
  }))
})
export type BashInput = typeof BashInput.Type

/** What a command produced; `mapToolResult` renders it. */
export type BashResult = BashOutput | BackgroundStarted

/** A command started in the background: its task id and where its output goes. */
export interface BackgroundStarted {
  readonly _tag: "BackgroundStarted"
  readonly taskId: string
  readonly outputFile: string
}

/** What a finished foreground command produced. */
export interface BashOutput {
  readonly _tag: "BashOutput"
  readonly output: string
  /** The directory the shell's cwd was reset to, when the command left the working directories. */
  readonly cwdReset: string | undefined
  /** Where the full output was saved, when it was too long to return whole. */
  readonly savedTo: string | undefined
  /** Set when the command timed out and went on as a background task: what the model should know. */
  readonly movedToBackground?: string
}

/** What a running command reports, at most every 100 ms: the output since the previous report. */
export const BashProgress = Schema.Struct({
  type: Schema.Literal("bash_progress"),
  output: Schema.String,
  totalChars: Schema.Number,
  elapsedMs: Schema.Number,
  interrupted: Schema.optional(Schema.Boolean)
})
export type BashProgress = typeof BashProgress.Type

export const DEFAULT_TIMEOUT_MS = 120_000
export const MAX_TIMEOUT_MS = 600_000
export const DEFAULT_MAX_OUTPUT_LENGTH = 30_000
export const PROGRESS_INTERVAL_MS = 100

/** The most output a result may hold: more would defeat the point of cutting it. */
export const MAX_OUTPUT_LENGTH_LIMIT = 1_000_000

const positiveInteger = (name: string, fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({
      message: `${name} must be a positive integer${max === Number.MAX_SAFE_INTEGER ? "" : ` up to ${max}`}`,
      validation: (n) => n > 0 && n <= max
    })
  )

/** The limits, from `BASH_DEFAULT_TIMEOUT_MS`, `BASH_MAX_TIMEOUT_MS` and `BASH_MAX_OUTPUT_LENGTH`. */
export const limits = Config.all({
  defaultTimeoutMs: positiveInteger("BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
  maxTimeoutMs: positiveInteger("BASH_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS),
  maxOutputChars: positiveInteger("BASH_MAX_OUTPUT_LENGTH", DEFAULT_MAX_OUTPUT_LENGTH, MAX_OUTPUT_LENGTH_LIMIT)
}).pipe(
  // A maximum below the default lowers the default too: no call may run longer than the maximum.
  Config.map((l) => ({ ...l, defaultTimeoutMs: Math.min(l.defaultTimeoutMs, l.maxTimeoutMs) }))
)

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

type Limits = Config.Config.Success<typeof limits>

const LIMIT_VARIABLES = ["BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "BASH_MAX_OUTPUT_LENGTH"] as const
let decoded: { readonly key: string; readonly limits: Either.Either<Limits, ConfigError.ConfigError> } | undefined

/**
 * The limits from the process environment, or a ToolError naming the variable that is wrong. Decoding a
 * Config costs more than the rest of a call's bookkeeping, so it is redone only when the variables change.
 */
export const loadLimits: Effect.Effect<Limits, ToolErrors.ToolError> = Effect.suspend(() => {
  const key = LIMIT_VARIABLES.map((name) => process.env[name] ?? "").join("\u0000")
  if (decoded?.key !== key) decoded = { key, limits: Effect.runSync(Effect.either(limits)) }
  const current = decoded.limits
  return Either.isRight(current)
    ? Effect.succeed(current.right)
    : fail(
      `Bash is misconfigured: ${String(current.left)}. Fix the environment variable or unset it to use the default.`
    )
})

/** The limits as the environment had them when the module loaded, for the prompt. */
const promptLimits = Effect.runSync(Effect.orElseSucceed(limits, () => ({
  defaultTimeoutMs: DEFAULT_TIMEOUT_MS,
  maxTimeoutMs: MAX_TIMEOUT_MS,
  maxOutputChars: DEFAULT_MAX_OUTPUT_LENGTH
})))

/** Seconds as Claude Code prints them: `5s`, `0.5s`. */
const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))}s`

const trimOutput = (text: string): string => text.replace(/^(\s*\n)+/, "").trimEnd()

const notes = (output: BashOutput): string => {
  const lines: Array<string> = []
  if (output.savedTo !== undefined) lines.push(`[Full output saved to ${output.savedTo}]`)
  if (output.movedToBackground !== undefined) lines.push(output.movedToBackground)
  if (output.cwdReset !== undefined) lines.push(`Shell cwd was reset to ${output.cwdReset}`)
  return lines.join("\n")
}

/** The text the model reads for a finished command. */
export const renderOutput = (output: BashOutput): string => {
  const extra = notes(output)
  if (extra === "") return output.output
  return output.output === "" ? extra : `${output.output}\n${extra}`
}

// Ids come from the model and the embedder: encoded one-to-one so `../` cannot lead the spool file elsewhere.
const spoolPathFor = (context: ToolUseContext.ToolUseContext): string =>
  path.join(
    context.projectDir,
    ToolResultStorage.safeSegment(context.sessionId),
    "tool-results",
    `bash-${ToolResultStorage.safeSegment(context.toolUseId === "" ? crypto.randomUUID() : context.toolUseId)}.txt`
  )

/** The refusal of a sandbox that is enabled but cannot run, carried through the spawn as its own error. */
class SandboxRefused extends Data.TaggedError("SandboxRefused")<{ readonly message: string }> {}

/** How a command line is wrapped: by the sandbox when it is on, not at all otherwise. */
const sandboxWrap = (sandbox: Sandbox["Type"], cwd: string) =>
  sandbox.enabled
    ? (script: string) =>
      sandbox.wrap(script, cwd).pipe(Effect.mapError((e) => new SandboxRefused({ message: e.message })))
    : undefined

/**
 * The most the text around a cut output can take: the first line (exit code, timeout), the saved file's note,
 * a cwd reset and a move to the background. Leaving it free keeps the whole result within the output limit
 * (Bash's own persistence threshold), so the pipeline does not persist the cut text over the full output's note.
 */
const noteRoom = (spoolPath: string, maxSpoolBytes: number, cwd: string, mayDetach: boolean): number =>
  64 +
  `[Full output saved to ${spoolPath} (the first ${maxSpoolBytes} bytes of ${Number.MAX_SAFE_INTEGER} characters)]`
    .length +
  `Shell cwd was reset to ${cwd}`.length +
  (mayDetach ? 256 + spoolPath.length : 0)

/** Runs a command in the foreground; failures (exit code, timeout) are ToolErrors with the output. */
export const runForeground = (input: BashInput, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const shell = yield* ShellState
    const progress = yield* ToolProgress.ToolProgress
    const { defaultTimeoutMs, maxOutputChars } = yield* loadLimits
    const timeoutMs = input.timeout ?? defaultTimeoutMs
    const sandbox = yield* Sandbox
    const tasks = yield* TaskManager
    const cwd = yield* shell.cwd(context)
    const detach: ShellProcess.Detach | undefined = shell.backgroundOnTimeout
      ? {
        scope: tasks.scope,
        onTimeout: (handoff) =>
          tasks.adopt({ sessionId: context.sessionId, command: input.command, description: input.description, handoff })
            .pipe(Effect.map(({ fd, task }) => ({
              fd,
              note: `Command timed out after ${seconds(timeoutMs)} and is still running in the background with ID: ` +
                `${task.id}. Output is being written to: ${task.outputFile}. Use TaskOutput with this ID to read ` +
                `it and TaskStop to stop it.`
            })))
      }
      : undefined
    const analysis = CommandSemantics.analyze(input.command)
    const spoolPath = spoolPathFor(context)
    const result = yield* ShellProcess.run({
      command: input.command,
      // Only a `cd` (or something the analysis cannot see into) moves the shell: record the cwd then.
      trackCwd: analysis.opaque !== undefined || analysis.changesDirectory,
      detach,
      wrap: sandboxWrap(sandbox, cwd),
      cwd,
      env: { ...shell.env(), ...context.env },
      graceMs: shell.killGraceMs,
      timeoutMs,
      maxOutputChars,
      spoolPath,
      reserveChars: noteRoom(spoolPath, shell.maxSpoolBytes, context.cwd, detach !== undefined),
      maxSpoolBytes: shell.maxSpoolBytes,
      progressIntervalMs: PROGRESS_INTERVAL_MS,
      onProgress: (p) => progress.report({ type: "bash_progress", ...p } satisfies BashProgress),
      onInterrupt: (p) => {
        const data: BashProgress = { type: "bash_progress", ...p, output: trimOutput(p.output), interrupted: true }
        return progress.report(data)
      }
    }).pipe(
      Effect.catchTag("SpawnError", (error) => fail(`Bash could not start the command in ${cwd}: ${error.message}`)),
      Effect.catchTag("SandboxRefused", (error) => fail(error.message))
    )
    if (result.detached !== undefined) {
      return {
        _tag: "BashOutput",
        output: trimOutput(result.output),
        cwdReset: undefined,
        savedTo: undefined,
        movedToBackground: result.detached
      } satisfies BashOutput
    }
    const cwdReset = yield* shell.update(context, result.finalCwd)
    const output: BashOutput = {
      _tag: "BashOutput",
      output: trimOutput(result.output),
      cwdReset,
      savedTo: result.spoolPath === undefined
        ? undefined
        : result.spoolTruncated
        ? `${result.spoolPath} (the first ${shell.maxSpoolBytes} bytes of ${result.totalChars} characters)`
        : result.spoolPath
    }
    if (result.timedOut) {
      return yield* fail(joinLines(`Command timed out after ${seconds(timeoutMs)}`, renderOutput(output)))
    }
    const code = ShellProcess.exitCodeOf(result.status)
    // `grep` finding nothing, `diff` finding differences: an answer, said in words when there is no output.
    if (code === 1 && analysis.exitOneMeans !== undefined) {
      return output.output === "" ? { ...output, output: analysis.exitOneMeans } : output
    }
    if (code !== 0) {
      const shown = sandbox.enabled ? { ...output, output: sandbox.annotate(input.command, output.output) } : output
      return yield* fail(joinLines(`Exit code ${code}`, renderOutput(shown)))
    }
    return output
  })

const joinLines = (first: string, rest: string): string => (rest === "" ? first : `${first}\n${rest}`)

/** Starts the command as a background task and returns at once with its id. */
export const runInBackground = (input: BashInput, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const shell = yield* ShellState
    const tasks = yield* TaskManager
    const sandbox = yield* Sandbox
    const cwd = yield* shell.cwd(context)
    const task = yield* tasks.start({
      wrap: sandboxWrap(sandbox, cwd),
      sessionId: context.sessionId,
      command: input.command,
      description: input.description,
      cwd,
      env: { ...shell.env(), ...context.env },
      graceMs: shell.killGraceMs
    }).pipe(Effect.catchTags({
      TaskStartError: (error) => fail(error.message),
      SandboxRefused: (error) => fail(error.message)
    }))
    return { _tag: "BackgroundStarted", taskId: task.id, outputFile: task.outputFile } satisfies BackgroundStarted
  })

/** The text the model reads for a result. */
export const renderResult = (result: BashResult): string =>
  result._tag === "BackgroundStarted"
    ? `Command running in background with ID: ${result.taskId}. Output is being written to: ${result.outputFile}. ` +
      `Use TaskOutput with this ID to read it and TaskStop to stop it.`
    : renderOutput(result)

/** Rejects a timeout outside 1..max (never clamps it silently). */
export const validateTimeout = (input: BashInput) =>
  Effect.gen(function*() {
    if (input.timeout === undefined) return
    const { maxTimeoutMs } = yield* loadLimits
    if (!Number.isInteger(input.timeout) || input.timeout < 1 || input.timeout > maxTimeoutMs) {
      return yield* fail(
        `InputValidationError: Bash failed due to the following issue:\nThe parameter \`timeout\` is invalid: ` +
          `expected an integer number of milliseconds between 1 and ${maxTimeoutMs}, got ${input.timeout}. ` +
          `Omit it to use the default.`
      )
    }
  })

/**
 * An absolute path for `target` as the kernel finds it from `cwd`: `~` expanded, and a `..` taken from where
 * the path before it really is (`link/../x` is next to the link's target, not next to the link).
 */
export const physicalPath = (cwd: string, target: string): string => {
  const expanded = expandHome(target)
  if (!/(^|\/)\.\.(\/|$)/.test(expanded)) return path.resolve(cwd, expanded)
  let current = path.isAbsolute(expanded) ? "/" : cwd
  for (const segment of expanded.split("/")) {
    if (segment === "" || segment === ".") continue
    current = segment === ".." ? path.dirname(realPath(current)) : path.join(current, segment)
  }
  return current
}

/** The most entries one glob may add as rule subjects; a pattern matching more makes the line ask. */
export const MAX_GLOB_MATCHES = 1_000

/**
 * The entries of `dir` that `pattern` matches as bash would (or more): dotfiles only when the pattern starts
 * with a dot. picomatch reads bash's negated class `[!x]` as the class of `!` and `x` (so `[!x]ecrets` missed
 * `secrets`): the pattern with `[^` for it matches too. Collating symbols and equivalence classes (`[[=s=]]`),
 * which picomatch does not know, match every entry.
 */
const globMatches = (dir: string, pattern: string): ReadonlyArray<string> => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync(dir)
  } catch {
    return []
  }
  if (/\[\[[.=]/.test(pattern)) return entries
  const options = { dot: pattern.startsWith("."), nobrace: true, noextglob: true }
  const matches = picomatch(pattern, options)
  const negated = pattern.replace(/(^|[^\\])((?:\\\\)*)\[!/g, "$1$2[^")
  const alsoMatches = negated === pattern ? undefined : picomatch(negated, options)
  return entries.filter((entry) => matches(entry) || alsoMatches?.(entry) === true)
}

const GLOB_SYNTAX = /(^|[^\\])(\\\\)*[*?[]/

/**
 * The paths under `dir` that `pattern` (one or more `/`-separated segments) names, expanded level by level as
 * bash does: a segment without glob syntax is joined as it is (whether or not it exists: more subjects, never
 * fewer). `undefined` when a level passes `MAX_GLOB_MATCHES`, or a segment is `**` (recursive under `shopt -s
 * globstar`): then everything under `dir` counts.
 */
export const expandPattern = (dir: string, pattern: string): ReadonlyArray<string> | undefined => {
  const segments = pattern.split("/").filter((segment) => segment !== "")
  if (segments.some((segment) => segment.includes("**"))) return undefined
  let current = [dir]
  for (const segment of segments) {
    const next: Array<string> = []
    for (const base of current) {
      if (!GLOB_SYNTAX.test(segment)) next.push(path.join(base, segment.replace(/\\(.)/g, "$1")))
      else for (const entry of globMatches(base, segment)) next.push(path.join(base, entry))
      // Given up as soon as the level is too big, not after building all of it (`*/*` over a wide tree).
      if (next.length > MAX_GLOB_MATCHES) return undefined
    }
    current = next
  }
  return current
}

type PathSubject = Tool.RuleSubjects["paths"][number]

const exists = (file: string): boolean => {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined
  } catch {
    return false
  }
}

/**
 * The top of the git repository `directory` is in (the nearest directory up from it holding `.git`), where git
 * takes a `REV:path` object's path from; the directory itself when it is in none (git then reads nothing).
 */
const repositoryTop = (directory: string): string => {
  for (let at = directory; ; at = path.dirname(at)) {
    if (exists(path.join(at, ".git"))) return at
    if (path.dirname(at) === at) return directory
  }
}

const isDirectory = (file: string): boolean => {
  try {
    return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true
  } catch {
    return false
  }
}

/** Whether `inner` is `outer` or somewhere under it. */
const within = (outer: string, inner: string): boolean =>
  inner === outer || inner.startsWith(outer === "/" ? "/" : `${outer}/`)

/**
 * The protected entries (`.git`, `.claude`, `.bashrc`, … as the policy lists them) that writing the whole
 * tree under `target` reaches: those directly inside it, inside each directory from the session's cwd up to
 * it, and the home directory's when it holds that (the home directory and `/` always count: the shell's
 * start-up files live there, `.bashrc` standing for them when none exists yet).
 */
const protectedInside = (target: string, cwd: string): ReadonlyArray<string> => {
  if (!isDirectory(target)) return []
  const found: Array<string> = []
  const scan = (dir: string) => {
    for (const entry of PermissionPolicy.protectedEntries) {
      const file = path.join(dir, entry)
      if (exists(file)) found.push(file)
    }
  }
  scan(target)
  const home = realPath(os.homedir())
  if (within(target, home)) {
    if (home !== target) scan(home)
    if (!found.some((file) => path.dirname(file) === home)) found.push(path.join(home, ".bashrc"))
  }
  for (let dir = realPath(cwd); dir !== target && within(target, dir); dir = path.dirname(dir)) {
    if (dir !== home) scan(dir)
  }
  return found
}

/** The most entries the trees of one line are walked for path rules; a line reaching more asks. */
export const MAX_TREE_ENTRIES = 10_000

/** Checks the entries under directories a command takes whole against the context's path-scoped rules. */
interface TreeGuard {
  readonly matches: (path: string, access: "read" | "write") => boolean
  /** Entries still to be walked in this line. */
  budget: number
}

/**
 * The entries under `target` (a directory; symlinked directories are not followed) that a path rule matches
 * for `access`: a matched directory stands for everything in it. `undefined` when the walk would pass the
 * guard's budget.
 */
const guardedInside = (target: string, access: "read" | "write", guard: TreeGuard): Array<string> | undefined => {
  const found: Array<string> = []
  const pending = [target]
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    guard.budget -= entries.length
    if (guard.budget < 0) return undefined
    for (const entry of entries) {
      const file = path.join(dir, entry.name)
      if (guard.matches(file, access)) found.push(file)
      else if (entry.isDirectory()) pending.push(file)
    }
  }
  return found
}

/**
 * What permission rules see: each simple command (wrappers stripped, env prefixes dropped), every file a
 * redirection writes or reads, every path the commands' arguments name (marked as arguments, so a write
 * rides on the command's rule inside the working directories), and why the line is opaque. Paths are
 * resolved against `cwd` (a relative argument after a `cd` against each place the shell may be) with
 * symlinks followed; a glob adds the paths it matches, level by level (see `expandPattern`); a command that
 * writes a whole tree (`rm -r`, `chmod -R`, `mv dir`, `find … -delete`) adds the protected entries in it. With
 * `guarded` (the context's path-scoped Read/Edit deny and ask rules), a tree taken whole adds the entries in it
 * they match.
 */
export const ruleSubjects = (
  command: string,
  cwd: string,
  guarded?: (path: string, access: "read" | "write") => boolean
): Tool.RuleSubjects => {
  const analysis = CommandSemantics.analyze(command)
  const paths: Array<PathSubject> = []
  const seen = new Set<string>()
  const add = (subject: PathSubject) => {
    const key = `${subject.access}${subject.argument === true ? "+" : ""}${subject.path}`
    if (seen.has(key)) return
    seen.add(key)
    paths.push(subject)
  }
  for (const redirect of analysis.redirects) {
    if (redirect.target !== undefined) {
      add({ path: realPath(physicalPath(cwd, redirect.target)), access: redirect.access })
    }
  }
  let opaque = analysis.opaque
  const guard: TreeGuard | undefined = guarded === undefined ? undefined : { matches: guarded, budget: MAX_TREE_ENTRIES }
  for (const c of analysis.commands) {
    const located = (base: string, target: string) =>
      physicalPath(cwd, base === "." || !CommandSemantics.isRelativeTarget(target) ? target : `${base}/${target}`)
    for (const argument of c.paths) {
      const bases = CommandSemantics.isRelativeTarget(argument.path) ? c.cwds : CommandSemantics.START
      for (const base of bases) {
        const where = argument.fromRepositoryTop === undefined
          ? located(base, argument.path)
          : physicalPath(repositoryTop(located(base, argument.fromRepositoryTop)), argument.path)
        // git's operand is a path only when something is there (`git diff main` names a branch), and then
        // limits what `git grep` searches to it.
        if (argument.onlyIf === "exists" && !exists(where)) continue
        if (
          argument.onlyIf === "noOperandExists" &&
          c.paths.some((other) => other.onlyIf === "exists" && exists(located(base, other.path)))
        ) continue
        // Writing a whole tree writes the protected entries in it: they are subjects too, so the policy asks.
        const addTree = (target: string, whole = argument.recursive === true) => {
          add({ path: target, access: argument.access, argument: true })
          // What a copy, move or link puts into a destination directory: `cp x/.bashrc ~` writes ~/.bashrc.
          if (argument.into !== undefined && isDirectory(target)) {
            for (const name of argument.into) add({ path: realPath(path.join(target, name)), access: "write", argument: true })
          }
          if (!whole) return
          if (argument.access === "write") {
            for (const entry of protectedInside(target, cwd)) add({ path: entry, access: "write", argument: true })
          }
          // A rule naming what is under the tree (`Edit(./secrets/**)`) does not match its root: check its entries.
          if (guard === undefined || !isDirectory(target)) return
          const inside = guardedInside(target, argument.access, guard)
          if (inside === undefined) {
            opaque ??= `${target} holds more than ${MAX_TREE_ENTRIES} entries, too many to check against the ` +
              `path rules`
            return
          }
          for (const entry of inside) add({ path: entry, access: argument.access, argument: true })
        }
        if (argument.pattern === undefined) {
          addTree(realPath(where))
          continue
        }
        // The directory a pattern lists is not itself written (`rm -r *` leaves `.git`), only its matches.
        add({ path: realPath(where), access: argument.access, argument: true })
        const matches = expandPattern(where, argument.pattern)
        if (matches !== undefined) {
          for (const entry of matches) addTree(realPath(entry))
          continue
        }
        // Too many to list, or `**`: the pattern may name anything under its directory, which is taken whole.
        if (!argument.pattern.includes("/") && !argument.pattern.includes("**")) {
          opaque ??= `the pattern ${argument.pattern} matches more than ${MAX_GLOB_MATCHES} entries of ${where}`
          continue
        }
        addTree(realPath(where), true)
      }
    }
  }
  const subjects = { specifiers: analysis.commands.map((c) => c.text), paths }
  return opaque === undefined ? subjects : { ...subjects, opaque }
}

/**
 * Bash's own objection, on top of the rules: rules resolve relative redirection targets and path arguments
 * against the session's cwd, so once the shell has moved elsewhere (a `cd` in an earlier call) such a path
 * must be approved by a person. Otherwise the policy decides, and "allow always" comes from `suggestRules`.
 */
export const checkPermissions = (input: BashInput, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const shell = yield* ShellState
    const cwd = yield* shell.cwd(context)
    if (cwd === context.cwd) return Permission.passthrough
    const analysis = CommandSemantics.analyze(input.command)
    const relative = analysis.redirects.find((r) => CommandSemantics.isRelativeTarget(r.target))?.target ??
      analysis.commands.flatMap((c) => c.paths).find((p) =>
        CommandSemantics.isRelativeTarget(p.path) && (p.onlyIf !== "exists" || exists(path.resolve(cwd, p.path)))
      )?.path
    if (relative === undefined) return Permission.passthrough
    return {
      behavior: "ask",
      message: `Bash needs permission: the shell is in ${cwd}, so ${relative} means ${path.resolve(cwd, relative)}.`,
      suggestions: CommandSemantics.suggestRules(input.command)
    } satisfies Permission.PermissionResult
  })

/** What running a command needs: the session's shell, the task manager, and the call's progress. */
type Requirements = ShellState | TaskManager | Sandbox | ToolProgress.ToolProgress

export const BashTool = Tool.make({
  name: "Bash",
  description: Prompt.DESCRIPTION,
  prompt: Prompt.prompt(promptLimits),
  input: BashInput,
  progress: BashProgress,
  source: "builtin",
  maxResultSizeChars: 30_000,
  cascadeOnError: true,
  interruptBehavior: "cancel",
  // Bash bounds itself (its `timeout`, up to BASH_MAX_TIMEOUT_MS, then the group kill): no runtime limit.
  timeoutMs: Infinity,
  searchHint: "shell command terminal run execute",
  // Loading the grammar here (once per process) means the synchronous members below always have it.
  validateInput: (input) => Effect.zipRight(CommandSemantics.load, validateTimeout(input)),
  userFacingName: () => "Bash",
  toClassifierInput: (input) => input.command,
  mapToolResult: (result: BashResult) => renderResult(result),
  // Claude Code's `tool_response`, which PostToolUse hooks read (`.tool_response.stdout`). The command's
  // stdout and stderr are one stream here, as the model sees them: all of it is `stdout`.
  toHookResponse: (result: BashResult) =>
    result._tag === "BackgroundStarted"
      ? { stdout: "", stderr: "", interrupted: false, isImage: false, backgroundTaskId: result.taskId }
      : {
        stdout: result.output,
        stderr: "",
        interrupted: false,
        isImage: false,
        ...(result.savedTo !== undefined ? { persistedOutputPath: result.savedTo } : {}),
        ...(result.movedToBackground !== undefined ? { backgroundedByTimeout: true } : {})
      },
  isReadOnly: (input) => CommandSemantics.analyze(input.command).readOnly,
  // A `cd` moves the session's shell: two of them at once would race for where the next call starts.
  isConcurrencySafe: (input) => {
    const analysis = CommandSemantics.analyze(input.command)
    return analysis.readOnly && !analysis.changesDirectory
  },
  ruleSubjects: (input, context) =>
    ruleSubjects(input.command, context.cwd, PermissionPolicy.guardedPath(context, realPath)),
  checkPermissions: (input, context) => checkPermissions(input, context),
  call: (
    input: BashInput,
    context: ToolUseContext.ToolUseContext
  ): Effect.Effect<BashResult, ToolErrors.ToolError, Requirements> =>
    input.run_in_background === true ? runInBackground(input, context) : runForeground(input, context)
})
