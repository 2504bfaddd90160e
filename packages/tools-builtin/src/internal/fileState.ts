/**
 * The read-file state contract between Read (which records) and Write/Edit (which check): a file's
 * mtime and the sha256 of its bytes at the time it was read or last written by a tool.
 */
import { createHash } from "node:crypto"
import type { ToolUseContext } from "@toolwright/core"

export const hashContent = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex")

/** Records that the session has seen `bytes` of `path` as of `mtimeMs`. */
export const recordRead = (
  context: ToolUseContext.ToolUseContext,
  path: string,
  bytes: Uint8Array | string,
  mtimeMs: number,
  range?: { readonly offset?: number; readonly limit?: number }
): void => recordReadHash(context, path, hashContent(bytes), mtimeMs, range)

/** As `recordRead`, for a file hashed while it was streamed (`contentHash` is `hashContent` of its bytes). */
export const recordReadHash = (
  context: ToolUseContext.ToolUseContext,
  path: string,
  contentHash: string,
  mtimeMs: number,
  range?: { readonly offset?: number; readonly limit?: number }
): void => {
  context.readFileState.set({
    path,
    mtimeMs,
    contentHash,
    readAt: Date.now(),
    ...(range?.offset !== undefined ? { offset: range.offset } : {}),
    ...(range?.limit !== undefined ? { limit: range.limit } : {})
  })
}
