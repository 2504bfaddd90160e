import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import sharp from "sharp"
import { hashContent } from "../../src/internal/fileState.js"
import { MAX_IMAGE_BYTES } from "../../src/read/image.js"
import { ReadTool } from "../../src/read/ReadTool.js"
import { makePdf } from "../support/pdf.js"
import { callTool, contextFor, tempDir, writeFiles } from "../support/runTool.js"

const read = (input: unknown, cwd: string) => callTool([ReadTool], "Read", input, contextFor(cwd))

const utf16 = (text: string, endian: "le" | "be"): Uint8Array => {
  const le = Buffer.from(text, "utf16le")
  if (endian === "be") le.swap16()
  return Buffer.concat([Buffer.from(endian === "le" ? [0xff, 0xfe] : [0xfe, 0xff]), le])
}

const image = (width: number, height: number, format: "png" | "jpeg", noise = false) =>
  Effect.promise(() => {
    const channels = 3
    const raw = Buffer.alloc(width * height * channels)
    // Noise does not compress, which makes a big file out of a modest size.
    let seed = 1
    if (noise) {
      for (let i = 0; i < raw.length; i++) {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
        raw[i] = seed >>> 24
      }
    }
    const pipeline = sharp(raw, { raw: { width, height, channels } })
    return (format === "png" ? pipeline.png() : pipeline.jpeg()).toBuffer()
  })

describe("Read: encodings", () => {
  it.scopedLive("UTF-8 with and without BOM, UTF-16 LE and BE with BOM, CRLF: the same lines", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const text = "héllo wörld ✓\r\nsecond 🎉\r\nthird\r\n"
      writeFiles(dir, {
        "plain.txt": text,
        "bom.txt": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
        "le.txt": utf16(text, "le"),
        "be.txt": utf16(text, "be")
      })
      for (const name of ["plain.txt", "bom.txt", "le.txt", "be.txt"]) {
        const call = yield* read({ file_path: path.join(dir, name) }, dir)
        assert.strictEqual(call.text, "1\théllo wörld ✓\n2\tsecond 🎉\n3\tthird", name)
      }
    }))

  it.scopedLive("bytes that are not UTF-8 read as Latin-1, as Edit decodes them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "legacy.txt": Buffer.from("caf\xe9 cr\xe8me\n", "latin1") })
      const call = yield* read({ file_path: path.join(dir, "legacy.txt") }, dir)
      assert.strictEqual(call.text, "1\tcafé crème")
    }))

  it.scopedLive("a UTF-16 BOM on an odd number of bytes is not UTF-16: Latin-1 as for Edit, binary with NULs", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        "odd.txt": new Uint8Array([0xff, 0xfe, 0x41, 0x42, 0x43]),
        "odd-nul.txt": new Uint8Array([0xff, 0xfe, 0x41, 0x00, 0x42])
      })
      const odd = yield* read({ file_path: path.join(dir, "odd.txt") }, dir)
      assert.strictEqual(odd.text, "1\tÿþABC")
      const nul = yield* read({ file_path: path.join(dir, "odd-nul.txt") }, dir)
      assert.strictEqual(
        nul.text,
        "<tool_use_error>This tool cannot read binary files. The file appears to be a binary .txt file. Please use appropriate tools for binary file analysis.</tool_use_error>"
      )
    }))

  it.scopedLive("a file holding only a BOM is empty", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "bom.txt": new Uint8Array([0xef, 0xbb, 0xbf]) })
      const call = yield* read({ file_path: path.join(dir, "bom.txt") }, dir)
      assert.strictEqual(call.text, "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>")
    }))
})

describe("Read: images", () => {
  it.scopedLive("a small image is one image block with its real media type", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const png = yield* image(4, 3, "png")
      const jpeg = yield* image(4, 3, "jpeg")
      writeFiles(dir, { "a.png": png, "really-jpeg.png": jpeg })
      const call = yield* read({ file_path: path.join(dir, "a.png") }, dir)
      assert.deepStrictEqual(call.result.content, [
        { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } }
      ])
      const mislabelled = yield* read({ file_path: path.join(dir, "really-jpeg.png") }, dir)
      assert(Array.isArray(mislabelled.result.content))
      const block = mislabelled.result.content[0]
      assert(block.type === "image")
      assert.strictEqual(block.source.media_type, "image/jpeg")
    }))

  it.scopedLive("a large image is resized to fit 2000 px and the byte limit", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const big = yield* image(2400, 1200, "png", true)
      assert.isAbove(big.length, MAX_IMAGE_BYTES)
      writeFiles(dir, { "big.png": big })
      const call = yield* read({ file_path: path.join(dir, "big.png") }, dir)
      assert(Array.isArray(call.result.content))
      const block = call.result.content[0]
      assert(block.type === "image")
      const bytes = Buffer.from(block.source.data, "base64")
      assert.isAtMost(bytes.length, MAX_IMAGE_BYTES)
      const metadata = yield* Effect.promise(() => sharp(bytes).metadata())
      assert.strictEqual(metadata.width, 2000)
      assert.strictEqual(metadata.height, 1000)
    }))

  it.scopedLive("an image over 64 MB is refused before it is loaded", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "huge.png")
      fs.writeFileSync(file, "")
      fs.truncateSync(file, 65 * 1024 * 1024)
      const call = yield* read({ file_path: file }, dir)
      assert.strictEqual(
        call.text,
        `<tool_use_error>${file} is 65MB: Read converts images, PDFs and notebooks up to 64MB. Shrink or split it first (e.g. with ImageMagick, pdfseparate or jq through Bash).</tool_use_error>`
      )
    }))

  it.scopedLive("a file that is no image is refused with the reason", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "fake.png": "not an image", "empty.gif": "" })
      const fake = yield* read({ file_path: path.join(dir, "fake.png") }, dir)
      assert.strictEqual(
        fake.text,
        `<tool_use_error>${
          path.join(dir, "fake.png")
        } is not a PNG, JPEG, GIF or WebP image (its first bytes match none of them).</tool_use_error>`
      )
      const empty = yield* read({ file_path: path.join(dir, "empty.gif") }, dir)
      assert.strictEqual(empty.text, `<tool_use_error>The image file is empty: ${path.join(dir, "empty.gif")}</tool_use_error>`)
    }))
})

describe("Read: notebooks", () => {
  const notebook = {
    cells: [
      { cell_type: "markdown", id: "intro", source: ["# Title\n", "Some text"], metadata: {} },
      {
        cell_type: "code",
        id: "calc",
        source: "print(1 + 1)\n1 + 2",
        metadata: {},
        execution_count: 1,
        outputs: [
          { output_type: "stream", name: "stdout", text: ["2\n"] },
          { output_type: "execute_result", execution_count: 1, data: { "text/plain": ["3"], "image/png": "iVBO\nRw==" }, metadata: {} }
        ]
      },
      {
        cell_type: "code",
        source: "1 / 0",
        metadata: {},
        outputs: [{ output_type: "error", ename: "ZeroDivisionError", evalue: "division by zero", traceback: ["line 1", "line 2"] }]
      }
    ],
    metadata: { language_info: { name: "python" } },
    nbformat: 4,
    nbformat_minor: 5
  }

  it.scopedLive("cells with their outputs, images as image blocks, as Claude Code shows them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "nb.ipynb": JSON.stringify(notebook, null, 1) })
      const call = yield* read({ file_path: path.join(dir, "nb.ipynb") }, dir)
      assert.deepStrictEqual(call.result.content, [
        {
          type: "text",
          text: "<cell id=\"intro\"><cell_type>markdown</cell_type># Title\nSome text</cell id=\"intro\">\n" +
            "<cell id=\"calc\">print(1 + 1)\n1 + 2</cell id=\"calc\">\n\n2\n\n\n3"
        },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw==" } },
        {
          type: "text",
          text: "<cell id=\"cell-2\">1 / 0</cell id=\"cell-2\">\n\nZeroDivisionError: division by zero\nline 1\nline 2"
        }
      ])
    }))

  it.scopedLive("invalid notebook JSON is a clear error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "bad.ipynb": "{ not json", "odd.ipynb": "{\"cells\": 3}" })
      const bad = yield* read({ file_path: path.join(dir, "bad.ipynb") }, dir)
      assert.match(bad.text, /^<tool_use_error>Could not read the notebook .*bad\.ipynb: the file is not valid JSON \(/)
      const odd = yield* read({ file_path: path.join(dir, "odd.ipynb") }, dir)
      assert.strictEqual(
        odd.text,
        `<tool_use_error>Could not read the notebook ${
          path.join(dir, "odd.ipynb")
        }: the JSON is not a Jupyter notebook (it needs a \`cells\` array of cells with \`cell_type\` and \`source\`).</tool_use_error>`
      )
    }))
})

describe("Read: PDFs", () => {
  it.scopedLive("the text of each page; pages picks a range", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "doc.pdf": makePdf(["Hello page one", "Second (page) two", "Third"]) })
      const file = path.join(dir, "doc.pdf")
      const all = yield* read({ file_path: file }, dir)
      assert.strictEqual(
        all.text,
        `PDF file: ${file} (3 pages)\n<page number="1">\nHello page one\n</page>\n<page number="2">\nSecond (page) two\n</page>\n<page number="3">\nThird\n</page>`
      )
      const some = yield* read({ file_path: file, pages: "2-3" }, dir)
      assert.strictEqual(
        some.text,
        `PDF file: ${file} (pages 2-3 of 3)\n<page number="2">\nSecond (page) two\n</page>\n<page number="3">\nThird\n</page>`
      )
    }))

  it.scopedLive("the PDF library loads outside vitest and the CLI bundle (an application importing the package)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "doc.pdf": makePdf(["Hello page one"]) })
      const fixture = path.join(import.meta.dirname, "..", "fixtures", "read-pdf-outside-bundle.mts")
      // The packages' `source` condition: @toolwright/core from its sources, as vitest and tsc see it.
      const args = ["--conditions=source", "--import", "tsx", fixture, path.join(dir, "doc.pdf")]
      const result = spawnSync(process.execPath, args, { cwd: path.join(import.meta.dirname, "..", ".."), encoding: "utf8" })
      assert.strictEqual(result.stderr, "")
      assert.strictEqual(result.stdout, `["Hello page one"]\n`)
    }))

  it.scopedLive("more than 10 pages need pages; bad ranges and broken files are clear errors", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        "book.pdf": makePdf(Array.from({ length: 12 }, (_, i) => `Chapter ${i + 1}`)),
        "broken.pdf": "%PDF-1.4 this is not really a pdf",
        "notes.txt": "x"
      })
      const book = path.join(dir, "book.pdf")
      const whole = yield* read({ file_path: book }, dir)
      assert.strictEqual(
        whole.text,
        "<tool_use_error>This PDF has 12 pages, which is too many to read at once. Use the pages parameter to read specific page ranges (e.g., pages: \"1-5\"). Maximum 20 pages per request.</tool_use_error>"
      )
      const twelfth = yield* read({ file_path: book, pages: "12" }, dir)
      assert.strictEqual(twelfth.text, `PDF file: ${book} (pages 12-12 of 12)\n<page number="12">\nChapter 12\n</page>`)
      const past = yield* read({ file_path: book, pages: "13-14" }, dir)
      assert.strictEqual(past.text, "<tool_use_error>This PDF has 12 pages; pages from 13 do not exist.</tool_use_error>")
      const tooMany = yield* read({ file_path: book, pages: "1-25" }, dir)
      assert.strictEqual(
        tooMany.text,
        "<tool_use_error>pages \"1-25\" asks for 25 pages; at most 20 can be read at once.</tool_use_error>"
      )
      const garbled = yield* read({ file_path: book, pages: "first" }, dir)
      assert.strictEqual(
        garbled.text,
        "<tool_use_error>pages must be a page number or a range like \"1-5\"; got \"first\".</tool_use_error>"
      )
      const notPdf = yield* read({ file_path: path.join(dir, "notes.txt"), pages: "1" }, dir)
      assert.strictEqual(
        notPdf.text,
        "<tool_use_error>pages applies only to PDF files; for text files use offset and limit.</tool_use_error>"
      )
      const broken = yield* read({ file_path: path.join(dir, "broken.pdf") }, dir)
      assert.strictEqual(broken.result.is_error, true)
      assert.match(broken.text, /^<tool_use_error>Could not read the PDF .*broken\.pdf: /)
    }))
})

describe("Read: images, notebooks and PDFs are recorded for Write, Edit and NotebookEdit", () => {
  it.scopedLive("the read-file state holds each one's bytes hash and mtime", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        "pic.png": yield* image(4, 4, "png"),
        "nb.ipynb": JSON.stringify({ cells: [{ cell_type: "code", source: "1", outputs: [] }] }),
        "doc.pdf": makePdf(["One page"])
      })
      const context = contextFor(dir)
      for (const name of ["pic.png", "nb.ipynb", "doc.pdf"]) {
        const file = path.join(dir, name)
        const call = yield* callTool([ReadTool], "Read", { file_path: file }, context)
        assert.strictEqual(call.result.is_error, undefined, name)
        const entry = context.readFileState.get(file)
        assert.strictEqual(entry?.contentHash, hashContent(fs.readFileSync(file)), name)
        assert.strictEqual(entry?.mtimeMs, fs.statSync(file).mtimeMs, name)
      }
    }))
})
