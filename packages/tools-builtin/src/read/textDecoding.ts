/**
 * How Read sees a file's bytes: the encoding its BOM announces (UTF-8 with or without one, UTF-16 LE/BE
 * with one), binary detection for everything else, and line splitting that treats CRLF and LF alike.
 * Whole files are decoded by `internal/encoding.ts`, the decoder Edit uses.
 */
import type { TextEncoding } from "../internal/encoding.js"

export type Encoding = "utf8" | "utf8-bom" | "utf16le" | "utf16be"

export const detectEncoding = (bytes: Uint8Array): Encoding => {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf8-bom"
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return "utf16le"
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return "utf16be"
  return "utf8"
}

/** How many leading bytes binary detection looks at (git looks at the same amount). */
const SNIFF_BYTES = 8000

/**
 * True when the bytes are not text: a NUL byte near the start. UTF-16 files are recognised by their
 * BOM first, so their NULs do not count.
 */
export const looksBinary = (bytes: Uint8Array, encoding: Encoding | TextEncoding): boolean => {
  if (encoding === "utf16le" || encoding === "utf16be") return false
  const end = Math.min(bytes.length, SNIFF_BYTES)
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true
  return false
}

/**
 * The file's lines as `cat -n` sees them: CRLF and LF both end a line, and a final line ending does
 * not start another (empty) line.
 */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split(/\r?\n/)
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/**
 * The first `max` characters of a line, one fewer when the cut would keep the first half of a surrogate
 * pair: alone it is not valid Unicode, and the API would receive U+FFFD or reject the request.
 */
export const cutLine = (line: string, max: number): string => {
  if (line.length <= max) return line
  const last = line.charCodeAt(max - 1)
  return line.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}
