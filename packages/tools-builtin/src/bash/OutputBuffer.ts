/**
 * A command's output as it arrives, in bounded memory: the first and last halves of the result budget stay
 * in memory, and once the output outgrows the budget everything is also spooled to a file (up to a cap), so
 * a command printing gigabytes costs a few hundred kilobytes of heap and the model still gets head + tail.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { StringDecoder } from "node:string_decoder"

export interface Options {
  /** Characters the model may read; longer output is cut in the middle (`BASH_MAX_OUTPUT_LENGTH`). */
  readonly maxChars: number
  /** Where the full output is saved once it outgrows `maxChars`; undefined keeps nothing on disk. */
  readonly spoolPath: string | undefined
  /** Bytes of output saved to the spool file at most; the rest is only counted. */
  readonly maxSpoolBytes: number
}

/** Cuts `text` to `maxChars` in the middle, saying how many characters were dropped. */
export const truncateMiddle = (text: string, maxChars: number): string => {
  if (text.length <= maxChars) return text
  const half = Math.floor(maxChars / 2)
  return joinCut(text.slice(0, half), text.length - 2 * half, text.slice(text.length - half))
}

const joinCut = (head: string, dropped: number, tail: string): string =>
  `${head}\n\n... [${dropped} characters truncated] ...\n\n${tail}`

export class OutputBuffer {
  readonly #options: Options
  readonly #decoder = new StringDecoder("utf8")
  readonly #half: number
  #head = ""
  /** Recent chunks; their total length is kept between `half` and about twice that. */
  #tail: Array<string> = []
  #tailChars = 0
  #total = 0
  #pending = ""
  #spoolFd: number | undefined
  #spoolBytes = 0
  #spoolFull = false
  #spooled = false
  #ended = false
  /** Output that arrived since the last `takeDelta`, for streaming progress. */
  #delta: Array<string> = []
  #deltaChars = 0

  constructor(options: Options) {
    this.#options = options
    this.#half = Math.floor(options.maxChars / 2)
  }

  get totalChars(): number {
    return this.#total
  }

  /** The path of the saved full output, if the output outgrew the budget and was spooled. */
  get spoolPath(): string | undefined {
    return this.#spooled ? this.#options.spoolPath : undefined
  }

  /** Whether the spool file reached its cap and later output was only counted. */
  get spoolTruncated(): boolean {
    return this.#spoolFull
  }

  write(chunk: Buffer): void {
    this.#spool(chunk)
    this.#append(this.#decoder.write(chunk))
  }

  /** Ends the byte stream (flushes a split multi-byte character) and closes the spool file. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    this.#append(this.#decoder.end())
    if (this.#spoolFd !== undefined) {
      fs.closeSync(this.#spoolFd)
      this.#spoolFd = undefined
    }
  }

  /** Adds text that did not come from the process (a note for the model); it is not spooled. */
  note(text: string): void {
    this.#append(text)
  }

  /** What arrived since the last call, cut to the budget; empty when nothing did. */
  takeDelta(): string {
    if (this.#deltaChars === 0) return ""
    const text = this.#delta.join("")
    this.#delta = []
    this.#deltaChars = 0
    return truncateMiddle(text, this.#options.maxChars)
  }

  /**
   * Everything so far as the model reads it: whole if it fits, else head and tail with the count cut. A cut
   * text, its marker and `reserve` more characters fit in `maxChars`: a result longer than that would be
   * persisted again downstream, pointing the model at a copy of the cut text instead of the full output.
   */
  text(reserve = 0): string {
    if (this.#total <= this.#options.maxChars) return this.#head + this.#tail.join("")
    const tail = this.#tail.join("")
    const room = Math.max(0, this.#options.maxChars - reserve - joinCut("", this.#total, "").length)
    const headChars = Math.min(this.#head.length, Math.floor(room / 2))
    const kept = tail.slice(tail.length - Math.min(tail.length, room - headChars))
    return joinCut(this.#head.slice(0, headChars), this.#total - headChars - kept.length, kept)
  }

  #append(text: string): void {
    if (text === "") return
    this.#total += text.length
    if (this.#deltaChars <= this.#options.maxChars * 2) {
      this.#delta.push(text)
      this.#deltaChars += text.length
    } else {
      // Nobody took the delta for a while: keep only enough to show its tail.
      this.#delta = [this.#delta.join("").slice(-this.#options.maxChars), text]
      this.#deltaChars = this.#delta[0]!.length + text.length
    }
    if (this.#head.length < this.#half) {
      const room = this.#half - this.#head.length
      this.#head += text.slice(0, room)
      text = text.slice(room)
      if (text === "") return
    }
    this.#tail.push(text)
    this.#tailChars += text.length
    if (this.#tailChars > this.#half * 2 + 65_536) {
      const joined = this.#tail.join("").slice(-this.#half)
      this.#tail = [joined]
      this.#tailChars = joined.length
    }
  }

  #spool(chunk: Buffer): void {
    const target = this.#options.spoolPath
    if (target === undefined || this.#spoolFull) return
    if (this.#spoolFd === undefined) {
      this.#pending += chunk.toString("latin1")
      // Spool only once the output outgrows what the model reads (bytes >= chars, so this is a safe bound).
      if (this.#pending.length <= this.#options.maxChars) return
      fs.mkdirSync(path.dirname(target), { recursive: true })
      this.#spoolFd = fs.openSync(target, "w", 0o600)
      this.#spooled = true
      const first = Buffer.from(this.#pending, "latin1")
      this.#pending = ""
      this.#writeSpool(first)
      return
    }
    this.#writeSpool(chunk)
  }

  #writeSpool(bytes: Buffer): void {
    if (this.#spoolFd === undefined) return
    const room = this.#options.maxSpoolBytes - this.#spoolBytes
    const slice = bytes.length <= room ? bytes : bytes.subarray(0, room)
    fs.writeSync(this.#spoolFd, slice)
    this.#spoolBytes += slice.length
    if (bytes.length > room) this.#spoolFull = true
  }
}
