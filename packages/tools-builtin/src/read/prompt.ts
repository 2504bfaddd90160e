/**
 * The Read tool's texts: its limits and the instructions a model receives, worded as Claude Code words
 * them so a model's habits carry over.
 */

/** Lines shown when no `limit` is given. */
export const DEFAULT_LINE_LIMIT = 2000
/** Longer lines are cut to this many characters. */
export const MAX_LINE_CHARS = 2000
/** A whole-file read (no offset, no limit) of a larger file is refused. */
export const MAX_FILE_BYTES = 256 * 1024
/** The rendered result may not exceed this many tokens (chars / 4), whatever the range. */
export const MAX_OUTPUT_TOKENS = 25_000

/** Images, PDFs and notebooks are loaded whole to be converted; larger ones are refused. */
export const MAX_MEDIA_BYTES = 64 * 1024 * 1024

export const DESCRIPTION = "Read a file from the local filesystem."

export const PROMPT = `Reads a file from the local filesystem. You can access any file directly by using this tool.
Assume this tool is able to read all files on the machine. If the User provides a path to a file assume that path is valid. It is okay to read a file that does not exist; an error will be returned.

Usage:
- The file_path parameter must be an absolute path, not a relative path
- By default, it reads up to ${DEFAULT_LINE_LIMIT} lines starting from the beginning of the file
- You can optionally specify a line offset and limit (especially handy for long files), but it's recommended to read the whole file by not providing these parameters
- Any lines longer than ${MAX_LINE_CHARS} characters will be truncated
- Results are returned using cat -n format, with line numbers starting at 1
- This tool allows you to read images (eg PNG, JPG, etc). When reading an image file the contents are presented visually as you are a multimodal LLM.
- This tool can read PDF files (.pdf). For large PDFs (more than 10 pages), you MUST provide the pages parameter to read specific page ranges (e.g., pages: "1-5"). Maximum 20 pages per request.
- This tool can read Jupyter notebooks (.ipynb files) and returns all cells with their outputs, combining code, text, and visualizations.
- This tool can only read files, not directories. To read a directory, use an ls command via the Bash tool.
- You can call multiple tools in a single response. It is always better to speculatively read multiple potentially useful files in parallel.
- If you read a file that exists but has empty contents you will receive a system reminder warning in place of file contents.`

const formatFileSize = (bytes: number): string => {
  const kb = bytes / 1024
  if (kb < 1) return `${bytes} bytes`
  if (kb < 1024) return `${kb.toFixed(1).replace(/\.0$/, "")}KB`
  const mb = kb / 1024
  if (mb < 1024) return `${mb.toFixed(1).replace(/\.0$/, "")}MB`
  return `${(mb / 1024).toFixed(1).replace(/\.0$/, "")}GB`
}

export { formatFileSize }

export const fileNotFound = (cwd: string, suggestion: string | undefined): string =>
  `File does not exist. Note: your current working directory is ${cwd}.` +
  (suggestion === undefined ? "" : ` Did you mean ${suggestion}?`)

export const isDirectory = (path: string): string =>
  `EISDIR: illegal operation on a directory, read '${path}'. Read only reads files: use Glob to find files in it, or ls through the Bash tool to list it.`

export const mediaTooLarge = (path: string, bytes: number): string =>
  `${path} is ${formatFileSize(bytes)}: Read converts images, PDFs and notebooks up to ${
    formatFileSize(MAX_MEDIA_BYTES)
  }. Shrink or split it first (e.g. with ImageMagick, pdfseparate or jq through Bash).`

export const notRegularFile = (path: string): string =>
  `Cannot read '${path}': it is not a regular file (a device, FIFO or socket would block or produce endless output).`

export const binaryFile = (extension: string): string =>
  `This tool cannot read binary files. The file appears to be a binary ${
    extension === "" ? "" : `${extension} `
  }file. Please use appropriate tools for binary file analysis.`

export const fileTooLarge = (bytes: number): string =>
  `File content (${formatFileSize(bytes)}) exceeds maximum allowed size (${
    formatFileSize(MAX_FILE_BYTES)
  }). Please use offset and limit parameters to read specific portions of the file, or use the GrepTool to search for specific content.`

export const tooManyTokens = (tokens: number): string =>
  `File content (${tokens} tokens) exceeds maximum allowed tokens (${MAX_OUTPUT_TOKENS}). Please use offset and limit parameters to read specific portions of the file, or use the GrepTool to search for specific content.`

export const notebookTooLarge = (file: string, chars: number): string =>
  `Notebook content (${formatFileSize(chars)}) exceeds maximum allowed size (${
    formatFileSize(MAX_FILE_BYTES)
  }). Use Bash with jq to read specific cells, e.g. cat ${file} | jq '.cells[:20]'`

export const pdfTooManyTokens = (tokens: number): string =>
  `PDF text (${tokens} tokens) exceeds maximum allowed tokens (${MAX_OUTPUT_TOKENS}). Use the pages parameter to read fewer pages at a time.`

export const emptyFile = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"

export const offsetPastEnd = (offset: number, totalLines: number): string =>
  `<system-reminder>Warning: the file exists but is shorter than the provided offset (${offset}). The file has ${totalLines} lines.</system-reminder>`
