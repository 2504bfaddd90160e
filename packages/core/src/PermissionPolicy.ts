/**
 * The permission stage's decision for one call: allow, deny or ask, with the reason. This first layer
 * knows the modes and the tool's own check; rules and settings are layered on by the permissions module.
 */
import { FileSystem } from "@effect/platform"
import { Context, Effect, Either, Layer, Option } from "effect"
import * as PosixPath from "./internal/posixPath.js"
import * as RulePolicy from "./internal/rulePolicy.js"
import type { PermissionContext, PermissionDecision, RuleEntry } from "./Permission.js"
import * as PermissionRule from "./PermissionRule.js"
import * as Settings from "./Settings.js"
import type * as Tool from "./Tool.js"
import type { PreToolUseOutcome } from "./ToolHooks.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Service {
  /** Decides one call of `tool` with its validated `input`; `hook` is what PreToolUse hooks said. */
  readonly decide: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    hook: PreToolUseOutcome
  ) => Effect.Effect<PermissionDecision>
  /** A blanket deny (`Bash`, `mcp__srv`) removes the tool from the pool, not only its calls. */
  readonly isBlanketDenied: (tool: Tool.Any, permissionContext: PermissionContext) => boolean
  /**
   * Remembers allow rules a person chose with "allow always", for the rest of the session (and, in the
   * persistent layer, in `.toolwright/settings.local.json`). Optional: a policy without memory omits it.
   */
  /**
   * Adds allow rules for the rest of the session ("allow always"); also saved where the layer keeps them
   * unless `options.persist` is false.
   */
  readonly remember?: (
    rules: ReadonlyArray<string>,
    context: ToolUseContext,
    options?: { readonly persist?: boolean }
  ) => Effect.Effect<void>
}

export class PermissionPolicy extends Context.Tag("@toolwright/core/PermissionPolicy")<PermissionPolicy, Service>() {}



/**
 * The entries of a directory whose writes always ask (`.git`, `.toolwright`, `.claude`, shell start-up files):
 * a tool that writes a whole tree names the ones inside it, so the policy sees them.
 */
export const protectedEntries: ReadonlyArray<string> = RulePolicy.protectedEntries

/** Resolves symlinks with a FileSystem; a path not created yet resolves through its nearest existing ancestor. */
export const realPathWith = (fs: FileSystem.FileSystem): RulePolicy.RealPath => (path) => {
  const walk = (current: string, rest: ReadonlyArray<string>): Effect.Effect<string> =>
    fs.realPath(current).pipe(
      Effect.map((real) => (rest.length === 0 ? real : `${real === "/" ? "" : real}/${rest.join("/")}`)),
      Effect.catchAll(() => {
        const parent = PosixPath.dirname(current)
        return parent === current ? Effect.succeed(path) : walk(parent, [PosixPath.basename(current), ...rest])
      })
    )
  return walk(path, [])
}

/** The file "allow always" writes to: `<cwd>/.toolwright/settings.local.json`. */
export const localSettingsFile = (cwd: string): string => `${cwd}/.toolwright/settings.local.json`

/**
 * Adds allow rules to `<cwd>/.toolwright/settings.local.json` without losing anything else in it: the
 * file is read, the rules appended to `permissions.allow`, and the result written to a temporary file
 * renamed over the original (atomic). A file that is not valid JSON is left untouched and reported.
 */
export const persistAllowRules = (fs: FileSystem.FileSystem, cwd: string, rules: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const file = localSettingsFile(cwd)
    const exists = yield* fs.exists(file)
    let json: unknown = {}
    if (exists) {
      const text = yield* fs.readFileString(file)
      if (text.trim() !== "") {
        const parsed = Either.try(() => JSON.parse(text) as unknown)
        if (Either.isLeft(parsed)) {
          return yield* Effect.fail(
            new Settings.SettingsError({
              file,
              field: "",
              problem: "not valid JSON, so the remembered rules were not written; fix the file and answer again"
            })
          )
        }
        json = parsed.right
      }
    }
    yield* fs.makeDirectory(PosixPath.dirname(file), { recursive: true })
    const temporary = `${file}.${crypto.randomUUID()}.tmp`
    yield* fs.writeFileString(temporary, `${JSON.stringify(Settings.withAllowRules(json, rules), null, 2)}\n`)
    yield* fs.rename(temporary, file).pipe(Effect.tapError(() => Effect.ignore(fs.remove(temporary))))
  })

export interface RulesOptions {
  /** Resolves symlinks; without it paths are matched as the tools give them. */
  readonly realPath?: RulePolicy.RealPath
  /** Where "allow always" rules are written besides the session's memory. */
  readonly persist?: (rules: ReadonlyArray<string>, context: ToolUseContext) => Effect.Effect<void>
}

// Asked on every call: no array allocated for a cwd without remembered rules.
const noRules: ReadonlyArray<RuleEntry> = []

/**
 * The rule-based policy, in Claude Code's order: a PreToolUse hook's deny; deny rules (any source); ask
 * rules (even in bypass mode); the tool's own check; plan mode; input that could not be analysed asks
 * while scoped deny/ask rules exist; the tool's or hook's ask and protected-path writes ask outside
 * bypass mode; bypass mode or a hook's allow; allow rules (every subject covered); acceptEdits inside the
 * working directories; read-only calls inside them; otherwise ask (`dontAsk` turns every ask into a deny).
 */
export const makeRules = (options: RulesOptions = {}): Service => {
  const session = new Map<string, Array<RuleEntry>>()
  const engine = RulePolicy.make({ realPath: options.realPath, sessionRules: (cwd) => session.get(cwd) ?? noRules })
  return {
    decide: engine.decide,
    isBlanketDenied: engine.isBlanketDenied,
    remember: (rules, context, rememberOptions) =>
      Effect.gen(function*() {
        const valid = rules.filter((rule) => Either.isRight(PermissionRule.parse(rule)))
        if (valid.length === 0) return
        const list = session.get(context.cwd) ?? []
        for (const rule of valid) if (!list.some((entry) => entry.rule === rule)) list.push({ rule, source: "session" })
        session.set(context.cwd, list)
        if (options.persist !== undefined && rememberOptions?.persist !== false) yield* options.persist(valid, context)
      })
  }
}

const optionalRealPath = Effect.map(
  Effect.serviceOption(FileSystem.FileSystem),
  (fs) => Option.getOrUndefined(Option.map(fs, realPathWith))
)

/**
 * The rule-based policy with session memory for "allow always". Symlinks are resolved when a FileSystem
 * is in the environment (the CLI, tests with NodeContext); tools should return real paths regardless.
 */
export const layer: Layer.Layer<PermissionPolicy> = Layer.effect(
  PermissionPolicy,
  Effect.map(optionalRealPath, (realPath) => makeRules(realPath === undefined ? {} : { realPath }))
)

/** The rule-based policy that also writes "allow always" rules to `<cwd>/.toolwright/settings.local.json`. */
export const layerPersistent: Layer.Layer<PermissionPolicy, never, FileSystem.FileSystem> = Layer.effect(
  PermissionPolicy,
  Effect.map(FileSystem.FileSystem, (fs) =>
    makeRules({
      realPath: realPathWith(fs),
      persist: (rules, context) =>
        persistAllowRules(fs, context.cwd, rules).pipe(
          Effect.catchAll((error) =>
            Effect.logWarning(
              `Could not remember ${rules.join(", ")} in ${localSettingsFile(context.cwd)}: ${error.message}`
            )
          )
        )
    }))
)

/** A context's Read and Edit rules that name paths, from its deny (and, with `ask`, ask) lists, compiled. */
const pathRules = (
  context: ToolUseContext,
  lists: ReadonlyArray<"deny" | "ask">,
  tools: ReadonlyArray<"Read" | "Edit">
): { readonly bare: boolean; readonly rules: ReadonlyArray<{ tool: string; pattern: PermissionRule.PathPattern }> } => {
  const permissionContext = context.permissionContext
  const rules: Array<{ tool: string; pattern: PermissionRule.PathPattern }> = []
  let bare = false
  for (const list of lists) {
    for (const entry of permissionContext[list]) {
      const parsed = PermissionRule.parse(entry.rule)
      if (Either.isLeft(parsed) || !(tools as ReadonlyArray<string>).includes(parsed.right.toolName)) continue
      const content = parsed.right.content
      if (content === undefined) bare = true
      else {
        rules.push({
          tool: parsed.right.toolName,
          pattern: PermissionRule.compilePath(content, {
            cwd: context.cwd,
            home: permissionContext.homeDir,
            settingsRoot: entry.root
          })
        })
      }
    }
  }
  return { bare, rules }
}

/**
 * Whether Read deny rules forbid reading `path` (absolute; `..` resolved here), for tools that read many
 * files under one root (Grep, Glob): they check each file they would return, since the policy only sees
 * the root they were called with. Symlinks are not resolved here; pass real paths too.
 */
export const readDenied = (context: ToolUseContext): (path: string) => boolean => {
  const { bare, rules } = pathRules(context, ["deny"], ["Read"])
  return (path) => {
    if (bare) return true
    const absolute = PosixPath.resolve(context.cwd, path)
    return rules.some((rule) => PermissionRule.matchesPath(rule.pattern, absolute))
  }
}

/**
 * Whether a path-scoped Read or Edit deny or ask rule matches `path` (absolute, normalised) for that access
 * (a Read rule any access, as the policy applies it; an Edit rule writes), or `undefined` when the context
 * has no such rules. For tools that touch whole trees the policy sees only by their root (`rm -r dir`): they
 * check the entries under it. `realPath` gives a rule root's other spelling, so real paths match too.
 */
export const guardedPath = (
  context: ToolUseContext,
  realPath: (path: string) => string = (path) => path
): ((path: string, access: "read" | "write") => boolean) | undefined => {
  const { rules } = pathRules(context, ["deny", "ask"], ["Read", "Edit"])
  if (rules.length === 0) return undefined
  const compiled = rules.map(({ pattern, tool }) => {
    const root = pattern.root
    const real = root === undefined ? undefined : realPath(root)
    const forms = root === undefined ? [] : real === undefined || real === root ? [root] : [root, real]
    return { pattern, read: tool === "Read", forms }
  })
  return (path, access) =>
    compiled.some((rule) =>
      (rule.read || access === "write") && PermissionRule.matchesPath(rule.pattern, path, rule.forms)
    )
}
