/**
 * The pipeline. `runToolUse` takes one tool_use block through every stage — lookup, validation,
 * PreToolUse hooks, permission (and the prompter), execution, PostToolUse hooks, serialization — and
 * emits its events, ending with exactly one tool_result whatever happens. Each stage is a service, so a
 * runtime swaps one layer without touching the others.
 */
import type { FileSystem, Path } from "@effect/platform"
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Mailbox, Option, Stream } from "effect"
import type { RuntimeEvent, ToolResultContent, ToolUseBlock } from "./Message.js"
import * as Message from "./Message.js"
import { InputValidator } from "./InputValidator.js"
import * as InputValidatorModule from "./InputValidator.js"
import { PermissionPolicy } from "./PermissionPolicy.js"
import * as PermissionPolicyModule from "./PermissionPolicy.js"
import { PermissionPrompter } from "./PermissionPrompter.js"
import * as PermissionPrompterModule from "./PermissionPrompter.js"
import type * as Tool from "./Tool.js"
import { formatCause, noSuchTool, wrapToolUseError } from "./ToolErrors.js"
import { ToolExecutor } from "./ToolExecutor.js"
import * as ToolExecutorModule from "./ToolExecutor.js"
import { ToolHooks } from "./ToolHooks.js"
import * as ToolHooksModule from "./ToolHooks.js"
import { ToolRegistry } from "./ToolRegistry.js"
import { ToolResultStore } from "./ToolResultStore.js"
import * as ToolResultStoreModule from "./ToolResultStore.js"
import type { ToolResultStorage } from "./ToolResultStorage.js"
import * as ToolResultStorageModule from "./ToolResultStorage.js"
import type { ToolUseContext } from "./ToolUseContext.js"
import { forCall } from "./ToolUseContext.js"

export type Emit = (event: RuntimeEvent) => Effect.Effect<void>

export interface Service {
  /** One call as a stream of events ending in exactly one `ToolResult`. Never fails. */
  readonly runToolUse: (toolUse: ToolUseBlock, context: ToolUseContext) => Stream.Stream<RuntimeEvent>
  /**
   * The same pipeline as an Effect: events before the result are pushed to `emit`, and the
   * `ToolResult` event is the value. Never fails; orchestrators build on this.
   */
  readonly execute: (toolUse: ToolUseBlock, context: ToolUseContext, emit: Emit) => Effect.Effect<Message.ToolResult>
  /** Finds a tool as the lookup stage does. */
  readonly findTool: (name: string) => Option.Option<Tool.Any>
  /** The pool for a model request: registered tools minus those a blanket deny rule removes. */
  readonly pool: (context: ToolUseContext) => ReadonlyArray<Tool.Any>
}

/**
 * How long PostToolUseFailure hooks may hold up a call the user interrupted while it ran; past it they are
 * stopped (command hooks killed) and the interruption goes on.
 */
export const INTERRUPT_HOOKS_TIMEOUT: Duration.Duration = Duration.seconds(5)

export class ToolRuntime extends Context.Tag("@toolwright/core/ToolRuntime")<ToolRuntime, Service>() {}

const withContext = (content: ToolResultContent, extra: ReadonlyArray<string>): ToolResultContent => {
  if (extra.length === 0) return content
  if (typeof content === "string") return [content, ...extra].join("\n\n")
  return [...content, ...extra.map((text) => ({ type: "text" as const, text }))]
}

/**
 * Whether each call is traced as a `ToolRuntime.execute` span. Off unless a runtime turns it on
 * (`Layer.succeed(ToolRuntime.CallSpans, true)`): an Effect span costs more CPU than the whole pipeline
 * of a small call, and most runtimes collect no traces.
 */
export class CallSpans extends Context.Reference<CallSpans>()("@toolwright/core/ToolRuntime/CallSpans", {
  defaultValue: () => false
}) {}

/**
 * One call's result builder. A class, not closures made per call: bundles keep function names
 * (esbuild `keepNames`), and naming a closure costs ~0.5 µs, paid on every call.
 */
class CallResults {
  readonly startedAt = Date.now()
  constructor(readonly toolUseId: string, readonly toolName: string) {}
  finish(content: ToolResultContent, isError: boolean): Message.ToolResult {
    return {
      _tag: "ToolResult",
      toolUseId: this.toolUseId,
      toolName: this.toolName,
      result: Message.toolResult(this.toolUseId, content, isError),
      durationMs: Date.now() - this.startedAt
    }
  }
  failWith(message: string): Effect.Effect<Message.ToolResult> {
    return Effect.succeed(this.finish(wrapToolUseError(message), true))
  }
  /** A denied call does not run; PermissionDenied hooks hear why and may add context for the model. */
  denied(
    hooks: ToolHooksModule.Service,
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    message: string
  ): Effect.Effect<Message.ToolResult> {
    return hooks.permissionDenied === undefined
      ? Effect.succeed(this.finish(message, true))
      : Effect.map(
        hooks.permissionDenied(tool, input, message, context),
        (outcome) => this.finish(withContext(message, outcome.additionalContext ?? []), true)
      )
  }
}

const interruptedMessage = (tool: Tool.Any): string => `${tool.name} was interrupted before it finished.`

export const make = Effect.gen(function*() {
  const spans = yield* CallSpans
  const registry = yield* ToolRegistry
  const validator = yield* InputValidator
  const hooks = yield* ToolHooks
  const policy = yield* PermissionPolicy
  const prompter = yield* PermissionPrompter
  const executor = yield* ToolExecutor
  const store = yield* ToolResultStore

  /** PostToolUseFailure for a call interrupted while it ran, capped; nothing it does changes the interruption. */
  const interruptHooks = (tool: Tool.Any, input: unknown, context: ToolUseContext, startedAt: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      hooks.postToolUseFailure(tool, input, interruptedMessage(tool), context, now - startedAt, true)).pipe(
        Effect.interruptible,
        Effect.timeoutOption(INTERRUPT_HOOKS_TIMEOUT),
        Effect.flatMap(Option.match({
          onNone: () =>
            Effect.logWarning(
              `PostToolUseFailure hooks for the interrupted ${tool.name} call were stopped after ${
                Duration.format(INTERRUPT_HOOKS_TIMEOUT)
              }`
            ),
          onSome: () => Effect.void
        })),
        Effect.catchAllCause((cause) =>
          Effect.logWarning(`PostToolUseFailure hooks for the interrupted ${tool.name} call failed`, cause)
        )
      )

  const execute = (toolUse: ToolUseBlock, session: ToolUseContext, emit: Emit): Effect.Effect<Message.ToolResult> =>
    Effect.suspend(() => {
      const toolName = typeof toolUse.name === "string" ? toolUse.name : String(toolUse.name)
      const toolUseId = typeof toolUse.id === "string" ? toolUse.id : String(toolUse.id)
      const results = new CallResults(toolUseId, toolName)

      const pipeline = Effect.gen(function*() {
        const found = registry.find(toolName)
        if (Option.isNone(found)) return yield* results.failWith(noSuchTool(toolName))
        const tool = found.value
        const context = forCall(session, toolUseId)

        const validated = yield* Effect.either(validator.validate(tool, toolUse.input, context))
        if (validated._tag === "Left") return yield* results.failWith(validated.left.message)
        let input = validated.right

        const pre = yield* hooks.preToolUse(tool, input, context)
        if (pre.stop !== undefined) {
          return yield* results.failWith(`${tool.name} was not run: a PreToolUse hook stopped the session: ${pre.stop.reason}`)
        }
        if (pre.updatedInput !== undefined) {
          const revalidated = yield* Effect.either(validator.validate(tool, pre.updatedInput, context))
          if (revalidated._tag === "Left") {
            return yield* results.failWith(`A PreToolUse hook rewrote the input: ${revalidated.left.message}`)
          }
          input = revalidated.right
        }

        const decision = yield* policy.decide(tool, input, context, pre)
        if (decision.behavior === "deny") return yield* results.denied(hooks, tool, input, context, decision.message)
        if (decision.behavior === "ask") {
          yield* emit({
            _tag: "PermissionRequest",
            toolUseId,
            toolName: tool.name,
            input,
            message: decision.message,
            suggestions: decision.suggestions
          })
          const answer = yield* prompter.ask({
            tool,
            input,
            context,
            message: decision.message,
            suggestions: decision.suggestions
          })
          if (answer.behavior === "deny") return yield* results.denied(hooks, tool, input, context, answer.message)
          if (answer.rules !== undefined && answer.rules.length > 0 && policy.remember !== undefined) {
            yield* policy.remember(answer.rules, context)
          }
          if (answer.updatedInput !== undefined) {
            const revalidated = yield* Effect.either(validator.validate(tool, answer.updatedInput, context))
            if (revalidated._tag === "Left") return yield* results.failWith(revalidated.left.message)
            input = revalidated.right
          }
        } else if (decision.input !== input) {
          const revalidated = yield* Effect.either(validator.validate(tool, decision.input, context))
          if (revalidated._tag === "Left") return yield* results.failWith(revalidated.left.message)
          input = revalidated.right
        }
        const preContext = pre.additionalContext ?? []

        const callStartedAt = yield* Clock.currentTimeMillis
        const call = executor.execute(tool, input, context, (data) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            emit({ _tag: "Progress", toolUseId, toolName: tool.name, data, elapsedMs: now - callStartedAt })))
        // Interrupted while it ran: PostToolUseFailure hooks hear it (is_interrupt), bounded, then the call ends
        // interrupted as before; what the hooks say has no call result left to reach. Only watched when some
        // hook listens: the watch costs every call.
        const exit = yield* (hooks.hearsInterrupts?.(tool, context) ?? true
          ? Effect.onInterrupt(call, () => interruptHooks(tool, input, context, callStartedAt))
          : call)
        const callMs = (yield* Clock.currentTimeMillis) - callStartedAt

        if (Exit.isSuccess(exit)) {
          const content = yield* store.toContent(tool, exit.value, context)
          const post = yield* hooks.postToolUse(tool, input, content, context, callMs)
          const extra = [...preContext, ...(post.additionalContext ?? [])]
          if (post.block !== undefined) extra.push(`PostToolUse hook blocked: ${post.block.reason}`)
          return results.finish(withContext(content, extra), false)
        }
        const interrupted = ToolExecutorModule.wasInterrupted(exit)
        const message = interrupted ? interruptedMessage(tool) : formatCause(exit.cause)
        const post = yield* hooks.postToolUseFailure(tool, input, message, context, callMs, interrupted)
        const extra = [...preContext, ...(post.additionalContext ?? [])]
        return results.finish(withContext(wrapToolUseError(message), extra), true)
      })

      // No stage, layer or tool may end a call with a defect: whatever escapes becomes the result.
      return pipeline.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : results.failWith(`${toolName} failed inside the runtime: ${formatCause(cause)}`)
        ),
        Effect.orDie,
        (self) =>
          spans ? Effect.withSpan(self, "ToolRuntime.execute", { attributes: { tool: toolName }, captureStackTrace: false }) : self
      )
    })

  const runToolUse = (toolUse: ToolUseBlock, context: ToolUseContext): Stream.Stream<RuntimeEvent> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<RuntimeEvent>()
      yield* execute(toolUse, context, (event) => Effect.asVoid(mailbox.offer(event))).pipe(
        Effect.flatMap((result) => mailbox.offer(result)),
        Effect.ensuring(mailbox.end),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    }))

  return {
    runToolUse,
    execute,
    findTool: registry.find,
    pool: (context) => registry.pool((tool) => policy.isBlanketDenied(tool, context.permissionContext))
  } satisfies Service
})

/** The pipeline over whatever stage layers are provided. */
export const layer: Layer.Layer<
  ToolRuntime,
  never,
  ToolRegistry | InputValidator | ToolHooks | PermissionPolicy | PermissionPrompter | ToolExecutor | ToolResultStore
> = Layer.effect(ToolRuntime, make)

/**
 * The default stages: schema validation, no hooks, the rule-based policy, auto-deny prompts, the plain
 * executor and inline results. Merge a layer after it to replace one stage:
 * `Layer.mergeAll(ToolRuntime.defaultStages, myPrompter)`.
 */
export const defaultStages: Layer.Layer<
  InputValidator | ToolHooks | PermissionPolicy | PermissionPrompter | ToolExecutor | ToolResultStore
> = Layer.mergeAll(
  InputValidatorModule.layer,
  ToolHooksModule.layerNoop,
  PermissionPolicyModule.layer,
  PermissionPrompterModule.layerAutoDeny,
  ToolExecutorModule.layer,
  ToolResultStoreModule.layerInline
)

/** The whole runtime with default stages; provide a `ToolRegistry`. */
export const layerDefault: Layer.Layer<ToolRuntime, never, ToolRegistry> = layer.pipe(Layer.provide(defaultStages))

/**
 * The default stages with big results persisted under the project directory instead of kept inline
 * (`ToolResultStorage.layerFileSystem`, thresholds from settings). Needs FileSystem and Path.
 */
export const defaultStagesFileSystem = (
  options: ToolResultStorageModule.Options = {}
): Layer.Layer<
  InputValidator | ToolHooks | PermissionPolicy | PermissionPrompter | ToolExecutor | ToolResultStore | ToolResultStorage,
  never,
  FileSystem.FileSystem | Path.Path
> => Layer.merge(defaultStages, ToolResultStorageModule.layerFileSystem(options))

/**
 * The whole runtime with default stages and persisted results, and the `ToolResultStorage` the
 * per-message budget (`ToolResultStorage.applyToolResultBudget`) persists through. Provide a
 * `ToolRegistry`, FileSystem and Path (`NodeContext.layer`).
 */
export const layerDefaultFileSystem = (
  options: ToolResultStorageModule.Options = {}
): Layer.Layer<ToolRuntime | ToolResultStorage, never, ToolRegistry | FileSystem.FileSystem | Path.Path> => {
  const storage = ToolResultStorageModule.layerFileSystem(options)
  return layer.pipe(Layer.provide(Layer.merge(defaultStages, storage)), Layer.merge(storage))
}
