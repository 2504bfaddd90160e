/**
 * The permission stage's decision for one call: allow, deny or ask, with the reason. This first layer
 * knows the modes and the tool's own check; rules and settings are layered on by the permissions module.
 */
import { Context, Effect, Layer } from "effect"
import type { PermissionContext, PermissionDecision } from "./Permission.js"
import type * as Tool from "./Tool.js"
import type { PreToolUseOutcome } from "./ToolHooks.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Service {
  /** Decides one call of `tool` with its validated `input`; `hook` is what PreToolUse hooks said. */
  readonly decide: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    hook: PreToolUseOutcome
  ) => Effect.Effect<PermissionDecision>
  /** A blanket deny (`Bash`, `mcp__srv`) removes the tool from the pool, not only its calls. */
  readonly isBlanketDenied: (tool: Tool.Any, permissionContext: PermissionContext) => boolean
}

export class PermissionPolicy extends Context.Tag("@toolwright/core/PermissionPolicy")<PermissionPolicy, Service>() {}

/**
 * The first policy: a hook's deny or ask wins, then the tool's own objection; `bypassPermissions` allows
 * the rest, `dontAsk` denies what would ask, `plan` denies writes; read-only calls are allowed and
 * anything else asks. Rules from settings are the permissions module's layer.
 */
export const basic: Service = {
  decide: Effect.fn("PermissionPolicy.decide")(function*(tool, input, context, hook) {
    const mode = context.permissionContext.mode
    if (hook.permissionDecision === "deny") {
      const message = hook.reason ?? `Permission to use ${tool.name} has been denied by a PreToolUse hook.`
      return { behavior: "deny", message, reason: "PreToolUse hook" } as const
    }
    const own = yield* tool.checkPermissions(input, context)
    if (own.behavior === "deny") return { behavior: "deny", message: own.message, reason: `${tool.name} check` } as const
    const readOnly = tool.isReadOnly(input)
    if (mode === "plan" && !readOnly) {
      return {
        behavior: "deny",
        message: `${tool.name} was not run: plan mode allows only read-only tools. Present the plan instead.`,
        reason: "mode plan"
      } as const
    }
    if (hook.permissionDecision !== "ask" && own.behavior !== "ask") {
      if (mode === "bypassPermissions") return { behavior: "allow", input, reason: "mode bypassPermissions" } as const
      if (hook.permissionDecision === "allow") return { behavior: "allow", input, reason: "PreToolUse hook" } as const
      if (own.behavior === "allow") {
        return { behavior: "allow", input: own.updatedInput ?? input, reason: `${tool.name} check` } as const
      }
      if (readOnly) return { behavior: "allow", input, reason: "read-only tool" } as const
    }
    const message = own.behavior === "ask"
      ? own.message
      : hook.reason ?? `${tool.name} needs permission to run.`
    if (mode === "dontAsk") {
      return {
        behavior: "deny",
        message: `Permission to use ${tool.name} has been denied: ${message} (mode dontAsk denies whatever would ask)`,
        reason: "mode dontAsk"
      } as const
    }
    const suggestions = own.behavior === "ask" ? own.suggestions ?? [tool.name] : [tool.name]
    return { behavior: "ask", message, reason: hook.permissionDecision === "ask" ? "PreToolUse hook" : "default", suggestions } as const
  }),
  isBlanketDenied: () => false
}

export const layerBasic: Layer.Layer<PermissionPolicy> = Layer.succeed(PermissionPolicy, basic)
