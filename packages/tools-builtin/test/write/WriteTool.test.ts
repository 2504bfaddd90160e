import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ToolUseContext } from "@toolwright/core"
import { Effect, Fiber } from "effect"
import { isTempName } from "../../src/internal/atomicWrite.js"
import { recordRead } from "../../src/internal/fileState.js"
import { MODIFIED_MESSAGE, NOT_READ_MESSAGE } from "../../src/internal/freshness.js"
import { WriteTool } from "../../src/write/WriteTool.js"
import { tempDir, writeFiles } from "../support/runTool.js"
import { call, toolUseError, touch, writableContext } from "../support/writeTools.js"

describe("Write", () => {
  it.scopedLive("creates a new file without a read, with its missing parent directories, byte for byte", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const file = path.join(dir, "a", "b", "new.txt")
      const content = "line one\r\nline two\n\u00e9\u4e2d\u{1f600}\n"
      const result = yield* call("Write", { file_path: file, content }, context)
      assert.strictEqual(result.text, `File created successfully at: ${file}`)
      assert.strictEqual(result.result.is_error, undefined)
      assert.deepStrictEqual(fs.readFileSync(file), Buffer.from(content, "utf8"))
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), ["new.txt"])
    }))

  it.scopedLive("refuses to overwrite a file the session has not read, and leaves it alone", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "exists.txt": "precious\n" })
      const file = path.join(dir, "exists.txt")
      const result = yield* call("Write", { file_path: file, content: "x" }, writableContext(dir))
      assert.strictEqual(result.result.is_error, true)
      assert.strictEqual(result.text, toolUseError(NOT_READ_MESSAGE))
      assert.strictEqual(NOT_READ_MESSAGE, "File has not been read yet. Read it first before writing to it.")
      assert.strictEqual(fs.readFileSync(path.join(dir, "exists.txt"), "utf8"), "precious\n")
    }))

  it.scopedLive("overwrites a file read with Read; a second write needs no re-read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const file = path.join(dir, "notes.md")
      writeFiles(dir, { "notes.md": "\ufeffold\r\n" })
      yield* call("Read", { file_path: file }, context)
      const first = yield* call("Write", { file_path: file, content: "new\n" }, context)
      assert.strictEqual(first.text, `The file ${file} has been updated.`)
      // Write writes exactly what it is given: no BOM, no CRLF carried over from the old file.
      assert.strictEqual(fs.readFileSync(file, "utf8"), "new\n")
      const second = yield* call("Write", { file_path: file, content: "newer\n" }, context)
      assert.strictEqual(second.text, `The file ${file} has been updated.`)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "newer\n")
      const edited = yield* call("Edit", { file_path: file, old_string: "newer", new_string: "newest" }, context)
      assert.strictEqual(edited.result.is_error, undefined, edited.text)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "newest\n")
    }))

  it.scopedLive("refuses when the file changed on disk since it was read, saying to read it again", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const file = path.join(dir, "config.json")
      writeFiles(dir, { "config.json": "{}\n" })
      yield* call("Read", { file_path: file }, context)
      fs.writeFileSync(file, "{\"user\": true}\n")
      const result = yield* call("Write", { file_path: file, content: "{}" }, context)
      assert.strictEqual(result.text, toolUseError(MODIFIED_MESSAGE))
      assert.strictEqual(
        MODIFIED_MESSAGE,
        "File has been modified since read, either by the user or by a linter. " +
          "Read it again before attempting to write it."
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), "{\"user\": true}\n")
    }))

  it.scopedLive("a file whose mtime moved but whose bytes did not is still writable", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const file = path.join(dir, "same.txt")
      writeFiles(dir, { "same.txt": "same\n" })
      yield* call("Read", { file_path: file }, context)
      touch(file)
      const result = yield* call("Write", { file_path: file, content: "changed\n" }, context)
      assert.strictEqual(result.text, `The file ${file} has been updated.`)
    }))

  it.scopedLive("a change with the same mtime is still caught by the content hash", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const file = path.join(dir, "same-mtime.txt")
      writeFiles(dir, { "same-mtime.txt": "one\n" })
      yield* call("Read", { file_path: file }, context)
      const before = fs.statSync(file)
      fs.writeFileSync(file, "two\n")
      fs.utimesSync(file, before.atime, before.mtime)
      const result = yield* call("Write", { file_path: file, content: "three\n" }, context)
      assert.strictEqual(result.text, toolUseError(MODIFIED_MESSAGE))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "two\n")
    }))

  it.scopedLive("keeps the mode of the file it replaces and leaves no temp file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      const file = path.join(dir, "run.sh")
      writeFiles(dir, { "run.sh": "#!/bin/sh\n" })
      fs.chmodSync(file, 0o750)
      recordRead(context, file, fs.readFileSync(file), fs.statSync(file).mtimeMs)
      yield* call("Write", { file_path: file, content: "#!/bin/sh\necho hi\n" }, context)
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o750)
      assert.deepStrictEqual(fs.readdirSync(dir).filter(isTempName), [])
    }))

  it.scopedLive("an aborted Write leaves the old or the new file, no temp file, and a read state that matches", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "big.txt")
      const oldContent = "OLD HEADER\n" + "old\n".repeat(1_000_000)
      const newContent = "NEW HEADER\n" + "new\n".repeat(1_000_000)
      for (const delayMs of [0, 5, 20, 60]) {
        const context = writableContext(dir)
        writeFiles(dir, { "big.txt": oldContent })
        recordRead(context, file, fs.readFileSync(file), fs.statSync(file).mtimeMs)
        const fiber = yield* Effect.fork(call("Write", { file_path: file, content: newContent }, context))
        yield* Effect.sleep(delayMs)
        yield* Fiber.interrupt(fiber)
        const now = fs.readFileSync(file, "utf8")
        assert(now === oldContent || now === newContent, `after ${delayMs} ms the file is neither old nor new`)
        assert.deepStrictEqual(fs.readdirSync(dir).filter(isTempName), [])
        // Whatever happened, the session's view matches the disk: an Edit right away works.
        const edit = yield* call("Edit", { file_path: file, old_string: now.slice(0, 11), new_string: "first\n" }, context)
        assert.strictEqual(edit.result.is_error, undefined, edit.text)
      }
    }))

  it.scopedLive("relative paths resolve against the cwd", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* call("Write", { file_path: "sub/rel.txt", content: "r" }, writableContext(dir))
      assert.strictEqual(result.text, `File created successfully at: ${path.join(dir, "sub", "rel.txt")}`)
      assert.strictEqual(fs.readFileSync(path.join(dir, "sub", "rel.txt"), "utf8"), "r")
    }))

  it.scopedLive("writing through a symlink replaces the target's content and keeps the link", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      writeFiles(dir, { "real/target.txt": "target\n" })
      const link = path.join(dir, "link.txt")
      fs.symlinkSync(path.join(dir, "real", "target.txt"), link)
      const real = path.join(dir, "real", "target.txt")
      assert.strictEqual(WriteTool.getPath({ file_path: link, content: "" }, context), real)
      yield* call("Read", { file_path: link }, context)
      const result = yield* call("Write", { file_path: link, content: "via link\n" }, context)
      assert.strictEqual(result.text, `The file ${link} has been updated.`)
      assert(fs.lstatSync(link).isSymbolicLink())
      assert.strictEqual(fs.readFileSync(path.join(dir, "real", "target.txt"), "utf8"), "via link\n")
    }))

  it.scopedLive("edits through the link and through the real path both count as the session's own", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = writableContext(dir)
      writeFiles(dir, { "real/target.txt": "one\n" })
      const real = path.join(dir, "real", "target.txt")
      const link = path.join(dir, "link.txt")
      fs.symlinkSync(real, link)
      yield* call("Read", { file_path: link }, context)
      const viaLink = yield* call("Write", { file_path: link, content: "two\n" }, context)
      assert.strictEqual(viaLink.text, `The file ${link} has been updated.`)
      const direct = yield* call("Edit", { file_path: real, old_string: "two", new_string: "three" }, context)
      assert.strictEqual(direct.result.is_error, undefined, direct.text)
      // The session wrote every byte on disk, so writing through the link again is no "modified since read".
      const again = yield* call("Write", { file_path: link, content: "four\n" }, context)
      assert.strictEqual(again.text, `The file ${link} has been updated.`)
      assert.strictEqual(fs.readFileSync(real, "utf8"), "four\n")
    }))

  it.scopedLive("a directory is refused with a clear error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* call("Write", { file_path: dir, content: "x" }, writableContext(dir))
      assert.strictEqual(result.text, toolUseError(`${dir} is a directory, not a file. Give Write the path of a file.`))
    }))

  it.scopedLive("a parent path that is a file is a clear error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "plain": "I am a file" })
      const file = path.join(dir, "plain", "child.txt")
      const result = yield* call("Write", { file_path: file, content: "x" }, writableContext(dir))
      assert.strictEqual(
        result.text,
        toolUseError(`Cannot create the directory for ${file}: a parent path exists and is not a directory.`)
      )
    }))

  it.scopedLive("is not read-only, so the default policy asks and, with nobody to answer, nothing is written", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "asked.txt")
      const result = yield* call("Write", { file_path: file, content: "x" }, ToolUseContext.make({ cwd: dir }))
      assert.strictEqual(result.result.is_error, true)
      assert(result.events.some((event) => event._tag === "PermissionRequest"))
      assert(!fs.existsSync(file))
    }))

  it("declares itself not read-only, not concurrency-safe, not destructive; getPath is the real path", () => {
    const input = { file_path: "x.txt", content: "" }
    assert.strictEqual(WriteTool.isReadOnly(input), false)
    assert.strictEqual(WriteTool.isConcurrencySafe(input), false)
    assert.strictEqual(WriteTool.isDestructive(input), false)
    const context = ToolUseContext.make({ cwd: fs.realpathSync("/tmp") })
    const expected = path.join(fs.realpathSync("/tmp"), "x.txt")
    assert.strictEqual(WriteTool.getPath({ file_path: "sub/../x.txt", content: "" }, context), expected)
  })
})
