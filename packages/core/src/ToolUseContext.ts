/**
 * The context one tool call runs in: working directory, session, project directory, permission
 * context and the session's read-file state. Abort is fiber interruption, so it is not a field.
 */
import type { PermissionContext } from "./Permission.js"
import type { CommandHook } from "./Settings.js"
import { emptyPermissionContext } from "./Permission.js"

/** What Read recorded about a file, so Write and Edit can refuse to clobber a file changed since. */
export interface ReadFileEntry {
  readonly path: string
  readonly mtimeMs: number
  readonly contentHash: string
  readonly offset?: number
  readonly limit?: number
  readonly readAt: number
}

/** The files read in a session, by absolute path. Shared by every call of the session. */
export class ReadFileState {
  readonly #entries = new Map<string, ReadFileEntry>()
  get(path: string): ReadFileEntry | undefined {
    return this.#entries.get(path)
  }
  set(entry: ReadFileEntry): void {
    this.#entries.set(entry.path, entry)
  }
  delete(path: string): void {
    this.#entries.delete(path)
  }
  get size(): number {
    return this.#entries.size
  }
}

export interface ToolUseContext {
  readonly cwd: string
  readonly sessionId: string
  /** Where the session's files live (persisted results, transcripts). */
  readonly projectDir: string
  readonly permissionContext: PermissionContext
  readonly readFileState: ReadFileState
  /** The id of the call being run; set by the runtime for each call. */
  readonly toolUseId: string
  /** Settings `env`: variables for the processes tools start (Bash merges them over its own environment). */
  readonly env?: Readonly<Record<string, string>>
  /** The command hooks of the session's settings, run by `CommandHooks.layerFromContext`. */
  readonly commandHooks?: ReadonlyArray<CommandHook>
  /** Settings `toolResultThresholds`: per-tool persistence thresholds over the result store's own. */
  readonly toolResultThresholds?: Readonly<Record<string, number>>
}

export interface MakeOptions {
  readonly cwd: string
  /** The user's home; the default project directory lives under it. */
  readonly homeDir?: string
  readonly sessionId?: string
  readonly projectDir?: string
  readonly permissionContext?: PermissionContext
  readonly readFileState?: ReadFileState
  readonly env?: Readonly<Record<string, string>>
  readonly commandHooks?: ReadonlyArray<CommandHook>
  readonly toolResultThresholds?: Readonly<Record<string, number>>
}

/** `~/.toolwright/projects/<cwd with every separator and dot replaced by ->`, as Claude Code names them. */
export const defaultProjectDir = (homeDir: string, cwd: string): string =>
  `${homeDir}/.toolwright/projects/${cwd.replace(/[^A-Za-z0-9]/g, "-")}`

// The user's home from the environment where there is one (Node, Bun, Deno's compat layer), so an embedder
// who passes no homeDir still gets results under ~/.toolwright rather than inside the project.
const environmentHome = (): string | undefined => {
  const home = globalThis.process?.env?.["HOME"]
  return typeof home === "string" && home !== "" ? home : undefined
}

/** A session's context, with the defaults an embedder would pick: a fresh session and read-file state. */
export const make = (options: MakeOptions): ToolUseContext => ({
  cwd: options.cwd,
  sessionId: options.sessionId ?? crypto.randomUUID(),
  projectDir: options.projectDir ?? defaultProjectDir(options.homeDir ?? environmentHome() ?? options.cwd, options.cwd),
  permissionContext: options.permissionContext ?? emptyPermissionContext(),
  readFileState: options.readFileState ?? new ReadFileState(),
  toolUseId: "",
  ...(options.env !== undefined ? { env: options.env } : {}),
  ...(options.commandHooks !== undefined ? { commandHooks: options.commandHooks } : {}),
  ...(options.toolResultThresholds !== undefined ? { toolResultThresholds: options.toolResultThresholds } : {})
})

/** The context for one call of the session. */
export const forCall = (context: ToolUseContext, toolUseId: string): ToolUseContext => ({ ...context, toolUseId })
