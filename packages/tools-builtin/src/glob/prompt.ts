/**
 * The Glob tool's texts, worded as Claude Code words them so a model's habits carry over.
 */

/** At most this many paths are listed. */
export const MAX_RESULTS = 100

export const DESCRIPTION = "Find files by name pattern, newest first."

export const PROMPT = `- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like "**/*.js" or "src/**/*.ts"
- Returns matching file paths sorted by modification time
- Use this tool when you need to find files by name patterns
- When you are doing an open ended search that may require multiple rounds of globbing and grepping, use the Agent tool instead
- You can call multiple tools in a single response. It is always better to speculatively perform multiple searches in parallel if they are potentially useful.`

export const PATH_DESCRIPTION =
  `The directory to search in. If not specified, the current working directory will be used. IMPORTANT: Omit this field to use the default directory. DO NOT enter "undefined" or "null" - simply omit it for the default behavior. Must be a valid directory path if provided.`

export const NO_FILES = "No files found"

export const TRUNCATED = "(Results are truncated. Consider using a more specific path or pattern.)"

export const directoryNotFound = (dir: string, cwd: string): string =>
  `Directory does not exist: ${dir}. Note: your current working directory is ${cwd}.`

export const notADirectory = (dir: string): string => `Path is not a directory: ${dir}`
