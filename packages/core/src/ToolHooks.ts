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
  /** Claude Code's `systemMessage`: shown to the user (a `HookMessage` event), never to the model. */
  readonly systemMessages?: ReadonlyArray<string>
}

export interface PostToolUseOutcome {
  readonly additionalContext?: ReadonlyArray<string>
  /** Claude Code's `systemMessage`: shown to the user (a `HookMessage` event), never to the model. */
  readonly systemMessages?: ReadonlyArray<string>
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
  /**
   * `response` is the content the model gets; `output` what the tool's call returned before it became that
   * content (command hooks send `tool.toHookResponse(output, response)` as Claude Code's `tool_response`).
   * Absent when the caller has no output to give; hooks written without it still fit.
   */
  readonly postToolUse: (
    tool: Tool.Any,
    input: unknown,
    response: ToolResultContent,
    context: ToolUseContext,
    durationMs: number,
    output?: unknown
  ) => Effect.Effect<PostToolUseOutcome>
  /**
   * `isInterrupt` (Claude Code's `is_interrupt`): true when the call ended because it was interrupted while it
   * ran (the user's abort, or the tool interrupting itself); absent or false for an ordinary failure. On a
   * user's abort the hooks run in the interruption's finalizer, capped by `ToolRuntime.INTERRUPT_HOOKS_TIMEOUT`,
   * and what they say reaches nobody (the call has no result of its own). Hooks written without it still fit.
   */
  readonly postToolUseFailure: (
    tool: Tool.Any,
    input: unknown,
    error: string,
    context: ToolUseContext,
    durationMs: number,
    isInterrupt?: boolean
  ) => Effect.Effect<PostToolUseOutcome>
  /**
   * Whether PostToolUseFailure wants to hear that this call was interrupted while it ran; absent means yes.
   * The runtime watches a call for the user's interrupt only then: watching costs every call ~5 µs, so a
   * stage without such hooks (the default) says no.
   */
  readonly hearsInterrupts?: (tool: Tool.Any, context: ToolUseContext) => boolean
  /**
   * PermissionDenied: the call was denied (by a rule, a mode, the prompter or a hook) and will not run. What
   * the hooks add as context reaches the model with the denial. Optional, so older layers keep compiling.
   */
  readonly permissionDenied?: (
    tool: Tool.Any,
    input: unknown,
    reason: string,
    context: ToolUseContext
  ) => Effect.Effect<PostToolUseOutcome>
}

export class ToolHooks extends Context.Tag("@toolwright/core/ToolHooks")<ToolHooks, Service>() {}

const none: PreToolUseOutcome & PostToolUseOutcome = {}

// One shared answer: it is an `Exit`, which the pipeline reads without a fiber step.
const saysNothing: Effect.Effect<PreToolUseOutcome & PostToolUseOutcome> = Effect.succeed(none)

export const noop: Service = {
  preToolUse: () => saysNothing,
  postToolUse: () => saysNothing,
  postToolUseFailure: () => saysNothing,
  hearsInterrupts: () => false
}

/** No hooks at all. */
export const layerNoop: Layer.Layer<ToolHooks> = Layer.succeed(ToolHooks, noop)

const decisionRank: Record<HookPermissionDecision, number> = { deny: 4, defer: 3, ask: 2, allow: 1 }

/**
 * Combines what several PreToolUse hooks said, in settings order: the strongest decision wins
 * (deny > defer > ask > allow) with the reasons of the hooks that gave it; the last rewritten input wins;
 * every additional context is kept; any stop stops.
 */
export const combinePre = (outcomes: ReadonlyArray<PreToolUseOutcome>): PreToolUseOutcome => {
  let decision: HookPermissionDecision | undefined
  for (const outcome of outcomes) {
    const next = outcome.permissionDecision
    if (next !== undefined && (decision === undefined || decisionRank[next] > decisionRank[decision])) decision = next
  }
  const reasons = outcomes.flatMap((outcome) =>
    outcome.permissionDecision === decision && outcome.reason !== undefined ? [outcome.reason] : []
  )
  const updated = outcomes.filter((outcome) => outcome.updatedInput !== undefined)
  const context = outcomes.flatMap((outcome) => outcome.additionalContext ?? [])
  const stops = outcomes.flatMap((outcome) => (outcome.stop === undefined ? [] : [outcome.stop.reason]))
  const messages = outcomes.flatMap((outcome) => outcome.systemMessages ?? [])
  return {
    ...(decision !== undefined ? { permissionDecision: decision } : {}),
    ...(reasons.length > 0 ? { reason: reasons.join("\n") } : {}),
    ...(updated.length > 0 ? { updatedInput: updated[updated.length - 1].updatedInput } : {}),
    ...(context.length > 0 ? { additionalContext: context } : {}),
    ...(stops.length > 0 ? { stop: { reason: stops.join("\n") } } : {}),
    ...(messages.length > 0 ? { systemMessages: messages } : {})
  }
}

/** Combines PostToolUse / PostToolUseFailure outcomes: contexts and block reasons accumulate, any stop stops. */
export const combinePost = (outcomes: ReadonlyArray<PostToolUseOutcome>): PostToolUseOutcome => {
  const context = outcomes.flatMap((outcome) => outcome.additionalContext ?? [])
  const blocks = outcomes.flatMap((outcome) => (outcome.block === undefined ? [] : [outcome.block.reason]))
  const stops = outcomes.flatMap((outcome) => (outcome.stop === undefined ? [] : [outcome.stop.reason]))
  const messages = outcomes.flatMap((outcome) => outcome.systemMessages ?? [])
  return {
    ...(context.length > 0 ? { additionalContext: context } : {}),
    ...(blocks.length > 0 ? { block: { reason: blocks.join("\n") } } : {}),
    ...(stops.length > 0 ? { stop: { reason: stops.join("\n") } } : {}),
    ...(messages.length > 0 ? { systemMessages: messages } : {})
  }
}

/** A hook that fails or dies has no say: it is logged and the call goes on as if it had said nothing. */
const guarded = <A>(label: string, effect: Effect.Effect<A>, fallback: A): Effect.Effect<A> =>
  Effect.catchAllCause(
    Effect.suspend(() => effect),
    (cause) => Effect.as(Effect.logWarning(`${label} hook failed and was ignored`, cause), fallback)
  )

/** Runs several hook services concurrently and combines what they say. */
export const combine = (services: ReadonlyArray<Service>): Service => {
  /** Every service's answer to one event (a service without the event says nothing), combined. */
  const all = <O>(
    event: string,
    ask: (service: Service) => Effect.Effect<O> | undefined,
    combineAll: (outcomes: ReadonlyArray<O>) => O,
    silence: O
  ): Effect.Effect<O> =>
    Effect.map(
      Effect.forEach(services, (service) => {
        const answer = ask(service)
        return answer === undefined ? Effect.succeed(silence) : guarded(event, answer, silence)
      }, { concurrency: "unbounded" }),
      combineAll
    )
  return {
    preToolUse: (tool, input, context) =>
      all("PreToolUse", (s) => s.preToolUse(tool, input, context), combinePre, none),
    postToolUse: (tool, input, response, context, durationMs, output) =>
      all("PostToolUse", (s) => s.postToolUse(tool, input, response, context, durationMs, output), combinePost, none),
    postToolUseFailure: (tool, input, error, context, durationMs, isInterrupt) =>
      all(
        "PostToolUseFailure",
        (s) => s.postToolUseFailure(tool, input, error, context, durationMs, isInterrupt),
        combinePost,
        none
      ),
    permissionDenied: (tool, input, reason, context) =>
      all("PermissionDenied", (s) => s.permissionDenied?.(tool, input, reason, context), combinePost, none),
    hearsInterrupts: (tool, context) => services.some((s) => s.hearsInterrupts?.(tool, context) ?? true)
  }
}

/**
 * An embedder's hook: Effect functions for the events it cares about (the stage's own signatures), for the
 * tools its matcher names.
 */
export interface Programmatic extends Partial<Service> {
  /** Tool names separated by `|`, or a regex; absent or `*`: every tool (as in settings). */
  readonly matcher?: string
}

/**
 * Claude Code's matcher: absent, empty or `*` matches every tool; names and `|` only are exact names;
 * anything else is a regular expression tested against the tool's name. An invalid regex matches nothing.
 */
export const compileMatcher = (matcher: string | undefined): (toolName: string) => boolean => {
  if (matcher === undefined || matcher.trim() === "" || matcher.trim() === "*") return () => true
  if (/^[A-Za-z0-9_|\s-]+$/.test(matcher)) {
    const names = matcher.split("|").map((name) => name.trim())
    return (toolName) => names.includes(toolName)
  }
  try {
    const regex = new RegExp(matcher)
    return (toolName) => regex.test(toolName)
  } catch {
    return () => false
  }
}

/** Programmatic hooks: each runs for the tools its matcher names, concurrently, combined as command hooks are. */
export const fromProgrammatic = (hooks: ReadonlyArray<Programmatic>): Service => {
  const compiled = hooks.map((hook) => ({ hook, matches: compileMatcher(hook.matcher) }))
  return combine(compiled.map(({ hook, matches }) => ({
    preToolUse: (tool, input, context) =>
      matches(tool.name) && hook.preToolUse !== undefined
        ? hook.preToolUse(tool, input, context)
        : Effect.succeed(none),
    postToolUse: (tool, input, response, context, durationMs, output) =>
      matches(tool.name) && hook.postToolUse !== undefined
        ? hook.postToolUse(tool, input, response, context, durationMs, output)
        : Effect.succeed(none),
    postToolUseFailure: (tool, input, error, context, durationMs, isInterrupt) =>
      matches(tool.name) && hook.postToolUseFailure !== undefined
        ? hook.postToolUseFailure(tool, input, error, context, durationMs, isInterrupt)
        : Effect.succeed(none),
    permissionDenied: (tool, input, reason, context) =>
      matches(tool.name) && hook.permissionDenied !== undefined
        ? hook.permissionDenied(tool, input, reason, context)
        : Effect.succeed(none),
    hearsInterrupts: (tool) => hook.postToolUseFailure !== undefined && matches(tool.name)
  })))
}

/** Programmatic hooks as the hook stage. */
export const layerProgrammatic = (hooks: ReadonlyArray<Programmatic>): Layer.Layer<ToolHooks> =>
  Layer.succeed(ToolHooks, fromProgrammatic(hooks))
