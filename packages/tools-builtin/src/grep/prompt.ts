/**
 * The Grep tool's texts and result formats, worded as Claude Code words them so a model's habits
 * (parameter names, `Found N files`, pagination notes) carry over.
 */

/** Entries shown when `head_limit` is not given; 0 means no limit. */
export const DEFAULT_HEAD_LIMIT = 250

/** rg is stopped once its kept output reaches this many characters, whatever head_limit says. */
export const MAX_COLLECTED_CHARS = 20_000_000

/** Lines longer than this are replaced by rg with a short note (rg --max-columns). */
export const MAX_COLUMNS = 500

export const DESCRIPTION = "Search file contents with ripgrep regular expressions."

export const PROMPT = `A powerful search tool built on ripgrep

  Usage:
  - ALWAYS use Grep for search tasks. NEVER invoke \`grep\` or \`rg\` as a Bash command. The Grep tool has been optimized for correct permissions and access.
  - Supports full regex syntax (e.g., "log.*Error", "function\\s+\\w+")
  - Filter files with glob parameter (e.g., "*.js", "**/*.tsx") or type parameter (e.g., "js", "py", "rust")
  - Output modes: "content" shows matching lines, "files_with_matches" shows only file paths (default), "count" shows match counts
  - Use Agent tool for open-ended searches requiring multiple rounds
  - Pattern syntax: Uses ripgrep (not grep) - literal braces need escaping (use \`interface\\{\\}\` to find \`interface{}\` in Go code)
  - Multiline matching: By default patterns match within single lines only. For cross-line patterns like \`struct \\{[\\s\\S]*?field\`, use \`multiline: true\`
`

export const Descriptions = {
  pattern: "The regular expression pattern to search for in file contents",
  path: "File or directory to search in (rg PATH). Defaults to current working directory.",
  glob: "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\") - maps to rg --glob",
  output_mode:
    "Output mode: \"content\" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), \"files_with_matches\" shows file paths (supports head_limit), \"count\" shows match counts (supports head_limit). Defaults to \"files_with_matches\".",
  before: "Number of lines to show before each match (rg -B). Requires output_mode: \"content\", ignored otherwise.",
  after: "Number of lines to show after each match (rg -A). Requires output_mode: \"content\", ignored otherwise.",
  contextAlias: "Alias for context.",
  context:
    "Number of lines to show before and after each match (rg -C). Requires output_mode: \"content\", ignored otherwise.",
  lineNumbers:
    "Show line numbers in output (rg -n). Requires output_mode: \"content\", ignored otherwise. Defaults to true.",
  caseInsensitive: "Case insensitive search (rg -i)",
  type:
    "File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than include for standard file types.",
  head_limit:
    `Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes: content (limits output lines), files_with_matches (limits file paths), count (limits count entries). Defaults to ${DEFAULT_HEAD_LIMIT} when unspecified. Pass 0 for unlimited (use sparingly — large result sets waste context).`,
  offset:
    "Skip first N lines/entries before applying head_limit, equivalent to \"| tail -n +N | head -N\". Works across all output modes. Defaults to 0.",
  multiline:
    "Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false."
} as const

export const NO_FILES = "No files found"
export const NO_MATCHES = "No matches found"

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many)

/** `limit: N, offset: M`, naming only what was applied. */
export const paginationInfo = (appliedLimit: number | undefined, appliedOffset: number | undefined): string =>
  [
    ...(appliedLimit !== undefined ? [`limit: ${appliedLimit}`] : []),
    ...(appliedOffset !== undefined && appliedOffset > 0 ? [`offset: ${appliedOffset}`] : [])
  ].join(", ")

export const filesFound = (filenames: ReadonlyArray<string>, pagination: string): string =>
  filenames.length === 0
    ? NO_FILES
    : `Found ${filenames.length} ${plural(filenames.length, "file", "files")}${
      pagination === "" ? "" : ` ${pagination}`
    }\n${filenames.join("\n")}`

export const contentFound = (content: string, pagination: string): string =>
  `${content === "" ? NO_MATCHES : content}${
    pagination === "" ? "" : `\n\n[Showing results with pagination = ${pagination}]`
  }`

export const countFound = (content: string, matches: number, files: number, pagination: string): string =>
  `${content === "" ? NO_MATCHES : content}\n\nFound ${matches} total ${
    plural(matches, "occurrence", "occurrences")
  } across ${files} ${plural(files, "file", "files")}.${pagination === "" ? "" : ` with pagination = ${pagination}`}`
