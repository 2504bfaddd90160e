/**
 * Read: a file's lines as `N\tcontent` (1-based, 2,000 lines by default, long lines cut), with the
 * warnings and refusals Claude Code gives (missing file, directory, binary, too large, offset past the
 * end, empty file). Every successful read is recorded in the session's read-file state, which Write and
 * Edit check before they touch the file.
 */
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Tool, ToolErrors } from "@toolwright/core"
import type { Message, ToolUseContext } from "@toolwright/core"
import { Effect, Either, Schema } from "effect"
import { recordRead, recordReadHash } from "../internal/fileState.js"
import { realPath, resolvePath } from "../internal/paths.js"
import { readDenyFilter } from "../internal/readDenyRules.js"
import { BINARY_EXTENSIONS, imageMediaType } from "./fileKinds.js"
import type { ImageResult } from "./image.js"
import { imageBlock, readImage } from "./image.js"
import { readLineRange } from "./lineStream.js"
import * as Notebook from "./notebook.js"
import type { PdfText } from "./pdf.js"
import { MAX_PAGES_PER_READ, parsePages, readPdf, renderPdf } from "./pdf.js"
import * as Prompt from "./prompt.js"
import { decode } from "../internal/encoding.js"
import { cutLine, looksBinary, splitLines } from "./textDecoding.js"

export const ReadInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path to the file to read" }),
  offset: Schema.optional(Schema.Number.annotations({
    description: "The line number to start reading from. Only provide if the file is too large to read at once"
  })),
  limit: Schema.optional(Schema.Number.annotations({
    description: "The number of lines to read. Only provide if the file is too large to read at once."
  })),
  pages: Schema.optional(Schema.String.annotations({
    description:
      `Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files. Maximum ${MAX_PAGES_PER_READ} pages per request.`
  }))
})
export type ReadInput = typeof ReadInput.Type

/** What a read produced; `mapToolResult` renders it for the model. */
export type ReadOutput =
  | {
    readonly type: "text"
    readonly filePath: string
    /** The numbered lines, as the model reads them. */
    readonly content: string
    readonly startLine: number
    readonly numLines: number
    readonly totalLines: number
  }
  | { readonly type: "empty"; readonly filePath: string }
  | ({ readonly type: "image"; readonly filePath: string } & ImageResult)
  | { readonly type: "notebook"; readonly filePath: string; readonly blocks: Array<Message.ToolResultContentBlock> }
  | ({ readonly type: "pdf"; readonly filePath: string } & PdfText)
  | { readonly type: "pastEnd"; readonly filePath: string; readonly offset: number; readonly totalLines: number }

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

/** Ranged reads of files larger than this stream them instead of loading them whole. */
export const STREAM_ABOVE_BYTES = 16 * 1024 * 1024

/** The path Read works on and permission rules see: `~` expanded, resolved against cwd, symlinks followed. */
export const readPath = (filePath: string, context: ToolUseContext.ToolUseContext): string =>
  realPath(resolvePath(context.cwd, filePath))

/**
 * Claude Code's hint for a missing file: a sibling with the same name and another extension. Never one the
 * user denied reading: the hint would tell the model that `.env` exists when it asked for `.env.local`.
 */
const similarFile = (missing: string, context: ToolUseContext.ToolUseContext): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    const dir = path.dirname(missing)
    const stem = path.basename(missing, path.extname(missing))
    const isDenied = readDenyFilter(context)
    try {
      const entries = await fs.readdir(dir)
      const match = entries.find((name) =>
        name !== path.basename(missing) && path.basename(name, path.extname(name)) === stem &&
        (isDenied === undefined || !isDenied(path.join(dir, name)))
      )
      return match === undefined ? undefined : path.join(dir, match)
    } catch {
      return undefined
    }
  })

/**
 * Files up to this size are stat'ed and read synchronously: a local stat or a small read takes
 * microseconds, less than the thread-pool round trips of the asynchronous calls (a Read's whole cost
 * through `mcp serve` is under a millisecond). Bigger files are read asynchronously.
 */
export const SYNC_READ_BYTES = 256 * 1024

const statFile = (file: string, context: ToolUseContext.ToolUseContext) =>
  Effect.try({ try: () => fsSync.statSync(file), catch: (error) => error }).pipe(
    Effect.catchAll((error) => {
      const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined
      if (code === "ENOENT" || code === "ENOTDIR") {
        return Effect.flatMap(
          similarFile(file, context),
          (suggestion) => fail(Prompt.fileNotFound(context.cwd, suggestion))
        )
      }
      return fail(`Could not read ${file}: ${error instanceof Error ? error.message : String(error)}`)
    })
  )

const readError = (file: string, error: unknown) =>
  new ToolErrors.ToolError({
    message: `Could not read ${file}: ${error instanceof Error ? error.message : String(error)}`
  })

/** The file's bytes; `size` (from the stat) decides between a synchronous and an asynchronous read. */
const readBytes = (file: string, size: number) =>
  size <= SYNC_READ_BYTES
    ? Effect.try({ try: () => fsSync.readFileSync(file), catch: (error) => readError(file, error) })
    : Effect.tryPromise({ try: () => fs.readFile(file), catch: (error) => readError(file, error) })

const numberLines = (lines: ReadonlyArray<string>, firstLine: number): string => {
  let out = ""
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (i > 0) out += "\n"
    out += `${firstLine + i}\t${cutLine(line, Prompt.MAX_LINE_CHARS)}`
  }
  return out
}

const readNotebook = Effect.fnUntraced(function*(
  file: string,
  size: number,
  mtimeMs: number,
  context: ToolUseContext.ToolUseContext
) {
  const bytes = yield* readBytes(file, size)
  const parsed = Notebook.parse(decode(bytes).text)
  if (Either.isLeft(parsed)) return yield* fail(`Could not read the notebook ${file}: ${parsed.left}.`)
  const blocks = Notebook.render(parsed.right, file)
  const textChars = blocks.reduce((sum, block) => sum + (block.type === "text" ? block.text.length : 0), 0)
  if (textChars > Prompt.MAX_FILE_BYTES) return yield* fail(Prompt.notebookTooLarge(file, textChars))
  recordRead(context, file, bytes, mtimeMs)
  return { type: "notebook", filePath: file, blocks } satisfies ReadOutput
})

const read = Effect.fnUntraced(function*(
  file: string,
  input: ReadInput,
  context: ToolUseContext.ToolUseContext
) {
  const stat = yield* statFile(file, context)
  if (stat.isDirectory()) return yield* fail(Prompt.isDirectory(file))
  // A device or FIFO would block or never end (/dev/zero, /dev/stdin): only regular files are read.
  if (!stat.isFile()) return yield* fail(Prompt.notRegularFile(file))
  const extension = path.extname(file).toLowerCase()
  const media = imageMediaType(extension) !== undefined || extension === ".ipynb" || extension === ".pdf"
  if (media && stat.size > Prompt.MAX_MEDIA_BYTES) return yield* fail(Prompt.mediaTooLarge(file, stat.size))
  if (imageMediaType(extension) !== undefined) {
    const bytes = yield* readBytes(file, stat.size)
    const image = yield* readImage(file, bytes)
    recordRead(context, file, bytes, stat.mtimeMs)
    return { type: "image", filePath: file, ...image } satisfies ReadOutput
  }
  if (extension === ".ipynb") return yield* readNotebook(file, stat.size, stat.mtimeMs, context)
  if (extension === ".pdf") {
    const range = input.pages === undefined ? undefined : parsePages(input.pages)
    if (typeof range === "string") return yield* fail(range)
    const bytes = yield* readBytes(file, stat.size)
    const pdf = yield* readPdf(file, bytes, range)
    const tokens = Math.ceil(renderPdf(file, pdf).length / 4)
    if (tokens > Prompt.MAX_OUTPUT_TOKENS) return yield* fail(Prompt.pdfTooManyTokens(tokens))
    recordRead(context, file, bytes, stat.mtimeMs)
    return { type: "pdf", filePath: file, ...pdf } satisfies ReadOutput
  }
  if (BINARY_EXTENSIONS.has(extension)) return yield* fail(Prompt.binaryFile(extension))
  const ranged = input.offset !== undefined || input.limit !== undefined
  if (!ranged && stat.size > Prompt.MAX_FILE_BYTES) return yield* fail(Prompt.fileTooLarge(stat.size))

  const range = {
    ...(input.offset !== undefined ? { offset: input.offset } : {}),
    ...(input.limit !== undefined ? { limit: input.limit } : {})
  }
  // Claude Code treats offset 0 as the first line.
  const startLine = Math.max(1, input.offset ?? 1)
  const limit = input.limit ?? Prompt.DEFAULT_LINE_LIMIT

  if (stat.size > STREAM_ABOVE_BYTES) {
    // Lines are kept only up to the token limit: a huge limit on a huge file is refused, not held in memory.
    const streamed = yield* readLineRange(file, startLine, limit, Prompt.MAX_LINE_CHARS, Prompt.MAX_OUTPUT_TOKENS * 4)
    if (streamed.binary) return yield* fail(Prompt.binaryFile(extension))
    const tokens = Math.ceil(streamed.shownChars / 4)
    if (tokens > Prompt.MAX_OUTPUT_TOKENS) return yield* fail(Prompt.tooManyTokens(tokens))
    recordReadHash(context, file, streamed.contentHash, stat.mtimeMs, range)
    return yield* present(file, input, startLine, streamed.lines, streamed.totalLines)
  }
  const bytes = yield* readBytes(file, stat.size)
  // Decoded as Edit decodes (BOM, UTF-16, Latin-1 for bytes that are not UTF-8), so the text a model
  // copies from here into old_string is the text Edit will search.
  const decoded = decode(bytes)
  if (looksBinary(bytes, decoded.encoding)) return yield* fail(Prompt.binaryFile(extension))
  recordRead(context, file, bytes, stat.mtimeMs, range)
  const lines = splitLines(decoded.text)
  return yield* present(file, input, startLine, lines.slice(startLine - 1, startLine - 1 + limit), lines.length)
})

/** The lines shown, or the warning for an empty file or an offset past the end; refused over the token limit. */
const present = (
  file: string,
  input: ReadInput,
  startLine: number,
  shown: ReadonlyArray<string>,
  totalLines: number
): Effect.Effect<ReadOutput, ToolErrors.ToolError> => {
  if (totalLines === 0) return Effect.succeed({ type: "empty", filePath: file })
  if (startLine > totalLines) {
    return Effect.succeed({ type: "pastEnd", filePath: file, offset: input.offset ?? startLine, totalLines })
  }
  const content = numberLines(shown, startLine)
  const tokens = Math.ceil(content.length / 4)
  if (tokens > Prompt.MAX_OUTPUT_TOKENS) return fail(Prompt.tooManyTokens(tokens))
  return Effect.succeed({ type: "text", filePath: file, content, startLine, numLines: shown.length, totalLines })
}

const renderOutput = (output: ReadOutput): Message.ToolResultContent => {
  switch (output.type) {
    case "text":
      return output.content
    case "empty":
      return Prompt.emptyFile
    case "pastEnd":
      return Prompt.offsetPastEnd(output.offset, output.totalLines)
    case "image":
      return [imageBlock(output)]
    case "notebook":
      return output.blocks
    case "pdf":
      return renderPdf(output.filePath, output)
  }
}

/** The lines without the numbers `numberLines` put before them (each line starts with its `N\t`). */
const withoutNumbers = (numbered: string): string =>
  numbered.split("\n").map((line) => line.slice(line.indexOf("\t") + 1)).join("\n")

/** Claude Code's `tool_response` for a Read, which PostToolUse hooks read (`.tool_response.file.content`). */
const hookResponse = (output: ReadOutput): unknown => {
  const text = (content: string, startLine: number, numLines: number, totalLines: number) => ({
    type: "text",
    file: { filePath: output.filePath, content, numLines, startLine, totalLines }
  })
  switch (output.type) {
    case "text":
      return text(withoutNumbers(output.content), output.startLine, output.numLines, output.totalLines)
    case "empty":
      return text("", 1, 0, 0)
    case "pastEnd":
      return text("", output.offset, 0, output.totalLines)
    case "image":
      return {
        type: "image",
        file: {
          filePath: output.filePath,
          base64: output.base64,
          type: output.mediaType,
          originalSize: output.originalSize
        }
      }
    case "notebook":
      return { type: "notebook", file: { filePath: output.filePath, cells: output.blocks } }
    case "pdf":
      return {
        type: "pdf",
        file: { filePath: output.filePath, totalPages: output.totalPages, firstPage: output.first, pages: output.pages }
      }
  }
}

export const ReadTool = Tool.make({
  name: "Read",
  description: Prompt.DESCRIPTION,
  prompt: Prompt.PROMPT,
  input: ReadInput,
  source: "builtin",
  searchHint: "read file contents lines image pdf notebook",
  maxResultSizeChars: Infinity,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  userFacingName: () => "Read",
  getPath: (input, context) => readPath(input.file_path, context),
  toClassifierInput: (input) => input.file_path,
  validateInput: (input) => {
    if (input.offset !== undefined && (!Number.isInteger(input.offset) || input.offset < 0)) {
      return fail(`offset must be a line number (an integer, 1 or more); got ${input.offset}.`)
    }
    if (input.limit !== undefined && (!Number.isInteger(input.limit) || input.limit < 1)) {
      return fail(`limit must be a number of lines (an integer, 1 or more); got ${input.limit}.`)
    }
    if (input.pages !== undefined) {
      if (path.extname(input.file_path).toLowerCase() !== ".pdf") {
        return fail("pages applies only to PDF files; for text files use offset and limit.")
      }
      const range = parsePages(input.pages)
      if (typeof range === "string") return fail(range)
    }
    return Effect.void
  },
  call: (input, context) => read(readPath(input.file_path, context), input, context),
  mapToolResult: renderOutput,
  toHookResponse: hookResponse
})
