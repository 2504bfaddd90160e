/**
 * The execution stage: runs a tool's `call` in its own fiber with the `ToolProgress` service wired to
 * the call's events, and turns how it ended into an `Exit` the pipeline can always read.
 */
import { Cause, Context, Effect, Exit, Layer } from "effect"
import type * as Tool from "./Tool.js"
import { ToolProgress } from "./ToolProgress.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Service {
  /**
   * Runs the call. Succeeds with the call's Exit: a failure, a defect or the tool interrupting itself
   * are values here, never failures of the stage. Interrupting the caller interrupts the call.
   */
  readonly execute: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    report: (data: unknown) => Effect.Effect<void>
  ) => Effect.Effect<Exit.Exit<unknown, unknown>>
}

export class ToolExecutor extends Context.Tag("@toolwright/core/ToolExecutor")<ToolExecutor, Service>() {}

export const make: Service = {
  execute: (tool, input, context, report) =>
    Effect.suspend(() => tool.call(input, context)).pipe(
      Effect.provideService(ToolProgress, { report }),
      Effect.exit,
      Effect.withSpan("ToolExecutor.execute", { attributes: { tool: tool.name } })
    )
}

export const layer: Layer.Layer<ToolExecutor> = Layer.succeed(ToolExecutor, make)

/** True when the call ended only because it was interrupted. */
export const wasInterrupted = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
