/**
 * The rule-based permission policy: Claude Code's order of checks over compiled rules. Rules are
 * compiled once per permission context and cwd (roots resolved, symlinked roots included), so deciding a
 * call is a handful of string tests even against a thousand rules.
 */
import { Effect, Either } from "effect"
import type { PermissionContext, PermissionDecision, PermissionMode, PermissionResult, RuleEntry } from "../Permission.js"
import * as PermissionRule from "../PermissionRule.js"
import type * as Tool from "../Tool.js"
import type { PreToolUseOutcome } from "../ToolHooks.js"
import type { ToolUseContext } from "../ToolUseContext.js"
import * as PosixPath from "./posixPath.js"
import { succeeded } from "./succeeded.js"

/** Resolves symlinks of an absolute path (its nearest existing ancestor for a path not yet created). */
export type RealPath = (path: string) => Effect.Effect<string>

interface CompiledRule {
  readonly entry: RuleEntry
  readonly rule: PermissionRule.Rule
  readonly specifier: PermissionRule.SpecifierPattern | undefined
  readonly domain: string | undefined
  readonly path: PermissionRule.PathPattern | undefined
  readonly rootForms: ReadonlyArray<string>
  /** `root/literal-prefix` for each root form: a path not starting with one cannot match (cheap rejection). */
  readonly pathStarts: ReadonlyArray<string> | undefined
}

interface SpecifierIndex {
  /** Rules whose pattern starts with a whole first word (`git *`, `npm run test:*`), by that word. */
  readonly byWord: ReadonlyMap<string, ReadonlyArray<CompiledRule>>
  /** Rules that may match any first word (`ls*`, `* install`, domains). */
  readonly rest: ReadonlyArray<CompiledRule>
}

interface RuleList {
  /** Rules without a specifier, by the tool name they name (MCP server rules under `mcp__server`). */
  readonly bare: ReadonlyMap<string, ReadonlyArray<CompiledRule>>
  /** Rules with a specifier, by tool name. */
  readonly content: ReadonlyMap<string, ReadonlyArray<CompiledRule>>
  /** The same tool's rules with a specifier, indexed for command lookups. */
  readonly specifiers: ReadonlyMap<string, SpecifierIndex>
  /** The first bare rule naming each tool asked about (`null`: none), worked out once per tool. */
  readonly naming: WeakMap<Tool.Any, CompiledRule | null>
}

/** The first word every match of a specifier rule must have, when the rule fixes it. */
const ruleWord = (content: string): string | undefined => {
  const source = content.endsWith(":*") ? `${content.slice(0, -2)} *` : content
  const space = source.indexOf(" ")
  const glob = source.search(/[*\\]/)
  return space > 0 && (glob === -1 || space < glob) ? source.slice(0, space) : undefined
}

const firstWord = (subject: string): string => subject.slice(0, subject.indexOf(" ") >>> 0)

/** Tool keys a call's rules are filed under: its name, aliases and MCP server. */
const toolKeys = (tool: Tool.Any): ReadonlyArray<string> => {
  const server = mcpServerKey(tool.name)
  return server !== undefined && server !== tool.name
    ? [tool.name, ...tool.aliases, server]
    : [tool.name, ...tool.aliases]
}

/** The specifier rules of a tool that could match `subject`. */
const specifierCandidates = (list: RuleList, tool: Tool.Any, subject: string): ReadonlyArray<CompiledRule> => {
  const out: Array<CompiledRule> = []
  const word = firstWord(subject)
  for (const key of toolKeys(tool)) {
    const index = list.specifiers.get(key)
    if (index === undefined) continue
    const byWord = index.byWord.get(word)
    if (byWord !== undefined) for (const rule of byWord) out.push(rule)
    for (const rule of index.rest) out.push(rule)
  }
  return out
}

interface Compiled {
  readonly deny: RuleList
  readonly ask: RuleList
  readonly allow: RuleList
  readonly workingDirs: ReadonlyArray<string>
}

type Access = "read" | "write"

interface PathSubject {
  readonly path: string
  readonly access: Access
  /** An argument of the command (see `Tool.RuleSubjects`): a write rides on the command's rule too. */
  readonly argument: boolean
  /** The path as written (normalised) and with symlinks resolved: allow must match both, deny either. */
  readonly forms: ReadonlyArray<string>
}

const SHELL_STARTUP = new Set([
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".cshrc",
  ".tcshrc",
  ".kshrc",
  ".inputrc",
  ".gitconfig",
  ".gitmodules",
  ".mcp.json"
])
const PROTECTED_DIRS = new Set([".git", ".toolwright", ".claude", ".vscode", ".idea"])
const FISH_CONFIG = ".config/fish/config.fish"

/** Writes that always ask outside bypassPermissions: repository state, agent settings, shell start-up files. */
export const isProtectedPath = (path: string): boolean => {
  const segments = path.split("/")
  if (segments.some((segment) => PROTECTED_DIRS.has(segment))) return true
  const base = segments[segments.length - 1]
  return SHELL_STARTUP.has(base) || path.endsWith(`/${FISH_CONFIG}`)
}

/** Claude Code's own folders for commands, agents and skills, which bypassPermissions writes without asking. */
const CLAUDE_AUTHORED = new Set(["commands", "agents", "skills"])

/**
 * Writes that ask even in bypassPermissions, as in Claude Code: inside `.git`, `.toolwright`, `.claude`,
 * `.vscode`, `.idea` (not `.claude/commands`, `agents`, `skills`). Shell start-up files are not among them.
 */
export const isProtectedInBypass = (path: string): boolean => {
  const segments = path.split("/")
  const at = segments.findIndex((segment) => PROTECTED_DIRS.has(segment))
  return at !== -1 && !(segments[at] === ".claude" && CLAUDE_AUTHORED.has(segments[at + 1] ?? ""))
}

/** What `isProtectedPath` protects, as entries of one directory: `.git`, `.bashrc`, `.config/fish/config.fish`, … */
export const protectedEntries: ReadonlyArray<string> = [...PROTECTED_DIRS, ...SHELL_STARTUP, FISH_CONFIG]

const mcpServerKey = (name: string): string | undefined => {
  if (!name.startsWith("mcp__")) return undefined
  const rest = name.slice(5)
  const cut = rest.indexOf("__")
  return `mcp__${cut === -1 ? rest : rest.slice(0, cut)}`
}

/** Rules without a specifier filed under the tool's keys, plus bare `Read` / `Edit` when the call has paths. */
const bareRules = (list: RuleList, tool: Tool.Any, withPathRules: boolean): ReadonlyArray<CompiledRule> => {
  const keys = toolKeys(tool)
  const out: Array<CompiledRule> = []
  for (const key of withPathRules ? new Set([...keys, "Read", "Edit"]) : keys) {
    const rules = list.bare.get(key)
    if (rules !== undefined) for (const rule of rules) out.push(rule)
  }
  return out
}

/** Rules with a specifier that may be path rules: `Read(…)`, `Edit(…)`, and the tool's own for a file tool. */
const pathRules = (list: RuleList, tool: Tool.Any, pathMode: boolean): ReadonlyArray<CompiledRule> => {
  const keys = new Set(pathMode ? ["Read", "Edit", ...toolKeys(tool)] : ["Read", "Edit"])
  const out: Array<CompiledRule> = []
  for (const key of keys) {
    const rules = list.content.get(key)
    if (rules !== undefined) for (const rule of rules) out.push(rule)
  }
  return out
}

const namesTool = (rule: CompiledRule, tool: Tool.Any) => PermissionRule.namesTool(rule.rule.toolName, tool)

/** The first rule without a specifier that names the tool itself (its name, an alias, its MCP server). */
const ruleNaming = (list: RuleList, tool: Tool.Any): CompiledRule | undefined => {
  let rule = list.naming.get(tool)
  if (rule === undefined) {
    rule = bareRules(list, tool, false).find((candidate) => namesTool(candidate, tool)) ?? null
    list.naming.set(tool, rule)
  }
  return rule ?? undefined
}

const noStrings: ReadonlyArray<string> = []
const noPaths: ReadonlyArray<PathSubject> = []

/** Whether a rule (with a specifier) covers a path subject for the given purpose. */
const pathRuleApplies = (
  rule: CompiledRule,
  tool: Tool.Any,
  access: Access,
  purpose: "deny" | "allow",
  pathMode: boolean
): boolean => {
  const name = rule.rule.toolName
  if (name === "Read") return purpose === "deny" || access === "read"
  if (name === "Edit") return access === "write" || purpose === "allow"
  return pathMode && namesTool(rule, tool)
}

const matchesPathForms = (rule: CompiledRule, forms: ReadonlyArray<string>, every: boolean): boolean => {
  const pattern = rule.path
  if (pattern === undefined) return false
  // Plain loops: this runs once per rule per call, so no closure is allocated here.
  for (const form of forms) {
    const starts = rule.pathStarts
    let possible = starts === undefined
    if (starts !== undefined) for (const start of starts) if (form.startsWith(start)) possible = true
    const matched = possible && PermissionRule.matchesPath(pattern, form, rule.rootForms)
    if (every && !matched) return false
    if (!every && matched) return true
  }
  return every
}

const specifierMatches = (rule: CompiledRule, subject: string): boolean => {
  if (rule.domain !== undefined) {
    return subject.startsWith("domain:") && PermissionRule.matchesDomain(rule.domain, subject.slice(7))
  }
  const pattern = rule.specifier
  return pattern !== undefined && subject.startsWith(pattern.prefix) && pattern.test(subject)
}

const ruleText = (rule: CompiledRule) => `${rule.rule.raw} (from ${rule.entry.source})`

/** The Bash commands acceptEdits allows inside the working directories, by their first word. */
const ACCEPT_EDITS_COMMAND = /^(mkdir|touch|rm|rmdir|mv|cp|sed)(\s|$)/

/** The text naming a call in messages: `Bash with command rm -rf build`, `Write on /p/x`, `WebFetch`. */
const describeCall = (tool: Tool.Any, input: unknown, path?: string): string => {
  if (typeof input === "object" && input !== null && "command" in input && typeof input.command === "string") {
    return `${tool.name} with command ${input.command}`
  }
  if (path !== undefined) return `${tool.name} on ${path}`
  return tool.name
}

const deniedMessage = (tool: Tool.Any, input: unknown, path?: string) =>
  `Permission to use ${describeCall(tool, input, path)} has been denied.`

/** The narrowest useful rule for a command: `npm run test:*`, `git status:*`, or the command itself. */
export const suggestCommandRule = (toolName: string, command: string): string | undefined => {
  if (PermissionRule.isUnsafeSpecifier(command)) return undefined
  const words = command.trim().split(/\s+/)
  if (words.length === 0 || words[0] === "") return undefined
  let take = 1
  const isWord = (word: string | undefined) => word !== undefined && /^[A-Za-z][A-Za-z0-9_:.-]*$/.test(word)
  if (isWord(words[1])) take = 2
  if (take === 2 && words[1] === "run" && isWord(words[2])) take = 3
  if (take >= words.length) return PermissionRule.format(toolName, command.trim())
  return PermissionRule.format(toolName, `${words.slice(0, take).join(" ")}:*`)
}

const pathRuleFor = (access: Access, path: string, cwd: string): string => {
  const dir = PosixPath.dirname(path)
  const inside = PosixPath.relativeInside(cwd, dir)
  const form = inside === undefined ? `/${dir}` : inside === "" ? "." : `./${inside}`
  return PermissionRule.format(access === "write" ? "Edit" : "Read", `${form === "//" ? "/" : form}/**`)
}

export interface Options {
  readonly realPath?: RealPath | undefined
  /** Allow rules remembered in this session ("allow always"), by cwd. */
  readonly sessionRules?: (cwd: string) => ReadonlyArray<RuleEntry>
}

const isInside = (dirs: ReadonlyArray<string>, path: string) =>
  dirs.some((dir) => PosixPath.relativeInside(dir, path) !== undefined)

/** What one `decide` works on: passed along, not captured by closures made per call (see `decide`). */
interface DecideCall {
  readonly tool: Tool.Any
  readonly input: unknown
  readonly context: ToolUseContext
  readonly hook: PreToolUseOutcome
  readonly mode: PermissionMode
}

/** In mode dontAsk, or with permissions.denyInsteadOfPrompting, whatever would ask is denied. */
const dontAsk = (
  { context, input, mode, tool }: DecideCall,
  decision: Extract<PermissionDecision, { behavior: "ask" }>
): PermissionDecision => {
  const why = mode === "dontAsk"
    ? "mode dontAsk"
    : context.permissionContext.denyInsteadOfPrompting === true
    ? "permissions.denyInsteadOfPrompting"
    : undefined
  return why === undefined ? decision : {
    behavior: "deny",
    message: `Permission to use ${describeCall(tool, input)} has been denied: ${decision.message} ` +
      `(${why} denies whatever would ask)`,
    reason: `${why}; would ask: ${decision.reason}`
  }
}

/**
 * A file tool's path outside the working directories that settings block in every mode
 * (`permissions.blockReadsOutsideWorkingDirectories` / `blockWritesOutsideWorkingDirectories`).
 */
const blockedOutside = (
  { context, input, tool }: DecideCall,
  paths: ReadonlyArray<PathSubject>,
  workingDirs: ReadonlyArray<string>
): PermissionDecision | undefined => {
  const { blockReadsOutsideWorkingDirectories: reads, blockWritesOutsideWorkingDirectories: writes } =
    context.permissionContext
  if (reads !== true && writes !== true) return undefined
  const blocked = paths.find((path) =>
    (path.access === "read" ? reads === true : writes === true) &&
    !path.forms.every((form) => isInside(workingDirs, form))
  )
  if (blocked === undefined) return undefined
  const setting = blocked.access === "read"
    ? "permissions.blockReadsOutsideWorkingDirectories"
    : "permissions.blockWritesOutsideWorkingDirectories"
  return {
    behavior: "deny",
    message: `${describeCall(tool, input, blocked.path)} was refused: ${blocked.path} is outside the working ` +
      `directories (${workingDirs.join(", ")}), and ${setting} is on. Work inside them, or add the directory ` +
      `to permissions.additionalDirectories.`,
    reason: setting
  }
}

/** Builds the rule policy's `decide` and `isBlanketDenied`. */
export const make = (options: Options) => {
  const realPath: RealPath = options.realPath ?? ((path) => Effect.succeed(path))
  const rootCache = new Map<string, ReadonlyArray<string>>()
  const rootForms = (root: string): Effect.Effect<ReadonlyArray<string>> => {
    const cached = rootCache.get(root)
    if (cached !== undefined) return Effect.succeed(cached)
    return Effect.map(realPath(root), (real) => {
      const forms = real === root ? [root] : [root, real]
      if (rootCache.size > 1_000) rootCache.clear()
      rootCache.set(root, forms)
      return forms
    })
  }

  const compileList = (entries: ReadonlyArray<RuleEntry>, context: PermissionContext, cwd: string) =>
    Effect.gen(function*() {
      const bare = new Map<string, Array<CompiledRule>>()
      const withContent = new Map<string, Array<CompiledRule>>()
      const specifiers = new Map<string, { byWord: Map<string, Array<CompiledRule>>; rest: Array<CompiledRule> }>()
      for (const entry of entries) {
        const parsed = PermissionRule.parse(entry.rule)
        // Settings are validated when loaded; a malformed rule from elsewhere is skipped, never widened.
        if (Either.isLeft(parsed)) continue
        const rule = parsed.right
        const content = rule.content
        const domain = content !== undefined && content.startsWith("domain:") ? content.slice(7) : undefined
        const path = content === undefined || domain !== undefined
          ? undefined
          : PermissionRule.compilePath(content, { cwd, home: context.homeDir, settingsRoot: entry.root })
        const forms = path?.root === undefined ? [] : yield* rootForms(path.root)
        const compiled: CompiledRule = {
          entry,
          rule,
          specifier: content === undefined || domain !== undefined
            ? undefined
            : PermissionRule.compileSpecifier(content),
          domain,
          path,
          rootForms: forms,
          pathStarts: path?.root === undefined
            ? undefined
            : forms.map((root) => `${root === "/" ? "" : root}/${path.prefix}`)
        }
        const key = rule.toolName.endsWith("__*") ? rule.toolName.slice(0, -3) : rule.toolName
        const byTool = content === undefined ? bare : withContent
        const list = byTool.get(key)
        if (list === undefined) byTool.set(key, [compiled])
        else list.push(compiled)
        if (content !== undefined) {
          let index = specifiers.get(key)
          if (index === undefined) {
            index = { byWord: new Map(), rest: [] }
            specifiers.set(key, index)
          }
          const word = domain === undefined ? ruleWord(content) : undefined
          if (word === undefined) index.rest.push(compiled)
          else index.byWord.set(word, [...(index.byWord.get(word) ?? []), compiled])
        }
      }
      return { bare, content: withContent, specifiers, naming: new WeakMap() } satisfies RuleList
    })

  // Compiled once per permission context, cwd and number of session rules (compared field by field: a key
  // string built per call costs more than the lookup).
  const cache = new WeakMap<
    PermissionContext,
    { readonly cwd: string; readonly sessionRules: number; readonly compiled: Compiled }
  >()
  const sessionRuleCount = (cwd: string) => options.sessionRules?.(cwd).length ?? 0
  const cachedFor = (context: PermissionContext, cwd: string): Compiled | undefined => {
    const hit = cache.get(context)
    return hit !== undefined && hit.cwd === cwd && hit.sessionRules === sessionRuleCount(cwd) ? hit.compiled : undefined
  }
  const compile = (context: PermissionContext, cwd: string): Effect.Effect<Compiled> =>
    Effect.gen(function*() {
      const session = options.sessionRules?.(cwd) ?? []
      const dirs: Array<string> = []
      for (const dir of [cwd, ...context.additionalDirectories]) {
        for (const form of yield* rootForms(PosixPath.resolve(cwd, dir))) if (!dirs.includes(form)) dirs.push(form)
      }
      const compiled: Compiled = {
        deny: yield* compileList(context.deny, context, cwd),
        ask: yield* compileList(context.ask, context, cwd),
        allow: yield* compileList([...context.allow, ...session], context, cwd),
        workingDirs: dirs
      }
      cache.set(context, { cwd, sessionRules: session.length, compiled })
      return compiled
    })

  const lexicalPaths = (subjects: Tool.RuleSubjects, cwd: string) =>
    subjects.paths.map(({ access, argument, path }) => ({
      access,
      argument: argument === true,
      path: PosixPath.resolve(cwd, path)
    }))
  /** The paths with their real forms; synchronous when there is nothing to resolve. */
  const pathSubjects = (
    subjects: Tool.RuleSubjects,
    cwd: string
  ): ReadonlyArray<PathSubject> | Effect.Effect<ReadonlyArray<PathSubject>> => {
    if (subjects.paths.length === 0) return noPaths
    const lexical = lexicalPaths(subjects, cwd)
    if (options.realPath === undefined || lexical.length === 0) {
      return lexical.map(({ access, argument, path }) => ({ access, argument, path, forms: [path] }))
    }
    return Effect.forEach(lexical, ({ access, argument, path }) =>
      Effect.map(
        realPath(path),
        (real) => ({ path, access, argument, forms: real === path ? [path] : [path, real] })
      ))
  }

  /** The first deny (or ask) rule matching any subject, with the path it matched if any. */
  const findMatch = (
    list: RuleList,
    tool: Tool.Any,
    specifierVariants: ReadonlyArray<string>,
    paths: ReadonlyArray<PathSubject>,
    pathMode: boolean
  ): { readonly rule: CompiledRule; readonly path?: string } | undefined => {
    if (!pathMode) {
      for (const variant of specifierVariants) {
        for (const rule of specifierCandidates(list, tool, variant)) {
          if (specifierMatches(rule, variant)) return { rule }
        }
      }
    }
    if (paths.length === 0) {
      // Without paths only a rule naming the tool can match, and which one is known per tool.
      const rule = ruleNaming(list, tool)
      return rule === undefined ? undefined : { rule }
    }
    for (const rule of bareRules(list, tool, true)) {
      if (namesTool(rule, tool)) return { rule }
      // Bare `Read` / `Edit` cover every path of their kind, whichever tool touches it.
      for (const path of paths) {
        if (pathRuleApplies(rule, tool, path.access, "deny", false)) return { rule, path: path.path }
      }
    }
    for (const rule of pathRules(list, tool, pathMode)) {
      for (const path of paths) {
        if (pathRuleApplies(rule, tool, path.access, "deny", pathMode) && matchesPathForms(rule, path.forms, false)) {
          return { rule, path: path.path }
        }
      }
    }
    return undefined
  }

  /** Whether allow rules cover every subject; `covered` paths need no rule (inside the working dirs). */
  const allowedByRules = (
    list: RuleList,
    tool: Tool.Any,
    subjects: Tool.RuleSubjects,
    paths: ReadonlyArray<PathSubject>,
    workingDirs: ReadonlyArray<string>,
    pathMode: boolean,
    mode: PermissionMode
  ): { readonly allowed: boolean; readonly rule?: CompiledRule; readonly missing: ReadonlyArray<string> } => {
    const whole = ruleNaming(list, tool)
    if (whole !== undefined) return { allowed: true, rule: whole, missing: [] }
    if (subjects.opaque !== undefined) return { allowed: false, missing: [] }
    let decisive: CompiledRule | undefined
    const missing: Array<string> = []
    if (!pathMode) {
      for (const specifier of subjects.specifiers) {
        const rule = PermissionRule.isUnsafeSpecifier(specifier)
          ? undefined
          : specifierCandidates(list, tool, specifier).find((candidate) => specifierMatches(candidate, specifier))
        if (rule === undefined) missing.push(specifier)
        else decisive ??= rule
      }
    }
    const rules = paths.length === 0 ? [] : [...bareRules(list, tool, true), ...pathRules(list, tool, pathMode)]
    for (const path of paths) {
      const rule = rules.find((candidate) =>
        pathRuleApplies(candidate, tool, path.access, "allow", pathMode) &&
        (candidate.rule.content === undefined || matchesPathForms(candidate, path.forms, true))
      )
      if (rule !== undefined) {
        decisive ??= rule
        continue
      }
      // A file a command reads inside the working directories rides on the rule that allowed the command, and
      // so does one its arguments name (`Bash(rm:*)` allows `rm build/x`); a file a redirection writes is an
      // edit of that file, allowed only by an Edit rule (above) or by acceptEdits inside the working
      // directories: `Bash(echo:*)` must not allow `echo x > src/app.ts`.
      const inside = path.forms.every((form) => isInside(workingDirs, form))
      const riding = !pathMode && subjects.specifiers.length > 0 && inside &&
        (path.access === "read" || path.argument || mode === "acceptEdits")
      if (!riding) missing.push(path.path)
    }
    if (missing.length > 0 || decisive === undefined) return { allowed: false, missing }
    return { allowed: true, rule: decisive, missing }
  }

  const suggestionsFor = (
    tool: Tool.Any,
    subjects: Tool.RuleSubjects,
    paths: ReadonlyArray<PathSubject>,
    cwd: string,
    missing: ReadonlyArray<string>
  ): ReadonlyArray<string> => {
    const out: Array<string> = []
    const add = (rule: string | undefined) => {
      if (rule === undefined || out.includes(rule) || out.length >= 5) return
      // A remembered rule goes into settings.local.json: one settings would refuse (`Bash(a:*b)`) would stop
      // the next session from starting.
      const parsed = PermissionRule.parse(rule)
      if (Either.isRight(parsed) && PermissionRule.check(parsed.right) === undefined) out.push(rule)
    }
    if (tool.name.startsWith("mcp__") || (subjects.specifiers.length === 0 && paths.length === 0)) return [tool.name]
    if (subjects.opaque !== undefined) return []
    for (const specifier of subjects.specifiers) {
      if (missing.length > 0 && !missing.includes(specifier)) continue
      if (specifier.startsWith("domain:")) add(PermissionRule.format(tool.name, specifier))
      else if (/\s/.test(specifier.trim())) add(suggestCommandRule(tool.name, specifier))
      else if (!PermissionRule.isUnsafeSpecifier(specifier)) add(PermissionRule.format(tool.name, specifier))
    }
    for (const path of paths) {
      if (missing.length > 0 && !missing.includes(path.path)) continue
      if (path.access === "write" && isProtectedPath(path.path)) continue
      add(pathRuleFor(path.access, path.path, cwd))
    }
    return out
  }

  // The steps of `decide` live here, not inside it: bundles keep function names (esbuild keepNames),
  // and naming a closure made per call costs ~0.5 µs each time.

  /** Deny and ask rules, which nothing overrides; `undefined` when none applies. */
  const byRules = (
    call: DecideCall,
    compiled: Compiled,
    paths: ReadonlyArray<PathSubject>,
    variants: ReadonlyArray<string>,
    pathMode: boolean
  ): PermissionDecision | undefined => {
    const { input, tool } = call
    const denied = findMatch(compiled.deny, tool, variants, paths, pathMode)
    if (denied !== undefined) {
      return {
        behavior: "deny",
        message: deniedMessage(tool, input, denied.path),
        reason: `deny rule ${ruleText(denied.rule)}`
      }
    }
    const asked = findMatch(compiled.ask, tool, variants, paths, pathMode)
    if (asked !== undefined) {
      return dontAsk(call, {
        behavior: "ask",
        message: `The ask rule ${asked.rule.rule.raw} (from ${asked.rule.entry.source}) requires approval for ${
          describeCall(tool, input, asked.path)
        }.`,
        reason: `ask rule ${ruleText(asked.rule)}`,
        suggestions: []
      })
    }

    return undefined
  }

  /** Everything after the tool's own check. */
  const afterOwn = (
    call: DecideCall,
    own: PermissionResult,
    compiled: Compiled,
    subjects: Tool.RuleSubjects,
    paths: ReadonlyArray<PathSubject>,
    pathMode: boolean
  ): PermissionDecision => {
    const { context, hook, input, mode, tool } = call
    if (own.behavior === "deny") return { behavior: "deny", message: own.message, reason: `${tool.name} check` }
    // The file tools only (their rules are path rules): a shell command or an MCP tool is not covered.
    const blocked = pathMode ? blockedOutside(call, paths, compiled.workingDirs) : undefined
    if (blocked !== undefined) return blocked
    const readOnly = tool.isReadOnly(input)
    if (mode === "plan" && !readOnly) {
      return {
        behavior: "deny",
        message: `${tool.name} was not run: plan mode allows only read-only tools. Present the plan instead.`,
        reason: "mode plan"
      }
    }
    if (hook.permissionDecision === "ask") {
      return dontAsk(call, {
        behavior: "ask",
        message: hook.reason ?? `A PreToolUse hook asks for approval of ${describeCall(tool, input)}.`,
        reason: "PreToolUse hook",
        suggestions: []
      })
    }
    // What can prove nothing is left for deny or ask rules: without that, even bypass asks.
    if (subjects.opaque !== undefined) {
      const guarded = toolKeys(tool).some((key) =>
        compiled.deny.specifiers.has(key) || compiled.ask.specifiers.has(key)
      )
      if (guarded) {
        return dontAsk(call, {
          behavior: "ask",
          message: `${tool.name} input could not be checked against the permission rules: ${subjects.opaque}.`,
          reason: "input could not be analysed",
          suggestions: []
        })
      }
    }
    const overriding = mode === "bypassPermissions" || hook.permissionDecision === "allow"
    if (!overriding) {
      if (own.behavior === "ask") {
        return dontAsk(call, {
          behavior: "ask",
          message: own.message,
          reason: `${tool.name} check`,
          suggestions: own.suggestions ?? suggestionsFor(tool, subjects, paths, context.cwd, [])
        })
      }
      const protectedWrite = paths.find((path) =>
        path.access === "write" && path.forms.some((form) => isProtectedPath(form))
      )
      if (protectedWrite !== undefined) {
        return dontAsk(call, {
          behavior: "ask",
          message:
            `${protectedWrite.path} is a protected path (.git, .toolwright, .claude, shell start-up files): ` +
            "writing it needs approval.",
          reason: "protected path",
          suggestions: []
        })
      }
    }
    if (mode === "bypassPermissions") {
      const protectedDir = hook.permissionDecision === "allow" ? undefined : paths.find((path) =>
        path.access === "write" && path.forms.some((form) => isProtectedInBypass(form))
      )
      if (protectedDir !== undefined) {
        return {
          behavior: "ask",
          message: `${protectedDir.path} is inside a protected folder (.git, .toolwright, .claude, .vscode, .idea): ` +
            "writing it needs approval, also in bypassPermissions mode.",
          reason: "protected path",
          suggestions: []
        }
      }
      return { behavior: "allow", input, reason: "mode bypassPermissions" }
    }
    if (hook.permissionDecision === "allow") return { behavior: "allow", input, reason: "PreToolUse hook" }
    if (own.behavior === "allow") {
      return { behavior: "allow", input: own.updatedInput ?? input, reason: `${tool.name} check` }
    }

    const allowed = allowedByRules(compiled.allow, tool, subjects, paths, compiled.workingDirs, pathMode, mode)
    if (allowed.allowed && allowed.rule !== undefined) {
      return { behavior: "allow", input, reason: `allow rule ${ruleText(allowed.rule)}` }
    }
    const outside = paths.find((path) => !path.forms.every((form) => isInside(compiled.workingDirs, form)))
    if (subjects.opaque === undefined && outside === undefined && paths.length > 0) {
      // Bash's file commands are edits too, as in Claude Code: `mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`, `sed`.
      const edits = subjects.specifiers.length === 0 ||
        (tool.name === "Bash" && subjects.specifiers.every((specifier) => ACCEPT_EDITS_COMMAND.test(specifier)))
      if (mode === "acceptEdits" && edits) {
        return { behavior: "allow", input, reason: "mode acceptEdits (inside the working directories)" }
      }
    }
    // Reading the network is not reading the project: a fetch needs an allow rule even when read-only. An MCP
    // tool's read-only flag is its server's readOnlyHint, which the MCP spec says not to trust for decisions:
    // as in Claude Code, an MCP tool needs a rule.
    const network = subjects.specifiers.some((specifier) => specifier.startsWith("domain:"))
    if (readOnly && tool.source !== "mcp" && subjects.opaque === undefined && outside === undefined && !network) {
      return { behavior: "allow", input, reason: "read-only tool" }
    }
    const suggestions = suggestionsFor(tool, subjects, paths, context.cwd, allowed.missing)
    if (outside !== undefined) {
      return dontAsk(call, {
        behavior: "ask",
        message: `${describeCall(tool, input, outside.path)} needs permission: ${outside.path} is outside the ` +
          `working directories (${compiled.workingDirs.join(", ")}).`,
        reason: "outside the working directories",
        suggestions
      })
    }
    if (subjects.opaque !== undefined) {
      return dontAsk(call, {
        behavior: "ask",
        message: `${describeCall(tool, input)} needs permission: ${subjects.opaque}.`,
        reason: "input could not be analysed",
        suggestions
      })
    }
    return dontAsk(call, {
      behavior: "ask",
      message: `${describeCall(tool, input, paths[0]?.path)} needs permission: no allow rule covers it.`,
      reason: "no rule allows it",
      suggestions
    })
  }

  const go = (
    call: DecideCall,
    compiled: Compiled,
    subjects: Tool.RuleSubjects,
    variants: ReadonlyArray<string>,
    pathMode: boolean,
    paths: ReadonlyArray<PathSubject>
  ): Effect.Effect<PermissionDecision> => {
    const early = byRules(call, compiled, paths, variants, pathMode)
    if (early !== undefined) return Effect.succeed(early)
    const own = call.tool.checkPermissions(call.input, call.context)
    if (!succeeded(own)) return Effect.map(own, (result) => afterOwn(call, result, compiled, subjects, paths, pathMode))
    // A check that answered with a plain value (the default passthrough) is read on the spot: one fiber step
    // less. What the tool's methods throw still dies inside the decision's Effect, as it would in `map`.
    try {
      return Effect.succeed(afterOwn(call, own.value, compiled, subjects, paths, pathMode))
    } catch (defect) {
      return Effect.die(defect)
    }
  }

  const run = (call: DecideCall, compiled: Compiled): Effect.Effect<PermissionDecision> => {
    const { context, input, tool } = call
    let subjects: Tool.RuleSubjects
    try {
      subjects = tool.ruleSubjects(input, context)
    } catch (error) {
      subjects = { specifiers: [], paths: [], opaque: `its rule subjects could not be computed (${String(error)})` }
    }
    // A tool without command-like subjects is a file tool: rules named after it are path rules.
    const pathMode = subjects.specifiers.length === 0 && subjects.opaque === undefined
    const variants = subjects.specifiers.length === 0
      ? noStrings
      : subjects.specifiers.flatMap(PermissionRule.denyVariants)

    const prepared = pathSubjects(subjects, context.cwd)
    return Effect.isEffect(prepared)
      ? Effect.flatMap(prepared, (paths) => go(call, compiled, subjects, variants, pathMode, paths))
      : go(call, compiled, subjects, variants, pathMode, prepared)
  }

  const decide = (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    hook: PreToolUseOutcome
  ): Effect.Effect<PermissionDecision> => {
    const permissionContext = context.permissionContext
    const mode = permissionContext.mode
    if (hook.permissionDecision === "deny") {
      return Effect.succeed({
        behavior: "deny",
        message: hook.reason ?? `Permission to use ${describeCall(tool, input)} has been denied by a PreToolUse hook.`,
        reason: "PreToolUse hook"
      })
    }

    const cached = cachedFor(permissionContext, context.cwd)
    const call: DecideCall = { tool, input, context, hook, mode }
    return cached !== undefined
      ? run(call, cached)
      : Effect.flatMap(compile(permissionContext, context.cwd), (compiled) => run(call, compiled))
  }

  const isBlanketDenied = (tool: Tool.Any, permissionContext: PermissionContext): boolean =>
    permissionContext.deny.some(({ rule }) => {
      const parsed = PermissionRule.parse(rule)
      return Either.isRight(parsed) && parsed.right.content === undefined &&
        PermissionRule.namesTool(parsed.right.toolName, tool)
    })

  return { decide, isBlanketDenied }
}
