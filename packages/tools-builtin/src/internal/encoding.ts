/**
 * Text encodings and line endings of files the tools rewrite. A file is decoded into its text plus what
 * it takes to write it back byte for byte: the encoding (UTF-8, UTF-16 LE/BE, or Latin-1 for bytes that
 * are not valid UTF-8, which round-trips every byte), whether it had a BOM, and its dominant line ending.
 */
import { isUtf8 } from "node:buffer"

export type TextEncoding = "utf8" | "utf16le" | "utf16be" | "latin1"

export type LineEnding = "\r\n" | "\n"

/** A decoded file and how to encode it again. */
export interface DecodedText {
  /** The text without its BOM. */
  readonly text: string
  readonly encoding: TextEncoding
  readonly bom: boolean
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>): boolean =>
  bytes.length >= prefix.length && prefix.every((byte, i) => bytes[i] === byte)

/** UTF-16 BE bytes (an even number) as a string: swapped into a copy and decoded as LE (Node has no BE codec). */
const decodeUtf16be = (bytes: Uint8Array): string => Buffer.from(bytes).swap16().toString("utf16le")

/**
 * Decodes a file's bytes so that `encode` gives them back exactly, whatever they are. A BOM decides UTF-8
 * or UTF-16; without one, valid UTF-8 is UTF-8 and anything else is Latin-1, so an edit of a legacy-encoded
 * file rewrites only what it changes.
 */
export const decode = (bytes: Uint8Array): DecodedText => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (startsWith(buffer, UTF8_BOM) && isUtf8(buffer.subarray(3))) {
    return { text: buffer.toString("utf8", 3), encoding: "utf8", bom: true }
  }
  // UTF-16 needs whole code units: an odd length is not UTF-16, and Latin-1 keeps its bytes safe.
  if (buffer.length % 2 === 0) {
    if (startsWith(buffer, [0xff, 0xfe])) return { text: buffer.toString("utf16le", 2), encoding: "utf16le", bom: true }
    if (startsWith(buffer, [0xfe, 0xff])) {
      return { text: decodeUtf16be(buffer.subarray(2)), encoding: "utf16be", bom: true }
    }
  }
  if (isUtf8(buffer)) return { text: buffer.toString("utf8"), encoding: "utf8", bom: false }
  return { text: buffer.toString("latin1"), encoding: "latin1", bom: false }
}

/** The first character Latin-1 cannot hold, if any. */
export const firstUnencodable = (text: string, encoding: TextEncoding): string | undefined => {
  if (encoding !== "latin1") return undefined
  const match = /[^\u0000-\u00ff]/u.exec(text)
  return match === null ? undefined : match[0]
}

/** Encodes text the way `decode` found it: same encoding, BOM kept. Check `firstUnencodable` first. */
export const encode = (text: string, encoding: TextEncoding, bom: boolean): Buffer => {
  switch (encoding) {
    case "utf8":
      return bom ? Buffer.concat([Buffer.from(UTF8_BOM), Buffer.from(text, "utf8")]) : Buffer.from(text, "utf8")
    case "utf16le": {
      const body = Buffer.from(text, "utf16le")
      return bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body
    }
    case "utf16be": {
      const body = Buffer.from(text, "utf16le")
      body.swap16()
      return bom ? Buffer.concat([Buffer.from([0xfe, 0xff]), body]) : body
    }
    case "latin1":
      return Buffer.from(text, "latin1")
  }
}

/** How many line breaks are CRLF and how many are a bare LF. */
export const countLineEndings = (text: string): { readonly crlf: number; readonly lf: number } => {
  let crlf = 0
  let lf = 0
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++
    else lf++
  }
  return { crlf, lf }
}

/** The file's line ending: CRLF when most of its breaks are CRLF, else LF (also for text with no break). */
export const dominantLineEnding = (text: string): LineEnding => {
  const { crlf, lf } = countLineEndings(text)
  return crlf > lf ? "\r\n" : "\n"
}

/** Rewrites every line break of `text` (CRLF or LF) as `ending`. */
export const withLineEnding = (text: string, ending: LineEnding): string => {
  const lf = text.includes("\r\n") ? text.replaceAll("\r\n", "\n") : text
  return ending === "\n" ? lf : lf.replaceAll("\n", "\r\n")
}

/** The ending of the first line break in `text`, if it has one. */
export const firstLineEnding = (text: string): LineEnding | undefined => {
  const i = text.indexOf("\n")
  if (i === -1) return undefined
  return i > 0 && text.charCodeAt(i - 1) === 13 ? "\r\n" : "\n"
}
