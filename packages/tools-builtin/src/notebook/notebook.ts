/**
 * Jupyter notebook documents as NotebookEdit changes them: parsing with a clear error, finding a cell by
 * id or by `cell-N` index, editing cells the way nbformat expects (code cells lose stale outputs), and
 * writing the JSON back in the file's own layout (indent, final newline, line endings).
 */
import { randomBytes } from "node:crypto"
import { Either } from "effect"
import type { LineEnding } from "../internal/encoding.js"
import { withLineEnding } from "../internal/encoding.js"

export type JsonValue = string | number | boolean | null | ReadonlyArray<JsonValue> | { [key: string]: JsonValue }

/** A cell: the fields this module touches, and whatever else the file has, untouched. */
export interface Cell {
  [key: string]: JsonValue | undefined
  cell_type?: JsonValue
  id?: JsonValue
  source?: JsonValue
}

export interface Notebook {
  [key: string]: JsonValue | undefined | Array<Cell>
  cells: Array<Cell>
}

/** How the file laid its JSON out, so a rewrite changes only the edited cell. */
export interface Layout {
  /** The indent unit (`JSON.stringify`'s third argument); "" for a one-line file. */
  readonly indent: string
  readonly finalNewline: boolean
  readonly lineEnding: LineEnding
  /** Whether cells store `source` as a list of lines (nbformat's on-disk habit) rather than one string. */
  readonly sourceAsLines: boolean
}

const isRecord = (u: unknown): u is { [key: string]: JsonValue } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isCellArray = (u: unknown): u is Array<Cell> => Array.isArray(u) && u.every(isRecord)

/** The notebook in `text`, or the reason it is not one. */
export const parseNotebook = (text: string): Either.Either<Notebook, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (cause) {
    return Either.left(`Notebook is not valid JSON (${cause instanceof Error ? cause.message : String(cause)}).`)
  }
  if (!isRecord(parsed)) return Either.left("Notebook is not valid JSON: the top level is not an object.")
  const cells = parsed["cells"]
  if (!isCellArray(cells)) return Either.left("Notebook has no \"cells\" list of cell objects.")
  return Either.right({ ...parsed, cells })
}

export const detectLayout = (text: string, notebook: Notebook): Layout => {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? ""
  const firstBreak = text.indexOf("\n")
  return {
    indent,
    finalNewline: text.endsWith("\n"),
    lineEnding: firstBreak > 0 && text[firstBreak - 1] === "\r" ? "\r\n" : "\n",
    sourceAsLines: notebook.cells.some((cell) => Array.isArray(cell.source)) ||
      !notebook.cells.some((cell) => typeof cell.source === "string")
  }
}

export const serializeNotebook = (notebook: Notebook, layout: Layout): string => {
  const json = JSON.stringify(notebook, null, layout.indent) + (layout.finalNewline ? "\n" : "")
  return layout.lineEnding === "\n" ? json : withLineEnding(json, layout.lineEnding)
}

/** `source` as nbformat writes it: lines keeping their `\n`, the last without one. */
export const sourceValue = (source: string, asLines: boolean): JsonValue => {
  if (!asLines) return source
  const lines = source.split(/(?<=\n)/)
  return lines.length === 1 && lines[0] === "" ? [] : lines
}

/** Where a cell is: by its `id`, else by a `cell-N` (0-based) reference as Read shows cells without ids. */
export type CellLookup =
  | { readonly _tag: "Found"; readonly index: number }
  | { readonly _tag: "NoSuchId"; readonly message: string }

export const parseCellIndex = (cellId: string): number | undefined => {
  const match = /^cell-(\d+)$/.exec(cellId)
  return match === null ? undefined : Number(match[1])
}

export const findCell = (notebook: Notebook, cellId: string): CellLookup => {
  const byId = notebook.cells.findIndex((cell) => cell.id === cellId)
  if (byId !== -1) return { _tag: "Found", index: byId }
  const index = parseCellIndex(cellId)
  if (index === undefined) return { _tag: "NoSuchId", message: `Cell with ID "${cellId}" not found in notebook.` }
  if (index >= notebook.cells.length) {
    return { _tag: "NoSuchId", message: `Cell with index ${index} does not exist in notebook.` }
  }
  return { _tag: "Found", index }
}

/** nbformat 4.5 and later give every cell an id. */
export const hasCellIds = (notebook: Notebook): boolean => {
  const major = notebook["nbformat"]
  const minor = notebook["nbformat_minor"]
  return typeof major === "number" && (major > 4 || (major === 4 && typeof minor === "number" && minor >= 5))
}

export const newCellId = (notebook: Notebook): string => {
  const taken = new Set(notebook.cells.map((cell) => cell.id))
  let id = randomBytes(4).toString("hex")
  while (taken.has(id)) id = randomBytes(4).toString("hex")
  return id
}

export type CellType = "code" | "markdown"

/** Makes `cell` a cell of `type`: code cells carry outputs and an execution count, others must not. */
export const setCellType = (cell: Cell, type: CellType): void => {
  cell.cell_type = type
  if (type === "code") {
    if (!("outputs" in cell)) cell["outputs"] = []
    if (!("execution_count" in cell)) cell["execution_count"] = null
  } else {
    delete cell["outputs"]
    delete cell["execution_count"]
  }
}

/** A new cell of `type` holding `source`, keys in nbformat's (sorted) order, with an id when the format has them. */
export const makeCell = (type: CellType, source: JsonValue, id: string | undefined): Cell => {
  const idField = id === undefined ? {} : { id }
  return type === "code"
    ? { cell_type: "code", execution_count: null, ...idField, metadata: {}, outputs: [], source }
    : { cell_type: "markdown", ...idField, metadata: {}, source }
}
