import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Tool } from "@toolwright/core"
import { Effect } from "effect"
import { hashContent } from "../../src/internal/fileState.js"
import { ReadTool } from "../../src/read/ReadTool.js"
import { callTool, contextFor, tempDir, writeFiles } from "../support/runTool.js"

const read = (input: unknown, cwd: string, context = contextFor(cwd)) => callTool([ReadTool], "Read", input, context)

/** True when the text has no lone surrogate (one would come back from UTF-8 as U+FFFD). */
const wellFormed = (text: string): boolean => Buffer.from(text, "utf8").toString("utf8") === text

describe("Read", () => {
  it.scopedLive("numbers lines from 1 with a tab, no padding", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "alpha\nbeta\n\ngamma\n" })
      const call = yield* read({ file_path: path.join(dir, "a.txt") }, dir)
      assert.strictEqual(call.result.is_error, undefined)
      assert.strictEqual(call.text, "1\talpha\n2\tbeta\n3\t\n4\tgamma")
    }))

  it.scopedLive("relative paths resolve against the cwd; offset and limit pick lines", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "sub/b.txt": "1\n2\n3\n4\n5\n6" })
      const call = yield* read({ file_path: "sub/b.txt", offset: 3, limit: 2 }, dir)
      assert.strictEqual(call.text, "3\t3\n4\t4")
      const zero = yield* read({ file_path: "sub/b.txt", offset: 0, limit: 1 }, dir)
      assert.strictEqual(zero.text, "1\t1")
    }))

  it.scopedLive("shows 2,000 lines by default and cuts lines at 2,000 characters", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`)
      lines[0] = "x".repeat(2500)
      writeFiles(dir, { "long.txt": lines.join("\n") })
      const call = yield* read({ file_path: path.join(dir, "long.txt") }, dir)
      const shown = call.text.split("\n")
      assert.strictEqual(shown.length, 2000)
      assert.strictEqual(shown[0], `1\t${"x".repeat(2000)}`)
      assert.strictEqual(shown[1999], "2000\tline 2000")
    }))

  it.scopedLive("the 2,000-character cut never splits a surrogate pair (half an emoji is invalid Unicode)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // Character 2,000 is the first half of 🎉: the cut keeps 1,999 characters, not a lone surrogate.
      writeFiles(dir, { "emoji.txt": `${"a".repeat(1999)}🎉tail\n${"b".repeat(1998)}🎉tail\n` })
      const call = yield* read({ file_path: path.join(dir, "emoji.txt") }, dir)
      assert.strictEqual(call.text, `1\t${"a".repeat(1999)}\n2\t${"b".repeat(1998)}🎉`)
      assert.isTrue(wellFormed(call.text))
    }))

  it.scopedLive("a missing file names the cwd, and suggests a sibling with another extension", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "target.ts": "x" })
      const missing = yield* read({ file_path: path.join(dir, "nothing.txt") }, dir)
      assert.strictEqual(missing.result.is_error, true)
      assert.strictEqual(
        missing.text,
        `<tool_use_error>File does not exist. Note: your current working directory is ${dir}.</tool_use_error>`
      )
      const similar = yield* read({ file_path: path.join(dir, "target.js") }, dir)
      assert.strictEqual(
        similar.text,
        `<tool_use_error>File does not exist. Note: your current working directory is ${dir}. Did you mean ${
          path.join(dir, "target.ts")
        }?</tool_use_error>`
      )
    }))

  it.scopedLive("a directory is an EISDIR error naming it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.mkdirSync(path.join(dir, "folder"))
      const call = yield* read({ file_path: path.join(dir, "folder") }, dir)
      assert.strictEqual(call.result.is_error, true)
      assert.strictEqual(
        call.text,
        `<tool_use_error>EISDIR: illegal operation on a directory, read '${
          path.join(dir, "folder")
        }'. Read only reads files: use Glob to find files in it, or ls through the Bash tool to list it.</tool_use_error>`
      )
    }))

  it.scopedLive("devices and FIFOs are refused instead of blocking forever", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      execFileSync("mkfifo", [path.join(dir, "pipe")])
      const zero = yield* read({ file_path: "/dev/zero" }, dir, contextFor(dir, ["/dev"]))
      assert.strictEqual(
        zero.text,
        "<tool_use_error>Cannot read '/dev/zero': it is not a regular file (a device, FIFO or socket would block or produce endless output).</tool_use_error>"
      )
      const fifo = yield* read({ file_path: "pipe" }, dir)
      assert.strictEqual(
        fifo.text,
        `<tool_use_error>Cannot read '${
          path.join(dir, "pipe")
        }': it is not a regular file (a device, FIFO or socket would block or produce endless output).</tool_use_error>`
      )
    }))

  it.scopedLive("binary files are refused, by extension and by content", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.zip": "PK", "blob": new Uint8Array([1, 2, 0, 3]) })
      const zip = yield* read({ file_path: path.join(dir, "a.zip") }, dir)
      assert.strictEqual(
        zip.text,
        "<tool_use_error>This tool cannot read binary files. The file appears to be a binary .zip file. Please use appropriate tools for binary file analysis.</tool_use_error>"
      )
      const blob = yield* read({ file_path: path.join(dir, "blob") }, dir)
      assert.strictEqual(
        blob.text,
        "<tool_use_error>This tool cannot read binary files. The file appears to be a binary file. Please use appropriate tools for binary file analysis.</tool_use_error>"
      )
    }))

  it.scopedLive("over 256 KB without offset/limit is refused with the size; a range still reads", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "big.txt": `${"y".repeat(99)}\n`.repeat(3000) })
      const call = yield* read({ file_path: path.join(dir, "big.txt") }, dir)
      assert.strictEqual(
        call.text,
        "<tool_use_error>File content (293KB) exceeds maximum allowed size (256KB). Please use offset and limit parameters to read specific portions of the file, or use the GrepTool to search for specific content.</tool_use_error>"
      )
      const ranged = yield* read({ file_path: path.join(dir, "big.txt"), offset: 2999, limit: 5 }, dir)
      assert.strictEqual(ranged.text, `2999\t${"y".repeat(99)}\n3000\t${"y".repeat(99)}`)
    }))

  it.scopedLive("a range whose text is over 25,000 tokens is refused with the count", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "wide.txt": `${"z".repeat(1990)}\n`.repeat(200) })
      const call = yield* read({ file_path: path.join(dir, "wide.txt"), offset: 1, limit: 100 }, dir)
      assert.strictEqual(
        call.text,
        "<tool_use_error>File content (49848 tokens) exceeds maximum allowed tokens (25000). Please use offset and limit parameters to read specific portions of the file, or use the GrepTool to search for specific content.</tool_use_error>"
      )
    }))

  it.scopedLive("offset past the end warns with the line count; an empty file warns", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "short.txt": "one\ntwo\n", "empty.txt": "" })
      const past = yield* read({ file_path: path.join(dir, "short.txt"), offset: 10 }, dir)
      assert.strictEqual(past.result.is_error, undefined)
      assert.strictEqual(
        past.text,
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (10). The file has 2 lines.</system-reminder>"
      )
      const empty = yield* read({ file_path: path.join(dir, "empty.txt") }, dir)
      assert.strictEqual(
        empty.text,
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
      )
    }))

  it.scopedLive("bad offset or limit is a validation error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "a" })
      const call = yield* read({ file_path: path.join(dir, "a.txt"), limit: 0 }, dir)
      assert.strictEqual(
        call.text,
        "<tool_use_error>limit must be a number of lines (an integer, 1 or more); got 0.</tool_use_error>"
      )
    }))

  it.scopedLive("records the read (real path, mtime, hash of the bytes, range) for Write and Edit", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "real.txt": "content\n" })
      fs.symlinkSync(path.join(dir, "real.txt"), path.join(dir, "link.txt"))
      const context = contextFor(dir)
      yield* read({ file_path: "link.txt", offset: 1, limit: 10 }, dir, context)
      const entry = context.readFileState.get(path.join(dir, "real.txt"))
      assert(entry !== undefined)
      assert.strictEqual(entry.contentHash, hashContent(fs.readFileSync(path.join(dir, "real.txt"))))
      assert.strictEqual(entry.mtimeMs, fs.statSync(path.join(dir, "real.txt")).mtimeMs)
      assert.strictEqual(entry.offset, 1)
      assert.strictEqual(entry.limit, 10)
    }))

  it.scopedLive("getPath is the resolved real path; the tool is read-only and concurrency-safe", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.mkdirSync(path.join(dir, "inside"))
      fs.symlinkSync(path.join(dir, "inside"), path.join(dir, "alias"))
      const context = contextFor(dir)
      const input = { file_path: "alias/../alias/x.txt" }
      assert.strictEqual(ReadTool.getPath(input, context), path.join(dir, "inside", "x.txt"))
      assert.deepStrictEqual(ReadTool.ruleSubjects(input, context).paths, [
        { path: path.join(dir, "inside", "x.txt"), access: "read" }
      ])
      assert.isTrue(ReadTool.isReadOnly(input))
      assert.isTrue(ReadTool.isConcurrencySafe(input))
      assert.strictEqual(ReadTool.maxResultSizeChars, Infinity)
      assert.deepStrictEqual(Object.keys(Object(Tool.inputJsonSchema(ReadTool).properties)), [
        "file_path",
        "offset",
        "limit",
        "pages"
      ])
    }))

  it("loads sharp and unpdf only when an image or PDF is read: no static import anywhere in the package", () => {
    // A static import would make every CLI start and `mcp serve` pay for native image code and pdf.js.
    const src = path.join(__dirname, "..", "..", "src")
    const files = fs.readdirSync(src, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"))
    const eager = files.filter((file) =>
      /^import(?!\s+type\b)[^;]*?from\s+"(sharp|unpdf)"/m.test(fs.readFileSync(path.join(src, file), "utf8"))
    )
    assert.deepStrictEqual(eager, [])
    assert.isTrue(files.includes(path.join("read", "image.ts")))
  })
})
