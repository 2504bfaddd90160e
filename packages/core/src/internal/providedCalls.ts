/**
 * The calls `Tool.provide` wrapped, by wrapper, with a way to run the tool's own call and its context. The
 * executor runs such a call under one context change (the call's `ToolProgress` and the plugin's context
 * together) instead of two: each change of a fiber's context costs several µs per call.
 */
import type { Effect } from "effect"
import type * as Tool from "../Tool.js"
import type { ToolUseContext } from "../ToolUseContext.js"
import type * as ToolProgress from "../ToolProgress.js"

/** The tool's own call with the plugin's context and the given progress service, in one context change. */
export type ProvidedCall = (
  input: Parameters<Tool.Any["call"]>[0],
  context: ToolUseContext,
  progress: ToolProgress.Service
) => Effect.Effect<unknown, unknown>

export const providedCalls = new WeakMap<object, ProvidedCall>()
