/**
 * Where `old_string` is in a file, and what replaces it. Exact match first; failing that, the same search
 * with line endings normalised (CRLF and LF compare equal), then also with curly and straight quotes
 * normalised. Nothing fuzzier: a model that misremembers the text gets an error, not a guess. Matches are
 * reported as ranges of the original text, so the rest of the file keeps its bytes.
 */
import type { LineEnding } from "../internal/encoding.js"
import { dominantLineEnding, firstLineEnding, withLineEnding } from "../internal/encoding.js"

/** How the match was found: as sent, or after one of the two normalisations. */
export type MatchKind = "exact" | "lineEndings" | "quotes"

export interface Matches {
  readonly kind: MatchKind
  /** Non-overlapping `[start, end)` ranges of the original text, in order. */
  readonly ranges: ReadonlyArray<readonly [number, number]>
}

export const LEFT_SINGLE_CURLY_QUOTE = "\u2018"
export const RIGHT_SINGLE_CURLY_QUOTE = "\u2019"
export const LEFT_DOUBLE_CURLY_QUOTE = "\u201c"
export const RIGHT_DOUBLE_CURLY_QUOTE = "\u201d"

const CURLY_QUOTES = /[\u2018\u2019\u201c\u201d]/

/** Curly quotes as straight ones. Each is one UTF-16 unit either way, so indexes do not move. */
export const normalizeQuotes = (text: string): string =>
  CURLY_QUOTES.test(text)
    ? text.replace(/[\u2018\u2019]/g, "'").replace(/[\u201c\u201d]/g, "\"")
    : text

const indexesOf = (haystack: string, needle: string): Array<number> => {
  const found: Array<number> = []
  if (needle === "") return found
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) found.push(i)
  return found
}

/**
 * The text with CRLF turned into LF, and a map back: `crs` holds, in order, the normalised index of each
 * LF that lost its CR, so an index `n` of the normalised text is `n + (crs before n)` in the original.
 */
interface LfView {
  readonly text: string
  readonly crs: ReadonlyArray<number>
}

const lfView = (text: string): LfView => {
  const crs: Array<number> = []
  for (let i = text.indexOf("\r\n"); i !== -1; i = text.indexOf("\r\n", i + 2)) crs.push(i - crs.length)
  return { text: crs.length === 0 ? text : text.replaceAll("\r\n", "\n"), crs }
}

const toOriginal = (view: LfView, index: number): number => {
  let low = 0
  let high = view.crs.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (view.crs[mid] < index) low = mid + 1
    else high = mid
  }
  return index + low
}

const rangesIn = (view: LfView, needle: string): Array<readonly [number, number]> =>
  indexesOf(view.text, needle).map((start) => [toOriginal(view, start), toOriginal(view, start + needle.length)])

/** Finds `oldString` (non-empty) in `text`, exactly if possible, else after normalising. */
export const findMatches = (text: string, oldString: string): Matches | undefined => {
  const exact = indexesOf(text, oldString)
  if (exact.length > 0) return { kind: "exact", ranges: exact.map((start) => [start, start + oldString.length]) }

  const view = lfView(text)
  const needle = oldString.replaceAll("\r\n", "\n")
  if (view.crs.length > 0 || needle !== oldString) {
    const ranges = rangesIn(view, needle)
    if (ranges.length > 0) return { kind: "lineEndings", ranges }
  }

  const quotedText = normalizeQuotes(view.text)
  const quotedNeedle = normalizeQuotes(needle)
  if (quotedText !== view.text || quotedNeedle !== needle) {
    const ranges = rangesIn({ text: quotedText, crs: view.crs }, quotedNeedle)
    if (ranges.length > 0) return { kind: "quotes", ranges }
  }
  return undefined
}

const isOpeningContext = (chars: ReadonlyArray<string>, index: number): boolean => {
  if (index === 0) return true
  return /[\s([{\u2014\u2013]/.test(chars[index - 1])
}

const isLetter = (char: string | undefined): boolean => char !== undefined && /\p{L}/u.test(char)

/** Straight quotes as curly ones, opening or closing by what precedes them; apostrophes stay closing. */
const curlify = (text: string, double: boolean, single: boolean): string => {
  const chars = [...text]
  return chars.map((char, i) => {
    if (double && char === "\"") return isOpeningContext(chars, i) ? LEFT_DOUBLE_CURLY_QUOTE : RIGHT_DOUBLE_CURLY_QUOTE
    if (single && char === "'") {
      if (isLetter(chars[i - 1]) && isLetter(chars[i + 1])) return RIGHT_SINGLE_CURLY_QUOTE
      return isOpeningContext(chars, i) ? LEFT_SINGLE_CURLY_QUOTE : RIGHT_SINGLE_CURLY_QUOTE
    }
    return char
  }).join("")
}

/**
 * `new_string` in the matched text's quote style: when the file had curly quotes where the model sent
 * straight ones, the replacement gets curly quotes too; when the file had straight quotes where the model
 * sent curly ones, the replacement's curly quotes are straightened.
 */
export const matchQuoteStyle = (actualOld: string, newString: string): string => {
  const double = actualOld.includes(LEFT_DOUBLE_CURLY_QUOTE) || actualOld.includes(RIGHT_DOUBLE_CURLY_QUOTE)
  const single = actualOld.includes(LEFT_SINGLE_CURLY_QUOTE) || actualOld.includes(RIGHT_SINGLE_CURLY_QUOTE)
  if (double || single) return curlify(newString, double, single)
  return normalizeQuotes(newString)
}

/**
 * The line ending `new_string` gets: that of the matched text when it spans a line break, else the file's
 * dominant one. So a CRLF file stays CRLF when the model sends LF.
 */
export const replacementLineEnding = (text: string, actualOld: string): LineEnding =>
  firstLineEnding(actualOld) ?? dominantLineEnding(text)

export interface Replacement {
  /** The new text of the whole file. */
  readonly text: string
  /** Where the first replacement starts and ends in the new text, for the snippet. */
  readonly firstStart: number
  readonly firstEnd: number
}

const lineBreakAt = (text: string, index: number): number =>
  text.startsWith("\r\n", index) ? 2 : text.startsWith("\n", index) ? 1 : 0

/**
 * Replaces the ranges with `replacement`. Deleting text that forms whole lines (the match starts a line
 * and `replacement` is empty) also removes the line break after it, so no blank line is left behind.
 */
export const applyReplacement = (
  text: string,
  ranges: ReadonlyArray<readonly [number, number]>,
  replacement: string
): Replacement => {
  const parts: Array<string> = []
  let cursor = 0
  let firstStart = 0
  let firstEnd = 0
  ranges.forEach(([start, end], i) => {
    const startsLine = start === 0 || text.charCodeAt(start - 1) === 10
    const endsWithBreak = end > start && text.charCodeAt(end - 1) === 10
    const extra = replacement === "" && startsLine && !endsWithBreak ? lineBreakAt(text, end) : 0
    parts.push(text.slice(cursor, start), replacement)
    if (i === 0) {
      firstStart = start
      firstEnd = start + replacement.length
    }
    cursor = end + extra
  })
  parts.push(text.slice(cursor))
  return { text: parts.join(""), firstStart, firstEnd }
}

/** `new_string` adapted to the match: quote style for quote-normalised matches, then line endings. */
export const adaptReplacement = (text: string, kind: MatchKind, actualOld: string, newString: string): string => {
  const quoted = kind === "quotes" ? matchQuoteStyle(actualOld, newString) : newString
  return withLineEnding(quoted, replacementLineEnding(text, actualOld))
}
