/**
 * File lists as Glob and Grep show them: newest first (by mtime, then by path so ties are stable) and
 * relative to the cwd when inside it, absolute otherwise, which saves a model's tokens without
 * ambiguity.
 */
import * as fs from "node:fs"
import * as path from "node:path"

export interface Dated {
  readonly file: string
  readonly mtime: number
}

/**
 * A file with its mtime (0 when it cannot be stated: gone since it was listed, or in a directory that
 * can be listed but not searched, EACCES, so it sorts last). `statSync` on purpose: called as rg's lines
 * arrive, the stats overlap rg's walk, and for tens of thousands of files it is several times faster than
 * the promise API's round trips. It must not throw: it runs in rg's stdout handler, where an exception
 * would escape the call and crash the process.
 */
export const dated = (file: string): Dated => {
  try {
    return { file, mtime: fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0 }
  } catch {
    return { file, mtime: 0 }
  }
}

/** Newest first; equal mtimes by path. Sorts `entries` in place and returns the paths. */
export const sortNewestFirst = (entries: Array<Dated>): Array<string> => {
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
