/**
 * Who answers when the policy says `ask`: a terminal prompt, a JSON-lines peer, an embedder's callback,
 * or nobody (auto-deny). Whatever the layer, a call never waits for an answer that cannot come.
 */
import { Context, Effect, Layer } from "effect"
import type { PermissionAnswer } from "./Permission.js"
import type * as Tool from "./Tool.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Request {
  readonly tool: Tool.Any
  readonly input: unknown
  readonly context: ToolUseContext
  /** Why the policy asks, for the person answering. */
  readonly message: string
  /** Rules "allow always" would add. */
  readonly suggestions: ReadonlyArray<string>
}

export interface Service {
  readonly ask: (request: Request) => Effect.Effect<PermissionAnswer>
}

export class PermissionPrompter extends Context.Tag("@toolwright/core/PermissionPrompter")<
  PermissionPrompter,
  Service
>() {}

/** The denial for an `ask` nobody can answer, naming what would have been asked and how to allow it. */
export const unansweredMessage = (request: Request): string => {
  const rule = request.suggestions[0] ?? request.tool.name
  return `Permission to use ${request.tool.name} was not granted: ${request.message} No one can answer a permission prompt here (non-interactive), so it was denied. To allow it, add a rule such as "${rule}" to permissions.allow in .toolwright/settings.json, or choose another permission mode.`
}

/** Denies every request with a message that says how to allow it: for CI and non-interactive runs. */
export const layerAutoDeny: Layer.Layer<PermissionPrompter> = Layer.succeed(PermissionPrompter, {
  ask: (request) => Effect.succeed({ behavior: "deny", message: unansweredMessage(request) })
})

/** Asks an embedder's function. */
export const layerCallback = (ask: (request: Request) => Effect.Effect<PermissionAnswer>) =>
  Layer.succeed(PermissionPrompter, { ask })
