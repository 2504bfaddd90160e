/**
 * The execution stage: runs a tool's `call` in its own fiber with the `ToolProgress` service wired to
 * the call's events, stops it at its time limit (the tool's own `timeoutMs`, else the runtime's default),
 * and turns how it ended into an `Exit` the pipeline can always read.
 */
import { Cause, Config, Context, Duration, Effect, Exit, FiberRef, Layer, Option, Schema } from "effect"
import { providedCalls } from "./internal/providedCalls.js"
import type * as Tool from "./Tool.js"
import { ToolProgress } from "./ToolProgress.js"
import type { Service as ToolProgressService } from "./ToolProgress.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Service {
  /**
   * Runs the call. Succeeds with the call's Exit: a failure, a defect, a timeout or the tool interrupting
   * itself are values here, never failures of the stage. Interrupting the caller interrupts the call.
   */
  readonly execute: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    report: (data: unknown) => Effect.Effect<void>
  ) => Effect.Effect<Exit.Exit<unknown, unknown>>
}

export class ToolExecutor extends Context.Tag("@toolwright/core/ToolExecutor")<ToolExecutor, Service>() {}

/** The environment variable holding the runtime's default time limit per call, in milliseconds. */
export const TIMEOUT_ENV = "TOOLWRIGHT_TOOL_TIMEOUT_MS"

/** A call ran past its time limit and was stopped (its scope closed: processes killed, temp files gone). */
export class ToolTimeoutError extends Schema.TaggedError<ToolTimeoutError>("@toolwright/core/ToolTimeoutError")(
  "ToolTimeoutError",
  {
    toolName: Schema.String,
    timeoutMs: Schema.Number,
    source: Schema.Literal("tool", "runtime"),
    message: Schema.String
  }
) {}

/** What the model reads when a call is stopped at its limit. */
export const timeoutMessage = (toolName: string, timeoutMs: number, source: "tool" | "runtime"): string =>
  `${toolName} timed out: it ran longer than its limit of ${Duration.format(Duration.millis(timeoutMs))} (${timeoutMs} ms, ${
    source === "tool" ? `${toolName}'s own limit` : "the runtime's default limit"
  }) and was stopped. Its work may be incomplete; split the task into smaller calls or run it in the background.`

const isLimit = (ms: number | undefined): ms is number => ms !== undefined && Number.isFinite(ms) && ms > 0

export interface Options {
  /** The limit for tools that set none; unset means no limit. */
  readonly defaultTimeout?: Duration.DurationInput
}

interface Limit {
  readonly ms: number
  readonly source: "tool" | "runtime"
}

const withLimit = <A, E, R>(call: Effect.Effect<A, E, R>, tool: Tool.Any, limit: Limit | undefined) =>
  limit === undefined ? call : call.pipe(
    Effect.timeoutFail({
      duration: Duration.millis(limit.ms),
      onTimeout: () =>
        new ToolTimeoutError({
          toolName: tool.name,
          timeoutMs: limit.ms,
          source: limit.source,
          message: timeoutMessage(tool.name, limit.ms, limit.source)
        })
    })
  )

/**
 * Runs the call with `ToolProgress` added to the fiber's context and succeeds with how it ended: the same as
 * `Effect.exit(Effect.provideService(call, ToolProgress, progress))` in about half the fiber steps
 * (`provideService` reads the context, then acquires, uses and releases it with a fiber step for each part).
 * The context is swapped and put back inside one uninterruptible region, the call itself interruptible as
 * its caller was, so an interrupted call leaves the context as it found it. The signature states what the
 * implementation does by hand (it provides `ToolProgress`), which the compiler cannot see.
 */
function exitWithProgress<A, E>(
  call: () => Effect.Effect<A, E, ToolProgress>,
  progress: ToolProgressService
): Effect.Effect<Exit.Exit<A, E>>
function exitWithProgress<A, E>(
  call: () => Effect.Effect<A, E, ToolProgress>,
  progress: ToolProgressService
): Effect.Effect<Exit.Exit<A, E>, never, ToolProgress> {
  return Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(
      FiberRef.modify(FiberRef.currentContext, (parent) => [parent, Context.add(parent, ToolProgress, progress)]),
      (parent) => {
        let effect: Effect.Effect<A, E, ToolProgress>
        try {
          effect = call()
        } catch (defect) {
          effect = Effect.die(defect)
        }
        return Effect.flatMap(
          Effect.exit(restore(effect)),
          (exit) => FiberRef.modify(FiberRef.currentContext, () => [exit, parent])
        )
      }
    )
  )
}

/** The executor with a default limit for tools without their own. */
export const makeWith = (options: Options): Service => {
  const defaultMs = options.defaultTimeout === undefined
    ? undefined
    : Duration.toMillis(Duration.decode(options.defaultTimeout))
  return {
    execute: (tool, input, context, report) => {
      // A tool's own limit wins; `Infinity` is its way of saying it bounds itself.
      const limit: Limit | undefined = isLimit(tool.timeoutMs)
        ? { ms: tool.timeoutMs, source: "tool" }
        : tool.timeoutMs === Infinity || !isLimit(defaultMs)
        ? undefined
        : { ms: defaultMs, source: "runtime" }
      // No span of its own: the runtime's per-call span covers it, and a span with a stack trace
      // costs more than the rest of the pipeline. A plugin's tool (`Tool.provide`): its context and the
      // call's progress go in with one context change.
      const provided = providedCalls.get(tool.call)
      return provided === undefined
        ? exitWithProgress(() => withLimit(tool.call(input, context), tool, limit), { report })
        : Effect.exit(withLimit(Effect.suspend(() => provided(input, context, { report })), tool, limit))
    }
  }
}

/** No default limit: only tools that set `timeoutMs` are bounded. */
export const make: Service = makeWith({})

export const layer: Layer.Layer<ToolExecutor> = Layer.succeed(ToolExecutor, make)

/** Every call bounded by `defaultTimeout` unless its tool sets its own limit. */
export const layerTimeout = (defaultTimeout: Duration.DurationInput): Layer.Layer<ToolExecutor> =>
  Layer.succeed(ToolExecutor, makeWith({ defaultTimeout }))

/** `TOOLWRIGHT_TOOL_TIMEOUT_MS` holds something other than a positive number of milliseconds. */
export class ToolTimeoutConfigError extends Schema.TaggedError<ToolTimeoutConfigError>(
  "@toolwright/core/ToolTimeoutConfigError"
)("ToolTimeoutConfigError", { message: Schema.String }) {}

/** The default limit from `TOOLWRIGHT_TOOL_TIMEOUT_MS` (unset: none); a bad value fails at start-up. */
export const layerConfig: Layer.Layer<ToolExecutor, ToolTimeoutConfigError> = Layer.effect(
  ToolExecutor,
  Config.option(Config.string(TIMEOUT_ENV)).pipe(
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(make),
      onSome: (raw) => {
        const ms = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN
        return Number.isSafeInteger(ms) && ms > 0
          ? Effect.succeed(makeWith({ defaultTimeout: Duration.millis(ms) }))
          : Effect.fail(
            new ToolTimeoutConfigError({
              message: `${TIMEOUT_ENV} must be a whole number of milliseconds above 0, but it is ${
                JSON.stringify(raw)
              }. Unset it to let calls run without a default limit.`
            })
          )
      }
    }))
  )
)

/** True when the call ended only because it was interrupted. */
export const wasInterrupted = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
