/**
 * Glob: files whose path matches a glob pattern, newest first, at most 100. `rg --files` walks the
 * tree (honouring nested `.gitignore` files, showing hidden files but not VCS internals) and the
 * pattern is matched here with picomatch: given to rg as `--glob` it would re-include ignored files.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Tool, ToolErrors } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Effect, Either, Schema } from "effect"
import picomatch from "picomatch"
import type { Dated } from "../internal/fileList.js"
import { dated, displayPath, sortNewestFirst } from "../internal/fileList.js"
import { expandHome, realPath, resolvePath } from "../internal/paths.js"
import { readDenyFilter } from "../internal/readDenyRules.js"
import * as Ripgrep from "../internal/ripgrep.js"
import * as Prompt from "./prompt.js"

export const GlobInput = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The glob pattern to match files against" }),
  path: Schema.optional(Schema.String.annotations({ description: Prompt.PATH_DESCRIPTION }))
})
export type GlobInput = typeof GlobInput.Type

export interface GlobOutput {
  /** As shown: relative to the cwd when inside it. */
  readonly filenames: ReadonlyArray<string>
  readonly numFiles: number
  readonly truncated: boolean
}

export const GlobProgress = Schema.Struct({ filesScanned: Schema.Number })

/**
 * Where the walk starts and what is matched below it. A pattern's literal leading directories
 * (`src/` in `src/**\/*.ts`, or an absolute `/repo/lib/*.js`) move the walk's root there, so rg walks
 * only what can match and permission rules see the directory really searched.
 */
export interface GlobPlan {
  /** The `path` parameter (or the cwd), resolved. */
  readonly searchDir: string
  /** The directory rg walks. */
  readonly root: string
  readonly matches: (relative: string) => boolean
  /** Why picomatch could not compile the pattern (then nothing matches); validateInput reports it. */
  readonly invalid?: string
  /** The file a pattern without glob syntax names: looked up, not walked for. */
  readonly file?: string
}

/** picomatch throws on what it cannot compile (a pattern over 65,536 characters): a Left with its reason. */
const compile = (glob: string, options: picomatch.PicomatchOptions): Either.Either<picomatch.Matcher, string> => {
  try {
    return Either.right(picomatch(glob, options))
  } catch (error) {
    return Either.left(error instanceof Error ? error.message : String(error))
  }
}

export const plan = (input: GlobInput, context: ToolUseContext.ToolUseContext): GlobPlan => {
  const searchDir = input.path === undefined ? context.cwd : resolvePath(context.cwd, input.path)
  const pattern = expandHome(input.pattern)
  const scanned = picomatch.scan(pattern)
  if (!scanned.isGlob) {
    // A plain path: the one file it names.
    const file = path.resolve(searchDir, pattern)
    const name = path.basename(file)
    return { searchDir, root: path.dirname(file), matches: (relative) => relative === name, file }
  }
  const root = scanned.base === "" ? searchDir : path.resolve(searchDir, scanned.base)
  const glob = scanned.base === "" ? pattern : scanned.glob
  // Like rg's and .gitignore's globs, a pattern without a slash matches a file's name at any depth.
  // Compile failures (an empty or huge pattern) match nothing, so getPath stays total; validateInput reports them.
  const compiled = compile(glob, { dot: true, basename: !pattern.includes("/") })
  if (Either.isLeft(compiled)) return { searchDir, root, matches: () => false, invalid: compiled.left }
  const isMatch = compiled.right
  return { searchDir, root, matches: (relative) => isMatch(relative) }
}

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

const checkDirectory = (dir: string, context: ToolUseContext.ToolUseContext) => {
  const stat = fs.statSync(dir, { throwIfNoEntry: false })
  if (stat === undefined) return fail(Prompt.directoryNotFound(dir, context.cwd))
  if (!stat.isDirectory()) return fail(Prompt.notADirectory(dir))
  return Effect.void
}

const glob = Effect.fnUntraced(function*(input: GlobInput, context: ToolUseContext.ToolUseContext) {
  const { file, matches, root, searchDir } = plan(input, context)
  yield* checkDirectory(searchDir, context)
  const isDenied = readDenyFilter(context)
  if (file !== undefined) {
    // Looked up rather than walked for: the walk skips what .gitignore lists, and "No files found" for an
    // existing .env or dist/app.js would be false. A link is no more followed than in the walk.
    const found = fs.lstatSync(file, { throwIfNoEntry: false })?.isFile() === true && isDenied?.(file) !== true
    return {
      filenames: found ? [displayPath(context.cwd, file)] : [],
      numFiles: found ? 1 : 0,
      truncated: false
    } satisfies GlobOutput
  }
  if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    return { filenames: [], numFiles: 0, truncated: false } satisfies GlobOutput
  }
  // Matched files are dated as rg lists them, so the stats overlap rg's walk instead of following it.
  const found: Array<Dated> = []
  yield* Ripgrep.run(["--files", ...Ripgrep.commonArgs], {
    cwd: root,
    accept: (relative) => {
      if (!matches(relative)) return false
      const file = path.join(root, relative)
      if (isDenied !== undefined && isDenied(file)) return false
      found.push(dated(file))
      return true
    },
    progressEvery: Ripgrep.PROGRESS_INTERVAL
  }).pipe(Effect.flatMap(Ripgrep.checkExit), Effect.scoped)
  const sorted = sortNewestFirst(found)
  const shown = sorted.slice(0, Prompt.MAX_RESULTS).map((file) => displayPath(context.cwd, file))
  return { filenames: shown, numFiles: shown.length, truncated: sorted.length > Prompt.MAX_RESULTS } satisfies
    GlobOutput
})

const render = (output: GlobOutput): string => {
  if (output.filenames.length === 0) return Prompt.NO_FILES
  return output.truncated ? [...output.filenames, Prompt.TRUNCATED].join("\n") : output.filenames.join("\n")
}

export const GlobTool = Tool.make({
  name: "Glob",
  description: Prompt.DESCRIPTION,
  prompt: Prompt.PROMPT,
  input: GlobInput,
  progress: GlobProgress,
  source: "builtin",
  searchHint: "find files by name glob pattern",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  // Permission rules see the directory really walked, symlinks resolved.
  getPath: (input, context) => realPath(plan(input, context).root),
  toClassifierInput: (input) => (input.path === undefined ? input.pattern : `${input.pattern} in ${input.path}`),
  // Checked before the permission stage calls getPath, which compiles the pattern.
  validateInput: (input, context) => {
    if (input.pattern.trim() === "") return fail("pattern must not be empty; use \"**/*\" to list every file.")
    // Node refuses a NUL in a path with a message about its own argument; say which parameter it was.
    if (input.pattern.includes("\0")) return fail("pattern must not contain a NUL character.")
    if (input.path?.includes("\0") === true) return fail("path must not contain a NUL character.")
    const { invalid } = plan(input, context)
    return invalid === undefined ? Effect.void : fail(`Invalid glob pattern: ${invalid}`)
  },
  call: glob,
  mapToolResult: render
})
