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

/** As many links as Linux follows in one path before it gives up with ELOOP. */
const MAX_SYMLINKS = 40

/** Where a dangling symlink points (resolved from the link's real directory, as the kernel does), if it is one. */
const danglingTarget = (link: string): string | undefined => {
  try {
    return path.resolve(fs.realpathSync.native(path.dirname(link)), fs.readlinkSync(link))
  } catch {
    return undefined
  }
}

/**
 * The path with every existing symlink resolved; for a path that does not exist yet, its nearest
 * existing ancestor is resolved and the rest appended, so a new file under a symlinked directory
 * still reports where it would really land. A dangling symlink is followed to its missing target for
 * the same reason: writing through it creates the file there, so that is what permission rules must see.
 */
export const realPath = (absolute: string): string => {
  let current = absolute
  let links = 0
  const rest: Array<string> = []
  for (;;) {
    try {
      const real = fs.realpathSync.native(current)
      return rest.length === 0 ? real : path.join(real, ...rest.reverse())
    } catch {
      const target = links < MAX_SYMLINKS ? danglingTarget(current) : undefined
      if (target !== undefined) {
        links++
        current = target
        continue
      }
      const parent = path.dirname(current)
      if (parent === current) return absolute
      rest.push(path.basename(current))
      current = parent
    }
  }
}
