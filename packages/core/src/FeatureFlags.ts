/**
 * Feature flags decide which conditional tools a runtime shows, so a deployment enables or hides tools
 * from settings or the environment without code changes. `coordinatorMode` keeps only the coordinator's
 * tools. The flags apply to a registry as a filter (`layerRegistry`): hidden tools leave the pool and
 * cannot be called.
 */
import type { ConfigError } from "effect"
import { Config, Context, Effect, Layer, Option } from "effect"
import type * as Tool from "./Tool.js"
import { ToolRegistry } from "./ToolRegistry.js"
import type { Service as RegistryService } from "./ToolRegistry.js"

/** The tools a coordinator keeps (those of them that exist). */
export const COORDINATOR_MODE_TOOLS: ReadonlySet<string> = new Set([
  "Agent",
  "TaskStop",
  "SendMessage",
  "SyntheticOutput"
])

/** The flag that restricts the pool to `COORDINATOR_MODE_TOOLS`. */
export const COORDINATOR_MODE = "coordinatorMode"

export interface Options {
  /** Flag values; names are matched without regard to case, `-` or `_` (`coordinatorMode` = `COORDINATOR_MODE`). */
  readonly flags?: Readonly<Record<string, boolean>>
  /** Tools shown only when their flag is on: `{ "WebSearch": "webSearch" }`. */
  readonly conditionalTools?: Readonly<Record<string, string>>
}

export interface Service {
  /** Whether a flag is on; unknown flags are off. */
  readonly isEnabled: (flag: string) => boolean
  /** Whether a tool belongs in the pool under the current flags. */
  readonly allowsTool: (tool: Tool.Any) => boolean
}

export class FeatureFlags extends Context.Tag("@toolwright/core/FeatureFlags")<FeatureFlags, Service>() {}

const normalize = (name: string): string => name.replace(/[-_\s]/g, "").toLowerCase()

/** Flags from a record (settings), with the tools each flag guards. */
export const make = (options: Options = {}): Service => {
  const flags = new Map<string, boolean>()
  for (const [name, value] of Object.entries(options.flags ?? {})) flags.set(normalize(name), value)
  const isEnabled = (flag: string) => flags.get(normalize(flag)) === true
  const conditional = new Map(Object.entries(options.conditionalTools ?? {}))
  return {
    isEnabled,
    allowsTool: (tool) => {
      if (isEnabled(COORDINATOR_MODE) && !COORDINATOR_MODE_TOOLS.has(tool.name)) return false
      const flag = conditional.get(tool.name)
      return flag === undefined || isEnabled(flag)
    }
  }
}

/** Flags given as a record, e.g. the `featureFlags` section of the merged settings. */
export const layer = (options: Options = {}): Layer.Layer<FeatureFlags> => Layer.succeed(FeatureFlags, make(options))

/** `coordinatorMode` → `TOOLWRIGHT_FEATURE_COORDINATOR_MODE`. */
export const envName = (flag: string): string =>
  `TOOLWRIGHT_FEATURE_${flag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[-\s]/g, "_").toUpperCase()}`

/**
 * Flags read from the environment, one variable per flag (`TOOLWRIGHT_FEATURE_<NAME>=1|0|true|false|yes|no|
 * on|off`), over the defaults of `options.flags`. The flags read are `coordinatorMode`, those guarding
 * `conditionalTools`, and those named in `options.flags`. A value that is not a boolean fails with a
 * ConfigError naming the variable.
 */
export const layerEnv = (options: Options = {}): Layer.Layer<FeatureFlags, ConfigError.ConfigError> =>
  Layer.effect(
    FeatureFlags,
    Effect.gen(function*() {
      const names = new Set([
        COORDINATOR_MODE,
        ...Object.keys(options.flags ?? {}),
        ...Object.values(options.conditionalTools ?? {})
      ])
      const flags: Record<string, boolean> = { ...options.flags }
      for (const name of names) {
        const value = yield* Config.option(Config.boolean(envName(name)))
        if (Option.isSome(value)) flags[name] = value.value
      }
      return make({ ...options, flags })
    })
  )

/** A registry seen through the flags: hidden tools are neither in the pool nor found by name or alias. */
export const filterRegistry = (registry: RegistryService, flags: Service): RegistryService => {
  const tools = registry.tools.filter(flags.allowsTool)
  const visible = new Set(tools.map((tool) => tool.name))
  return {
    tools,
    pluginOf: (toolName) => (visible.has(toolName) ? registry.pluginOf(toolName) : Option.none()),
    find: (name) => Option.filter(registry.find(name), (tool) => visible.has(tool.name)),
    pool: (exclude) => registry.pool(exclude).filter((tool) => visible.has(tool.name))
  }
}

/** Applies the flags to a registry layer: `FeatureFlags.layerRegistry(ToolRegistry.layer(plugins))`. */
export const layerRegistry = <E, R>(
  registry: Layer.Layer<ToolRegistry, E, R>
): Layer.Layer<ToolRegistry, E, R | FeatureFlags> =>
  Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      return filterRegistry(yield* ToolRegistry, yield* FeatureFlags)
    })
  ).pipe(Layer.provide(registry))
