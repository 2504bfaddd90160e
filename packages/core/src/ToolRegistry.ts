/**
 * The tools a runtime knows: registered from plugins (each plugin's layer built once, in the
 * registry's scope), found by name then alias, and assembled into the ordered pool a model sees.
 */
import { Context, Effect, Layer, Option } from "effect"
import type * as Tool from "./Tool.js"
import { provide } from "./Tool.js"
import * as ToolPlugin from "./ToolPlugin.js"
import { ToolProgress } from "./ToolProgress.js"

export interface Service {
  /** Every registered, enabled tool, in pool order. */
  readonly tools: ReadonlyArray<Tool.Any>
  /** The plugins the tools came from, by tool name. */
  readonly pluginOf: (toolName: string) => Option.Option<{ readonly name: string; readonly version: string }>
  /** By exact name first, then by alias. */
  readonly find: (name: string) => Option.Option<Tool.Any>
  /** The pool for a model request: `tools` minus those `exclude` rejects (blanket deny rules). */
  readonly pool: (exclude?: (tool: Tool.Any) => boolean) => ReadonlyArray<Tool.Any>
}

export class ToolRegistry extends Context.Tag("@toolwright/core/ToolRegistry")<ToolRegistry, Service>() {}

const byName = (a: Tool.Any, b: Tool.Any) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * Orders tools the way the prompt cache needs: built-ins sorted by name form a contiguous prefix, then
 * every other tool sorted by name; a name seen twice keeps its first tool (built-ins come first, so an
 * MCP server or a plugin cannot shadow a built-in).
 */
export const assembleToolPool = (tools: ReadonlyArray<Tool.Any>): ReadonlyArray<Tool.Any> => {
  const builtins = tools.filter((tool) => tool.source === "builtin").sort(byName)
  const others = tools.filter((tool) => tool.source !== "builtin").sort(byName)
  const seen = new Set<string>()
  const pool: Array<Tool.Any> = []
  for (const tool of [...builtins, ...others]) {
    if (seen.has(tool.name)) continue
    seen.add(tool.name)
    pool.push(tool)
  }
  return pool
}

/** A registry over tools whose requirements are already met. */
export const fromTools = (
  tools: ReadonlyArray<Tool.Any>,
  plugins: ReadonlyMap<string, { readonly name: string; readonly version: string }> = new Map()
): Service => {
  const pool = assembleToolPool(tools.filter((tool) => tool.isEnabled()))
  const names = new Map<string, Tool.Any>()
  const aliases = new Map<string, Tool.Any>()
  for (const tool of pool) names.set(tool.name, tool)
  for (const tool of pool) {
    for (const alias of tool.aliases) if (!names.has(alias) && !aliases.has(alias)) aliases.set(alias, tool)
  }
  return {
    tools: pool,
    pluginOf: (toolName) => Option.fromNullable(plugins.get(toolName)),
    find: (name) => Option.fromNullable(names.get(name) ?? aliases.get(name)),
    pool: (exclude) => (exclude === undefined ? pool : pool.filter((tool) => !exclude(tool)))
  }
}

/** Builds every plugin's layer in the current scope and provides it, with the environment, to its tools. */
const makeFromPlugins = (plugins: ReadonlyArray<ToolPlugin.Any>) =>
  Effect.gen(function*() {
    // Without `ToolProgress`: the runtime provides each call its own, which a captured one would override.
    const environment = Context.omit(ToolProgress)(yield* Effect.context<unknown>())
    const tools: Array<Tool.Any> = []
    const origin = new Map<string, { readonly name: string; readonly version: string }>()
    for (const plugin of plugins) {
      const built = yield* Layer.build(plugin.layer)
      const context = Context.merge(environment, built)
      for (const tool of plugin.tools) {
        tools.push(provide(tool, context))
        if (!origin.has(tool.name)) origin.set(tool.name, { name: plugin.name, version: plugin.version })
      }
    }
    return fromTools(tools, origin)
  })

/**
 * The registry of the given plugins. Its requirements are what the plugins' layers and tools need from
 * the environment; building fails as their layers can.
 */
export const layer = <const Plugins extends ReadonlyArray<ToolPlugin.Any>>(
  plugins: Plugins
): Layer.Layer<ToolRegistry, ToolPlugin.Errors<Plugins[number]>, ToolPlugin.Requirements<Plugins[number]>> =>
  // The environment is read as `unknown` inside; the signature states exactly what the plugins need.
  Layer.scoped(ToolRegistry, makeFromPlugins(plugins)) as Layer.Layer<
    ToolRegistry,
    ToolPlugin.Errors<Plugins[number]>,
    ToolPlugin.Requirements<Plugins[number]>
  >

/** A registry of ready tools, for tests and embedders that build tools themselves. */
export const layerTools = (tools: ReadonlyArray<Tool.Any>): Layer.Layer<ToolRegistry> =>
  Layer.succeed(ToolRegistry, fromTools(tools))
