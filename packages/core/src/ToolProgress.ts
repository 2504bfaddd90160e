/**
 * How a running tool reports progress: a service the runtime provides to each call, so a handler stays
 * a plain `Effect.gen` and calls `ToolProgress.report(data)`.
 */
import { Context, Effect, Layer } from "effect"

export interface Service {
  /** Emits a Progress event for the current call. Never fails; cheap enough to call per line of output. */
  readonly report: (data: unknown) => Effect.Effect<void>
}

export class ToolProgress extends Context.Tag("@toolwright/core/ToolProgress")<ToolProgress, Service>() {}

export const report = (data: unknown): Effect.Effect<void, never, ToolProgress> =>
  Effect.flatMap(ToolProgress, (progress) => progress.report(data))

/** Drops every report: for calling a handler outside the runtime (benchmarks, direct tests). */
export const layerNoop: Layer.Layer<ToolProgress> = Layer.succeed(ToolProgress, { report: () => Effect.void })

/**
 * What a tool produced before it was interrupted, if its last report says so: a tool that is being
 * interrupted reports `{ interrupted: true, output }` (Bash does, from its finalizer), and the interrupted
 * call's result then carries that output, so the model sees how far it got.
 */
export const interruptedOutput = (data: unknown): string | undefined =>
  typeof data === "object" && data !== null && "interrupted" in data && data.interrupted === true &&
    "output" in data && typeof data.output === "string" && data.output !== ""
    ? data.output
    : undefined
