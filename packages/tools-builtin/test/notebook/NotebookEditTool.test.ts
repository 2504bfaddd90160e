import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ToolUseContext } from "@toolwright/core"
import { Effect } from "effect"
import { MODIFIED_MESSAGE, NOT_READ_MESSAGE } from "../../src/internal/freshness.js"
import { NotebookEditTool } from "../../src/notebook/NotebookEditTool.js"
import { tempDir, writeFiles } from "../support/runTool.js"
import { call, toolUseError, writableContext } from "../support/writeTools.js"

interface NotebookJson {
  cells: Array<{ [key: string]: unknown; id?: unknown }>
  metadata: unknown
  nbformat: number
  nbformat_minor: number
}

/** A notebook as Jupyter saves one (nbformat 4.5: cells have ids; sources are lists of lines). */
const notebookWithIds = (): NotebookJson => ({
  cells: [
    {
      cell_type: "markdown",
      id: "intro",
      metadata: { tags: ["title"] },
      source: ["# Analysis\n", "Some text"]
    },
    {
      cell_type: "code",
      execution_count: 3,
      id: "load",
      metadata: { collapsed: false },
      outputs: [{ name: "stdout", output_type: "stream", text: ["loaded\n"] }],
      source: ["import pandas as pd\n", "df = pd.read_csv('x.csv')"]
    },
    {
      cell_type: "code",
      execution_count: 4,
      id: "plot",
      metadata: {},
      outputs: [],
      source: ["df.plot()"]
    }
  ],
  metadata: {
    kernelspec: { display_name: "Python 3", language: "python", name: "python3" },
    language_info: { name: "python", version: "3.11.4" }
  },
  nbformat: 4,
  nbformat_minor: 5
})

/** Jupyter's own layout: one-space indent and a final newline. */
const jupyterJson = (notebook: unknown) => JSON.stringify(notebook, null, 1) + "\n"

const readNotebook = (dir: string, name: string, content: string) =>
  Effect.gen(function*() {
    writeFiles(dir, { [name]: content })
    const context = writableContext(dir)
    const file = path.join(dir, name)
    const read = yield* call("Read", { file_path: file }, context)
    assert.notStrictEqual(read.result.is_error, true, read.text)
    return { context, file }
  })

const notebookEdit = (context: ToolUseContext.ToolUseContext, input: Record<string, unknown>) =>
  call("NotebookEdit", input, context)

const parse = (file: string): NotebookJson => JSON.parse(fs.readFileSync(file, "utf8"))

describe("NotebookEdit", () => {
  it.scopedLive("replace: new source, stale outputs cleared, everything else byte for byte", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readNotebook(dir, "a.ipynb", jupyterJson(notebookWithIds()))
      const result = yield* notebookEdit(context, {
        notebook_path: file,
        cell_id: "load",
        new_source: "import polars as pl\ndf = pl.read_csv('x.csv')"
      })
      assert.strictEqual(result.text, "Updated cell load with import polars as pl\ndf = pl.read_csv('x.csv')")
      const expected = notebookWithIds()
      expected.cells[1] = {
        ...expected.cells[1],
        execution_count: null,
        outputs: [],
        source: ["import polars as pl\n", "df = pl.read_csv('x.csv')"]
      }
      assert.strictEqual(fs.readFileSync(file, "utf8"), jupyterJson(expected))
    }))

  it.scopedLive("insert: a new cell with a fresh id after the given cell, or first without one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readNotebook(dir, "a.ipynb", jupyterJson(notebookWithIds()))
      const after = yield* notebookEdit(context, {
        notebook_path: file,
        cell_id: "intro",
        new_source: "## Data",
        cell_type: "markdown",
        edit_mode: "insert"
      })
      const cells = parse(file).cells
      assert.deepStrictEqual(cells.map((cell) => cell.id).filter((id) => id !== cells[1].id), ["intro", "load", "plot"])
      assert.match(String(cells[1].id), /^[0-9a-f]{8}$/)
      assert.deepStrictEqual(cells[1], { cell_type: "markdown", id: cells[1].id, metadata: {}, source: ["## Data"] })
      assert.strictEqual(after.text, `Inserted cell ${String(cells[1].id)} with ## Data`)

      const first = yield* notebookEdit(context, {
        notebook_path: file,
        new_source: "print('hi')\n",
        cell_type: "code",
        edit_mode: "insert"
      })
      const top = parse(file).cells[0]
      assert.deepStrictEqual(top, {
        cell_type: "code",
        execution_count: null,
        id: top.id,
        metadata: {},
        outputs: [],
        source: ["print('hi')\n"]
      })
      assert.strictEqual(first.text, `Inserted cell ${String(top.id)} with print('hi')\n`)
    }))

  it.scopedLive("delete removes the cell; a second edit needs no re-read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readNotebook(dir, "a.ipynb", jupyterJson(notebookWithIds()))
      const deleted = yield* notebookEdit(context, {
        notebook_path: file,
        cell_id: "plot",
        new_source: "",
        edit_mode: "delete"
      })
      assert.strictEqual(deleted.text, "Deleted cell plot")
      const replaced = yield* notebookEdit(context, { notebook_path: file, cell_id: "intro", new_source: "# Title" })
      assert.strictEqual(replaced.text, "Updated cell intro with # Title")
      const notebook = parse(file)
      assert.deepStrictEqual(notebook.cells.map((cell) => cell.id), ["intro", "load"])
      assert.deepStrictEqual(notebook.cells[0].metadata, { tags: ["title"] })
      assert.deepStrictEqual(notebook.metadata, notebookWithIds().metadata)
    }))

  it.scopedLive("changing a cell's type keeps nbformat valid: markdown cells carry no outputs", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readNotebook(dir, "a.ipynb", jupyterJson(notebookWithIds()))
      yield* notebookEdit(context, {
        notebook_path: file,
        cell_id: "plot",
        new_source: "*text*",
        cell_type: "markdown"
      })
      assert.deepStrictEqual(parse(file).cells[2], {
        cell_type: "markdown",
        id: "plot",
        metadata: {},
        source: ["*text*"]
      })
      yield* notebookEdit(context, { notebook_path: file, cell_id: "intro", new_source: "1 + 1", cell_type: "code" })
      assert.deepStrictEqual(parse(file).cells[0], {
        cell_type: "code",
        id: "intro",
        metadata: { tags: ["title"] },
        source: ["1 + 1"],
        outputs: [],
        execution_count: null
      })
    }))

  it.scopedLive("notebooks without cell ids: cells are addressed as cell-N, and the layout is kept", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const old = {
        cells: [
          { cell_type: "code", execution_count: 1, metadata: {}, outputs: [], source: "x = 1" },
          { cell_type: "code", execution_count: 2, metadata: {}, outputs: [], source: "y = 2" }
        ],
        metadata: {},
        nbformat: 4,
        nbformat_minor: 2
      }
      // Two-space indent, CRLF and no final newline: an unusual layout that must survive the edit.
      const layout = (nb: unknown) => JSON.stringify(nb, null, 2).replaceAll("\n", "\r\n")
      const { context, file } = yield* readNotebook(dir, "old.ipynb", layout(old))
      const result = yield* notebookEdit(context, { notebook_path: file, cell_id: "cell-1", new_source: "y = 3" })
      assert.strictEqual(result.text, "Updated cell cell-1 with y = 3")
      const inserted = yield* notebookEdit(context, {
        notebook_path: file,
        cell_id: "cell-0",
        new_source: "z",
        cell_type: "code",
        edit_mode: "insert"
      })
      assert.strictEqual(inserted.text, "Inserted cell cell-1 with z")
      const expected = {
        ...old,
        cells: [
          old.cells[0],
          { cell_type: "code", execution_count: null, metadata: {}, outputs: [], source: "z" },
          { ...old.cells[1], execution_count: null, source: "y = 3" }
        ]
      }
      assert.strictEqual(fs.readFileSync(file, "utf8"), layout(expected))
    }))

  it.scopedLive("unknown cells and missing parameters get Claude Code's texts", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readNotebook(dir, "a.ipynb", jupyterJson(notebookWithIds()))
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ cell_id: "nope", new_source: "x" }, "Cell with ID \"nope\" not found in notebook."],
        [{ cell_id: "cell-7", new_source: "x" }, "Cell with index 7 does not exist in notebook."],
        [{ new_source: "x" }, "Cell ID must be specified when not inserting a new cell."],
        [{ new_source: "x", edit_mode: "insert" }, "Cell type is required when using edit_mode=insert."]
      ]
      for (const [input, message] of cases) {
        const result = yield* notebookEdit(context, { notebook_path: file, ...input })
        assert.strictEqual(result.text, toolUseError(message))
      }
      assert.strictEqual(fs.readFileSync(file, "utf8"), jupyterJson(notebookWithIds()))
    }))

  it.scopedLive("invalid notebook JSON: a clear error, and the file is untouched", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // Read refuses a broken notebook, so no read can be asked for first: the JSON error comes first.
      const broken = "{\n \"cells\": [\n  {\"cell_type\": \"code\",\n"
      writeFiles(dir, { "broken.ipynb": broken })
      const context = writableContext(dir)
      const file = path.join(dir, "broken.ipynb")
      const result = yield* notebookEdit(context, { notebook_path: file, cell_id: "cell-0", new_source: "x" })
      assert.strictEqual(result.result.is_error, true)
      assert.match(
        result.text,
        new RegExp(
          `^<tool_use_error>Notebook is not valid JSON \\(.+\\)\\. The notebook ${file.replaceAll(".", "\\.")} ` +
            "was left unchanged; fix or restore it first\\.</tool_use_error>$"
        )
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), broken)

      writeFiles(dir, { "nocells.ipynb": "{\"metadata\": {}}" })
      const file2 = path.join(dir, "nocells.ipynb")
      const noCells = yield* notebookEdit(context, { notebook_path: file2, cell_id: "cell-0", new_source: "x" })
      assert.strictEqual(
        noCells.text,
        toolUseError(
          `Notebook has no "cells" list of cell objects. The notebook ${file2} was left unchanged; ` +
            "fix or restore it first."
        )
      )
    }))

  it.scopedLive("read-before-write: unread and changed-since-read notebooks are refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "unread.ipynb": jupyterJson(notebookWithIds()) })
      const unread = yield* notebookEdit(writableContext(dir), {
        notebook_path: path.join(dir, "unread.ipynb"),
        cell_id: "intro",
        new_source: "x"
      })
      assert.strictEqual(unread.text, toolUseError(NOT_READ_MESSAGE))

      const { context, file } = yield* readNotebook(dir, "a.ipynb", jupyterJson(notebookWithIds()))
      fs.writeFileSync(file, jupyterJson({ ...notebookWithIds(), nbformat_minor: 4 }))
      const changed = yield* notebookEdit(context, { notebook_path: file, cell_id: "intro", new_source: "x" })
      assert.strictEqual(changed.text, toolUseError(MODIFIED_MESSAGE))
    }))

  it.scopedLive("other files and missing notebooks are refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const python = path.join(dir, "a.py")
      const notIpynb = yield* notebookEdit(context, { notebook_path: python, cell_id: "x", new_source: "" })
      assert.strictEqual(
        notIpynb.text,
        toolUseError("File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.")
      )
      const missing = yield* notebookEdit(context, { notebook_path: "gone.ipynb", cell_id: "x", new_source: "" })
      assert.strictEqual(missing.text, toolUseError("Notebook file does not exist."))
    }))

  it("declares itself not read-only, not concurrency-safe, not destructive; getPath is resolved", () => {
    const input = { notebook_path: "n.ipynb", new_source: "" }
    const cwd = fs.realpathSync("/tmp")
    assert.strictEqual(NotebookEditTool.isReadOnly(input), false)
    assert.strictEqual(NotebookEditTool.isConcurrencySafe(input), false)
    assert.strictEqual(NotebookEditTool.isDestructive(input), false)
    assert.strictEqual(NotebookEditTool.getPath(input, ToolUseContext.make({ cwd })), path.join(cwd, "n.ipynb"))
  })
})
