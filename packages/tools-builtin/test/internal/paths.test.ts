import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Permission, ToolUseContext } from "@toolwright/core"
import { Effect } from "effect"
import { realPath } from "../../src/internal/paths.js"
import { tempDir, writeFiles } from "../support/runTool.js"
import { call } from "../support/writeTools.js"

/** A project and a directory beside it, both real paths (the temp dir itself may sit behind a symlink). */
const layout = Effect.gen(function*() {
  const root = fs.realpathSync(yield* tempDir)
  writeFiles(root, { "project/inside.txt": "in\n", "outside/keep.txt": "keep\n" })
  return { project: path.join(root, "project"), outside: path.join(root, "outside") }
})

describe("realPath", () => {
  it.scopedLive("resolves existing links, and for a missing file the nearest existing ancestor", () =>
    Effect.gen(function*() {
      const { outside, project } = yield* layout
      fs.symlinkSync(outside, path.join(project, "out"))
      assert.strictEqual(realPath(path.join(project, "out", "keep.txt")), path.join(outside, "keep.txt"))
      assert.strictEqual(realPath(path.join(project, "out", "new", "a.txt")), path.join(outside, "new", "a.txt"))
      assert.strictEqual(realPath(path.join(project, "none.txt")), path.join(project, "none.txt"))
    }))

  it.scopedLive("follows a dangling symlink to where a new file would really land", () =>
    Effect.gen(function*() {
      const { outside, project } = yield* layout
      fs.symlinkSync("../outside/new.txt", path.join(project, "file-link"))
      fs.symlinkSync(path.join(outside, "newdir"), path.join(project, "dir-link"))
      assert.strictEqual(realPath(path.join(project, "file-link")), path.join(outside, "new.txt"))
      assert.strictEqual(realPath(path.join(project, "dir-link", "a.txt")), path.join(outside, "newdir", "a.txt"))
      // A relative target is resolved from the link's real directory, as the kernel does, not lexically.
      fs.symlinkSync(outside, path.join(project, "via"))
      fs.symlinkSync("../elsewhere.txt", path.join(outside, "rel-link"))
      assert.strictEqual(
        realPath(path.join(project, "via", "rel-link")),
        path.join(path.dirname(outside), "elsewhere.txt")
      )
      // A loop ends: the path is reported as it is.
      fs.symlinkSync("loop-b", path.join(project, "loop-a"))
      fs.symlinkSync("loop-a", path.join(project, "loop-b"))
      assert.strictEqual(path.dirname(realPath(path.join(project, "loop-a", "x.txt"))), path.join(project, "loop-a"))
    }))

  it.scopedLive("a dangling symlink cannot smuggle a new file out of the project", () =>
    Effect.gen(function*() {
      const { outside, project } = yield* layout
      const link = path.join(project, "planted.txt")
      fs.symlinkSync(path.join(outside, "planted.txt"), link)
      const context = ToolUseContext.make({
        cwd: project,
        permissionContext: Permission.emptyPermissionContext("acceptEdits")
      })
      const result = yield* call("Write", { file_path: "planted.txt", content: "x" }, context)
      assert.strictEqual(result.result.is_error, true)
      assert(result.events.some((event) => event._tag === "PermissionRequest"), result.text)
      assert(!fs.existsSync(path.join(outside, "planted.txt")))
      assert(fs.lstatSync(link).isSymbolicLink())

      // Once allowed, the file is created where the link points, and the link stays a link.
      const allowed = ToolUseContext.make({
        cwd: project,
        permissionContext: Permission.emptyPermissionContext("bypassPermissions")
      })
      const write = yield* call("Write", { file_path: "planted.txt", content: "through the link\n" }, allowed)
      assert.strictEqual(write.text, `File created successfully at: ${link}`)
      assert.strictEqual(fs.readFileSync(path.join(outside, "planted.txt"), "utf8"), "through the link\n")
      assert(fs.lstatSync(link).isSymbolicLink())
    }))
})
