/**
 * Path handling shared by the file tools: `~` expansion, resolution against the call's cwd, and the
 * real path (symlinks resolved) that permission checks must see.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Expands a leading `~` or `~/` to the user's home directory. */
export const expandHome = (p: string): string =>
  p === "~" ? os.homedir() : p.startsWith("~/") ? path.join(os.homedir(), p.slice(2)) : p

/** An absolute, normalised path: `~` expanded, relative paths resolved against `cwd`. */
export const resolvePath = (cwd: string, p: string): string => path.resolve(cwd, expandHome(p))

/**
 * The path with every existing symlink resolved; for a path that does not exist yet, its nearest
 * existing ancestor is resolved and the rest appended, so a new file under a symlinked directory
 * still reports where it would really land.
 */
export const realPath = (absolute: string): string => {
  let current = absolute
  const rest: Array<string> = []
  for (;;) {
    try {
      const real = fs.realpathSync.native(current)
      return rest.length === 0 ? real : path.join(real, ...rest.reverse())
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return absolute
      rest.push(path.basename(current))
      current = parent
    }
  }
}
