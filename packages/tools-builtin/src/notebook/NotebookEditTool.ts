/**
 * NotebookEdit: replaces, inserts or deletes one cell of a Jupyter notebook the session has read, with
 * Claude Code's parameters and texts. The notebook keeps its JSON layout and metadata; a file that is not
 * a valid notebook is refused and left untouched; the write is atomic.
 */
import { Effect, Either, Schema } from "effect"
import { Tool, ToolErrors } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { decode, encode } from "../internal/encoding.js"
import type { TargetPath } from "../internal/freshness.js"
import { commitWrite, ensureFresh, precheckFresh, readBytes, statIfExists, targetPath } from "../internal/freshness.js"
import type { CellType } from "./notebook.js"
import {
  detectLayout,
  findCell,
  hasCellIds,
  makeCell,
  newCellId,
  parseNotebook,
  serializeNotebook,
  setCellType,
  sourceValue
} from "./notebook.js"
import { DESCRIPTION, PROMPT } from "./prompt.js"

export const NotebookEditInput = Schema.Struct({
  notebook_path: Schema.String.annotations({
    description:
      "The absolute path to the Jupyter notebook file to edit (a relative path resolves against the working directory)"
  }),
  cell_id: Schema.optional(Schema.String).annotations({
    description:
      "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified."
  }),
  new_source: Schema.String.annotations({ description: "The new source for the cell" }),
  cell_type: Schema.optional(Schema.Literal("code", "markdown")).annotations({
    description:
      "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required."
  }),
  edit_mode: Schema.optional(Schema.Literal("replace", "insert", "delete")).annotations({
    description: "The type of edit to make (replace, insert, delete). Defaults to replace."
  })
})
export type NotebookEditInput = typeof NotebookEditInput.Type

export interface NotebookEditOutput {
  readonly editMode: "replace" | "insert" | "delete"
  readonly cellId: string
  readonly newSource: string
  readonly notebookPath: string
}

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

const NOT_A_NOTEBOOK = "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool."

/** Checks that need only the input and the path. */
const checkRequest = (input: NotebookEditInput, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const target = targetPath(context, input.notebook_path)
    if (!target.resolved.endsWith(".ipynb")) return yield* fail(NOT_A_NOTEBOOK)
    const mode = input.edit_mode ?? "replace"
    if (mode === "insert" && input.cell_type === undefined) {
      return yield* fail("Cell type is required when using edit_mode=insert.")
    }
    if (mode !== "insert" && input.cell_id === undefined) {
      return yield* fail("Cell ID must be specified when not inserting a new cell.")
    }
    const stats = yield* statIfExists(target.real)
    if (stats === undefined) return yield* fail("Notebook file does not exist.")
    if (stats.isDirectory()) return yield* fail(`${target.resolved} is a directory, not a notebook file.`)
    return { target, stats, mode }
  })

/**
 * Parses the notebook, checks the session's read of it, and locates the cell; fails with the text the
 * model needs before anything is written. A file that is not a notebook is reported as such first: no
 * read would make it editable.
 */
const plan = (
  input: NotebookEditInput,
  target: TargetPath,
  bytes: Uint8Array,
  checkFreshness: Effect.Effect<void, ToolErrors.ToolError>
) =>
  Effect.gen(function*() {
    const decoded = decode(bytes)
    const parsed = parseNotebook(decoded.text)
    if (Either.isLeft(parsed)) {
      return yield* fail(`${parsed.left} The notebook ${target.resolved} was left unchanged; fix or restore it first.`)
    }
    yield* checkFreshness
    const notebook = parsed.right
    let index: number | undefined
    if (input.cell_id !== undefined) {
      const found = findCell(notebook, input.cell_id)
      if (found._tag === "NoSuchId") return yield* fail(found.message)
      index = found.index
    }
    return { decoded, notebook, index }
  })

const editNotebook = (input: NotebookEditInput, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const { mode, target } = yield* checkRequest(input, context)
    const bytes = yield* readBytes(target.real)
    const { decoded, index, notebook } = yield* plan(input, target, bytes, ensureFresh(context, target, bytes))
    const layout = detectLayout(decoded.text, notebook)
    const source = sourceValue(input.new_source, layout.sourceAsLines)
    const cellName = (i: number) => {
      const id = notebook.cells[i]?.id
      return typeof id === "string" ? id : `cell-${i}`
    }

    let cellId: string
    if (mode === "insert") {
      const at = index === undefined ? 0 : index + 1
      const type: CellType = input.cell_type ?? "code"
      notebook.cells.splice(at, 0, makeCell(type, source, hasCellIds(notebook) ? newCellId(notebook) : undefined))
      cellId = cellName(at)
    } else if (mode === "delete") {
      const at = index ?? 0
      cellId = input.cell_id ?? cellName(at)
      notebook.cells.splice(at, 1)
    } else {
      const at = index ?? 0
      const cell = notebook.cells[at]
      cell.source = source
      if (input.cell_type !== undefined && input.cell_type !== cell.cell_type) setCellType(cell, input.cell_type)
      // The old outputs belong to the old code: clear them as Jupyter does when a cell is edited.
      if (cell.cell_type === "code") {
        cell["execution_count"] = null
        cell["outputs"] = []
      }
      cellId = cellName(at)
    }

    const updated = encode(serializeNotebook(notebook, layout), decoded.encoding, decoded.bom)
    yield* commitWrite(context, target, updated)
    return { editMode: mode, cellId, newSource: input.new_source, notebookPath: target.resolved } satisfies
      NotebookEditOutput
  })

export const formatNotebookEditResult = (output: NotebookEditOutput): string => {
  switch (output.editMode) {
    case "replace":
      return `Updated cell ${output.cellId} with ${output.newSource}`
    case "insert":
      return `Inserted cell ${output.cellId} with ${output.newSource}`
    case "delete":
      return `Deleted cell ${output.cellId}`
  }
}

export const NotebookEditTool = Tool.make({
  name: "NotebookEdit",
  description: DESCRIPTION,
  prompt: PROMPT,
  input: NotebookEditInput,
  source: "builtin",
  searchHint: "edit Jupyter notebook cells (.ipynb)",
  maxResultSizeChars: 100_000,
  userFacingName: () => "Edit Notebook",
  toClassifierInput: (input) => `${input.notebook_path} ${input.edit_mode ?? "replace"}: ${input.new_source}`,
  getPath: (input, context) => targetPath(context, input.notebook_path).real,
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const { stats, target } = yield* checkRequest(input, context)
      yield* plan(input, target, yield* readBytes(target.real), precheckFresh(context, target, stats))
    }),
  call: (input, context) => editNotebook(input, context).pipe(Effect.withSpan("NotebookEdit.call")),
  mapToolResult: formatNotebookEditResult
})
