/**
 * A line range of a file too big to hold in memory (a multi-gigabyte log): the file is streamed, decoded
 * as Edit decodes it (`internal/encoding.ts`), hashed for the read-file state, its lines counted, and only
 * the requested lines kept, each already cut to the line limit and all of them within a budget of shown
 * characters, so neither one endless line nor a huge `limit` can fill memory.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { TextDecoder } from "node:util"
import { ToolErrors } from "@toolwright/core"
import { Effect, Predicate } from "effect"
import type { Encoding } from "./textDecoding.js"
import { cutLine, detectEncoding, looksBinary } from "./textDecoding.js"

export interface StreamedRange {
  /** The requested lines, cut; empty when their rendering went over the budget. */
  readonly lines: Array<string>
  readonly totalLines: number
  readonly contentHash: string
  readonly binary: boolean
  /** Characters of the requested lines as Read renders them (`N\tline`, joined by newlines), even over budget. */
  readonly shownChars: number
}

/** Decodes a file chunk by chunk; `end` flushes what a chunk boundary left pending. */
interface ChunkDecoder {
  readonly decode: (bytes: Buffer) => string
  readonly end: () => string
}

const LABELS = { utf8: "utf-8", "utf8-bom": "utf-8", utf16le: "utf-16le", utf16be: "utf-16be" } as const

/**
 * The decoder for what the BOM announces. UTF-8 is fatal: one invalid byte anywhere makes Edit decode the
 * whole file as Latin-1, so the stream must start over as Latin-1 too (see `NotUtf`).
 */
const bomDecoder = (encoding: Encoding): ChunkDecoder => {
  const decoder = new TextDecoder(LABELS[encoding], { fatal: encoding === "utf8" || encoding === "utf8-bom" })
  return { decode: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode() }
}

/** Byte for byte, as `Buffer`'s latin1 (TextDecoder's "latin1" is windows-1252, which maps 0x80-0x9f otherwise). */
const latin1Decoder: ChunkDecoder = { decode: (bytes) => bytes.toString("latin1"), end: () => "" }

/** The stream is not what its BOM (or lack of one) said: invalid UTF-8, or UTF-16 with an odd byte count. */
class NotUtf {
  readonly _tag = "NotUtf"
}

/** One pass over the file; as Latin-1 (every byte a character) it always succeeds. */
function scan(
  file: string,
  first: number,
  count: number,
  maxChars: number,
  maxShownChars: number,
  latin1: true,
  signal: AbortSignal
): Promise<StreamedRange>
function scan(
  file: string,
  first: number,
  count: number,
  maxChars: number,
  maxShownChars: number,
  latin1: false,
  signal: AbortSignal
): Promise<StreamedRange | NotUtf>
async function scan(
  file: string,
  first: number,
  count: number,
  maxChars: number,
  maxShownChars: number,
  latin1: boolean,
  signal: AbortSignal
): Promise<StreamedRange | NotUtf> {
  const hash = createHash("sha256")
  let lines: Array<string> = []
  const last = first + count - 1
  let decoder: ChunkDecoder | undefined
  let encoding: Encoding = "utf8"
  let bytesRead = 0
  let lineNumber = 1
  let shownChars = 0
  // The current line's text, kept only while it is in range and only up to maxChars (+1 to see a cut).
  let current = ""
  let lineHasText = false
  const endLine = () => {
    if (lineNumber >= first && lineNumber <= last) {
      const line = cutLine(current.endsWith("\r") ? current.slice(0, -1) : current, maxChars)
      shownChars += (lineNumber > first ? 1 : 0) + String(lineNumber).length + 1 + line.length
      if (shownChars <= maxShownChars) lines.push(line)
      else lines = []
    }
    lineNumber++
    current = ""
    lineHasText = false
  }
  const take = (text: string) => {
    let start = 0
    for (;;) {
      const newline = text.indexOf("\n", start)
      const end = newline === -1 ? text.length : newline
      if (end > start) lineHasText = true
      if (lineNumber >= first && lineNumber <= last && current.length <= maxChars) {
        current += text.slice(start, Math.min(end, start + maxChars + 1 - current.length))
      }
      if (newline === -1) return
      endLine()
      start = newline + 1
    }
  }
  try {
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20, signal })) {
      const bytes: Buffer = chunk
      hash.update(bytes)
      bytesRead += bytes.length
      if (decoder === undefined) {
        encoding = latin1 ? "utf8" : detectEncoding(bytes)
        if (looksBinary(bytes, encoding)) return { lines: [], totalLines: 0, contentHash: "", binary: true, shownChars }
        decoder = latin1 ? latin1Decoder : bomDecoder(encoding)
      }
      take(decoder.decode(bytes))
    }
    if (decoder !== undefined) take(decoder.end())
  } catch (error) {
    // TextDecoder's fatal mode reports invalid UTF-8 as a TypeError with this code.
    if (Predicate.hasProperty(error, "code") && error.code === "ERR_ENCODING_INVALID_ENCODED_DATA") return new NotUtf()
    throw error
  }
  if (!latin1 && (encoding === "utf16le" || encoding === "utf16be") && bytesRead % 2 === 1) return new NotUtf()
  if (lineHasText) endLine()
  return { lines, totalLines: lineNumber - 1, contentHash: hash.digest("hex"), binary: false, shownChars }
}

/**
 * Lines `first` (1-based) to `first + count - 1`, each cut to `maxChars`, kept only while their rendering
 * stays within `maxShownChars`. CRLF and LF both end a line, and a final line ending does not start another
 * line, as for whole files. A file that is not valid in its encoding is read a second time, as Latin-1.
 */
export const readLineRange = (
  file: string,
  first: number,
  count: number,
  maxChars: number,
  maxShownChars = Infinity
): Effect.Effect<StreamedRange, ToolErrors.ToolError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const range = await scan(file, first, count, maxChars, maxShownChars, false, signal)
      return range instanceof NotUtf ? scan(file, first, count, maxChars, maxShownChars, true, signal) : range
    },
    catch: (error) =>
      new ToolErrors.ToolError({
        message: `Could not read ${file}: ${error instanceof Error ? error.message : String(error)}`
      })
  })
