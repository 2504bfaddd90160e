/**
 * Grep: ripgrep with Claude Code's parameters and result formats. rg's output is streamed; in content
 * and count modes rg is killed as soon as `offset + head_limit` lines arrived, so a huge result is never
 * read to the end. File lists are newest first, which needs every matching file, so that mode reads all.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Tool, ToolErrors } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Effect, Schema } from "effect"
import type { Dated } from "../internal/fileList.js"
import { dated, displayPath, sortNewestFirst } from "../internal/fileList.js"
import { realPath, resolvePath } from "../internal/paths.js"
import type { IsDenied } from "../internal/readDenyRules.js"
import { readDenyFilter } from "../internal/readDenyRules.js"
import * as Ripgrep from "../internal/ripgrep.js"
import * as Prompt from "./prompt.js"

const d = Prompt.Descriptions

export const GrepInput = Schema.Struct({
  pattern: Schema.String.annotations({ description: d.pattern }),
  path: Schema.optional(Schema.String.annotations({ description: d.path })),
  glob: Schema.optional(Schema.String.annotations({ description: d.glob })),
  output_mode: Schema.optional(
    Schema.Literal("content", "files_with_matches", "count").annotations({ description: d.output_mode })
  ),
  "-B": Schema.optional(Schema.Number.annotations({ description: d.before })),
  "-A": Schema.optional(Schema.Number.annotations({ description: d.after })),
  "-C": Schema.optional(Schema.Number.annotations({ description: d.contextAlias })),
  context: Schema.optional(Schema.Number.annotations({ description: d.context })),
  "-n": Schema.optional(Schema.Boolean.annotations({ description: d.lineNumbers })),
  "-i": Schema.optional(Schema.Boolean.annotations({ description: d.caseInsensitive })),
  type: Schema.optional(Schema.String.annotations({ description: d.type })),
  head_limit: Schema.optional(Schema.Number.annotations({ description: d.head_limit })),
  offset: Schema.optional(Schema.Number.annotations({ description: d.offset })),
  multiline: Schema.optional(Schema.Boolean.annotations({ description: d.multiline }))
})
export type GrepInput = typeof GrepInput.Type

export type GrepOutput =
  | {
    readonly mode: "files_with_matches"
    readonly filenames: ReadonlyArray<string>
    readonly appliedLimit: number | undefined
    readonly appliedOffset: number | undefined
  }
  | {
    readonly mode: "content"
    readonly content: string
    readonly numLines: number
    readonly appliedLimit: number | undefined
    readonly appliedOffset: number | undefined
  }
  | {
    readonly mode: "count"
    readonly content: string
    readonly numMatches: number
    readonly numFiles: number
    readonly appliedLimit: number | undefined
    readonly appliedOffset: number | undefined
  }

export const GrepProgress = Schema.Struct({ filesWithMatches: Schema.Number })

/** The searched path, resolved against the cwd (`~` expanded). */
const searchPath = (input: GrepInput, context: ToolUseContext.ToolUseContext): string =>
  resolvePath(context.cwd, input.path ?? ".")

/**
 * `glob` as rg globs: split on whitespace, then on commas except inside braces (`*.{ts,tsx}` stays
 * whole), as Claude Code does.
 */
export const splitGlobs = (glob: string | undefined): Array<string> =>
  glob === undefined ? [] : glob.split(/\s+/).filter((part) => part !== "").flatMap((part) =>
    part.includes("{") && part.includes("}") ? [part] : part.split(",").filter((g) => g !== "")
  )

/**
 * The rg arguments for a call. `target` is the path argument (relative to the cwd when inside it, so rg
 * prints the paths as the model will read them), or undefined to search the cwd itself. `nullAfterPath`
 * makes content lines `path\0rest`, so their paths can be checked against deny rules unambiguously.
 */
export const buildArgs = (input: GrepInput, target: string | undefined, nullAfterPath = false): Array<string> => {
  const mode = input.output_mode ?? "files_with_matches"
  const args = ["--no-config", ...Ripgrep.commonArgs, "--max-columns", String(Prompt.MAX_COLUMNS)]
  if (nullAfterPath && mode === "content") args.push("--null")
  if (input.multiline === true) args.push("-U", "--multiline-dotall")
  if (input["-i"] === true) args.push("-i")
  if (mode === "files_with_matches") args.push("-l")
  else if (mode === "count") args.push("-c", "--with-filename")
  else {
    args.push("--with-filename")
    // `--null` replaces the separator after the path, the only mark of a match (":") or context ("-") line when
    // numbers are off: with it, numbers are always asked for (`N:` / `N-`), and `restore` drops them if unwanted.
    if ((input["-n"] ?? true) || nullAfterPath) args.push("-n")
    const around = input.context ?? input["-C"]
    if (around !== undefined) args.push("-C", String(around))
    else {
      if (input["-B"] !== undefined) args.push("-B", String(input["-B"]))
      if (input["-A"] !== undefined) args.push("-A", String(input["-A"]))
    }
  }
  if (input.type !== undefined && input.type !== "") args.push("--type", input.type)
  for (const glob of splitGlobs(input.glob)) args.push("--glob", glob)
  args.push("-e", input.pattern)
  if (target !== undefined) args.push("--", target)
  return args
}

/**
 * `| tail -n +offset | head -limit`; the limit is reported only when it cut something. When rg was stopped
 * at the memory bound (`capped`), what is shown is reported as the limit, so the model knows there is more
 * and can page on with `offset`.
 */
const applyHeadLimit = <A>(items: ReadonlyArray<A>, limit: number, offset: number, capped: boolean) => {
  const shown = limit === 0 ? items.slice(offset) : items.slice(offset, offset + limit)
  const cut = limit !== 0 && items.length - offset > limit
  return { items: shown, appliedLimit: cut ? limit : capped ? shown.length : undefined }
}

/** Counts each file once as its lines stream by, for progress (rg prints a file's lines together). */
const fileCounter = (mode: "content" | "files_with_matches" | "count") => {
  if (mode !== "content") return undefined
  let last = ""
  return (line: string): boolean => {
    const match = /^(.+?)(?:\0|[:-]\d+[:-])/.exec(line)
    if (match === null || match[1] === last) return false
    last = match[1]
    return true
  }
}

/**
 * Keeps the lines of files the user may read, for a session with Read deny rules: `accept` decides per
 * line, `restore` turns a kept content line (`path\0rest`) back into rg's usual `path:rest`/`path-rest`.
 */
const denyFilter = (
  mode: "content" | "files_with_matches" | "count",
  cwd: string,
  isDenied: IsDenied,
  lineNumbers: boolean
) => {
  const pathOf = (line: string): string | undefined => {
    if (mode === "files_with_matches") return line
    if (mode === "count") return line.slice(0, line.lastIndexOf(":"))
    const nul = line.indexOf("\0")
    return nul === -1 ? undefined : line.slice(0, nul)
  }
  return {
    accept: (line: string): boolean => {
      const file = pathOf(line)
      return file === undefined || !isDenied(path.resolve(cwd, file))
    },
    restore: (line: string): string => {
      const nul = line.indexOf("\0")
      if (nul === -1) return line
      // rg numbered every line (see buildArgs): context lines `N-text`, matches `N:text`.
      const numbered = /^(\d+)([:-])/.exec(line.slice(nul + 1))
      if (numbered === null) return line
      const text = line.slice(nul + 1 + numbered[0].length)
      const separator = numbered[2]
      return lineNumbers
        ? `${line.slice(0, nul)}${separator}${numbered[1]}${separator}${text}`
        : `${line.slice(0, nul)}${separator}${text}`
    }
  }
}

/** Drops the `--` context-group separators left first, last or doubled once denied lines are gone. */
const withoutOrphanSeparators = (lines: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (const line of lines) {
    if (line === "--" && (out.length === 0 || out[out.length - 1] === "--")) continue
    out.push(line)
  }
  if (out[out.length - 1] === "--") out.pop()
  return out
}

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

const isNonNegativeInteger = (n: number | undefined) => n === undefined || (Number.isInteger(n) && n >= 0)

const grep = Effect.fnUntraced(function*(input: GrepInput, context: ToolUseContext.ToolUseContext) {
  const mode = input.output_mode ?? "files_with_matches"
  const absolute = searchPath(input, context)
  const shown = displayPath(context.cwd, absolute)
  const target = absolute === context.cwd ? undefined : shown
  const limit = input.head_limit ?? Prompt.DEFAULT_HEAD_LIMIT
  const offset = input.offset ?? 0
  const countScanned = fileCounter(mode)
  const isDenied = readDenyFilter(context)
  const denied = isDenied === undefined ? undefined : denyFilter(mode, context.cwd, isDenied, input["-n"] ?? true)
  // File lists are dated as rg finds them, so the stats overlap rg's search instead of following it.
  const found: Array<Dated> = []
  const accept = mode === "files_with_matches"
    ? (line: string) => {
      if (denied !== undefined && !denied.accept(line)) return false
      found.push(dated(path.resolve(context.cwd, line)))
      return true
    }
    : denied?.accept
  const result = yield* Ripgrep.run(buildArgs(input, target, denied !== undefined), {
    cwd: context.cwd,
    ...(accept !== undefined ? { accept } : {}),
    progressEvery: Ripgrep.PROGRESS_INTERVAL,
    progressKey: "filesWithMatches",
    // Without a line limit (head_limit 0, or a file list) rg could print gigabytes into memory: a 20 MB bound.
    maxChars: Prompt.MAX_COLLECTED_CHARS,
    // One more line than shown tells whether head_limit cut anything.
    ...(mode !== "files_with_matches" && limit > 0 ? { maxLines: offset + limit + 1 } : {}),
    ...(countScanned !== undefined ? { countScanned } : {})
  }).pipe(Effect.flatMap(Ripgrep.checkExit), Effect.scoped)
  const appliedOffset = offset > 0 ? offset : undefined

  if (mode === "content") {
    const lines = denied === undefined ? result.lines : withoutOrphanSeparators(result.lines.map(denied.restore))
    const { appliedLimit, items } = applyHeadLimit(lines, limit, offset, result.overChars)
    return { mode, content: items.join("\n"), numLines: items.length, appliedLimit, appliedOffset } satisfies
      GrepOutput
  }
  if (mode === "count") {
    const { appliedLimit, items } = applyHeadLimit(result.lines, limit, offset, result.overChars)
    let numMatches = 0
    let numFiles = 0
    for (const line of items) {
      const count = Number.parseInt(line.slice(line.lastIndexOf(":") + 1), 10)
      if (Number.isNaN(count)) continue
      numMatches += count
      numFiles++
    }
    return { mode, content: items.join("\n"), numMatches, numFiles, appliedLimit, appliedOffset } satisfies
      GrepOutput
  }
  const sorted = sortNewestFirst(found)
  const { appliedLimit, items } = applyHeadLimit(sorted, limit, offset, result.overChars)
  return {
    mode,
    filenames: items.map((file) => displayPath(context.cwd, file)),
    appliedLimit,
    appliedOffset
  } satisfies GrepOutput
})

const render = (output: GrepOutput): string => {
  const pagination = Prompt.paginationInfo(output.appliedLimit, output.appliedOffset)
  switch (output.mode) {
    case "files_with_matches":
      return Prompt.filesFound(output.filenames, pagination)
    case "content":
      return Prompt.contentFound(output.content, pagination)
    case "count":
      return Prompt.countFound(output.content, output.numMatches, output.numFiles, pagination)
  }
}

export const GrepTool = Tool.make({
  name: "Grep",
  description: Prompt.DESCRIPTION,
  prompt: Prompt.PROMPT,
  input: GrepInput,
  progress: GrepProgress,
  source: "builtin",
  searchHint: "search file contents regex ripgrep",
  maxResultSizeChars: 20_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  getPath: (input, context) => realPath(searchPath(input, context)),
  toClassifierInput: (input) => (input.path === undefined ? input.pattern : `${input.pattern} in ${input.path}`),
  validateInput: (input, context) => {
    // rg cannot take a NUL in an argument: Node would refuse to start it with a message about spawn.
    for (const key of ["pattern", "path", "glob", "type"] as const) {
      if (input[key]?.includes("\0") === true) return fail(`${key} must not contain a NUL character.`)
    }
    for (const key of ["-A", "-B", "-C", "context", "head_limit", "offset"] as const) {
      if (!isNonNegativeInteger(input[key])) {
        return fail(`${key} must be a whole number, 0 or more; got ${input[key]}.`)
      }
    }
    if (input.path !== undefined && !fs.existsSync(searchPath(input, context))) {
      return fail(
        `Path does not exist: ${input.path}. Note: your current working directory is ${context.cwd}.`
      )
    }
    return Effect.void
  },
  call: grep,
  mapToolResult: render
})
