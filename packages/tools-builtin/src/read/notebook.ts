/**
 * Jupyter notebooks for Read, shown as Claude Code shows them: each cell as
 * `<cell id="…">source</cell id="…">` (with its type or language when not a Python code cell), then its
 * outputs: stream text, results, errors with their traceback, and PNG/JPEG images as image blocks.
 * Adjacent text blocks are merged so the model reads one text per run of cells.
 */
import type { Message } from "@toolwright/core"
import { Either, Schema } from "effect"

const MultilineText = Schema.Union(Schema.String, Schema.Array(Schema.String))
type MultilineText = typeof MultilineText.Type

const Output = Schema.Struct({
  output_type: Schema.String,
  text: Schema.optional(MultilineText),
  data: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  ename: Schema.optional(Schema.String),
  evalue: Schema.optional(Schema.String),
  traceback: Schema.optional(Schema.Array(Schema.String))
})
type Output = typeof Output.Type

const Cell = Schema.Struct({
  cell_type: Schema.String,
  id: Schema.optional(Schema.String),
  source: MultilineText,
  outputs: Schema.optional(Schema.Array(Output))
})

export const Notebook = Schema.Struct({
  cells: Schema.Array(Cell),
  metadata: Schema.optional(Schema.Struct({
    language_info: Schema.optional(Schema.Struct({ name: Schema.optional(Schema.String) }))
  }))
})

/** A cell's outputs above this many characters (as JSON) are replaced by a hint to read them with jq. */
const MAX_OUTPUTS_CHARS = 10_000

const joined = (text: MultilineText | undefined): string =>
  text === undefined ? "" : typeof text === "string" ? text : text.join("")

const imageOf = (data: Output["data"]): Message.ImageBlock | undefined => {
  for (const mediaType of ["image/png", "image/jpeg"] as const) {
    const value = data?.[mediaType]
    const base64 = typeof value === "string" ? value : Array.isArray(value) ? value.join("") : undefined
    if (base64 !== undefined) {
      return { type: "image", source: { type: "base64", media_type: mediaType, data: base64.replace(/\s/g, "") } }
    }
  }
  return undefined
}

const outputText = (output: Output): string => {
  switch (output.output_type) {
    case "stream":
      return joined(output.text)
    case "execute_result":
    case "display_data": {
      const plain = output.data?.["text/plain"]
      if (typeof plain === "string") return plain
      return Array.isArray(plain) ? plain.filter((part) => typeof part === "string").join("") : ""
    }
    case "error":
      return `${output.ename ?? "Error"}: ${output.evalue ?? ""}\n${(output.traceback ?? []).join("\n")}`
    default:
      return ""
  }
}

const outputBlocks = (output: Output): Array<Message.ToolResultContentBlock> => {
  const blocks: Array<Message.ToolResultContentBlock> = []
  const text = outputText(output)
  if (text !== "") blocks.push({ type: "text", text: `\n${text}` })
  const image = output.output_type === "stream" ? undefined : imageOf(output.data)
  if (image !== undefined) blocks.push(image)
  return blocks
}

/**
 * Parses a notebook file's text; Left with a readable reason when it is not JSON or not a notebook.
 */
export const parse = (text: string): Either.Either<typeof Notebook.Type, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(`the file is not valid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  return Schema.decodeUnknownEither(Notebook)(json).pipe(
    Either.mapLeft(() =>
      "the JSON is not a Jupyter notebook (it needs a `cells` array of cells with `cell_type` and `source`)"
    )
  )
}

/** The notebook as content blocks, with `path` named in the hint for oversized outputs. */
export const render = (notebook: typeof Notebook.Type, path: string): Array<Message.ToolResultContentBlock> => {
  const language = notebook.metadata?.language_info?.name ?? "python"
  const blocks: Array<Message.ToolResultContentBlock> = []
  notebook.cells.forEach((cell, index) => {
    const id = cell.id ?? `cell-${index}`
    const meta = cell.cell_type !== "code"
      ? `<cell_type>${cell.cell_type}</cell_type>`
      : language !== "python"
      ? `<language>${language}</language>`
      : ""
    blocks.push({ type: "text", text: `<cell id="${id}">${meta}${joined(cell.source)}</cell id="${id}">` })
    if (cell.cell_type !== "code" || cell.outputs === undefined || cell.outputs.length === 0) return
    if (JSON.stringify(cell.outputs).length > MAX_OUTPUTS_CHARS) {
      blocks.push({
        type: "text",
        text: `\nOutputs are too large to include. Use Bash with: cat ${path} | jq '.cells[${index}].outputs'`
      })
      return
    }
    for (const output of cell.outputs) blocks.push(...outputBlocks(output))
  })
  const merged: Array<Message.ToolResultContentBlock> = []
  for (const block of blocks) {
    const previous = merged[merged.length - 1]
    if (previous !== undefined && previous.type === "text" && block.type === "text") {
      merged[merged.length - 1] = { type: "text", text: `${previous.text}\n${block.text}` }
    } else merged.push(block)
  }
  return merged
}
