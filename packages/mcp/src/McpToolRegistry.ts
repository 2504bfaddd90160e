/**
 * A `ToolRegistry` that adds the MCP servers' tools to another registry's tools. The pool is rebuilt
 * whenever a server's tool list changes (connect, reconnect, `list_changed`), so lookups always see the
 * current tools; `assembleToolPool` keeps built-ins first and lets no server shadow one.
 */
import { ToolRegistry } from "@toolwright/core"
import type { Tool } from "@toolwright/core"
import { Effect, Layer, Option } from "effect"
import { McpClientManager } from "./McpClientManager.js"

/** The merged registry over `base` and the manager's current tools. */
export const make = (base: ToolRegistry.Service, manager: McpClientManager["Type"]): ToolRegistry.Service => {
  let version = -1
  let current = base
  const get = (): ToolRegistry.Service => {
    const now = manager.version()
    if (now !== version) {
      const mcpTools = manager.tools()
      const origins = new Map<string, { readonly name: string; readonly version: string }>()
      const versions = new Map(manager.servers().map((server) => [server.name, server.serverInfo?.version ?? ""]))
      for (const tool of mcpTools) {
        const server = tool.mcpInfo?.serverName ?? ""
        origins.set(tool.name, { name: `mcp:${server}`, version: versions.get(server) ?? "" })
      }
      const merged: ReadonlyArray<Tool.Any> = [...base.tools, ...mcpTools]
      current = ToolRegistry.fromTools(merged, origins)
      version = now
    }
    return current
  }
  return {
    get tools() {
      return get().tools
    },
    pluginOf: (toolName) => Option.orElse(base.pluginOf(toolName), () => get().pluginOf(toolName)),
    find: (name) => get().find(name),
    pool: (exclude) => get().pool(exclude)
  }
}

/** Replaces the `ToolRegistry` it is given by one that also holds the MCP servers' tools. */
export const layer: Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry | McpClientManager> =
  Layer.effect(
    ToolRegistry.ToolRegistry,
    Effect.gen(function*() {
      const base = yield* ToolRegistry.ToolRegistry
      const manager = yield* McpClientManager
      return make(base, manager)
    })
  )
