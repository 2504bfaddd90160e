/**
 * The snippet an Edit result shows: the edited lines with a few lines of context, numbered the way Read
 * numbers them (`N\tline`), found without splitting the whole file into lines.
 */

const CONTEXT_LINES = 4
const MAX_SNIPPET_LINES = 40
const MAX_LINE_CHARS = 2_000

/** The index where the line containing `index` starts. */
const lineStart = (text: string, index: number): number => index <= 0 ? 0 : text.lastIndexOf("\n", index - 1) + 1

/** The index just past the line containing `index` (its LF excluded), or the text's end. */
const lineEnd = (text: string, index: number): number => {
  const next = text.indexOf("\n", index)
  return next === -1 ? text.length : next
}

const countNewlines = (text: string, end: number): number => {
  let count = 0
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) count++
  return count
}

/** The first 2,000 characters of a line, one fewer when the cut would split a surrogate pair (invalid alone). */
const cutLine = (line: string): string => {
  const code = line.charCodeAt(MAX_LINE_CHARS - 1)
  return line.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_LINE_CHARS - 1 : MAX_LINE_CHARS)
}

/**
 * Lines of `text` around `[start, end)` — the region a replacement now occupies — with context, at most
 * 40 lines, each cut at 2,000 characters.
 */
export const snippetAround = (text: string, start: number, end: number): string => {
  let from = lineStart(text, start)
  for (let i = 0; i < CONTEXT_LINES && from > 0; i++) from = lineStart(text, from - 1)
  // A region ending with its line break ends on that line, not the next one.
  const last = end > start ? end - 1 : start
  let to = lineEnd(text, last)
  for (let i = 0; i < CONTEXT_LINES && to < text.length; i++) to = lineEnd(text, to + 1)

  const firstLine = countNewlines(text, from) + 1
  const lines = text.slice(from, to).split("\n")
  const shown = lines.slice(0, MAX_SNIPPET_LINES).map((line, i) => {
    const content = line.endsWith("\r") ? line.slice(0, -1) : line
    const cut = content.length > MAX_LINE_CHARS ? cutLine(content) : content
    return `${firstLine + i}\t${cut}`
  })
  if (lines.length > MAX_SNIPPET_LINES) shown.push(`... (${lines.length - MAX_SNIPPET_LINES} more lines)`)
  return shown.join("\n")
}
