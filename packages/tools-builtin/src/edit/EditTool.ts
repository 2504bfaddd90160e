/**
 * Edit: replaces `old_string` with `new_string` in a file the session has read (or creates a file when
 * `old_string` is empty and nothing is there). The file keeps its encoding, BOM and line endings; the
 * write is atomic; the read-file state is updated so edits can follow each other without a re-read.
 */
import { Effect, Schema } from "effect"
import { Tool, ToolErrors } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { decode, encode, firstUnencodable } from "../internal/encoding.js"
import type { TextEncoding } from "../internal/encoding.js"
import type { TargetPath } from "../internal/freshness.js"
import {
  commitWrite,
  ensureFresh,
  ensureParentDirectory,
  fileDoesNotExist,
  precheckFresh,
  readBytes,
  statIfExists,
  targetPath
} from "../internal/freshness.js"
import type { MatchKind } from "./matching.js"
import { adaptReplacement, applyReplacement, findMatches } from "./matching.js"
import { DESCRIPTION, PROMPT } from "./prompt.js"
import { snippetAround } from "./snippet.js"

export const EditInput = Schema.Struct({
  file_path: Schema.String.annotations({
    description:
      "The absolute path to the file to modify (a relative path resolves against the working directory)"
  }),
  old_string: Schema.String.annotations({ description: "The text to replace" }),
  new_string: Schema.String.annotations({
    description: "The text to replace it with (must be different from old_string)"
  }),
  replace_all: Schema.optional(Schema.Boolean).annotations({
    description: "Replace all occurrences of old_string (default false)"
  })
})
export type EditInput = typeof EditInput.Type

export interface EditOutput {
  readonly filePath: string
  /** True when the edit created the file (empty `old_string`, no file there). */
  readonly created: boolean
  readonly replacements: number
  readonly matchKind: MatchKind
  readonly snippet: string
}

export const NO_CHANGES_MESSAGE = "No changes to make: old_string and new_string are exactly the same."
export const FILE_EXISTS_MESSAGE = "Cannot create new file - file already exists."
export const UNCHANGED_MESSAGE = "Original and edited file match exactly. Failed to apply edit."
export const NOTEBOOK_MESSAGE = "File is a Jupyter Notebook. Use the NotebookEdit tool to edit this file."

/** Past this, the file's text would come close to what a JS string can hold. */
const MAX_EDIT_FILE_BYTES = 256 * 1024 * 1024

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

export const notFoundMessage = (oldString: string): string =>
  `String to replace not found in file.\nString: ${oldString}`

export const tooManyMatchesMessage = (count: number, oldString: string): string =>
  `Found ${count} matches of the string to replace, but replace_all is false. To replace all occurrences, set ` +
  `replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the ` +
  `instance.\nString: ${oldString}`

const unencodableMessage = (file: string, char: string) =>
  `${file} is not UTF-8 text; Edit keeps its bytes as Latin-1, which cannot hold ${JSON.stringify(char)} from ` +
  `new_string. Use only characters Latin-1 can encode, or convert the file to UTF-8 first.`

const checkPathKind = (context: ToolUseContext.ToolUseContext, input: EditInput) =>
  Effect.gen(function*() {
    const target = targetPath(context, input.file_path)
    if (input.old_string === input.new_string) return yield* fail(NO_CHANGES_MESSAGE)
    if (target.resolved.endsWith(".ipynb") || target.real.endsWith(".ipynb")) return yield* fail(NOTEBOOK_MESSAGE)
    const stats = yield* statIfExists(target.real)
    if (stats?.isDirectory()) {
      return yield* fail(`${target.resolved} is a directory, not a file. Give Edit the path of a file.`)
    }
    if (stats === undefined && input.old_string !== "") return yield* fail(fileDoesNotExist(context))
    if (stats !== undefined && stats.size > MAX_EDIT_FILE_BYTES) {
      return yield* fail(
        `File is too large to edit (${Math.round(stats.size / 1024 / 1024)} MB). Maximum editable file size is ` +
          `${MAX_EDIT_FILE_BYTES / 1024 / 1024} MB. Use a streaming tool (sed, a script) through Bash instead.`
      )
    }
    return { target, stats }
  })

/** Where `old_string` is, or the error the model reads when it is missing or ambiguous. */
const locate = (text: string, input: EditInput) => {
  const matches = findMatches(text, input.old_string)
  if (matches === undefined) return fail(notFoundMessage(input.old_string))
  if (matches.ranges.length > 1 && input.replace_all !== true) {
    return fail(tooManyMatchesMessage(matches.ranges.length, input.old_string))
  }
  return Effect.succeed(matches)
}

const writeText = (
  context: ToolUseContext.ToolUseContext,
  target: TargetPath,
  text: string,
  encoding: TextEncoding,
  bom: boolean,
  create = false
) =>
  Effect.gen(function*() {
    const unencodable = firstUnencodable(text, encoding)
    if (unencodable !== undefined) return yield* fail(unencodableMessage(target.resolved, unencodable))
    const bytes = encode(text, encoding, bom)
    yield* commitWrite(context, target, bytes, { create })
  })

/** The output of an edit whose new text is the whole file (an empty `old_string`). */
const wholeFile = (input: EditInput, filePath: string, created: boolean): EditOutput => ({
  filePath,
  created,
  replacements: 1,
  matchKind: "exact",
  snippet: snippetAround(input.new_string, 0, input.new_string.length)
})

const edit = (input: EditInput, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const { stats, target } = yield* checkPathKind(context, input)

    if (stats === undefined) {
      yield* ensureParentDirectory(target.real)
      yield* writeText(context, target, input.new_string, "utf8", false, true)
      return wholeFile(input, target.resolved, true)
    }

    const bytes = yield* readBytes(target.real)
    const { bom, encoding, text } = decode(bytes)

    if (input.old_string === "") {
      // Filling an empty file is creating it; anything with content would be silently overwritten.
      if (text.trim() !== "") return yield* fail(FILE_EXISTS_MESSAGE)
      if (text !== "") yield* ensureFresh(context, target, bytes)
      yield* writeText(context, target, input.new_string, encoding, bom)
      return wholeFile(input, target.resolved, false)
    }

    yield* ensureFresh(context, target, bytes)
    const matches = yield* locate(text, input)

    const [firstStart, firstEnd] = matches.ranges[0]
    const replacement = adaptReplacement(text, matches.kind, text.slice(firstStart, firstEnd), input.new_string)
    const updated = applyReplacement(text, matches.ranges, replacement)
    // Possible after normalising: new_string differing from old_string only in quotes the file already has.
    if (updated.text === text) return yield* fail(UNCHANGED_MESSAGE)
    yield* writeText(context, target, updated.text, encoding, bom)
    return {
      filePath: target.resolved,
      created: false,
      replacements: matches.ranges.length,
      matchKind: matches.kind,
      snippet: snippetAround(updated.text, updated.firstStart, updated.firstEnd)
    } satisfies EditOutput
  })

const NOTES: Record<MatchKind, string | undefined> = {
  exact: undefined,
  lineEndings:
    "Note: old_string matched only after normalising line endings (CRLF vs LF); the file keeps its own line endings.",
  quotes:
    "Note: old_string matched only after normalising curly/straight quotes (and line endings); new_string was " +
    "written in the file's quote style."
}

export const formatEditResult = (output: EditOutput): string => {
  if (output.created) return `File created successfully at: ${output.filePath}`
  const head = output.replacements > 1
    ? `The file ${output.filePath} has been updated successfully. All ${output.replacements} occurrences were replaced.`
    : `The file ${output.filePath} has been updated successfully.`
  const note = NOTES[output.matchKind]
  const parts = [head, ...(note === undefined ? [] : [note])]
  if (output.snippet !== "") {
    parts.push(`Here's the result of running \`cat -n\` on a snippet of the edited file:\n${output.snippet}`)
  }
  return parts.join("\n")
}

export const EditTool = Tool.make({
  name: "Edit",
  description: DESCRIPTION,
  prompt: PROMPT,
  input: EditInput,
  source: "builtin",
  searchHint: "modify file contents in place",
  maxResultSizeChars: 100_000,
  userFacingName: () => "Update",
  toClassifierInput: (input) => `${input.file_path}: ${input.new_string}`,
  getPath: (input, context) => targetPath(context, input.file_path).real,
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const { stats, target } = yield* checkPathKind(context, input)
      if (stats === undefined) return
      if (input.old_string === "") {
        // Creating over content is refused outright; filling an empty file needs no read: nothing to lose.
        const { text } = decode(yield* readBytes(target.real))
        if (text.trim() !== "") return yield* fail(FILE_EXISTS_MESSAGE)
        if (text === "") return
      }
      yield* precheckFresh(context, target, stats)
      // As Claude Code: an edit that cannot apply fails here, before a person is asked to approve it (and
      // where nobody can answer, the model learns why instead of reading a denial).
      if (input.old_string !== "") yield* locate(decode(yield* readBytes(target.real)).text, input)
    }),
  call: (input, context) => edit(input, context).pipe(Effect.withSpan("Edit.call")),
  mapToolResult: formatEditResult
})
