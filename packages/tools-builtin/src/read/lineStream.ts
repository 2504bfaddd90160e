/**
 * A line range of a file too big to hold in memory (a multi-gigabyte log): the file is streamed once,
 * decoded as its BOM says, hashed for the read-file state, its lines counted, and only the requested
 * lines kept (each already cut to the line limit, so one endless line cannot fill memory either).
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { TextDecoder } from "node:util"
import { ToolErrors } from "@toolwright/core"
import { Effect } from "effect"
import { detectEncoding, looksBinary } from "./textDecoding.js"

export interface StreamedRange {
  readonly lines: Array<string>
  readonly totalLines: number
  readonly contentHash: string
  readonly binary: boolean
}

const LABELS = { utf8: "utf-8", "utf8-bom": "utf-8", utf16le: "utf-16le", utf16be: "utf-16be" } as const

/**
 * Lines `first` (1-based) to `first + count - 1`, each cut to `maxChars`. The decoder drops the BOM; CRLF
 * and LF both end a line, and a final line ending does not start another line, as for whole files.
 */
export const readLineRange = (
  file: string,
  first: number,
  count: number,
  maxChars: number
): Effect.Effect<StreamedRange, ToolErrors.ToolError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const hash = createHash("sha256")
      const lines: Array<string> = []
      const last = first + count - 1
      let decoder: TextDecoder | undefined
      let lineNumber = 1
      // The current line's text, kept only while it is in range and only up to maxChars.
      let current = ""
      let lineHasText = false
      const endLine = () => {
        if (lineNumber >= first && lineNumber <= last) {
          lines.push(current.endsWith("\r") ? current.slice(0, -1) : current)
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
      for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20, signal })) {
        const bytes: Buffer = chunk
        hash.update(bytes)
        if (decoder === undefined) {
          const encoding = detectEncoding(bytes)
          if (looksBinary(bytes, encoding)) return { lines: [], totalLines: 0, contentHash: "", binary: true }
          decoder = new TextDecoder(LABELS[encoding])
        }
        take(decoder.decode(bytes, { stream: true }))
      }
      if (decoder !== undefined) take(decoder.decode())
      if (lineHasText) endLine()
      const cut = lines.map((line) => (line.length > maxChars ? line.slice(0, maxChars) : line))
      return { lines: cut, totalLines: lineNumber - 1, contentHash: hash.digest("hex"), binary: false }
    },
    catch: (error) =>
      new ToolErrors.ToolError({
        message: `Could not read ${file}: ${error instanceof Error ? error.message : String(error)}`
      })
  })
