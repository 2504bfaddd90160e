/**
 * Builds what a command runs tools with, from its shared options: the tool registry (built-in tools and
 * plugins), the runtime's stage layers and the session's `ToolUseContext`.
 */
import { NodeContext } from "@effect/platform-node"
import { PermissionPrompter, ToolExecutor, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { McpClientManager, McpToolRegistry } from "@toolwright/mcp"
import { BuiltinTools } from "@toolwright/tools-builtin"
import { Context, Effect, Layer, Option } from "effect"
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

/**
 * The runtime over the CLI's registry with `prompter` answering permission asks instead of auto-deny
 * (`toolwright exec` passes its JSON-lines prompter), and the default per-call time limit from
 * `TOOLWRIGHT_TOOL_TIMEOUT_MS` (an invalid value fails at start-up).
 */
export const runtimeLayerWith = <E, R>(prompter: Layer.Layer<PermissionPrompter.PermissionPrompter, E, R>) =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, prompter, ToolExecutor.layerConfig)),
    Layer.provideMerge(registryLayer)
  )

/** The settings files whose `mcpServers` add to the project's `.mcp.json`, lowest first. */
export const mcpSettingsFiles = (cwd: string, settings: Option.Option<string>): ReadonlyArray<string> => [
  path.join(os.homedir(), ".toolwright", "settings.json"),
  path.join(cwd, ".toolwright", "settings.json"),
  path.join(cwd, ".toolwright", "settings.local.json"),
  ...Option.toArray(Option.map(settings, (file) => path.resolve(file)))
]

/**
 * The MCP servers configured for `--cwd` (its `.mcp.json`, then settings' `mcpServers`), connected
 * concurrently; with `warn`, servers that failed are named on stderr with the reason.
 */
export const mcpLayer = (
  options: { readonly cwd: Option.Option<string>; readonly settings?: Option.Option<string> },
  warn = true
): Layer.Layer<McpClientManager.McpClientManager> => {
  const cwd = path.resolve(Option.getOrElse(options.cwd, () => process.cwd()))
  const manager = McpClientManager.layerProject({
    cwd,
    settingsFiles: mcpSettingsFiles(cwd, options.settings ?? Option.none())
  })
  if (!warn) return manager
  return Layer.tap(manager, (context) =>
    Effect.sync(() => {
      for (const server of Context.get(context, McpClientManager.McpClientManager).servers()) {
        if (server.state === "failed" || server.state === "needs-auth") {
          process.stderr.write(`warning: MCP server "${server.name}" ${server.state}: ${server.error ?? ""}\n`)
        }
      }
    }))
}

/** The CLI's registry plus the tools of the MCP servers configured for `--cwd`. */
export const registryLayerFor = (
  options: { readonly cwd: Option.Option<string>; readonly settings?: Option.Option<string> }
) => McpToolRegistry.layer.pipe(Layer.provide(registryLayer), Layer.provideMerge(mcpLayer(options)))

/** The runtime with default stages over `registryLayerFor`. */
export const runtimeLayerFor = (
  options: { readonly cwd: Option.Option<string>; readonly settings?: Option.Option<string> }
) => ToolRuntime.layerDefault.pipe(Layer.provideMerge(registryLayerFor(options)))
