/**
 * Write: creates a file or replaces one the session has read, with exactly the given content (UTF-8, as
 * sent: Edit is the tool that preserves line endings and BOM). Missing parent directories are created;
 * the replacement is atomic and keeps the original's mode.
 */
import { Effect, Schema } from "effect"
import { Tool, ToolErrors } from "@toolwright/core"
import {
  commitWrite,
  ensureFresh,
  ensureParentDirectory,
  precheckFresh,
  readBytes,
  statIfExists,
  targetPath
} from "../internal/freshness.js"
import { DESCRIPTION, PROMPT } from "./prompt.js"

export const WriteInput = Schema.Struct({
  file_path: Schema.String.annotations({
    description: "The absolute path to the file to write (a relative path resolves against the working directory)"
  }),
  content: Schema.String.annotations({ description: "The content to write to the file" })
})

export interface WriteOutput {
  readonly type: "create" | "update"
  readonly filePath: string
}

const directoryError = (file: string) =>
  new ToolErrors.ToolError({ message: `${file} is a directory, not a file. Give Write the path of a file.` })

export const WriteTool = Tool.make({
  name: "Write",
  description: DESCRIPTION,
  prompt: PROMPT,
  input: WriteInput,
  source: "builtin",
  searchHint: "create or overwrite files",
  maxResultSizeChars: 100_000,
  userFacingName: () => "Write",
  toClassifierInput: (input) => `${input.file_path}: ${input.content}`,
  getPath: (input, context) => targetPath(context, input.file_path).real,
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const target = targetPath(context, input.file_path)
      const stats = yield* statIfExists(target.real)
      if (stats === undefined) return
      if (stats.isDirectory()) return yield* directoryError(target.resolved)
      yield* precheckFresh(context, target, stats)
    }),
  call: (input, context) =>
    Effect.gen(function*() {
      const target = targetPath(context, input.file_path)
      const stats = yield* statIfExists(target.real)
      if (stats?.isDirectory()) return yield* directoryError(target.resolved)
      if (stats !== undefined) yield* ensureFresh(context, target, yield* readBytes(target.real))
      else yield* ensureParentDirectory(target.real)

      const bytes = Buffer.from(input.content, "utf8")
      yield* commitWrite(context, target, bytes, { create: stats === undefined })
      return { type: stats === undefined ? "create" : "update", filePath: target.resolved } satisfies WriteOutput
    }).pipe(Effect.withSpan("Write.call")),
  mapToolResult: (output: WriteOutput) =>
    output.type === "create"
      ? `File created successfully at: ${output.filePath}`
      : `The file ${output.filePath} has been updated.`
})
