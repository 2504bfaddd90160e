/**
 * The settings file, in Claude Code's schema so users can paste theirs: `permissions` (allow, ask, deny,
 * defaultMode, additionalDirectories), `hooks`, `env`, and every other top-level key kept as it is.
 * `decode` validates one file and names the file, the field and what is expected; `merge` combines the
 * sources from lowest to highest into the session's permission context, hooks and environment.
 */
import { Either, ParseResult, Schema } from "effect"
import * as PosixPath from "./internal/posixPath.js"
import type { PermissionContext, PermissionMode, RuleEntry } from "./Permission.js"
import { PermissionMode as PermissionModeSchema } from "./Permission.js"
import * as PermissionRule from "./PermissionRule.js"

/** A settings file is invalid: which file, which field, and what was expected there. */
export class SettingsError extends Schema.TaggedError<SettingsError>("@toolwright/core/SettingsError")(
  "SettingsError",
  { file: Schema.String, field: Schema.String, problem: Schema.String }
) {
  override get message(): string {
    const where = this.field === "" ? "" : ` at ${this.field}`
    return `Invalid settings in ${this.file}${where}: ${this.problem}`
  }
}

const Extra = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const RuleList = Schema.Array(Schema.String).annotations({
  message: () => "expected an array of rule strings, e.g. [\"Bash(npm test)\", \"Read(./src/**)\"]"
})

/** A switch: true or false, nothing else (a quoted "true" is a mistake to report, not a guess to make). */
const Flag = Schema.Boolean.annotations({ message: () => "expected true or false" })

export const Permissions = Schema.Struct({
  allow: Schema.optional(RuleList),
  ask: Schema.optional(RuleList),
  deny: Schema.optional(RuleList),
  defaultMode: Schema.optional(PermissionModeSchema.annotations({
    message: (issue) => ({
      message: `expected one of "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"; got ${
        JSON.stringify(issue.actual)
      }`,
      override: true
    })
  })),
  additionalDirectories: Schema.optional(Schema.Array(Schema.String).annotations({
    message: () => "expected an array of directory paths"
  })),
  denyInsteadOfPrompting: Schema.optional(Flag),
  blockReadsOutsideWorkingDirectories: Schema.optional(Flag),
  blockWritesOutsideWorkingDirectories: Schema.optional(Flag)
}, Extra).annotations({
  message: () => ({
    message: "expected an object with the lists allow, ask and deny, e.g. {\"deny\": [\"Bash(curl:*)\"]}",
    override: false
  })
})
export type Permissions = typeof Permissions.Type

/** One hook of a matcher group. Only `command` hooks run; other types are kept for events toolwright does not fire. */
export const HookCommand = Schema.Struct({
  type: Schema.String,
  command: Schema.optional(Schema.String),
  /** Claude Code's filter in rule syntax (`Bash(git *)`): the hook runs only for calls the rule matches. */
  if: Schema.optional(Schema.String),
  timeout: Schema.optional(Schema.Number.pipe(Schema.positive()).annotations({
    message: () => "expected a positive number of seconds"
  })),
  /** Claude Code's background hooks: started, not waited for; they cannot block or change the call. */
  async: Schema.optional(Schema.Boolean.annotations({ message: () => "expected true or false" }))
}, Extra)

export const HookMatcher = Schema.Struct({
  matcher: Schema.optional(Schema.String),
  hooks: Schema.Array(HookCommand)
}, Extra)

export const Hooks = Schema.Record({
  key: Schema.String,
  value: Schema.Array(HookMatcher).annotations({
    message: () => ({
      message: "expected an array of matcher groups, e.g. [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": " +
        "\"command\", \"command\": \"./check.sh\"}]}]",
      override: false
    })
  })
}).annotations({
  message: () => ({
    message: "expected an object of events, e.g. {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [...]}]}",
    override: false
  })
})
export type Hooks = typeof Hooks.Type

export const Env = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  message: () => "expected an object of string values, e.g. {\"NODE_ENV\": \"test\"}"
})

/** Per-tool persistence thresholds in characters: `{ "Bash": 80000 }`. */
export const ToolResultThresholds = Schema.Record({
  key: Schema.String,
  value: Schema.Number.pipe(Schema.positive())
}).annotations({
  message: () => "expected an object of positive character counts per tool, e.g. {\"Bash\": 80000}"
})

/** Which failed calls cancel their siblings: `"none"`, `"declared"`, or `{ tools, readOnly }`. */
export const CascadeSetting = Schema.Union(
  Schema.Literal("none", "declared"),
  Schema.Struct({
    tools: Schema.optional(Schema.Union(Schema.Literal("none", "declared"), Schema.Array(Schema.String))),
    readOnly: Schema.optional(Schema.Boolean)
  })
)
export type CascadeSetting = typeof CascadeSetting.Type

export const Settings = Schema.Struct({
  permissions: Schema.optional(Permissions),
  hooks: Schema.optional(Hooks),
  env: Schema.optional(Env),
  toolResultThresholds: Schema.optional(ToolResultThresholds),
  toolErrorCascade: Schema.optional(CascadeSetting)
}, Extra)
export type Settings = typeof Settings.Type

/** The events whose hooks toolwright runs; a hook of another type there would silently not guard anything. */
export const RUN_EVENTS: ReadonlyArray<string> = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "PermissionDenied"
]

const fieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`),
    ""
  )

/** A key compared loosely: case, separators and a trailing plural or past-tense ending ignored. */
const looseKey = (key: string): string =>
  key.toLowerCase().replace(/[^a-z]/g, "").replace(/(?:s|es|ed|d)$/, "").replace(/y$/, "i")

/** Edit distance, for hook event names one or two typos away from an event toolwright runs. */
const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      next.push(Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)))
    }
    row = next
  }
  return row[b.length]
}

/** The known key a misspelt one stands for (`Deny`, `denied`, `Permission`), so it is not silently ignored. */
const misspelt = (key: string, known: ReadonlyArray<string>): string | undefined =>
  known.includes(key) ? undefined : known.find((name) => looseKey(name) === looseKey(key))

const PERMISSION_KEYS = [
  "allow",
  "ask",
  "deny",
  "defaultMode",
  "additionalDirectories",
  "disableBypassPermissionsMode",
  "denyInsteadOfPrompting",
  "blockReadsOutsideWorkingDirectories",
  "blockWritesOutsideWorkingDirectories"
]

/**
 * Keys that look like ones toolwright reads but are spelt otherwise: ignored as unknown keys, a `Deny` list
 * or a `pretooluse` hook would silently guard nothing.
 */
const checkSpelling = (file: string, json: Record<string, unknown>): SettingsError | undefined => {
  const didYouMean = (field: string, meant: string, what: string) =>
    new SettingsError({
      file,
      field,
      problem: `unknown key; did you mean "${meant}"? Keys are case-sensitive, and ${what} under this one ` +
        `would be ignored. Rename it to "${meant}"`
    })
  for (const key of Object.keys(json)) {
    const meant = misspelt(key, ["permissions", "hooks", "env"])
    if (meant !== undefined) return didYouMean(key, meant, `the ${meant}`)
  }
  const { hooks, permissions } = json
  if (isObject(permissions)) {
    for (const key of Object.keys(permissions)) {
      const meant = misspelt(key, PERMISSION_KEYS)
      if (meant !== undefined) return didYouMean(`permissions.${key}`, meant, "the rules")
    }
  }
  if (isObject(hooks)) {
    for (const key of Object.keys(hooks)) {
      const meant = misspelt(key, RUN_EVENTS) ??
        (RUN_EVENTS.includes(key) ? undefined : RUN_EVENTS.find((event) => distance(event, key) <= 2))
      if (meant !== undefined) return didYouMean(`hooks.${key}`, meant, "the hooks")
    }
  }
  return undefined
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Checks what the Schema cannot: every rule parses, matchers are valid regexes, run hooks are commands. */
const checkSemantics = (file: string, settings: Settings): SettingsError | undefined => {
  for (const list of ["allow", "ask", "deny"] as const) {
    const rules = settings.permissions?.[list] ?? []
    for (let i = 0; i < rules.length; i++) {
      const parsed = PermissionRule.parse(rules[i])
      const problem = Either.isLeft(parsed) ? parsed.left : PermissionRule.check(parsed.right)
      if (problem !== undefined) {
        return new SettingsError({ file, field: `permissions.${list}[${i}]`, problem })
      }
    }
  }
  for (const [event, groups] of Object.entries(settings.hooks ?? {})) {
    for (let g = 0; g < groups.length; g++) {
      const matcher = groups[g].matcher
      if (matcher !== undefined && !isSimpleMatcher(matcher)) {
        try {
          new RegExp(matcher)
        } catch (error) {
          return new SettingsError({
            file,
            field: `hooks.${event}[${g}].matcher`,
            problem: `not a valid regular expression (${error instanceof Error ? error.message : String(error)}); ` +
              `expected a tool name, a list like "Edit|Write", "*", or a regex`
          })
        }
      }
      const hooks = groups[g].hooks
      for (let h = 0; h < hooks.length; h++) {
        const field = `hooks.${event}[${g}].hooks[${h}]`
        if (!RUN_EVENTS.includes(event)) continue
        if (hooks[h].type !== "command") {
          return new SettingsError({
            file,
            field: `${field}.type`,
            problem: `toolwright runs only "command" hooks for ${event}; got ${JSON.stringify(hooks[h].type)}. ` +
              `Use a command hook, or remove this one so nothing is assumed to guard the calls`
          })
        }
        if (hooks[h].command === undefined || hooks[h].command === "") {
          return new SettingsError({ file, field: `${field}.command`, problem: "expected the shell command to run" })
        }
        const condition = hooks[h].if
        if (condition !== undefined) {
          const parsed = PermissionRule.parse(condition)
          const problem = Either.isLeft(parsed) ? parsed.left : PermissionRule.check(parsed.right)
          if (problem !== undefined) return new SettingsError({ file, field: `${field}.if`, problem })
        }
      }
    }
  }
  return undefined
}

/** A matcher made only of names and `|`: compared as exact tool names rather than as a regex. */
export const isSimpleMatcher = (matcher: string): boolean => /^[A-Za-z0-9_|\s-]*$/.test(matcher) || matcher === "*"

/** Validates a parsed JSON value as a settings file. */
export const decode = (file: string, json: unknown): Either.Either<Settings, SettingsError> => {
  if (!isObject(json)) {
    return Either.left(new SettingsError({ file, field: "", problem: "expected a JSON object at the top level" }))
  }
  const spelling = checkSpelling(file, json)
  if (spelling !== undefined) return Either.left(spelling)
  const decoded = Schema.decodeUnknownEither(Settings, { errors: "all", onExcessProperty: "preserve" })(json)
  if (Either.isLeft(decoded)) {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    const first = issues[0]
    return Either.left(
      new SettingsError({
        file,
        field: fieldPath(first?.path ?? []),
        problem: first === undefined ? "does not match the settings schema" : first.message
      })
    )
  }
  const problem = checkSemantics(file, decoded.right)
  return problem === undefined ? Either.right(decoded.right) : Either.left(problem)
}

/** Parses and validates the text of a settings file. */
export const decodeText = (file: string, text: string): Either.Either<Settings, SettingsError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(
      new SettingsError({
        file,
        field: "",
        problem: `not valid JSON (${error instanceof Error ? error.message : String(error)}); expected a JSON object`
      })
    )
  }
  return decode(file, json)
}

/** One settings source: the file (or `cli`), what it says, and the directory its `/path` rules refer to. */
export interface Source {
  readonly name: string
  readonly settings: Settings
  readonly root: string
}

/** A command hook from settings, with where it came from. */
export interface CommandHook {
  readonly event: string
  readonly matcher: string | undefined
  readonly command: string
  /** A rule (`Bash(git *)`) the call must match for the hook to run, as Claude Code's `if`. */
  readonly if?: string
  /** Seconds; Claude Code's default is 600. */
  readonly timeout: number
  /** Claude Code's `async`: runs in the background; the call does not wait and its answer is not read. */
  readonly async?: boolean
  readonly source: string
}

/** The settings of a session, every source merged. */
export interface Resolved {
  readonly permissionContext: PermissionContext
  readonly hooks: ReadonlyArray<CommandHook>
  /** Environment variables for the processes tools start (Bash) and for hooks; later sources win. */
  readonly env: Readonly<Record<string, string>>
  /** Per-tool persistence thresholds; later sources win per tool. */
  readonly toolResultThresholds?: Readonly<Record<string, number>>
  /** Every top-level key, later sources winning, as Claude Code files carry many toolwright ignores. */
  readonly merged: Readonly<Record<string, unknown>>
  readonly sources: ReadonlyArray<string>
}

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 600

/**
 * Merges sources from lowest to highest: rules accumulate (a deny anywhere beats an allow anywhere, as the
 * policy checks deny first), the mode and every other key take the highest source that sets them,
 * `additionalDirectories` accumulate (resolved against the cwd), hooks accumulate, `env` merges.
 */
export const merge = (
  sources: ReadonlyArray<Source>,
  options: { readonly cwd: string; readonly homeDir?: string; readonly mode?: PermissionMode }
): Resolved => {
  const allow: Array<RuleEntry> = []
  const ask: Array<RuleEntry> = []
  const deny: Array<RuleEntry> = []
  const directories: Array<string> = []
  const hooks: Array<CommandHook> = []
  let env: Record<string, string> = {}
  let toolResultThresholds: Record<string, number> = {}
  let merged: Record<string, unknown> = {}
  let mode: PermissionMode = "default"
  // Switches that guard: once a layer turns one on, a later one (a repository's) cannot turn it off.
  let denyInsteadOfPrompting = false
  let blockReads = false
  let blockWrites = false
  const expand = (dir: string) =>
    options.homeDir !== undefined && (dir === "~" || dir.startsWith("~/"))
      ? PosixPath.resolve(options.homeDir, dir.slice(2))
      : PosixPath.resolve(options.cwd, dir)
  for (const source of sources) {
    const { permissions } = source.settings
    const entry = (rule: string): RuleEntry => ({ rule, source: source.name, root: source.root })
    allow.push(...(permissions?.allow ?? []).map(entry))
    ask.push(...(permissions?.ask ?? []).map(entry))
    deny.push(...(permissions?.deny ?? []).map(entry))
    for (const dir of permissions?.additionalDirectories ?? []) {
      const resolved = expand(dir)
      if (!directories.includes(resolved)) directories.push(resolved)
    }
    if (permissions?.defaultMode !== undefined) mode = permissions.defaultMode
    denyInsteadOfPrompting ||= permissions?.denyInsteadOfPrompting === true
    blockReads ||= permissions?.blockReadsOutsideWorkingDirectories === true
    blockWrites ||= permissions?.blockWritesOutsideWorkingDirectories === true
    for (const [event, groups] of Object.entries(source.settings.hooks ?? {})) {
      for (const group of groups) {
        for (const hook of group.hooks) {
          if (hook.type !== "command" || hook.command === undefined) continue
          hooks.push({
            event,
            matcher: group.matcher,
            command: hook.command,
            ...(hook.if !== undefined ? { if: hook.if } : {}),
            timeout: hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS,
            ...(hook.async === true ? { async: true } : {}),
            source: source.name
          })
        }
      }
    }
    env = { ...env, ...source.settings.env }
    toolResultThresholds = { ...toolResultThresholds, ...source.settings.toolResultThresholds }
    merged = { ...merged, ...source.settings }
  }
  return {
    permissionContext: {
      mode: options.mode ?? mode,
      allow,
      ask,
      deny,
      additionalDirectories: directories,
      ...(options.homeDir !== undefined ? { homeDir: options.homeDir } : {}),
      ...(denyInsteadOfPrompting ? { denyInsteadOfPrompting } : {}),
      ...(blockReads ? { blockReadsOutsideWorkingDirectories: true } : {}),
      ...(blockWrites ? { blockWritesOutsideWorkingDirectories: true } : {})
    },
    hooks,
    env,
    toolResultThresholds,
    merged,
    sources: sources.map((source) => source.name)
  }
}

/**
 * Adds allow rules to a settings file's JSON without losing anything else in it: other keys, other
 * permission lists and rules already present are kept; duplicates are not added twice.
 */
export const withAllowRules = (json: unknown, rules: ReadonlyArray<string>): Record<string, unknown> => {
  const base: Record<string, unknown> = typeof json === "object" && json !== null && !Array.isArray(json)
    ? { ...json }
    : {}
  const permissions: Record<string, unknown> =
    typeof base.permissions === "object" && base.permissions !== null && !Array.isArray(base.permissions)
      ? { ...base.permissions }
      : {}
  const existing = Array.isArray(permissions.allow) ? permissions.allow : []
  const allow: Array<unknown> = [...existing]
  for (const rule of rules) if (!allow.includes(rule)) allow.push(rule)
  permissions.allow = allow
  base.permissions = permissions
  return base
}
