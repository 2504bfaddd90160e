/**
 * `toolwright permissions explain TOOL 'INPUT-JSON'`: decides a call the way `run` would, without running
 * it or its hooks, and prints the decision and which rule from which file decided it.
 */
import { Args, Command } from "@effect/cli"
import { CommandHooks, InputValidator, PermissionPolicy, ToolRegistry } from "@toolwright/core"
import { Console, Effect, Option } from "effect"
import * as CliOptions from "../CliOptions.js"
import { UsageError } from "../CliError.js"
import { makeSession, registryLayerFor, settingsStages } from "../CliRuntime.js"
import { parseInput } from "./RunCommand.js"

export const explain = Command.make(
  "explain",
  {
    tool: Args.text({ name: "TOOL" }),
    input: Args.text({ name: "INPUT-JSON" }).pipe(Args.withDefault("{}")),
    json: CliOptions.json,
    ...CliOptions.session
  },
  (options) =>
    Effect.gen(function*() {
      const toolInput = yield* parseInput(options.input, "INPUT-JSON")
      const session = yield* makeSession(options)
      const registry = yield* ToolRegistry.ToolRegistry
      const found = registry.find(options.tool)
      if (Option.isNone(found)) {
        return yield* new UsageError({
          message: `No such tool: ${options.tool}. Run \`toolwright tools list\` to see the available tools.`
        })
      }
      const tool = found.value
      const validator = yield* InputValidator.InputValidator
      const input = yield* validator.validate(tool, toolInput, session.context).pipe(
        Effect.mapError((error) => new UsageError({ message: error.message }))
      )
      const policy = yield* PermissionPolicy.PermissionPolicy
      const decision = yield* policy.decide(tool, input, session.context, {})
      const hooks = (session.context.commandHooks ?? []).filter((hook) =>
        hook.event === "PreToolUse" && CommandHooks.appliesTo(hook, tool, input, session.context)
      )
      const blanket = policy.isBlanketDenied(tool, session.context.permissionContext)
      if (options.json) {
        yield* Console.log(JSON.stringify({
          tool: tool.name,
          decision: decision.behavior,
          reason: decision.reason,
          ...(decision.behavior === "allow" ? {} : { message: decision.message }),
          ...(decision.behavior === "ask" ? { suggestions: decision.suggestions } : {}),
          mode: session.context.permissionContext.mode,
          removedFromPool: blanket,
          settingsFiles: session.settings.sources,
          preToolUseHooks: hooks.map((hook) => ({ command: hook.command, source: hook.source }))
        }, null, 2))
        return
      }
      const lines = [
        `Decision: ${decision.behavior}`,
        `Decided by: ${decision.reason}`,
        ...(decision.behavior === "allow" ? [] : [`Message: ${decision.message}`]),
        ...(decision.behavior === "ask" && decision.suggestions.length > 0
          ? [`"Allow always" would add: ${decision.suggestions.join(", ")}`]
          : []),
        `Mode: ${session.context.permissionContext.mode}`,
        ...(blanket ? [`${tool.name} is removed from the tool pool by a blanket deny rule.`] : []),
        `Settings files: ${
          session.settings.sources.length === 0 ? "(none found)" : session.settings.sources.join(", ")
        }`,
        ...(hooks.length === 0
          ? []
          : [
            `Not run here: ${hooks.length} PreToolUse hook(s) would run first and may change this: ${
              hooks.map((hook) => `${hook.command} (from ${hook.source})`).join(", ")
            }`
          ])
      ]
      yield* Console.log(lines.join("\n"))
    }).pipe(
      Effect.provide(settingsStages),
      Effect.provide(InputValidator.layer),
      // The tools `run` would call: the project's MCP servers and settings' plugins, not only the built-ins.
      Effect.provide(registryLayerFor(options))
    )
).pipe(Command.withDescription("Print the decision for a call and which rule from which settings file decided it"))

export const command = Command.make("permissions").pipe(
  Command.withDescription("Inspect permission decisions"),
  Command.withSubcommands([explain])
)
