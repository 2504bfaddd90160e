/**
 * Builds what a command runs tools with, from its shared options: the tool registry (built-in tools and
 * plugins), the runtime's stage layers and the session's `ToolUseContext`.
 */
import * as NodePlatform from "./NodePlatform.js"
import {
  CommandHooks,
  PermissionPolicy,
  PermissionPrompter,
  ToolExecutor,
  ToolHooks,
  ToolRegistry,
  ToolRuntime,
  ToolErrors,
  ToolPlugin,
  ToolSearch,
  ToolUseContext
} from "@toolwright/core"
import type { Settings } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { McpClientManager, McpToolRegistry } from "@toolwright/mcp"
import { BuiltinTools, Sandbox } from "@toolwright/tools-builtin"
import { FileSystem } from "@effect/platform"
import { Context, Effect, Layer, Option, ParseResult, Schema } from "effect"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { UsageError } from "./CliError.js"
import * as SettingsLoader from "./SettingsLoader.js"
import * as TerminalPrompter from "./TerminalPrompter.js"

export interface CommonOptions {
  readonly cwd: Option.Option<string>
  readonly settings: Option.Option<string>
  readonly permissionMode: Option.Option<Permission.PermissionMode>
  /** `--allow` / `--deny` rules, the highest settings source after `--settings`. */
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
}

export interface Session {
  readonly context: ToolUseContext.ToolUseContext
  /** The merged settings the context was built from (rules with their files, hooks, env). */
  readonly settings: Settings.Resolved
}

/**
 * The session's context from its settings: cwd resolved, user/project/local/`--settings` files merged,
 * the mode flag over `defaultMode`; `env` and the command hooks ride on the context. Invalid settings
 * fail with a usage error (exit 2) naming the file and the field.
 */
export const makeSession = (
  options: CommonOptions,
  sessionId?: string
): Effect.Effect<Session, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const cwd = path.resolve(Option.getOrElse(options.cwd, () => process.cwd()))
    const home = os.homedir()
    const settings = yield* SettingsLoader.load({
      cwd,
      home,
      settingsFile: Option.getOrUndefined(options.settings),
      permissionMode: Option.getOrUndefined(options.permissionMode),
      allow: options.allow ?? [],
      deny: options.deny ?? []
    })
    return {
      settings,
      context: ToolUseContext.make({
        cwd,
        homeDir: home,
        ...(sessionId !== undefined ? { sessionId } : {}),
        permissionContext: settings.permissionContext,
        env: settings.env,
        commandHooks: settings.hooks,
        ...(settings.toolResultThresholds !== undefined ? { toolResultThresholds: settings.toolResultThresholds } : {})
      })
    }
  })

/**
 * The stages settings drive: the rule-based policy ("allow always" written to settings.local.json,
 * symlinks resolved) and the command hooks of each session's settings.
 */
export const settingsStages: Layer.Layer<PermissionPolicy.PermissionPolicy | ToolHooks.ToolHooks> = Layer.mergeAll(
  PermissionPolicy.layerPersistent,
  CommandHooks.layerFromContext
).pipe(Layer.provide(NodePlatform.layer))

/**
 * The default stages with big results persisted under `~/.toolwright/projects/<cwd>/<session>/tool-results/`
 * (per-tool thresholds from settings ride on each session's context).
 */
export const resultStages: Layer.Layer<
  Layer.Layer.Success<ReturnType<typeof ToolRuntime.defaultStagesFileSystem>>
> = ToolRuntime.defaultStagesFileSystem().pipe(Layer.provide(NodePlatform.layer))

/** The registry of every tool the CLI offers. */
export const registryLayer = ToolRegistry.layer([BuiltinTools.plugin]).pipe(Layer.provide(NodePlatform.layer))

/** A prompter behind the PermissionRequest hooks of the session's settings, which may answer for the user. */
export const withPermissionRequestHooks = <E, R>(prompter: Layer.Layer<PermissionPrompter.PermissionPrompter, E, R>) =>
  CommandHooks.layerPermissionRequest.pipe(Layer.provide(prompter), Layer.provide(NodePlatform.layer))

/** The settings files whose `mcpServers` add to the project's `.mcp.json`, lowest first. */
export const mcpSettingsFiles = (cwd: string, settings: Option.Option<string>): ReadonlyArray<string> => [
  path.join(os.homedir(), ".toolwright", "settings.json"),
  path.join(cwd, ".toolwright", "settings.json"),
  path.join(cwd, ".toolwright", "settings.local.json"),
  ...Option.toArray(Option.map(settings, (file) => path.resolve(file)))
]

export interface McpEnvironment {
  readonly roots: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * What the project's MCP servers get from the session, as in Claude Code: settings' `env` over the process
 * environment (their processes, `${VAR}` in their entries, `MCP_TIMEOUT` / `MCP_TOOL_TIMEOUT`) and its working
 * directories (`cwd` and settings' `additionalDirectories`) as roots. Invalid settings are a usage error.
 */
export const mcpEnvironment = (
  cwd: string,
  settings: Option.Option<string>
): Effect.Effect<McpEnvironment, UsageError> =>
  SettingsLoader.load({ cwd, home: os.homedir(), settingsFile: Option.getOrUndefined(settings) }).pipe(
    Effect.map((resolved) => ({
      roots: [cwd, ...resolved.permissionContext.additionalDirectories],
      env: { ...process.env, ...resolved.env }
    })),
    Effect.provide(NodePlatform.layer)
  )

/**
 * The MCP servers configured for `--cwd` (its `.mcp.json`, then settings' `mcpServers`), connected
 * concurrently with `mcpEnvironment` (settings' `env` over the process environment, the session's working
 * directories answering `roots/list`); with `warn`, servers that failed are named on stderr with the reason.
 */
export const mcpLayer = (
  options: { readonly cwd: Option.Option<string>; readonly settings?: Option.Option<string> },
  warn = true
): Layer.Layer<McpClientManager.McpClientManager> => {
  const cwd = path.resolve(Option.getOrElse(options.cwd, () => process.cwd()))
  const settings = options.settings ?? Option.none()
  const manager = Layer.unwrapEffect(
    mcpEnvironment(cwd, settings).pipe(
      // Invalid settings stop the command where its session is made; the servers still get the cwd.
      Effect.orElseSucceed(() => ({ roots: [cwd], env: process.env })),
      Effect.map(({ env, roots }) =>
        McpClientManager.layerProject({ cwd, roots, env, settingsFiles: mcpSettingsFiles(cwd, settings) })
      )
    )
  )
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

/**
 * The plugins named in settings `plugins`: npm package names (resolved from the project, as its own code
 * would import them) or paths relative to the project (`./tools/local.mjs`). Each module's default export
 * must be a `ToolPlugin`; anything else stops the CLI with a message naming the entry and what to do.
 */
export const loadPlugins = (
  entries: unknown,
  cwd: string,
  sources: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<ToolPlugin.Any>, UsageError> =>
  Effect.gen(function*() {
    if (entries === undefined) return []
    const where = sources.join(", ")
    if (!Array.isArray(entries) || !entries.every((entry) => typeof entry === "string")) {
      return yield* new UsageError({
        message: `Invalid settings in ${where}: at plugins: expected an array of package names or paths, ` +
          `e.g. ["@acme/toolwright-jira", "./tools/local.mjs"]`
      })
    }
    const requireFromProject = createRequire(path.join(cwd, "package.json"))
    const plugins: Array<ToolPlugin.Any> = []
    for (const entry of entries) {
      const isPath = entry.startsWith("./") || entry.startsWith("../") || path.isAbsolute(entry)
      const specifier = isPath ? path.resolve(cwd, entry) : entry
      const module = yield* Effect.tryPromise({
        try: () =>
          ToolPlugin.importModule<{ readonly default?: unknown }>(pathToFileURL(isPath ? specifier : requireFromProject.resolve(specifier)).href),
        catch: (error) =>
          new UsageError({
            message: `Cannot load the plugin "${entry}" named in ${where}: ${ToolErrors.formatError(error)}. ` +
              (isPath
                ? "Check the path (relative to the project directory); plugins are JavaScript modules (.js, .mjs)."
                : `Install it in the project (npm install ${entry}).`)
          })
      })
      const plugin: unknown = module.default
      if (!ToolPlugin.isToolPlugin(plugin)) {
        return yield* new UsageError({
          message: `The plugin "${entry}" named in ${where} has no ToolPlugin as its default export. ` +
            "Export one: export default ToolPlugin.make({ name, version, tools })."
        })
      }
      plugins.push(plugin)
    }
    return plugins
  })

/**
 * The built-in tools configured by the settings of `--cwd`: settings `sandbox` puts every Bash command
 * under the sandbox runtime. An invalid `sandbox` entry is a usage error naming the files read.
 */
export const builtinRegistryFor = (
  options: { readonly cwd: Option.Option<string>; readonly settings?: Option.Option<string> }
): Layer.Layer<ToolRegistry.ToolRegistry, UsageError> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const cwd = path.resolve(Option.getOrElse(options.cwd, () => process.cwd()))
      const settings = yield* SettingsLoader.load({
        cwd,
        home: os.homedir(),
        settingsFile: Option.getOrUndefined(options.settings ?? Option.none())
      })
      const plugins = yield* loadPlugins(settings.merged["plugins"], cwd, settings.sources)
      const raw = settings.merged["sandbox"]
      if (raw === undefined && plugins.length === 0) return registryLayer
      const sandbox = yield* Schema.decodeUnknown(Sandbox.SettingsSchema)(raw ?? {}).pipe(
        Effect.mapError((error) =>
          new UsageError({
            message: `Invalid settings in ${settings.sources.join(", ")}: ${
              // One problem per field: an optional field's union also reports "Expected undefined".
              [
                ...new Map(
                  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
                    const field = ["sandbox", ...issue.path.map(String)].join(".")
                    return [field, `at ${field}: ${issue.message}`] as const
                  }).reverse()
                ).values()
              ].reverse().join("; ")
            }. See the sandbox settings in the README.`
          })
        )
      )
      // Plugins loaded at run time cannot state their requirements to the compiler: the registry gets the
      // Node platform services, and a plugin needing anything else fails here, named, instead of at a call.
      const registry = ToolRegistry.layer([BuiltinTools.make({ sandbox }), ...plugins]).pipe(
        Layer.provide(NodePlatform.layer)
      ) as Layer.Layer<ToolRegistry.ToolRegistry, unknown>
      return registry.pipe(
        Layer.catchAllCause((cause) =>
          Layer.fail(
            new UsageError({
              message: `A plugin named in ${settings.sources.join(", ")} could not be loaded: ${
                ToolErrors.formatCause(cause)
              }. Its layer must need nothing but the Node platform services (FileSystem, Path, CommandExecutor).`
            })
          )
        )
      )
    }).pipe(Effect.provide(NodePlatform.layer))
  )

/** Which commands connect to the project's MCP servers: all but `run` of a tool that cannot need them. */
export interface McpOption {
  readonly cwd: Option.Option<string>
  readonly settings?: Option.Option<string>
  /** False leaves the servers alone (none is started or waited for); default true. */
  readonly mcp?: boolean
}

/**
 * The CLI's registry plus the tools of the MCP servers configured for `--cwd`, with the ToolSearch tool
 * searching that whole pool (its deferral mode from `TOOLWRIGHT_TOOL_SEARCH`; a bad value is a usage error).
 */
export const registryLayerFor = (options: McpOption) =>
  withToolSearch(
    McpToolRegistry.layer.pipe(
      Layer.provide(builtinRegistryFor(options)),
      Layer.provideMerge(options.mcp === false ? McpClientManager.layerEmpty : mcpLayer(options))
    )
  )

/**
 * The registry `mcp serve` offers: built-ins configured by settings (`sandbox`) and settings' `plugins`, as in
 * `run`, with ToolSearch searching that pool; never the project's MCP servers, which serving back could loop.
 */
export const servedRegistryLayerFor = (
  options: { readonly cwd: Option.Option<string>; readonly settings?: Option.Option<string> }
) => withToolSearch(builtinRegistryFor(options))

/** `tools` with the ToolSearch tool searching their pool (its deferral mode from `TOOLWRIGHT_TOOL_SEARCH`). */
const withToolSearch = <E, R>(tools: Layer.Layer<ToolRegistry.ToolRegistry, E, R>) =>
  Layer.unwrapEffect(
    ToolSearch.settingsConfig.pipe(
      Effect.mapError((error) => new UsageError({ message: `Invalid environment: ${String(error)}` })),
      Effect.map((searchSettings) => {
        const searchThePool = Layer.effectDiscard(Effect.gen(function*() {
          const registry = yield* ToolRegistry.ToolRegistry
          const deferred = yield* ToolSearch.DeferredTools
          yield* deferred.setPool(() => registry.pool())
        }))
        return searchThePool.pipe(
          Layer.provideMerge(tools),
          Layer.provideMerge(ToolSearch.layerDeferredTools(searchSettings))
        )
      })
    )
  )

/**
 * The runtime over the CLI's registry and the MCP tools of `--cwd`, with `prompter` answering permission
 * asks (`toolwright exec` passes its JSON-lines prompter) and the default per-call time limit from
 * `TOOLWRIGHT_TOOL_TIMEOUT_MS` (an invalid value is a usage error).
 */
export const runtimeLayerWith = <E, R>(
  prompter: Layer.Layer<PermissionPrompter.PermissionPrompter, E, R>,
  options: McpOption
) =>
  ToolRuntime.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        resultStages,
        settingsStages,
        withPermissionRequestHooks(prompter),
        ToolExecutor.layerConfig.pipe(Layer.mapError((error) => new UsageError({ message: error.message })))
      )
    ),
    Layer.provideMerge(registryLayerFor(options))
  )

/**
 * The runtime of `run`: as `runtimeLayerWith`, asking in the terminal when there is one (else denying);
 * MCP servers' questions (elicitation) go to the same terminal (else are declined).
 */
export const runtimeLayerFor = (options: McpOption) =>
  runtimeLayerWith(TerminalPrompter.layerAuto, options).pipe(Layer.provide(TerminalPrompter.layerAuto))
