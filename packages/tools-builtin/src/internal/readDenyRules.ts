/**
 * The session's `Read(...)` deny rules as a filter for search results. The permission stage sees only
 * the directory Glob or Grep searches; without this, `Grep(".", path: ".")` would print the content of a
 * file the user denied reading (`Read(./.env)`). Results under a denied path are dropped, as Claude Code
 * turns those rules into ignore globs.
 */
import * as path from "node:path"
import { PermissionRule } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Either } from "effect"
import { realPath } from "./paths.js"

/** True for an absolute path some Read deny rule covers. */
export type IsDenied = (absolutePath: string) => boolean

/** The deny filter of a session, or undefined when it has no Read path rules (the common, free case). */
export const readDenyFilter = (context: ToolUseContext.ToolUseContext): IsDenied | undefined => {
  const { deny, homeDir } = context.permissionContext
  const patterns: Array<{ readonly pattern: PermissionRule.PathPattern; readonly rootForms: Array<string> }> = []
  for (const entry of deny) {
    const parsed = PermissionRule.parse(entry.rule)
    if (Either.isLeft(parsed) || parsed.right.toolName !== "Read" || parsed.right.content === undefined) continue
    const pattern = PermissionRule.compilePath(parsed.right.content, {
      cwd: context.cwd,
      home: homeDir,
      settingsRoot: entry.root
    })
    // A root reached through a symlink is matched in both spellings.
    const rootForms = pattern.root === undefined ? [] : [...new Set([pattern.root, realPath(pattern.root)])]
    patterns.push({ pattern, rootForms })
  }
  if (patterns.length === 0) return undefined
  return (file) => {
    const forms = [file, realPath(file)]
    return patterns.some(({ pattern, rootForms }) =>
      forms.some((form) => PermissionRule.matchesPath(pattern, path.normalize(form), rootForms))
    )
  }
}
