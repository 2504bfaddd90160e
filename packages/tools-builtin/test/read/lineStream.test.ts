import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { hashContent } from "../../src/internal/fileState.js"
import { readLineRange } from "../../src/read/lineStream.js"
import { ReadTool, STREAM_ABOVE_BYTES } from "../../src/read/ReadTool.js"
import { decode } from "../../src/internal/encoding.js"
import { splitLines } from "../../src/read/textDecoding.js"
import { callTool, contextFor, tempDir, writeFiles } from "../support/runTool.js"

const utf16 = (text: string, endian: "le" | "be"): Buffer => {
  const body = Buffer.from(text, "utf16le")
  if (endian === "be") body.swap16()
  return Buffer.concat([Buffer.from(endian === "le" ? [0xff, 0xfe] : [0xfe, 0xff]), body])
}

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
        "empty.txt": Buffer.alloc(0)
      }
      writeFiles(dir, texts)
      for (const [name, bytes] of Object.entries(texts)) {
        const whole = splitLines(decode(bytes).text).map((line) => line.slice(0, 2000))
        for (const [first, count] of [[1, 100], [2, 1], [3, 5], [9, 2]]) {
          const streamed = yield* readLineRange(path.join(dir, name), first, count, 2000)
          assert.deepStrictEqual(streamed.lines, whole.slice(first - 1, first - 1 + count), `${name} ${first}+${count}`)
          assert.strictEqual(streamed.totalLines, whole.length, name)
          assert.strictEqual(streamed.contentHash, hashContent(bytes), name)
          assert.isFalse(streamed.binary)
        }
      }
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
      const past = yield* callTool([ReadTool], "Read", { file_path: file, offset: lines + 5, limit: 5 }, context)
      assert.strictEqual(
        past.text,
        `<system-reminder>Warning: the file exists but is shorter than the provided offset (${
          lines + 5
        }). The file has ${lines} lines.</system-reminder>`
      )
    }))
})
