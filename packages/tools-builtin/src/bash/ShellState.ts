/**
 * What the Bash tool keeps between the calls of a session: the shell's working directory (a `cd` applies
 * to the next call, but never outside the working directories), and the environment and limits every
 * command runs with (settings `env`, the SIGTERM→SIGKILL grace, the spool cap).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { ToolUseContext } from "@toolwright/core"
import { Context, Effect, Layer } from "effect"
import { realPath, resolvePath } from "../internal/paths.js"

export interface Options {
  /** Extra environment for every command (settings `env`); it wins over the process's own. */
  readonly env?: Readonly<Record<string, string>>
  /** Milliseconds between SIGTERM and SIGKILL when a command's process group is killed (default 2,000). */
  readonly killGraceMs?: number
  /** Bytes of one command's output saved to disk at most when it is too long to return (default 64 MiB). */
  readonly maxSpoolBytes?: number
  /** A foreground command that times out keeps running as a background task instead of being killed. */
  readonly backgroundOnTimeout?: boolean
}

export interface Service {
  /** The environment a command runs with: the process's, then settings `env`. */
  readonly env: () => Readonly<Record<string, string | undefined>>
  readonly killGraceMs: number
  readonly maxSpoolBytes: number
  readonly backgroundOnTimeout: boolean
  /** The directory the session's next command starts in. */
  readonly cwd: (context: ToolUseContext.ToolUseContext) => Effect.Effect<string>
  /**
   * Records where a command left the shell. When that is outside the working directories (or gone), the
   * session's cwd goes back to the context's and the answer is the directory it was reset to.
   */
  readonly update: (
    context: ToolUseContext.ToolUseContext,
    finalCwd: string | undefined
  ) => Effect.Effect<string | undefined>
}

export class ShellState extends Context.Tag("@toolwright/tools-builtin/ShellState")<ShellState, Service>() {}

/** The cwd plus the session's additional directories, symlinks resolved. */
export const workingDirectories = (context: ToolUseContext.ToolUseContext): ReadonlyArray<string> => [
  realPath(context.cwd),
  ...context.permissionContext.additionalDirectories.map((dir) => realPath(resolvePath(context.cwd, dir)))
]

/** Whether `dir` (physical) is one of the working directories or below one. */
export const isInsideWorkingDirectories = (dir: string, context: ToolUseContext.ToolUseContext): boolean =>
  workingDirectories(context).some((root) =>
    dir === root || dir.startsWith(root.endsWith(path.sep) ? root : root + path.sep)
  )

const isDirectory = (dir: string): boolean => {
  try {
    return fs.statSync(dir).isDirectory()
  } catch {
    return false
  }
}

export const make = (options: Options = {}): Service => {
  const cwds = new Map<string, string>()
  const extraEnv = options.env ?? {}
  return {
    env: () => ({ ...process.env, ...extraEnv }),
    killGraceMs: options.killGraceMs ?? 2_000,
    maxSpoolBytes: options.maxSpoolBytes ?? 64 * 1024 * 1024,
    backgroundOnTimeout: options.backgroundOnTimeout ?? false,
    cwd: (context) =>
      Effect.sync(() => {
        const stored = cwds.get(context.sessionId)
        if (stored !== undefined && isDirectory(stored) && isInsideWorkingDirectories(stored, context)) return stored
        cwds.delete(context.sessionId)
        return context.cwd
      }),
    update: (context, finalCwd) =>
      Effect.sync(() => {
        if (finalCwd === undefined) return undefined
        if (isDirectory(finalCwd) && isInsideWorkingDirectories(realPath(finalCwd), context)) {
          cwds.set(context.sessionId, finalCwd)
          return undefined
        }
        cwds.delete(context.sessionId)
        return context.cwd
      })
  }
}

/** The shell state of a runtime; `options.env` is settings `env`. */
export const layer = (options: Options = {}): Layer.Layer<ShellState> => Layer.sync(ShellState, () => make(options))
