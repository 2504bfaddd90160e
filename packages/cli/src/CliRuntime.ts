/**
 * Builds what a command runs tools with, from its shared options: the tool registry (built-in tools and
 * plugins), the runtime's stage layers and the session's `ToolUseContext`.
 */
import { NodeContext } from "@effect/platform-node"
import { ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { BuiltinTools } from "@toolwright/tools-builtin"
import { Effect, Layer, Option } from "effect"
import * as os from "node:os"
import * as path from "node:path"

export interface CommonOptions {
  readonly cwd: Option.Option<string>
  readonly settings: Option.Option<string>
  readonly permissionMode: Option.Option<Permission.PermissionMode>
}

export interface Session {
  readonly context: ToolUseContext.ToolUseContext
}

/** The session's context: cwd resolved, mode from the flag. */
export const makeSession = (options: CommonOptions, sessionId?: string): Effect.Effect<Session> =>
  Effect.sync(() => {
    const cwd = path.resolve(Option.getOrElse(options.cwd, () => process.cwd()))
    const mode = Option.getOrElse(options.permissionMode, () => "default" as const)
    return {
      context: ToolUseContext.make({
        cwd,
        homeDir: os.homedir(),
        ...(sessionId !== undefined ? { sessionId } : {}),
        permissionContext: { mode, allow: [], deny: [], ask: [], additionalDirectories: [] }
      })
    }
  })

/** The registry of every tool the CLI offers. */
export const registryLayer = ToolRegistry.layer([BuiltinTools.plugin]).pipe(Layer.provide(NodeContext.layer))

/** The runtime with default stages over the CLI's registry. */
export const runtimeLayer = ToolRuntime.layerDefault.pipe(Layer.provideMerge(registryLayer))
