/**
 * `toolwright tools list [--json]` and `toolwright tools schema NAME`: what the runtime offers and the
 * exact JSON Schema a model is sent for a tool.
 */
import { Args, Command } from "@effect/cli"
import { Tool, ToolRegistry } from "@toolwright/core"
import { Console, Effect, Option } from "effect"
import * as CliOptions from "../CliOptions.js"
import { UsageError } from "../CliError.js"
import { registryLayerFor } from "../CliRuntime.js"

const safely = (check: () => boolean): boolean => {
  try {
    return check()
  } catch {
    return false
  }
}

export const list = Command.make("list", { json: CliOptions.json, cwd: CliOptions.cwd }, ({ cwd, json }) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry.ToolRegistry
    const rows = registry.tools.map((tool) => {
      // Read-only and concurrency-safe may depend on the input; given none, a tool answers for its
      // default, and one that cannot answer without input is listed as neither (the safe reading).
      return {
        name: tool.name,
        aliases: tool.aliases,
        description: tool.description,
        readOnly: safely(() => tool.isReadOnly({})),
        concurrencySafe: safely(() => tool.isConcurrencySafe({})),
        source: tool.source,
        plugin: Option.getOrUndefined(Option.map(registry.pluginOf(tool.name), (plugin) => plugin.name))
      }
    })
    if (json) {
      yield* Console.log(JSON.stringify(rows, null, 2))
      return
    }
    const width = Math.max(4, ...rows.map((row) => row.name.length))
    yield* Console.log(`${"NAME".padEnd(width)}  READ-ONLY  CONCURRENT  SOURCE   ALIASES`)
    for (const row of rows) {
      yield* Console.log(
        `${row.name.padEnd(width)}  ${(row.readOnly ? "yes" : "no").padEnd(9)}  ${
          (row.concurrencySafe ? "yes" : "no").padEnd(10)
        }  ${row.source.padEnd(7)}  ${row.aliases.join(", ")}`
      )
    }
  }).pipe(Effect.provide(registryLayerFor({ cwd })))).pipe(Command.withDescription("List the tools, their traits and sources"))

export const schema = Command.make(
  "schema",
  { name: Args.text({ name: "NAME" }), cwd: CliOptions.cwd },
  ({ cwd, name }) =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.ToolRegistry
      const tool = registry.find(name)
      if (Option.isNone(tool)) {
        return yield* new UsageError({
          message: `No such tool: ${name}. Run \`toolwright tools list\` to see the available tools.`
        })
      }
      yield* Console.log(JSON.stringify(Tool.inputJsonSchema(tool.value), null, 2))
    }).pipe(Effect.provide(registryLayerFor({ cwd })))
).pipe(Command.withDescription("Print the JSON Schema of a tool's input, as sent to a model"))

export const command = Command.make("tools").pipe(
  Command.withDescription("Inspect the available tools"),
  Command.withSubcommands([list, schema])
)
