/**
 * The session's `Read(...)` deny rules as a filter for search results. The permission stage sees only
 * the directory Glob or Grep searches; without this, `Grep(".", path: ".")` would print the content of a
 * file the user denied reading (`Read(./.env)`). Results under a denied path are dropped, as Claude Code
 * turns those rules into ignore globs. The matching itself is core's `PermissionPolicy.readDenied`.
 */
import { PermissionPolicy, PermissionRule } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Either } from "effect"
import { realPath } from "./paths.js"

/** True for an absolute path some Read deny rule covers. */
export type IsDenied = (absolutePath: string) => boolean

/** The deny filter of a session, or undefined when it has no Read deny rule (the common, free case). */
export const readDenyFilter = (context: ToolUseContext.ToolUseContext): IsDenied | undefined => {
  const hasReadDeny = context.permissionContext.deny.some((entry) => {
    const parsed = PermissionRule.parse(entry.rule)
    return Either.isRight(parsed) && parsed.right.toolName === "Read"
  })
  if (!hasReadDeny) return undefined
  const denied = PermissionPolicy.readDenied(context)
  // Both spellings: the path as listed under the searched root, and where it really is.
  return (file) => denied(file) || denied(realPath(file))
}
