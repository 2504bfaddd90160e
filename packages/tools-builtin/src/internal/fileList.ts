/**
 * File lists as Glob and Grep show them: newest first (by mtime, then by path so ties are stable) and
 * relative to the cwd when inside it, absolute otherwise, which saves a model's tokens without
 * ambiguity.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Sorts absolute paths newest first. A file gone since it was listed sorts last. `statSync` on purpose:
 * for tens of thousands of files it is several times faster than the promise API's round trips.
 */
export const newestFirst = (files: ReadonlyArray<string>): Array<string> => {
  const entries = files.map((file) => ({ file, mtime: fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
  entries.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
  return entries.map((entry) => entry.file)
}

/** `file` relative to `cwd` when it lies inside it, else as given. */
export const displayPath = (cwd: string, file: string): string => {
  const relative = path.relative(cwd, file)
  if (relative === "" || relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    return file
  }
  return relative
}
