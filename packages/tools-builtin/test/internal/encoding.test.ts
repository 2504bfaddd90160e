import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { countLineEndings, decode, dominantLineEnding, encode, withLineEnding } from "../../src/internal/encoding.js"

const bytes = (...parts: ReadonlyArray<ReadonlyArray<number> | Buffer>) =>
  Buffer.concat(parts.map((part) => (Buffer.isBuffer(part) ? part : Buffer.from(part))))

describe("decode/encode", () => {
  it("recognises UTF-8 with and without BOM, UTF-16 LE/BE with BOM, and Latin-1", () => {
    assert.deepStrictEqual(decode(bytes([0xef, 0xbb, 0xbf], Buffer.from("h\u00e9"))), {
      text: "h\u00e9",
      encoding: "utf8",
      bom: true
    })
    assert.deepStrictEqual(decode(Buffer.from("plain \u{1f600}")), {
      text: "plain \u{1f600}",
      encoding: "utf8",
      bom: false
    })
    assert.deepStrictEqual(decode(bytes([0xff, 0xfe], Buffer.from("\u4e2d\r\n", "utf16le"))), {
      text: "\u4e2d\r\n",
      encoding: "utf16le",
      bom: true
    })
    assert.deepStrictEqual(decode(bytes([0xfe, 0xff], Buffer.from("ab", "utf16le").swap16())), {
      text: "ab",
      encoding: "utf16be",
      bom: true
    })
    assert.deepStrictEqual(decode(Buffer.from([0x63, 0x61, 0x66, 0xe9])), {
      text: "caf\u00e9",
      encoding: "latin1",
      bom: false
    })
  })

  it("never loses a byte: a BOM followed by bytes of another kind falls back to Latin-1", () => {
    const oddUtf16 = bytes([0xff, 0xfe, 0x61, 0x00, 0x62])
    assert.strictEqual(decode(oddUtf16).encoding, "latin1")
    const badUtf8AfterBom = bytes([0xef, 0xbb, 0xbf, 0xff])
    assert.strictEqual(decode(badUtf8AfterBom).encoding, "latin1")
  })

  it.prop(
    "encode(decode(bytes)) gives back every byte sequence exactly",
    { data: FastCheck.uint8Array({ maxLength: 64 }) },
    ({ data }) => {
      const decoded = decode(data)
      assert.deepStrictEqual(encode(decoded.text, decoded.encoding, decoded.bom), Buffer.from(data))
    }
  )

  it.prop(
    "text survives every encoding with a BOM",
    { text: FastCheck.string({ unit: "grapheme", maxLength: 40 }) },
    ({ text }) => {
      for (const encoding of ["utf8", "utf16le", "utf16be"] as const) {
        const decoded = decode(encode(text, encoding, true))
        assert.deepStrictEqual(decoded, { text, encoding, bom: true })
      }
    }
  )
})

describe("line endings", () => {
  it("counts CRLF and bare LF, picks the dominant one, rewrites all breaks", () => {
    assert.deepStrictEqual(countLineEndings("a\r\nb\nc\r\n"), { crlf: 2, lf: 1 })
    assert.strictEqual(dominantLineEnding("a\r\nb\r\nc\n"), "\r\n")
    assert.strictEqual(dominantLineEnding("a\nb\r\n"), "\n")
    assert.strictEqual(dominantLineEnding("no breaks"), "\n")
    assert.strictEqual(withLineEnding("a\nb\r\nc", "\r\n"), "a\r\nb\r\nc")
    assert.strictEqual(withLineEnding("a\nb\r\nc", "\n"), "a\nb\nc")
  })
})
