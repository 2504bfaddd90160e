import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { hashContent } from "../../src/internal/fileState.js"
import { readLineRange } from "../../src/read/lineStream.js"
import { ReadTool, STREAM_ABOVE_BYTES } from "../../src/read/ReadTool.js"
import { decode } from "../../src/internal/encoding.js"
import { cutLine, splitLines } from "../../src/read/textDecoding.js"
import { callTool, contextFor, tempDir, writeFiles } from "../support/runTool.js"

const utf16 = (text: string, endian: "le" | "be"): Buffer => {
  const body = Buffer.from(text, "utf16le")
  if (endian === "be") body.swap16()
  return Buffer.concat([Buffer.from(endian === "le" ? [0xff, 0xfe] : [0xfe, 0xff]), body])
}

/** True when the text has no lone surrogate (one would come back from UTF-8 as U+FFFD). */
const wellFormed = (text: string): boolean => Buffer.from(text, "utf8").toString("utf8") === text

describe("Read: streamed ranges of huge files", () => {
  it.scopedLive("gives the same lines, count and hash as reading the whole file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const texts: Record<string, Buffer> = {
        "lf.txt": Buffer.from("a\nb\nc\n"),
        "no-final-newline.txt": Buffer.from("a\nb\nc"),
        "crlf.txt": Buffer.from("one\r\ntwo\r\n\r\nfour"),
        "bom.txt": Buffer.from("\uFEFFfirst\nsecond"),
        "le.txt": utf16("é\r\nü\n✓", "le"),
        "be.txt": utf16("é\nü\n✓\n", "be"),
        "long.txt": Buffer.from(`${"x".repeat(5000)}\nshort\n`),
        "emoji-cut.txt": Buffer.from(`${"x".repeat(1999)}🎉\n${"y".repeat(1998)}🎉🎉\n`),
        "empty.txt": Buffer.alloc(0),
        // Not UTF-8 (a Latin-1 é late in the file): Latin-1 throughout, as Edit decodes it, not U+FFFD.
        "latin1.txt": Buffer.concat([Buffer.from("ünïcode\n"), Buffer.from("caf\xe9\n", "latin1")]),
        // A UTF-8 BOM before invalid bytes, and an odd-length "UTF-16" file: both Latin-1 for Edit too.
        "bom-latin1.txt": Buffer.from("\xef\xbb\xbfcaf\xe9\n", "latin1"),
        "odd-utf16.txt": Buffer.from([0xff, 0xfe, 0x41, 0x42, 0x43])
      }
      writeFiles(dir, texts)
      for (const [name, bytes] of Object.entries(texts)) {
        const whole = splitLines(decode(bytes).text).map((line) => cutLine(line, 2000))
        for (const [first, count] of [[1, 100], [2, 1], [3, 5], [9, 2]]) {
          const streamed = yield* readLineRange(path.join(dir, name), first, count, 2000)
          assert.deepStrictEqual(streamed.lines, whole.slice(first - 1, first - 1 + count), `${name} ${first}+${count}`)
          assert.strictEqual(streamed.totalLines, whole.length, name)
          assert.strictEqual(streamed.contentHash, hashContent(bytes), name)
          assert.isFalse(streamed.binary)
          assert.isTrue(streamed.lines.every((line) => wellFormed(line)), name)
        }
      }
      const latin1 = yield* readLineRange(path.join(dir, "latin1.txt"), 1, 5, 2000)
      assert.deepStrictEqual(latin1.lines, ["Ã¼nÃ¯code", "café"])
      assert.deepStrictEqual((yield* readLineRange(path.join(dir, "emoji-cut.txt"), 1, 5, 2000)).lines, [
        "x".repeat(1999),
        `${"y".repeat(1998)}🎉`
      ])
    }))

  it.scopedLive("keeps no more than the shown-text budget: a huge limit on a huge file is refused, not held", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "many.txt")
      fs.writeFileSync(file, "0123456789\n".repeat(1000))
      // Each shown line is `N\t` + 10 characters, joined by newlines.
      const shownChars = Array.from({ length: 1000 }, (_, i) => `${i + 1}\t0123456789`).join("\n").length
      const within = yield* readLineRange(file, 1, 1000, 2000, shownChars)
      assert.strictEqual(within.lines.length, 1000)
      assert.strictEqual(within.shownChars, shownChars)
      const over = yield* readLineRange(file, 1, 1000, 2000, shownChars - 1)
      assert.deepStrictEqual(over.lines, [])
      assert.strictEqual(over.shownChars, shownChars)
      assert.strictEqual(over.totalLines, 1000)
    }))

  it.scopedLive("a ranged Read of a file over 16 MB streams it and records its hash", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const line = `${"y".repeat(99)}\n`
      const lines = Math.ceil(STREAM_ABOVE_BYTES / line.length) + 10
      const file = path.join(dir, "huge.log")
      fs.writeFileSync(file, line.repeat(lines - 1) + "the end\n")
      const context = contextFor(dir)
      const call = yield* callTool([ReadTool], "Read", { file_path: file, offset: lines - 1, limit: 5 }, context)
      assert.strictEqual(call.text, `${lines - 1}\t${"y".repeat(99)}\n${lines}\tthe end`)
      assert.strictEqual(context.readFileState.get(file)?.contentHash, hashContent(fs.readFileSync(file)))
      // A limit covering the whole file: refused with the token count, its lines never all held in memory.
      const all = yield* callTool([ReadTool], "Read", { file_path: file, offset: 1, limit: 10_000_000 }, context)
      let shownChars = lines - 1 + "\tthe end".length
      for (let n = 1; n <= lines; n++) shownChars += String(n).length + (n < lines ? 100 : 0)
      assert.strictEqual(
        all.text,
        `<tool_use_error>File content (${
          Math.ceil(shownChars / 4)
        } tokens) exceeds maximum allowed tokens (25000). Please use offset and limit parameters to read specific portions of the file, or use the GrepTool to search for specific content.</tool_use_error>`
      )
      const past = yield* callTool([ReadTool], "Read", { file_path: file, offset: lines + 5, limit: 5 }, context)
      assert.strictEqual(
        past.text,
        `<system-reminder>Warning: the file exists but is shorter than the provided offset (${
          lines + 5
        }). The file has ${lines} lines.</system-reminder>`
      )
    }))
})
