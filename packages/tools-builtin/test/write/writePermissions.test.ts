import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Permission, ToolUseContext } from "@toolwright/core"
import { Effect } from "effect"
import { recordRead } from "../../src/internal/fileState.js"
import { tempDir, writeFiles } from "../support/runTool.js"
import { call } from "../support/writeTools.js"

/** A project inside a temp dir, a directory outside it, and a symlink in the project pointing out. */
const layout = Effect.gen(function*() {
  const root = yield* tempDir
  const project = path.join(root, "project")
  const outside = path.join(root, "outside")
  writeFiles(root, { "project/inside.txt": "in\n", "outside/victim.txt": "keep me\n" })
  fs.symlinkSync(outside, path.join(project, "escape"))
  return { project, outside }
})

const acceptEdits = (cwd: string, deny: ReadonlyArray<string> = []) =>
  ToolUseContext.make({
    cwd,
    permissionContext: {
      ...Permission.emptyPermissionContext("acceptEdits"),
      deny: deny.map((rule) => ({ rule, source: "test" }))
    }
  })

const asked = (events: ReadonlyArray<{ readonly _tag: string }>) =>
  events.some((event) => event._tag === "PermissionRequest")

describe("Write/Edit/NotebookEdit and permission rules", () => {
  it.scopedLive("acceptEdits allows writes inside the working directory", () =>
    Effect.gen(function*() {
      const { project } = yield* layout
      const result = yield* call("Write", { file_path: "new.txt", content: "ok" }, acceptEdits(project))
      assert.strictEqual(result.text, `File created successfully at: ${path.join(project, "new.txt")}`)
    }))

  it.scopedLive("a symlink inside the project cannot smuggle a write outside it", () =>
    Effect.gen(function*() {
      const { outside, project } = yield* layout
      const context = acceptEdits(project)
      const write = yield* call("Write", { file_path: "escape/planted.txt", content: "x" }, context)
      assert.strictEqual(write.result.is_error, true)
      assert(asked(write.events), "writing through the symlink must need permission")
      assert(!fs.existsSync(path.join(outside, "planted.txt")))

      // The session has read the file (as if the user let Read look outside), so only permission stands in
      // the Edit's way: it must be asked for the real path outside the project, and, unanswered, denied.
      const victimPath = path.join(outside, "victim.txt")
      recordRead(context, victimPath, fs.readFileSync(victimPath), fs.statSync(victimPath).mtimeMs)
      const victim = { file_path: "escape/victim.txt", old_string: "keep", new_string: "lost" }
      const edit = yield* call("Edit", victim, context)
      assert.strictEqual(edit.result.is_error, true)
      assert(asked(edit.events), `editing through the symlink must need permission: ${edit.text}`)
      assert.match(edit.text, /outside[/]victim\.txt/)
      assert.strictEqual(fs.readFileSync(victimPath, "utf8"), "keep me\n")
    }))

  it.scopedLive("`..` cannot climb out either", () =>
    Effect.gen(function*() {
      const { outside, project } = yield* layout
      const result = yield* call(
        "Write",
        { file_path: "sub/../../outside/dotdot.txt", content: "x" },
        acceptEdits(project)
      )
      assert.strictEqual(result.result.is_error, true)
      assert(asked(result.events))
      assert(!fs.existsSync(path.join(outside, "dotdot.txt")))
    }))

  it.scopedLive("an Edit deny rule stops Write, Edit and NotebookEdit alike", () =>
    Effect.gen(function*() {
      const { project } = yield* layout
      writeFiles(project, {
        "secrets/key.txt": "k\n",
        "secrets/n.ipynb": "{\"cells\": [], \"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 5}"
      })
      const context = acceptEdits(project, ["Edit(./secrets/**)"])
      // Reading stays allowed, so each call below is valid and only the rule stands in its way.
      for (const name of ["secrets/key.txt", "secrets/n.ipynb"]) {
        const read = yield* call("Read", { file_path: name }, context)
        assert.notStrictEqual(read.result.is_error, true, read.text)
      }
      const calls = [
        call("Write", { file_path: "secrets/new.txt", content: "x" }, context),
        call("Edit", { file_path: "secrets/key.txt", old_string: "k", new_string: "x" }, context),
        call(
          "NotebookEdit",
          { notebook_path: "secrets/n.ipynb", new_source: "x", cell_type: "code", edit_mode: "insert" },
          context
        )
      ]
      for (const run of calls) {
        const result = yield* run
        assert.strictEqual(result.result.is_error, true)
        assert(!asked(result.events), "a deny rule denies without asking")
        assert.match(result.text, /^Permission to use (Write|Edit|NotebookEdit) on .*secrets.* has been denied/)
      }
      assert(!fs.existsSync(path.join(project, "secrets", "new.txt")))
      assert.strictEqual(fs.readFileSync(path.join(project, "secrets", "key.txt"), "utf8"), "k\n")
      assert.strictEqual(JSON.parse(fs.readFileSync(path.join(project, "secrets", "n.ipynb"), "utf8")).cells.length, 0)
    }))
})
