/**
 * Command hooks from settings, speaking Claude Code's protocol so existing hook scripts work unchanged:
 * the event as JSON on stdin; exit 0 with optional JSON on stdout (`hookSpecificOutput.permissionDecision`,
 * `updatedInput`, `additionalContext`, `continue: false`, PostToolUse `decision: "block"`); exit 2 blocks
 * with stderr as the reason; any other exit is a logged, non-blocking error. Matching hooks run
 * concurrently, identical commands once, each killed after its timeout. A hook that prints garbage,
 * hangs or dies has no say: it never crashes the call and never counts as an allow.
 */
import { Command, CommandExecutor } from "@effect/platform"
import { Duration, Effect, Either, Exit, Fiber, FiberSet, Layer, Option, Stream } from "effect"
import type { Scope } from "effect"
import type { ToolResultContent } from "./Message.js"
import type * as Permission from "./Permission.js"
import * as PermissionPrompter from "./PermissionPrompter.js"
import * as PermissionRule from "./PermissionRule.js"
import type { CommandHook } from "./Settings.js"
import { formatCause } from "./ToolErrors.js"
import * as PosixPath from "./internal/posixPath.js"
import type * as Tool from "./Tool.js"
import * as ToolHooks from "./ToolHooks.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Options {
  /** The hooks to run; when absent, each call runs its session's `context.commandHooks`. */
  readonly hooks?: ReadonlyArray<CommandHook>
  /** Set as TOOLWRIGHT_PROJECT_DIR and CLAUDE_PROJECT_DIR; the call's cwd when absent. */
  readonly projectDir?: string
  /** Settings `env`, added to the hook's environment; the call's `context.env` when absent. */
  readonly env?: Readonly<Record<string, string>>
  /** The shell that runs each command line. */
  readonly shell?: string
  /**
   * Where `async` hooks run. The layers fork them into their own scope (see `withBackground`): awaited when it
   * ends normally, killed when it is interrupted (Ctrl-C). Absent: a daemon fiber, bounded only by the hook's
   * timeout.
   */
  readonly background?: (hook: Effect.Effect<void>) => Effect.Effect<unknown>
}

/** What one hook process did. */
export interface HookRun {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

const MAX_OUTPUT_BYTES = 1_000_000

/** What a hook printed on one stream so far, capped at MAX_OUTPUT_BYTES (the rest is read and dropped). */
interface Output {
  readonly chunks: Array<Uint8Array>
  size: number
}

/** Reads a stream into `into` as it comes, so what was read is kept when the reading is cut short. */
const drainInto = (stream: Stream.Stream<Uint8Array, unknown>, into: Output): Effect.Effect<void, unknown> =>
  Stream.runForEach(stream, (bytes) =>
    Effect.sync(() => {
      if (into.size >= MAX_OUTPUT_BYTES) return
      into.chunks.push(bytes)
      into.size += bytes.length
    }))

const decodeOutput = ({ chunks, size }: Output): string => {
  const all = new Uint8Array(size)
  let offset = 0
  for (const bytes of chunks) {
    all.set(bytes, offset)
    offset += bytes.length
  }
  return new TextDecoder().decode(all)
}

/**
 * How long a hook's output may stay open after its shell exited. A job the hook started in the background
 * (`notify &`) inherits the pipes: without a bound the hook's answer would wait for that job, and be lost at
 * the timeout.
 */
export const OUTPUT_GRACE = Duration.seconds(1)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The JSON object a hook printed on stdout, if it printed one. */
const parseOutput = (stdout: string): Record<string, unknown> | undefined => {
  const text = stdout.trim()
  if (!text.startsWith("{")) return undefined
  try {
    const json: unknown = JSON.parse(text)
    return isRecord(json) ? json : undefined
  } catch {
    return undefined
  }
}

const stopOf = (json: Record<string, unknown>): { readonly stop?: { readonly reason: string } } =>
  json.continue === false
    ? {
      stop: {
        reason: typeof json.stopReason === "string" && json.stopReason !== "" ? json.stopReason : "a hook stopped"
      }
    }
    : {}

const specific = (json: Record<string, unknown>): Record<string, unknown> =>
  isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {}

const contextOf = (json: Record<string, unknown>): { readonly additionalContext?: ReadonlyArray<string> } => {
  const context = specific(json).additionalContext
  return typeof context === "string" && context !== "" ? { additionalContext: [context] } : {}
}

/** `systemMessage`, for the user's eyes: any event's hook may give one. */
const messageOf = (json: Record<string, unknown>): { readonly systemMessages?: ReadonlyArray<string> } =>
  typeof json.systemMessage === "string" && json.systemMessage.trim() !== ""
    ? { systemMessages: [json.systemMessage.trim()] }
    : {}

/**
 * PostToolUse's `tool_response`: the tool's own shape of its result, or the model's text when the tool has
 * none, or its shaping throws or gives what JSON cannot carry (the tool ran: that must not fail its call).
 */
const hookResponse = (tool: Tool.Any, output: unknown, response: ToolResultContent): unknown => {
  if (output === undefined || tool.toHookResponse === undefined) return response
  try {
    const shaped = tool.toHookResponse(output, response)
    JSON.stringify(shaped)
    return shaped
  } catch {
    return response
  }
}

/** Reads a PreToolUse hook's run the way Claude Code does. */
export const interpretPre = (hook: CommandHook, run: HookRun): Effect.Effect<ToolHooks.PreToolUseOutcome> => {
  if (run.exitCode === 2) {
    const reason = run.stderr.trim() === "" ? `Blocked by the PreToolUse hook \`${hook.command}\`.` : run.stderr.trim()
    return Effect.succeed({ permissionDecision: "deny", reason })
  }
  if (run.exitCode !== 0) return Effect.as(logNonBlocking(hook, run), {})
  const json = parseOutput(run.stdout)
  if (json === undefined) return Effect.succeed({})
  const out = specific(json)
  let decision: ToolHooks.HookPermissionDecision | undefined
  let reason: string | undefined
  const given = out.permissionDecision
  if (given === "allow" || given === "deny" || given === "ask" || given === "defer") {
    decision = given
    if (typeof out.permissionDecisionReason === "string") reason = out.permissionDecisionReason
  } else if (json.decision === "approve" || json.decision === "block") {
    // The older top-level form: approve / block with `reason`.
    decision = json.decision === "approve" ? "allow" : "deny"
    if (typeof json.reason === "string") reason = json.reason
  }
  const invalid = given !== undefined && decision === undefined
  const outcome: ToolHooks.PreToolUseOutcome = {
    ...(decision !== undefined ? { permissionDecision: decision } : {}),
    ...(reason !== undefined && reason !== "" ? { reason } : {}),
    ...(isRecord(out.updatedInput) ? { updatedInput: out.updatedInput } : {}),
    ...contextOf(json),
    ...stopOf(json),
    ...messageOf(json)
  }
  return invalid
    ? Effect.as(
      Effect.logWarning(
        `PreToolUse hook \`${hook.command}\` gave permissionDecision ${
          JSON.stringify(given)
        }; expected allow, deny, ask or defer. It was ignored.`
      ),
      outcome
    )
    : Effect.succeed(outcome)
}

/** Reads a PostToolUse / PostToolUseFailure hook's run: exit 2 or `decision: "block"` feeds the reason back. */
export const interpretPost = (hook: CommandHook, run: HookRun): Effect.Effect<ToolHooks.PostToolUseOutcome> => {
  if (run.exitCode === 2) {
    const stderr = run.stderr.trim()
    const reason = stderr === "" ? `Blocked by the ${hook.event} hook \`${hook.command}\`.` : stderr
    return Effect.succeed({ block: { reason } })
  }
  if (run.exitCode !== 0) return Effect.as(logNonBlocking(hook, run), {})
  const json = parseOutput(run.stdout)
  if (json === undefined) return Effect.succeed({})
  const block = json.decision === "block"
    ? { block: { reason: typeof json.reason === "string" && json.reason !== "" ? json.reason : "blocked by a hook" } }
    : {}
  return Effect.succeed({ ...block, ...contextOf(json), ...stopOf(json), ...messageOf(json) })
}

const logNonBlocking = (hook: CommandHook, run: HookRun) =>
  Effect.logWarning(
    `${hook.event} hook \`${hook.command}\` exited with ${run.exitCode} (non-blocking error): ${run.stderr.trim()}`
  )

/**
 * Claude Code's `if` on a hook (`Bash(git *)`, `Edit(src/**)`): whether a call is one the rule names, read as
 * a deny rule is, so anything the rule might cover runs the hook (a piece of a compound command, input the
 * analysis cannot see through). `undefined`: no condition.
 */
const compileCondition = (
  condition: string | undefined
): ((tool: Tool.Any, input: unknown, context: ToolUseContext) => boolean) | undefined => {
  if (condition === undefined) return undefined
  const parsed = PermissionRule.parse(condition)
  // Settings validate it; a filter that cannot be read never keeps a hook from running.
  if (Either.isLeft(parsed)) return () => true
  const { content, toolName } = parsed.right
  const pathRule = toolName === "Read" || toolName === "Edit"
  const domain = content?.startsWith("domain:") === true ? content.slice(7) : undefined
  const specifier = content === undefined || domain !== undefined ? undefined : PermissionRule.compileSpecifier(content)
  return (tool, input, context) => {
    const names = PermissionRule.namesTool(toolName, tool)
    if (content === undefined || (!names && !pathRule)) return names
    let subjects: Tool.RuleSubjects
    try {
      subjects = tool.ruleSubjects(input, context)
    } catch {
      return true
    }
    if (subjects.opaque !== undefined) return true
    if (names && domain !== undefined) {
      return subjects.specifiers.some((subject) =>
        subject.startsWith("domain:") && PermissionRule.matchesDomain(domain, subject.slice(7))
      )
    }
    if (names && specifier !== undefined && subjects.specifiers.length > 0) {
      if (subjects.specifiers.some((subject) => PermissionRule.denyVariants(subject).some(specifier.test))) return true
      if (!pathRule) return false
    }
    const pattern = PermissionRule.compilePath(content, { cwd: context.cwd, home: context.permissionContext.homeDir })
    return subjects.paths.some(({ access, path }) =>
      (names || toolName === "Read" || access === "write") &&
      PermissionRule.matchesPath(pattern, PosixPath.resolve(context.cwd, path))
    )
  }
}

/** Whether a hook runs for a call: its matcher names the tool and its `if`, when it has one, the call. */
export const appliesTo = (hook: CommandHook, tool: Tool.Any, input: unknown, context: ToolUseContext): boolean =>
  ToolHooks.compileMatcher(hook.matcher)(tool.name) && (compileCondition(hook.if)?.(tool, input, context) ?? true)

/** Starts the hooks of an event that match a tool and reads each one's run; shared by every event. */
const makeRunner = (options: Options) =>
  Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor
    const shell = options.shell ?? "/bin/sh"
    const compile = (hooks: ReadonlyArray<CommandHook>) =>
      hooks.map((hook) => ({ hook, matches: ToolHooks.compileMatcher(hook.matcher), condition: compileCondition(hook.if) }))
    const fixed = options.hooks === undefined ? undefined : compile(options.hooks)
    const perSession = new WeakMap<ReadonlyArray<CommandHook>, ReturnType<typeof compile>>()
    const compiledFor = (context: ToolUseContext) => {
      if (fixed !== undefined) return fixed
      const hooks = context.commandHooks ?? []
      let compiled = perSession.get(hooks)
      if (compiled === undefined) {
        compiled = compile(hooks)
        perSession.set(hooks, compiled)
      }
      return compiled
    }

    /**
     * The hooks of an event matching a tool, identical command lines once. Without the call's input (asking
     * whether a hook might listen), a hook's `if` is taken to match.
     */
    const matching = (
      event: string,
      tool: Tool.Any,
      context: ToolUseContext,
      call?: { readonly input: unknown }
    ): ReadonlyArray<CommandHook> => {
      const seen = new Set<string>()
      const out: Array<CommandHook> = []
      for (const { condition, hook, matches } of compiledFor(context)) {
        if (hook.event !== event || !matches(tool.name) || seen.has(hook.command)) continue
        if (condition !== undefined && call !== undefined && !condition(tool, call.input, context)) continue
        seen.add(hook.command)
        out.push(hook)
      }
      return out
    }

    /** Runs one hook; `undefined` when it could not start, or was killed at its timeout (no say either way). */
    const run = (hook: CommandHook, payload: unknown, context: ToolUseContext): Effect.Effect<HookRun | undefined> => {
      const projectDir = options.projectDir ?? context.cwd
      const env = {
        ...(options.env ?? context.env),
        TOOLWRIGHT_PROJECT_DIR: projectDir,
        CLAUDE_PROJECT_DIR: projectDir
      }
      const command = Command.make(shell, "-c", hook.command).pipe(
        Command.workingDirectory(context.cwd),
        Command.env(env),
        Command.feed(JSON.stringify(payload))
      )
      const once = Effect.scoped(
        Effect.gen(function*() {
          const process = yield* executor.start(command)
          // Killed as a group with SIGKILL when cut short (the timeout): a hook trapping SIGTERM, which is all
          // the executor sends, would otherwise hold the call until it chose to end.
          yield* Effect.addFinalizer((exit) =>
            Exit.isInterrupted(exit) ? Effect.ignore(process.kill("SIGKILL")) : Effect.void
          )
          const stdout: Output = { chunks: [], size: 0 }
          const stderr: Output = { chunks: [], size: 0 }
          const reading = yield* Effect.fork(
            Effect.all([drainInto(process.stdout, stdout), drainInto(process.stderr, stderr)], {
              concurrency: 2,
              discard: true
            })
          )
          const exitCode = yield* process.exitCode
          const drained = yield* Fiber.join(reading).pipe(Effect.timeoutOption(OUTPUT_GRACE))
          if (Option.isNone(drained)) {
            // What the hook started still holds its output: the hook is done, its answer is what it printed.
            yield* Fiber.interrupt(reading)
            yield* Effect.ignore(process.kill("SIGKILL"))
          }
          return { exitCode: Number(exitCode), stdout: decodeOutput(stdout), stderr: decodeOutput(stderr) }
        })
      )
      return once.pipe(
        Effect.timeoutOption(Duration.seconds(hook.timeout)),
        Effect.flatMap(Option.match({
          onNone: () =>
            Effect.as(
              Effect.logWarning(
                `${hook.event} hook \`${hook.command}\` timed out after ${hook.timeout} s and was killed`
              ),
              undefined
            ),
          onSome: (done) => Effect.succeed<HookRun | undefined>(done)
        })),
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning(`${hook.event} hook \`${hook.command}\` could not run or died: ${formatCause(cause)}`),
            undefined
          )
        )
      )
    }

    const base = (event: string, tool: Tool.Any, input: unknown, context: ToolUseContext) => ({
      session_id: context.sessionId,
      transcript_path: `${context.projectDir}/${context.sessionId}.jsonl`,
      cwd: context.cwd,
      permission_mode: context.permissionContext.mode,
      hook_event_name: event,
      tool_name: tool.name,
      tool_input: input,
      tool_use_id: context.toolUseId
    })

    const runAll = <A>(
      event: string,
      tool: Tool.Any,
      input: unknown,
      payload: unknown,
      context: ToolUseContext,
      interpret: (hook: CommandHook, run: HookRun) => Effect.Effect<A>
    ): Effect.Effect<ReadonlyArray<A>> =>
      Effect.forEach(
        matching(event, tool, context, { input }),
        (hook) =>
          hook.async === true
            // Claude Code's background hook: started with the same input, not waited for, its answer unread;
            // its own timeout still bounds it (killed with its process group).
            ? Effect.as(
              options.background === undefined
                ? Effect.forkDaemon(run(hook, payload, context))
                : options.background(Effect.asVoid(run(hook, payload, context))),
              Option.none<A>()
            )
            : Effect.flatMap(run(hook, payload, context), (done) =>
              done === undefined ? Effect.succeed(Option.none<A>()) : Effect.map(interpret(hook, done), Option.some)),
        { concurrency: "unbounded" }
      ).pipe(Effect.map((results) => results.flatMap((result) => (Option.isSome(result) ? [result.value] : []))))

    /** Whether any hook of the event matches the tool (no process is started to find out). */
    const hears = (event: string, tool: Tool.Any, context: ToolUseContext): boolean =>
      matching(event, tool, context).length > 0

    return { runAll, base, hears }
  })

/** Builds the command-hook stage. Needs a CommandExecutor to start the hook processes. */
export const make = (options: Options): Effect.Effect<ToolHooks.Service, never, CommandExecutor.CommandExecutor> =>
  Effect.map(makeRunner(options), ({ base, hears, runAll }) => {
    return {
      preToolUse: (tool, input, context) =>
        runAll("PreToolUse", tool, input, base("PreToolUse", tool, input, context), context, interpretPre).pipe(
          Effect.map(ToolHooks.combinePre)
        ),
      postToolUse: (tool, input, response, context, durationMs, output) =>
        runAll(
          "PostToolUse",
          tool,
          input,
          {
            ...base("PostToolUse", tool, input, context),
            // Claude Code's shape of the result (`.tool_response.filePath`, `.stdout`), not the model's text.
            tool_response: hookResponse(tool, output, response),
            duration_ms: durationMs
          },
          context,
          interpretPost
        ).pipe(Effect.map(ToolHooks.combinePost)),
      hearsInterrupts: (tool, context) => hears("PostToolUseFailure", tool, context),
      postToolUseFailure: (tool, input, error, context, durationMs, isInterrupt) =>
        runAll(
          "PostToolUseFailure",
          tool,
          input,
          {
            ...base("PostToolUseFailure", tool, input, context),
            error,
            is_interrupt: isInterrupt === true,
            duration_ms: durationMs
          },
          context,
          interpretPost
        ).pipe(
          // A failed call has no result to block; what a blocking hook says goes to the model as context.
          Effect.map((outcomes) =>
            ToolHooks.combinePost(outcomes.map(({ block, ...rest }) =>
              block === undefined
                ? rest
                : { ...rest, additionalContext: [...(rest.additionalContext ?? []), block.reason] }
            ))
          )
        ),
      // Claude Code's PermissionDenied: told why the call was denied; it can only add context for the model.
      permissionDenied: (tool, input, reason, context) =>
        runAll(
          "PermissionDenied",
          tool,
          input,
          { ...base("PermissionDenied", tool, input, context), reason },
          context,
          interpretPost
        ).pipe(Effect.map((outcomes) =>
          ToolHooks.combinePost(outcomes.map(({ additionalContext, systemMessages }) => ({
            ...(additionalContext === undefined ? {} : { additionalContext }),
            ...(systemMessages === undefined ? {} : { systemMessages })
          })))
        ))
    } satisfies ToolHooks.Service
  })

/**
 * The allow rules of an allowing hook's `updatedPermissions` (Claude Code's permission updates): `addRules`
 * with `behavior: "allow"` become rules remembered for the session, and saved to the local settings when the
 * destination is `localSettings`. What toolwright cannot apply is named in `notes` (logged), never guessed at.
 */
const readPermissionUpdates = (updates: unknown) => {
  const rules: Array<string> = []
  const sessionRules: Array<string> = []
  const notes: Array<string> = []
  if (updates === undefined) return { rules, sessionRules, notes }
  if (!Array.isArray(updates)) {
    notes.push("updatedPermissions is not an array of permission updates; it was ignored")
    return { rules, sessionRules, notes }
  }
  for (const update of updates) {
    if (!isRecord(update) || update.type !== "addRules" || update.behavior !== "allow") {
      notes.push(
        `the permission update ${JSON.stringify(update)} was ignored: toolwright applies addRules with behavior "allow"`
      )
      continue
    }
    const destination = update.destination
    for (const entry of Array.isArray(update.rules) ? update.rules : []) {
      const rule = isRecord(entry) && typeof entry.toolName === "string"
        ? typeof entry.ruleContent === "string" ? `${entry.toolName}(${entry.ruleContent})` : entry.toolName
        : undefined
      const parsed = rule === undefined ? undefined : PermissionRule.parse(rule)
      const problem = parsed === undefined
        ? "it is not { toolName, ruleContent? }"
        : Either.isLeft(parsed)
        ? parsed.left
        : PermissionRule.check(parsed.right)
      if (problem !== undefined || rule === undefined) {
        notes.push(`the rule ${JSON.stringify(entry)} was not added: ${problem}`)
        continue
      }
      if (destination === "localSettings") rules.push(rule)
      else {
        if (destination !== "session") {
          notes.push(
            `${rule} was added for this session only: toolwright saves rules only to .toolwright/settings.local.json ` +
              `(destination "localSettings"), not to ${JSON.stringify(destination)}`
          )
        }
        sessionRules.push(rule)
      }
    }
  }
  return { rules, sessionRules, notes }
}

/** What a PermissionRequest hook answered: allow or deny on the user's behalf, or nothing. */
export const interpretPermissionRequest = (
  hook: CommandHook,
  run: HookRun
): Effect.Effect<Permission.PermissionAnswer | undefined> => {
  if (run.exitCode === 2) {
    const stderr = run.stderr.trim()
    const message = stderr === "" ? `Denied by the PermissionRequest hook \`${hook.command}\`.` : stderr
    return Effect.succeed({ behavior: "deny", message })
  }
  if (run.exitCode !== 0) return Effect.as(logNonBlocking(hook, run), undefined)
  const json = parseOutput(run.stdout)
  const decision = json === undefined ? undefined : specific(json).decision
  if (!isRecord(decision)) return Effect.succeed(undefined)
  if (decision.behavior === "allow") {
    const { notes, rules, sessionRules } = readPermissionUpdates(decision.updatedPermissions)
    const answer: Permission.PermissionAnswer = {
      behavior: "allow",
      ...(isRecord(decision.updatedInput) ? { updatedInput: decision.updatedInput } : {}),
      ...(rules.length > 0 ? { rules } : {}),
      ...(sessionRules.length > 0 ? { sessionRules } : {})
    }
    return notes.length === 0
      ? Effect.succeed(answer)
      : Effect.as(
        Effect.forEach(notes, (note) => Effect.logWarning(`PermissionRequest hook \`${hook.command}\`: ${note}`), {
          discard: true
        }),
        answer
      )
  }
  if (decision.behavior === "deny") {
    const message = typeof decision.message === "string" && decision.message !== ""
      ? decision.message
      : `Denied by the PermissionRequest hook \`${hook.command}\`.`
    return Effect.succeed({ behavior: "deny", message })
  }
  return Effect.succeed(undefined)
}

/**
 * The rules "allow always" would add, as Claude Code's permission updates: one `addRules` of `{ toolName,
 * ruleContent }` values saved to the local settings (toolwright's settings.local.json), so hook scripts
 * written for Claude Code read them as they do there.
 */
const permissionSuggestions = (rules: ReadonlyArray<string>): ReadonlyArray<unknown> => {
  const values = rules.flatMap((rule) => {
    const parsed = PermissionRule.parse(rule)
    if (Either.isLeft(parsed)) return []
    const { content, toolName } = parsed.right
    return [content === undefined ? { toolName } : { toolName, ruleContent: content }]
  })
  return values.length === 0 ? [] : [{ type: "addRules", rules: values, behavior: "allow", destination: "localSettings" }]
}

/**
 * PermissionRequest hooks in front of a prompter: when the policy asks, matching hooks get Claude Code's
 * PermissionRequest event (with `permission_suggestions`) and may answer for the user (a deny wins over
 * an allow); when none answers, `inner` asks as usual.
 */
export const makePermissionRequest = (
  options: Options,
  inner: PermissionPrompter.Service
): Effect.Effect<PermissionPrompter.Service, never, CommandExecutor.CommandExecutor> =>
  Effect.map(makeRunner(options), ({ base, runAll }) => ({
    ask: (request) =>
      runAll(
        "PermissionRequest",
        request.tool,
        request.input,
        {
          ...base("PermissionRequest", request.tool, request.input, request.context),
          permission_suggestions: permissionSuggestions(request.suggestions)
        },
        request.context,
        interpretPermissionRequest
      ).pipe(Effect.flatMap((answers) => {
        const decided = answers.filter((answer) => answer !== undefined)
        const denied = decided.find((answer) => answer.behavior === "deny")
        if (denied !== undefined) return Effect.succeed(denied)
        const allowed = decided.find((answer) => answer.behavior === "allow")
        return allowed !== undefined ? Effect.succeed(allowed) : inner.ask(request)
      }))
  }))

/**
 * Wraps the PermissionPrompter below it with the PermissionRequest hooks of each session's settings
 * (`context.commandHooks`): `layerPermissionRequest.pipe(Layer.provide(TerminalPrompter.layerAuto))`.
 */
export const layerPermissionRequest: Layer.Layer<
  PermissionPrompter.PermissionPrompter,
  never,
  PermissionPrompter.PermissionPrompter | CommandExecutor.CommandExecutor
> = Layer.scoped(
  PermissionPrompter.PermissionPrompter,
  Effect.flatMap(PermissionPrompter.PermissionPrompter, (inner) => withBackground({}, (options) => makePermissionRequest(options, inner)))
)

/**
 * Builds a hook service whose `async` hooks live in the current scope: when it closes normally they are waited
 * for (a Ctrl-C during that wait still ends them), when it closes interrupted they are killed with their process
 * groups, so none outlives the CLI.
 */
export const withBackground = <A, E, R>(
  options: Options,
  build: (options: Options) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberSet.make<unknown>()
    // Runs before the set's own finalizer, which interrupts whatever is left.
    yield* Effect.addFinalizer((exit) =>
      Exit.isInterrupted(exit) ? FiberSet.clear(fibers) : Effect.interruptible(FiberSet.awaitEmpty(fibers))
    )
    return yield* build({ ...options, background: (hook) => FiberSet.run(fibers, hook) })
  })

/** Command hooks from settings as the hook stage. */
export const layer = (options: Options): Layer.Layer<ToolHooks.ToolHooks, never, CommandExecutor.CommandExecutor> =>
  Layer.scoped(ToolHooks.ToolHooks, withBackground(options, make))

/** The command hooks each session's settings carry (`context.commandHooks`), with its `env`: the CLI's stage. */
export const layerFromContext: Layer.Layer<ToolHooks.ToolHooks, never, CommandExecutor.CommandExecutor> = layer({})

/** Command hooks and an embedder's programmatic hooks together, combined with the same precedence. */
export const layerWithProgrammatic = (
  options: Options,
  programmatic: ReadonlyArray<ToolHooks.Programmatic>
): Layer.Layer<ToolHooks.ToolHooks, never, CommandExecutor.CommandExecutor> =>
  Layer.scoped(
    ToolHooks.ToolHooks,
    Effect.map(
      withBackground(options, make),
      (commands) => ToolHooks.combine([commands, ToolHooks.fromProgrammatic(programmatic)])
    )
  )

