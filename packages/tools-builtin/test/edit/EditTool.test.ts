import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ToolUseContext } from "@toolwright/core"
import { Effect } from "effect"
import { EditTool } from "../../src/edit/EditTool.js"
import { recordRead } from "../../src/internal/fileState.js"
import { MODIFIED_MESSAGE, NOT_READ_MESSAGE } from "../../src/internal/freshness.js"
import { tempDir, writeFiles } from "../support/runTool.js"
import { call, toolUseError, writableContext } from "../support/writeTools.js"

const SNIPPET_INTRO = "Here's the result of running `cat -n` on a snippet of the edited file:"
const LINE_ENDINGS_NOTE =
  "Note: old_string matched only after normalising line endings (CRLF vs LF); the file keeps its own line endings."
const QUOTES_NOTE =
  "Note: old_string matched only after normalising curly/straight quotes (and line endings); new_string was " +
  "written in the file's quote style."

/** A file in a fresh session, already read through the real Read tool. */
const readFile = (dir: string, name: string, content: string | Uint8Array) =>
  Effect.gen(function*() {
    writeFiles(dir, { [name]: content })
    const context = writableContext(dir)
    const file = path.join(dir, name)
    const read = yield* call("Read", { file_path: file }, context)
    assert.notStrictEqual(read.result.is_error, true, read.text)
    return { context, file }
  })

const edit = (context: ToolUseContext.ToolUseContext, input: Record<string, unknown>) => call("Edit", input, context)

describe("Edit", () => {
  it.scopedLive("replaces a unique string and shows the edited region with line numbers", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "abc.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n")
      const result = yield* edit(context, { file_path: file, old_string: "e\n", new_string: "E1\nE2\n" })
      assert.strictEqual(result.result.is_error, undefined)
      assert.strictEqual(
        result.text,
        `The file ${file} has been updated successfully.\n${SNIPPET_INTRO}\n` +
          "1\ta\n2\tb\n3\tc\n4\td\n5\tE1\n6\tE2\n7\tf\n8\tg\n9\th\n10\ti"
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a\nb\nc\nd\nE1\nE2\nf\ng\nh\ni\nj\nk\n")
    }))

  it.scopedLive("old_string not found: Claude Code's text, file untouched", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "f.txt", "actual content\n")
      const result = yield* edit(context, { file_path: file, old_string: "not in file", new_string: "x" })
      assert.strictEqual(result.text, toolUseError("String to replace not found in file.\nString: not in file"))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "actual content\n")
    }))

  it.scopedLive("a doomed edit fails before anyone is asked for permission, with the text that says why", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "f.txt": "foo foo\n" })
      const file = path.join(dir, "f.txt")
      // The default mode asks for every edit; with nobody to answer, an ask would end as a denial.
      const context = ToolUseContext.make({ cwd: dir })
      recordRead(context, file, fs.readFileSync(file), fs.statSync(file).mtimeMs)
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ old_string: "bar", new_string: "x" }, "String to replace not found in file.\nString: bar"],
        [
          { old_string: "foo", new_string: "x" },
          "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set " +
          "replace_all to true. To replace only one occurrence, please provide more context to uniquely identify " +
          "the instance.\nString: foo"
        ]
      ]
      for (const [input, message] of cases) {
        const result = yield* edit(context, { file_path: file, ...input })
        assert.strictEqual(result.text, toolUseError(message))
        assert(!result.events.some((event) => event._tag === "PermissionRequest"), "nobody is asked about it")
      }
      assert.strictEqual(fs.readFileSync(file, "utf8"), "foo foo\n")
    }))

  it.scopedLive("several matches without replace_all: the count and what to do", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "f.txt", "foo bar foo baz foo\n")
      const result = yield* edit(context, { file_path: file, old_string: "foo", new_string: "qux" })
      assert.strictEqual(
        result.text,
        toolUseError(
          "Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set " +
            "replace_all to true. To replace only one occurrence, please provide more context to uniquely identify " +
            "the instance.\nString: foo"
        )
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), "foo bar foo baz foo\n")
    }))

  it.scopedLive("replace_all replaces every occurrence and says how many", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "f.txt", "foo bar foo baz foo\n")
      const result = yield* edit(context, { file_path: file, old_string: "foo", new_string: "qux", replace_all: true })
      assert.strictEqual(
        result.text,
        `The file ${file} has been updated successfully. All 3 occurrences were replaced.\n${SNIPPET_INTRO}\n` +
          "1\tqux bar qux baz qux\n2\t"
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), "qux bar qux baz qux\n")
    }))

  it.scopedLive("identical old_string and new_string: no changes to make", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "f.txt", "same\n")
      const result = yield* edit(context, { file_path: file, old_string: "same", new_string: "same" })
      assert.strictEqual(
        result.text,
        toolUseError("No changes to make: old_string and new_string are exactly the same.")
      )
    }))

  it.scopedLive("an unread file is refused; a file changed since the read is refused; neither is touched", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "unread.txt": "hello\n" })
      const unread = yield* edit(writableContext(dir), {
        file_path: path.join(dir, "unread.txt"),
        old_string: "hello",
        new_string: "bye"
      })
      assert.strictEqual(unread.text, toolUseError(NOT_READ_MESSAGE))
      assert.strictEqual(fs.readFileSync(path.join(dir, "unread.txt"), "utf8"), "hello\n")

      const { context, file } = yield* readFile(dir, "changed.txt", "hello\n")
      fs.writeFileSync(file, "hello from the user\n")
      const changed = yield* edit(context, { file_path: file, old_string: "hello", new_string: "bye" })
      assert.strictEqual(changed.text, toolUseError(MODIFIED_MESSAGE))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "hello from the user\n")
    }))

  it.scopedLive("a sequence of edits needs no re-read between them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "seq.ts", "const a = 1\nconst b = 2\nconst c = 3\n")
      for (const [from, to] of [["a = 1", "a = 10"], ["b = 2", "b = 20"], ["c = 3", "c = 30"]]) {
        const result = yield* edit(context, { file_path: file, old_string: from, new_string: to })
        assert.strictEqual(result.result.is_error, undefined, result.text)
      }
      assert.strictEqual(fs.readFileSync(file, "utf8"), "const a = 10\nconst b = 20\nconst c = 30\n")
    }))

  it.scopedLive("a partial Read (offset/limit) is enough to edit", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "big.txt": Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n") })
      const context = writableContext(dir)
      const file = path.join(dir, "big.txt")
      yield* call("Read", { file_path: file, offset: 50, limit: 3 }, context)
      const result = yield* edit(context, { file_path: file, old_string: "line 51\n", new_string: "LINE 51\n" })
      assert.strictEqual(result.result.is_error, undefined, result.text)
      assert.include(result.text, "47\tline 47\n48\tline 48\n49\tline 49\n50\tline 50\n51\tLINE 51\n52\tline 52")
    }))

  it.scopedLive("empty old_string on a missing file creates it (and its directories) without a read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "nested", "dir", "new.txt")
      const result = yield* edit(writableContext(dir), { file_path: file, old_string: "", new_string: "new content\n" })
      assert.strictEqual(result.text, `File created successfully at: ${file}`)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "new content\n")
    }))

  it.scopedLive("empty old_string on a file with content is refused; on an empty file it fills it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "full.txt": "content\n", "empty.txt": "" })
      const context = writableContext(dir)
      const full = yield* edit(context, { file_path: path.join(dir, "full.txt"), old_string: "", new_string: "x" })
      assert.strictEqual(full.text, toolUseError("Cannot create new file - file already exists."))
      const empty = yield* edit(context, { file_path: path.join(dir, "empty.txt"), old_string: "", new_string: "x\n" })
      assert.strictEqual(empty.result.is_error, undefined, empty.text)
      assert.strictEqual(fs.readFileSync(path.join(dir, "empty.txt"), "utf8"), "x\n")
    }))

  it.scopedLive("a missing file with a non-empty old_string says so, naming the cwd", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* edit(writableContext(dir), { file_path: "nope.txt", old_string: "a", new_string: "b" })
      const expected = `File does not exist. Note: your current working directory is ${dir}.`
      assert.strictEqual(result.text, toolUseError(expected))
    }))

  it.scopedLive("CRLF file, LF old_string: matched after normalising, said so, CRLF kept everywhere", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "win.txt", "alpha\r\nbeta\r\ngamma\r\n")
      const result = yield* edit(context, {
        file_path: file,
        old_string: "alpha\nbeta\n",
        new_string: "alpha\nbeta-updated\nextra\n"
      })
      assert.strictEqual(
        result.text,
        `The file ${file} has been updated successfully.\n${LINE_ENDINGS_NOTE}\n${SNIPPET_INTRO}\n` +
          "1\talpha\n2\tbeta-updated\n3\textra\n4\tgamma\n5\t"
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), "alpha\r\nbeta-updated\r\nextra\r\ngamma\r\n")
    }))

  it.scopedLive("CRLF file, one-line exact match, multi-line new_string: the new lines get CRLF", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "win.txt", "line1\r\nline2\r\nline3\r\n")
      const result = yield* edit(context, { file_path: file, old_string: "line2", new_string: "modified\nmore" })
      assert.notInclude(result.text, "Note:")
      assert.strictEqual(fs.readFileSync(file, "utf8"), "line1\r\nmodified\r\nmore\r\nline3\r\n")
    }))

  it.scopedLive("LF file, CRLF old_string: matched after normalising; the file stays LF", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "unix.txt", "one\ntwo\nthree\n")
      const result = yield* edit(context, { file_path: file, old_string: "one\r\ntwo", new_string: "1\r\n2" })
      assert.include(result.text, LINE_ENDINGS_NOTE)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "1\n2\nthree\n")
    }))

  it.scopedLive("mixed line endings: only the edited region changes", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "mixed.txt", "a\r\nb\nc\r\nd\n")
      yield* edit(context, { file_path: file, old_string: "c\nd", new_string: "C\nD" })
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a\r\nb\nC\r\nD\n")
    }))

  it.scopedLive("curly quotes in the file, straight ones sent: matched, said so, curly quotes kept", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "prose.md", "He said \u201chello\u201d and it\u2019s fine.\n")
      const result = yield* edit(context, {
        file_path: file,
        old_string: "said \"hello\" and it's",
        new_string: "said \"goodbye\" and it's"
      })
      assert.include(result.text, QUOTES_NOTE)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "He said \u201cgoodbye\u201d and it\u2019s fine.\n")
    }))

  it.scopedLive("straight quotes in the file, curly ones sent: matched, new_string straightened", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "code.ts", "const s = \"hi\"\n")
      const result = yield* edit(context, {
        file_path: file,
        old_string: "const s = \u201chi\u201d",
        new_string: "const s = \u201cbye\u201d"
      })
      assert.include(result.text, QUOTES_NOTE)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "const s = \"bye\"\n")
    }))

  it.scopedLive("an edit that would leave the file as it is fails instead of reporting success", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "q.md", "say \u201chi\u201d\n")
      const input = { file_path: file, old_string: "say \"hi\"", new_string: "say \u201chi\u201d" }
      const result = yield* edit(context, input)
      assert.strictEqual(result.text, toolUseError("Original and edited file match exactly. Failed to apply edit."))
    }))

  it.scopedLive("nothing fuzzier: whitespace or indentation differences are not matched", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "py.py", "def f():\n    return 1   \n")
      const indentation = yield* edit(context, { file_path: file, old_string: "def f():\n  return 1", new_string: "x" })
      assert.strictEqual(indentation.result.is_error, true)
      const trailing = yield* edit(context, { file_path: file, old_string: "return 1\n", new_string: "x" })
      assert.strictEqual(trailing.text, toolUseError("String to replace not found in file.\nString: return 1\n"))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "def f():\n    return 1   \n")
    }))

  it.scopedLive("a UTF-8 BOM is kept, and the first line is editable without it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "p.cs", "\ufeffusing System;\nclass Test {}\n")
      yield* edit(context, { file_path: file, old_string: "using System;", new_string: "using Up;" })
      const bytes = fs.readFileSync(file)
      assert.deepStrictEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf])
      assert.strictEqual(bytes.subarray(3).toString("utf8"), "using Up;\nclass Test {}\n")
    }))

  it.scopedLive("UTF-16 LE with BOM and CRLF: edited, still UTF-16 LE with BOM and CRLF", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const original = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("caf\u00e9 one\r\ntwo\r\n", "utf16le")])
      writeFiles(dir, { "le.txt": original })
      const context = writableContext(dir)
      const file = path.join(dir, "le.txt")
      recordRead(context, file, original, fs.statSync(file).mtimeMs)
      const input = { file_path: file, old_string: "caf\u00e9 one\ntwo", new_string: "\u4e2d\u6587\nthree" }
      const result = yield* edit(context, input)
      assert.strictEqual(result.result.is_error, undefined, result.text)
      const expected = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("\u4e2d\u6587\r\nthree\r\n", "utf16le")])
      assert.deepStrictEqual(fs.readFileSync(file), expected)
    }))

  it.scopedLive("UTF-16 BE with BOM: edited, still UTF-16 BE with BOM", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const be = (text: string) => Buffer.from(text, "utf16le").swap16()
      const original = Buffer.concat([Buffer.from([0xfe, 0xff]), be("hello world\n")])
      writeFiles(dir, { "be.txt": original })
      const context = writableContext(dir)
      const file = path.join(dir, "be.txt")
      recordRead(context, file, original, fs.statSync(file).mtimeMs)
      yield* edit(context, { file_path: file, old_string: "world", new_string: "w\u00f6rld \u{1f600}" })
      assert.deepStrictEqual(
        fs.readFileSync(file),
        Buffer.concat([Buffer.from([0xfe, 0xff]), be("hello w\u00f6rld \u{1f600}\n")])
      )
    }))

  it.scopedLive("a Latin-1 file keeps every byte it does not edit; characters Latin-1 lacks are refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const original = Buffer.from("caf\u00e9 = 1\nna\u00efve = 2\n", "latin1")
      writeFiles(dir, { "legacy.txt": original })
      const context = writableContext(dir)
      const file = path.join(dir, "legacy.txt")
      recordRead(context, file, original, fs.statSync(file).mtimeMs)
      yield* edit(context, { file_path: file, old_string: "= 1", new_string: "= \u00bd" })
      assert.deepStrictEqual(fs.readFileSync(file), Buffer.from("caf\u00e9 = \u00bd\nna\u00efve = 2\n", "latin1"))
      const euro = yield* edit(context, { file_path: file, old_string: "= 2", new_string: "= \u20ac" })
      assert.strictEqual(
        euro.text,
        toolUseError(
          `${file} is not UTF-8 text; Edit keeps its bytes as Latin-1, which cannot hold "\u20ac" from new_string. ` +
            "Use only characters Latin-1 can encode, or convert the file to UTF-8 first."
        )
      )
    }))

  it.scopedLive("unicode and replacement patterns are taken literally", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "u.txt", "\u4f60\u597d \u{1f600} $name\n")
      yield* edit(context, { file_path: file, old_string: "\u{1f600} $name", new_string: "$& $1 $$ \u{1f680}" })
      assert.strictEqual(fs.readFileSync(file, "utf8"), "\u4f60\u597d $& $1 $$ \u{1f680}\n")
    }))

  it.scopedLive("deleting whole lines removes their line breaks too", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "d.txt", "keep\ndrop me\nkeep too\n")
      yield* edit(context, { file_path: file, old_string: "drop me", new_string: "" })
      assert.strictEqual(fs.readFileSync(file, "utf8"), "keep\nkeep too\n")
      yield* edit(context, { file_path: file, old_string: "too", new_string: "" })
      assert.strictEqual(fs.readFileSync(file, "utf8"), "keep\nkeep \n")
    }))

  it.scopedLive("notebooks and directories are refused with what to do instead", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "n.ipynb": "{}" })
      const context = writableContext(dir)
      const notebook = yield* edit(context, { file_path: path.join(dir, "n.ipynb"), old_string: "{", new_string: "[" })
      assert.strictEqual(
        notebook.text,
        toolUseError("File is a Jupyter Notebook. Use the NotebookEdit tool to edit this file.")
      )
      const directory = yield* edit(context, { file_path: dir, old_string: "a", new_string: "b" })
      const expected = `${dir} is a directory, not a file. Give Edit the path of a file.`
      assert.strictEqual(directory.text, toolUseError(expected))
    }))

  it.scopedLive("keeps the file's mode", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "x.sh", "echo a\n")
      fs.chmodSync(file, 0o700)
      yield* edit(context, { file_path: file, old_string: "echo a", new_string: "echo b" })
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o700)
    }))

  it.scopedLive("a long replacement's snippet stops at 40 lines", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { context, file } = yield* readFile(dir, "s.txt", "start\nend\n")
      const many = Array.from({ length: 100 }, (_, i) => `n${i}`).join("\n")
      const result = yield* edit(context, { file_path: file, old_string: "start", new_string: many })
      const lines = result.text.split("\n")
      assert.strictEqual(lines[2], "1\tn0")
      assert.strictEqual(lines[lines.length - 2], "40\tn39")
      assert.strictEqual(lines[lines.length - 1], "... (62 more lines)")
    }))

  it("declares itself not read-only, not concurrency-safe, not destructive; getPath resolves symlinks", () => {
    const dir = fs.realpathSync(fs.mkdtempSync("/tmp/toolwright-edit-"))
    fs.mkdirSync(path.join(dir, "real"))
    fs.symlinkSync(path.join(dir, "real"), path.join(dir, "alias"))
    const input = { file_path: "alias/x.txt", old_string: "a", new_string: "b" }
    const context = ToolUseContext.make({ cwd: dir })
    assert.strictEqual(EditTool.isReadOnly(input), false)
    assert.strictEqual(EditTool.isConcurrencySafe(input), false)
    assert.strictEqual(EditTool.isDestructive(input), false)
    assert.strictEqual(EditTool.getPath(input, context), path.join(dir, "real", "x.txt"))
    assert.deepStrictEqual(EditTool.ruleSubjects(input, context).paths, [
      { path: path.join(dir, "real", "x.txt"), access: "write" }
    ])
    fs.rmSync(dir, { recursive: true })
  })
})
