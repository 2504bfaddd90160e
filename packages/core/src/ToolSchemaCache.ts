/**
 * Tool definitions rendered once per session. The prompt cache keys on the exact bytes of the tool list,
 * so each tool's JSON Schema is derived from its Schema the first time it is needed and reused, by name,
 * until `clearToolSchemaCache` (an MCP server reconnected, settings changed). The list for a model request
 * follows the pool's order.
 */
import { Context, Effect, Layer } from "effect"
import * as Tool from "./Tool.js"

/** A tool as sent in a model request (Anthropic Messages API shape). */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly input_schema: Tool.JsonSchema
  /** Set on deferred tools the model discovered: the API loads them only when referenced. */
  readonly defer_loading?: true
}

export interface RenderOptions {
  /** Tools sent with `defer_loading: true`. */
  readonly deferLoading?: ReadonlySet<string>
}

export interface Service {
  /** The definition of one tool, rendered on first use and then served from the cache. */
  readonly definition: (tool: Tool.Any) => Effect.Effect<ToolDefinition>
  /** The definitions of a pool, in the pool's order. */
  readonly definitions: (
    tools: ReadonlyArray<Tool.Any>,
    options?: RenderOptions
  ) => Effect.Effect<ReadonlyArray<ToolDefinition>>
  /** The tool list as JSON text; the same pool gives the same bytes for the whole session. */
  readonly render: (tools: ReadonlyArray<Tool.Any>, options?: RenderOptions) => Effect.Effect<string>
  /** The size in characters of a tool's rendered definition (tool search sizes the pool with it). */
  readonly size: (tool: Tool.Any) => Effect.Effect<number>
  /** Forgets every rendering: the next request renders each tool again. */
  readonly clear: Effect.Effect<void>
}

export class ToolSchemaCache extends Context.Tag("@toolwright/core/ToolSchemaCache")<ToolSchemaCache, Service>() {}

interface Entry {
  readonly definition: ToolDefinition
  readonly json: string
  deferred?: { readonly definition: ToolDefinition; readonly json: string }
}

const render = (tool: Tool.Any): Entry => {
  const definition: ToolDefinition = Object.freeze(Tool.definition(tool))
  return { definition, json: JSON.stringify(definition) }
}

/** A fresh cache; one per session. */
export const make: Effect.Effect<Service> = Effect.sync(() => {
  const entries = new Map<string, Entry>()

  const entryOf = (tool: Tool.Any): Entry => {
    const cached = entries.get(tool.name)
    if (cached !== undefined) return cached
    const entry = render(tool)
    entries.set(tool.name, entry)
    return entry
  }

  const variant = (tool: Tool.Any, options: RenderOptions | undefined) => {
    const entry = entryOf(tool)
    if (options?.deferLoading?.has(tool.name) !== true) return entry
    if (entry.deferred === undefined) {
      const definition: ToolDefinition = Object.freeze({ ...entry.definition, defer_loading: true as const })
      entry.deferred = { definition, json: JSON.stringify(definition) }
    }
    return entry.deferred
  }

  return {
    definition: (tool) => Effect.sync(() => entryOf(tool).definition),
    definitions: (tools, options) => Effect.sync(() => tools.map((tool) => variant(tool, options).definition)),
    render: (tools, options) => Effect.sync(() => `[${tools.map((tool) => variant(tool, options).json).join(",")}]`),
    size: (tool) => Effect.sync(() => entryOf(tool).json.length),
    clear: Effect.sync(() => entries.clear())
  }
})

/** A session's cache. */
export const layer: Layer.Layer<ToolSchemaCache> = Layer.effect(ToolSchemaCache, make)

/** Forgets every rendering of the session's cache (MCP reconnects, settings changes). */
export const clearToolSchemaCache: Effect.Effect<void, never, ToolSchemaCache> = Effect.flatMap(
  ToolSchemaCache,
  (cache) => cache.clear
)
