/**
 * The hook stage: PreToolUse hooks run before the permission check and may rewrite the input, decide
 * the permission or stop; PostToolUse / PostToolUseFailure hooks run after the call and may add context
 * or block. `layerNoop` has no hooks; the settings-driven layer runs Claude Code-style command hooks.
 */
import { Context, Effect, Layer } from "effect"
import type { ToolResultContent } from "./Message.js"
import type * as Tool from "./Tool.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export type HookPermissionDecision = "allow" | "deny" | "ask" | "defer"

export interface PreToolUseOutcome {
  readonly permissionDecision?: HookPermissionDecision
  readonly reason?: string
  /** Replaces the whole input; the runtime validates it again. */
  readonly updatedInput?: unknown
  readonly additionalContext?: ReadonlyArray<string>
  /** `continue: false`: the call does not run and the agent should stop. */
  readonly stop?: { readonly reason: string }
}

export interface PostToolUseOutcome {
  readonly additionalContext?: ReadonlyArray<string>
  /** `decision: "block"`: the reason is shown to the model with the result. */
  readonly block?: { readonly reason: string }
  readonly stop?: { readonly reason: string }
}

export interface Service {
  readonly preToolUse: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext
  ) => Effect.Effect<PreToolUseOutcome>
  readonly postToolUse: (
    tool: Tool.Any,
    input: unknown,
    response: ToolResultContent,
    context: ToolUseContext,
    durationMs: number
  ) => Effect.Effect<PostToolUseOutcome>
  readonly postToolUseFailure: (
    tool: Tool.Any,
    input: unknown,
    error: string,
    context: ToolUseContext,
    durationMs: number
  ) => Effect.Effect<PostToolUseOutcome>
}

export class ToolHooks extends Context.Tag("@toolwright/core/ToolHooks")<ToolHooks, Service>() {}

const none: PreToolUseOutcome & PostToolUseOutcome = {}

export const noop: Service = {
  preToolUse: () => Effect.succeed(none),
  postToolUse: () => Effect.succeed(none),
  postToolUseFailure: () => Effect.succeed(none)
}

/** No hooks at all. */
export const layerNoop: Layer.Layer<ToolHooks> = Layer.succeed(ToolHooks, noop)
