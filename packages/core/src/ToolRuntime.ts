/**
 * The pipeline. `runToolUse` takes one tool_use block through every stage — lookup, validation,
 * PreToolUse hooks, permission (and the prompter), execution, PostToolUse hooks, serialization — and
 * emits its events, ending with exactly one tool_result whatever happens. Each stage is a service, so a
 * runtime swaps one layer without touching the others.
 */
import type { FileSystem, Path } from "@effect/platform"
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Mailbox, Option, Stream } from "effect"
import type { Fiber } from "effect"
import { succeeded } from "./internal/succeeded.js"
import type { RuntimeEvent, ToolResultContent, ToolUseBlock } from "./Message.js"
import * as Message from "./Message.js"
import { InputValidator } from "./InputValidator.js"
import * as InputValidatorModule from "./InputValidator.js"
import { PermissionPolicy } from "./PermissionPolicy.js"
import type { PermissionDecision } from "./Permission.js"
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
import type * as ToolRegistryModule from "./ToolRegistry.js"
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

/** The content with what the hooks added: PreToolUse and PostToolUse context, then a PostToolUse block. */
const withHookContext = (
  content: ToolResultContent,
  pre: ToolHooksModule.PreToolUseOutcome,
  post: ToolHooksModule.PostToolUseOutcome,
  withBlock: boolean
): ToolResultContent => {
  const block = withBlock ? post.block : undefined
  if (pre.additionalContext === undefined && post.additionalContext === undefined && block === undefined) return content
  const extra = [...(pre.additionalContext ?? []), ...(post.additionalContext ?? [])]
  if (block !== undefined) extra.push(`PostToolUse hook blocked: ${block.reason}`)
  return withContext(content, extra)
}

/**
 * Whether each call is traced as a `ToolRuntime.execute` span. Off unless a runtime turns it on
 * (`Layer.succeed(ToolRuntime.CallSpans, true)`): an Effect span costs more CPU than the whole pipeline
 * of a small call, and most runtimes collect no traces.
 */
export class CallSpans extends Context.Reference<CallSpans>()("@toolwright/core/ToolRuntime/CallSpans", {
  defaultValue: () => false
}) {}

interface Stages {
  readonly registry: ToolRegistryModule.Service
  readonly validator: InputValidatorModule.Service
  readonly hooks: ToolHooksModule.Service
  readonly policy: PermissionPolicyModule.Service
  readonly prompter: PermissionPrompterModule.Service
  readonly executor: ToolExecutorModule.Service
  readonly store: ToolResultStoreModule.Service
  readonly interruptHooks: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext,
    startedAt: number
  ) => Effect.Effect<void>
}

type Step = Effect.Effect<Message.ToolResult>

/**
 * `next` on what a stage answered. A stage that answered with a value (`Effect.succeed`, an `Exit`) is read on
 * the spot, so a call whose stages are all plain values costs no fiber step per stage; anything else runs first.
 */
const andThen = <A>(stage: Effect.Effect<A>, next: (value: A) => Step): Step =>
  succeeded(stage) ? next(stage.value) : Effect.flatMap(stage, next)

/** `andThen` for a stage that may refuse (validation): its failure, not its defects, goes to `onFailure`. */
const andThenOr = <A, E>(stage: Effect.Effect<A, E>, next: (value: A) => Step, onFailure: (error: E) => Step): Step =>
  succeeded(stage) ? next(stage.value) : Effect.matchEffect(stage, { onFailure, onSuccess: next })

/**
 * One call through the stages. A class whose methods are the steps, not a generator or closures made per
 * call: each generator step or `flatMap` is a fiber step, and bundles keep function names (esbuild
 * `keepNames`), so naming a closure costs ~0.5 µs, paid on every call.
 */
class Call {
  readonly startedAt = Date.now()
  readonly toolName: string
  readonly toolUseId: string
  /** The fiber's clock (a `TestClock` in tests), read without a service lookup per reading. */
  readonly clock: Clock.Clock

  constructor(
    readonly stages: Stages,
    readonly toolUse: ToolUseBlock,
    readonly session: ToolUseContext,
    readonly emit: Emit,
    fiber: Fiber.RuntimeFiber<unknown, unknown>
  ) {
    this.toolName = typeof toolUse.name === "string" ? toolUse.name : String(toolUse.name)
    this.toolUseId = typeof toolUse.id === "string" ? toolUse.id : String(toolUse.id)
    this.clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  }

  finish(content: ToolResultContent, isError: boolean): Message.ToolResult {
    return {
      _tag: "ToolResult",
      toolUseId: this.toolUseId,
      toolName: this.toolName,
      result: Message.toolResult(this.toolUseId, content, isError),
      durationMs: Date.now() - this.startedAt
    }
  }

  failWith(message: string): Step {
    return Effect.succeed(this.finish(wrapToolUseError(message), true))
  }

  /** No stage, layer or tool may end a call with a defect: whatever escapes becomes the result. */
  recover(cause: Cause.Cause<never>): Step {
    return Cause.isInterruptedOnly(cause)
      ? Effect.failCause(cause)
      : this.failWith(`${this.toolName} failed inside the runtime: ${formatCause(cause)}`)
  }

  /** Hooks' `systemMessage`s reach the user as `HookMessage` events, in order, before the call goes on. */
  tell(tool: Tool.Any, event: string, messages: ReadonlyArray<string> | undefined, next: () => Step): Step {
    if (messages === undefined || messages.length === 0) return next()
    return Effect.zipRight(
      Effect.forEach(
        messages,
        (message) =>
          this.emit({
            _tag: "HookMessage",
            toolUseId: this.toolUseId,
            toolName: tool.name,
            hookEventName: event,
            message
          }),
        { discard: true }
      ),
      Effect.suspend(next)
    )
  }

  /** A denied call does not run; PermissionDenied hooks hear why and may add context for the model. */
  denied(tool: Tool.Any, input: unknown, context: ToolUseContext, message: string): Step {
    const hooks = this.stages.hooks
    return hooks.permissionDenied === undefined
      ? Effect.succeed(this.finish(message, true))
      : Effect.flatMap(
        hooks.permissionDenied(tool, input, message, context),
        (outcome) =>
          this.tell(
            tool,
            "PermissionDenied",
            outcome.systemMessages,
            () => Effect.succeed(this.finish(withContext(message, outcome.additionalContext ?? []), true))
          )
      )
  }

  /** Lookup, then validation. */
  start(): Step {
    const found = this.stages.registry.find(this.toolName)
    if (Option.isNone(found)) return this.failWith(noSuchTool(this.toolName))
    const tool = found.value
    const context = forCall(this.session, this.toolUseId)
    return andThenOr(
      this.stages.validator.validate(tool, this.toolUse.input, context),
      (input) => this.preHooks(tool, context, input),
      (error) => this.failWith(error.message)
    )
  }

  preHooks(tool: Tool.Any, context: ToolUseContext, input: unknown): Step {
    return andThen(
      this.stages.hooks.preToolUse(tool, input, context),
      (pre) => this.tell(tool, "PreToolUse", pre.systemMessages, () => this.afterPreHooks(tool, context, input, pre))
    )
  }

  afterPreHooks(tool: Tool.Any, context: ToolUseContext, input: unknown, pre: ToolHooksModule.PreToolUseOutcome): Step {
    if (pre.stop !== undefined) {
      return this.failWith(`${tool.name} was not run: a PreToolUse hook stopped the session: ${pre.stop.reason}`)
    }
    if (pre.updatedInput === undefined) return this.decide(tool, context, input, pre)
    return andThenOr(
      this.stages.validator.validate(tool, pre.updatedInput, context),
      (rewritten) => this.decide(tool, context, rewritten, pre),
      (error) => this.failWith(`A PreToolUse hook rewrote the input: ${error.message}`)
    )
  }

  decide(tool: Tool.Any, context: ToolUseContext, input: unknown, pre: ToolHooksModule.PreToolUseOutcome): Step {
    return andThen(
      this.stages.policy.decide(tool, input, context, pre),
      (decision) => this.afterDecision(tool, context, input, pre, decision)
    )
  }

  afterDecision(
    tool: Tool.Any,
    context: ToolUseContext,
    input: unknown,
    pre: ToolHooksModule.PreToolUseOutcome,
    decision: PermissionDecision
  ): Step {
    if (decision.behavior === "deny") return this.denied(tool, input, context, decision.message)
    if (decision.behavior === "ask") return this.ask(tool, context, input, pre, decision)
    if (decision.input === input) return this.run(tool, context, input, pre)
    return andThenOr(
      this.stages.validator.validate(tool, decision.input, context),
      (allowed) => this.run(tool, context, allowed, pre),
      (error) => this.failWith(error.message)
    )
  }

  /** The policy asks: the request goes out as an event and to the prompter, whose answer decides. */
  ask(
    tool: Tool.Any,
    context: ToolUseContext,
    input: unknown,
    pre: ToolHooksModule.PreToolUseOutcome,
    decision: Extract<PermissionDecision, { readonly behavior: "ask" }>
  ): Step {
    const { policy, prompter, validator } = this.stages
    return Effect.gen(this, function*() {
      yield* this.emit({
        _tag: "PermissionRequest",
        toolUseId: this.toolUseId,
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
      if (answer.behavior === "deny") return yield* this.denied(tool, input, context, answer.message)
      if (answer.rules !== undefined && answer.rules.length > 0 && policy.remember !== undefined) {
        yield* policy.remember(answer.rules, context)
      }
      if (answer.sessionRules !== undefined && answer.sessionRules.length > 0 && policy.remember !== undefined) {
        yield* policy.remember(answer.sessionRules, context, { persist: false })
      }
      if (answer.updatedInput === undefined) return yield* this.run(tool, context, input, pre)
      return yield* andThenOr(
        validator.validate(tool, answer.updatedInput, context),
        (updated) => this.run(tool, context, updated, pre),
        (error) => this.failWith(error.message)
      )
    })
  }

  /** Execution; then serialization and PostToolUse, or PostToolUseFailure. */
  run(tool: Tool.Any, context: ToolUseContext, input: unknown, pre: ToolHooksModule.PreToolUseOutcome): Step {
    const { executor, hooks } = this.stages
    const callStartedAt = this.clock.unsafeCurrentTimeMillis()
    const call = executor.execute(tool, input, context, (data) => this.progress(tool, data, callStartedAt))
    // Interrupted while it ran: PostToolUseFailure hooks hear it (is_interrupt), bounded, then the call ends
    // interrupted as before; what the hooks say has no call result left to reach. Only watched when some
    // hook listens: the watch costs every call.
    const watched = hooks.hearsInterrupts?.(tool, context) ?? true
      ? Effect.onInterrupt(call, () => this.stages.interruptHooks(tool, input, context, callStartedAt))
      : call
    return Effect.flatMap(
      watched,
      (exit) => this.afterCall(tool, context, input, pre, exit, this.clock.unsafeCurrentTimeMillis() - callStartedAt)
    )
  }

  progress(tool: Tool.Any, data: unknown, callStartedAt: number): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.emit({
        _tag: "Progress",
        toolUseId: this.toolUseId,
        toolName: tool.name,
        data,
        elapsedMs: this.clock.unsafeCurrentTimeMillis() - callStartedAt
      })
    )
  }

  afterCall(
    tool: Tool.Any,
    context: ToolUseContext,
    input: unknown,
    pre: ToolHooksModule.PreToolUseOutcome,
    exit: Exit.Exit<unknown, unknown>,
    callMs: number
  ): Step {
    const { hooks, store } = this.stages
    if (Exit.isSuccess(exit)) {
      return andThen(
        store.toContent(tool, exit.value, context),
        (content) =>
          andThen(
            hooks.postToolUse(tool, input, content, context, callMs, exit.value),
            (post) =>
              this.tell(
                tool,
                "PostToolUse",
                post.systemMessages,
                () => Effect.succeed(this.finish(withHookContext(content, pre, post, true), false))
              )
          )
      )
    }
    const interrupted = ToolExecutorModule.wasInterrupted(exit)
    const message = interrupted ? interruptedMessage(tool) : formatCause(exit.cause)
    return andThen(
      hooks.postToolUseFailure(tool, input, message, context, callMs, interrupted),
      (post) =>
        this.tell(
          tool,
          "PostToolUseFailure",
          post.systemMessages,
          () => Effect.succeed(this.finish(withHookContext(wrapToolUseError(message), pre, post, false), true))
        )
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

  const stages: Stages = { registry, validator, hooks, policy, prompter, executor, store, interruptHooks }

  const execute = (toolUse: ToolUseBlock, session: ToolUseContext, emit: Emit): Effect.Effect<Message.ToolResult> => {
    const run = Effect.withFiberRuntime<Message.ToolResult>((fiber) => {
      const call = new Call(stages, toolUse, session, emit, fiber)
      let pipeline: Step
      try {
        pipeline = call.start()
      } catch (defect) {
        pipeline = Effect.die(defect)
      }
      return Effect.catchAllCause(pipeline, (cause) => call.recover(cause))
    })
    return spans
      ? Effect.withSpan(run, "ToolRuntime.execute", {
        attributes: { tool: String(toolUse.name) },
        captureStackTrace: false
      })
      : run
  }

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
