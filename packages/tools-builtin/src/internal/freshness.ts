/**
 * Read-before-write for Write, Edit and NotebookEdit: an existing file may be changed only if the session
 * has read it and it has not changed on disk since (same content hash as recorded), and every successful
 * write records the new state so the next edit needs no re-read. Also the path, stat and commit helpers
 * the writing tools share.
 */
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { ToolErrors } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { describe, errnoCode, writeFileAtomic } from "./atomicWrite.js"
import { hashContent, recordRead } from "./fileState.js"
import { realPath, resolvePath } from "./paths.js"

export const NOT_READ_MESSAGE = "File has not been read yet. Read it first before writing to it."

export const MODIFIED_MESSAGE =
  "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."

/**
 * The paths of a call: `resolved` is absolute with `~` expanded (the read-file state's key), `real` has
 * every symlink resolved (where the bytes really are, what permission rules see and what is written).
 */
export interface TargetPath {
  readonly resolved: string
  readonly real: string
}

export const targetPath = (context: ToolUseContext.ToolUseContext, filePath: string): TargetPath => {
  const resolved = resolvePath(context.cwd, filePath)
  return { resolved, real: realPath(resolved) }
}

const toolError = (message: string) => new ToolErrors.ToolError({ message })

/** The file's stats, or undefined when nothing is (or can be) there. Other failures (EACCES…) are errors. */
export const statIfExists = (file: string): Effect.Effect<Stats | undefined, ToolErrors.ToolError> =>
  Effect.tryPromise({
    try: () => fs.stat(file).then((stats) => stats, (cause: unknown) => {
      if (errnoCode(cause) === "ENOENT" || errnoCode(cause) === "ENOTDIR") return undefined
      return Promise.reject(cause)
    }),
    catch: (cause) => toolError(`Could not inspect ${file}: ${describe(cause)}`)
  })

export const readBytes = (file: string): Effect.Effect<Buffer, ToolErrors.ToolError> =>
  Effect.tryPromise({
    try: () => fs.readFile(file),
    catch: (cause) => toolError(`Could not read ${file}: ${describe(cause)}`)
  })

/** Creates the missing parent directories of a file about to be written. */
export const ensureParentDirectory = (file: string): Effect.Effect<void, ToolErrors.ToolError> =>
  Effect.tryPromise({
    try: () => fs.mkdir(path.dirname(file), { recursive: true }),
    catch: (cause) =>
      toolError(
        errnoCode(cause) === "ENOTDIR" || errnoCode(cause) === "EEXIST"
          ? `Cannot create the directory for ${file}: a parent path exists and is not a directory.`
          : `Cannot create the directory for ${file}: ${describe(cause)}`
      )
  }).pipe(Effect.asVoid)

/**
 * What the session last recorded for this file. The real path first: Read and every write record it, so it
 * is never older than the entry under a symlink's name, which a write through the real path leaves behind.
 */
const lastRead = (context: ToolUseContext.ToolUseContext, target: TargetPath) =>
  context.readFileState.get(target.real) ?? context.readFileState.get(target.resolved)

/**
 * The authoritative check, on the bytes about to be replaced: the session read the file, and those bytes
 * are exactly what it read (or last wrote). A touched-but-unchanged file passes.
 */
export const ensureFresh = (
  context: ToolUseContext.ToolUseContext,
  target: TargetPath,
  currentBytes: Uint8Array
): Effect.Effect<void, ToolErrors.ToolError> => {
  const entry = lastRead(context, target)
  if (entry === undefined) return Effect.fail(toolError(NOT_READ_MESSAGE))
  if (entry.contentHash !== hashContent(currentBytes)) return Effect.fail(toolError(MODIFIED_MESSAGE))
  return Effect.void
}

/**
 * The cheap check `validateInput` runs before permission is asked, so nobody approves a write that must
 * fail: a stat, and a hash only when the mtime moved. `call` still runs `ensureFresh` on the real bytes.
 */
export const precheckFresh = (
  context: ToolUseContext.ToolUseContext,
  target: TargetPath,
  stats: Stats
): Effect.Effect<void, ToolErrors.ToolError> => {
  const entry = lastRead(context, target)
  if (entry === undefined) return Effect.fail(toolError(NOT_READ_MESSAGE))
  if (entry.mtimeMs === stats.mtimeMs) return Effect.void
  return Effect.flatMap(readBytes(target.real), (bytes) => ensureFresh(context, target, bytes))
}

/** Records what a tool just wrote as read, so a following Edit or Write needs no Read in between. */
export const recordWrite = (
  context: ToolUseContext.ToolUseContext,
  target: TargetPath,
  bytes: Uint8Array
): Effect.Effect<void, ToolErrors.ToolError> =>
  Effect.map(statIfExists(target.real), (stats) => {
    const mtimeMs = stats?.mtimeMs ?? Date.now()
    recordRead(context, target.resolved, bytes, mtimeMs)
    if (target.real !== target.resolved) recordRead(context, target.real, bytes, mtimeMs)
  })

/**
 * Replaces the file atomically and records the new bytes as read, as one uninterruptible step: an abort
 * cannot leave a written file that the session believes it has not seen (or the other way round). With
 * `create`, the caller found no file there: one that appeared since is not replaced but reported unread.
 */
export const commitWrite = (
  context: ToolUseContext.ToolUseContext,
  target: TargetPath,
  bytes: Uint8Array,
  options: { readonly create?: boolean } = {}
): Effect.Effect<void, ToolErrors.ToolError> =>
  writeFileAtomic(target.real, bytes, { createOnly: options.create === true }).pipe(
    Effect.mapError((error) =>
      toolError(error._tag === "AtomicWriteTargetExists" ? `${error.message} ${NOT_READ_MESSAGE}` : error.message)
    ),
    Effect.zipRight(recordWrite(context, target, bytes)),
    Effect.uninterruptible
  )

/** "File does not exist" as the Read tool words it, so a model recognises it. */
export const fileDoesNotExist = (context: ToolUseContext.ToolUseContext): string =>
  `File does not exist. Note: your current working directory is ${context.cwd}.`
