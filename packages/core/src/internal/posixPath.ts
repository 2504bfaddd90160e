/**
 * POSIX path arithmetic for the permission stage, which must stay synchronous and free of `node:` imports:
 * normalising `..` and `.` lexically, resolving against a base, and asking whether one path lies inside
 * another.
 */

/** `/a/./b/../c//d/` → `/a/c/d`; a relative path stays relative (leading `..` kept). */
export const normalize = (path: string): string => {
  const absolute = path.startsWith("/")
  const out: Array<string> = []
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop()
      else if (!absolute) out.push("..")
      continue
    }
    out.push(segment)
  }
  const joined = out.join("/")
  return absolute ? `/${joined}` : joined === "" ? "." : joined
}

/** `path` made absolute against `base` (itself absolute), then normalised. */
export const resolve = (base: string, path: string): string =>
  normalize(path.startsWith("/") ? path : `${base}/${path}`)

/** The path of `path` below `root`, `""` for the root itself, or `undefined` when it lies outside. */
export const relativeInside = (root: string, path: string): string | undefined => {
  if (root === "/") return path === "/" ? "" : path.slice(1)
  if (path === root) return ""
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined
}

export const dirname = (path: string): string => {
  const index = path.lastIndexOf("/")
  if (index <= 0) return index === 0 ? "/" : "."
  return path.slice(0, index)
}

export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)
