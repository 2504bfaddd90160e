/**
 * Runs tool calls while the model is still streaming them. Each added call starts as soon as
 * `canExecuteTool` allows (nothing running, or it and every running call are concurrency-safe, within the
 * concurrency limit); the others queue in order. Progress is emitted as it happens, results in call order.
 * A failure of a cascading tool (Bash) cancels its siblings, the other calls of its assistant message, with a
 * result naming it; a user abort (or the executor's scope closing) interrupts `cancel` calls and lets `block`
 * calls finish. Every added call ends
 * with exactly one tool_result, and no call outlives the executor's scope.
 */
import { Effect, Exit, Fiber, FiberId, Mailbox, Option, Predicate, Runtime, Scope, Stream } from "effect"
import type { RuntimeEvent, ToolUseBlock } from "./Message.js"
import * as Message from "./Message.js"
import type * as Tool from "./Tool.js"
import { formatCause, wrapToolUseError } from "./ToolErrors.js"
import * as ToolProgress from "./ToolProgress.js"
import type { CascadePolicy } from "./ToolOrchestration.js"
import { isConcurrencySafe, isReadOnly, ToolOrchestration } from "./ToolOrchestration.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface StreamingToolExecutor {
  /**
   * Adds a call of the current assistant message as the model streams it; it starts now if `canExecuteTool`
   * allows, else it queues. After `end`, or once the executor's scope has closed, nobody would read its
   * result: it is ignored.
   */
  readonly addTool: (toolUse: ToolUseBlock) => Effect.Effect<void>
  /** Adds calls of the current assistant message, in order. */
  readonly addTools: (toolUses: ReadonlyArray<ToolUseBlock>) => Effect.Effect<void>
  /**
   * Starts a new assistant message with these calls (a long-lived executor, as `toolwright exec` keeps). As in
   * Claude Code, where an executor serves one message, a cascade cancels only the calls of the failing call's
   * message, and a cascade or an abort cancels later calls of the message it happened in, never a new one's.
   */
  readonly addMessage: (toolUses: ReadonlyArray<ToolUseBlock>) => Effect.Effect<void>
  /** No more calls will be added: `events` ends once every added call's result is out. */
  readonly end: Effect.Effect<void>
  /**
   * The user aborts: queued calls and running `cancel` calls end with an "interrupted by the user" result,
   * running `block` calls finish. Returns at once; the results follow on `events`.
   */
  readonly abort: Effect.Effect<void>
  /** Progress and permission requests as they happen, results in call order. Read it once. */
  readonly events: Stream.Stream<RuntimeEvent>
  /** How many added calls have not had their result emitted yet. */
  readonly pending: Effect.Effect<number>
}

export interface Options {
  /** At most this many calls run at once; default: the orchestration's `maxConcurrency`. */
  readonly maxConcurrency?: number
  /** Which failures cancel the siblings; default: the orchestration's cascade policy. */
  readonly cascade?: CascadePolicy
}

/** Why a call was cancelled by the executor rather than ending on its own. */
type CancelReason =
  | { readonly _tag: "Sibling"; readonly description: string }
  | { readonly _tag: "User" }

type Status = "queued" | "executing" | "completed" | "yielded"

interface TrackedCall {
  readonly toolUse: ToolUseBlock
  readonly tool: Option.Option<Tool.Any>
  readonly safe: boolean
  readonly interruptBehavior: Tool.InterruptBehavior
  readonly addedAt: number
  /** Which assistant message the call belongs to: a cascade stays within one. */
  readonly message: number
  status: Status
  startedAt: number | undefined
  fiber: Fiber.RuntimeFiber<Message.ToolResult> | undefined
  cancel: CancelReason | undefined
  result: Message.ToolResult | undefined
  /** What the call reported it had produced when it was interrupted (`ToolProgress.interruptedOutput`). */
  partialOutput: string | undefined
}

const DESCRIPTION_CHARS = 40

/**
 * How many events may wait unread before progress is dropped: a reader that falls behind (an exec peer that
 * stops reading stdout) must not make a chatty call grow memory without end. Progress only says how a call is
 * going; results and permission requests are never dropped, and they are bounded by the calls added.
 */
export const MAX_UNREAD_EVENTS = 1_000

/**
 * How a call is named in a cascade message, as Claude Code names it: the tool and the first 40 characters
 * of its command, file path or pattern (`Bash(npm test)`), or the tool's name alone.
 */
export const describeCall = (toolUse: ToolUseBlock): string => {
  const input = toolUse.input
  const summary = ["command", "file_path", "pattern"]
    .map((key) => (Predicate.hasProperty(input, key) ? input[key] : undefined))
    .find((value): value is string => typeof value === "string" && value.length > 0)
  if (summary === undefined) return toolUse.name
  const cut = summary.length > DESCRIPTION_CHARS ? `${summary.slice(0, DESCRIPTION_CHARS)}\u2026` : summary
  return `${toolUse.name}(${cut})`
}

/** The result of a sibling cancelled because `failed` (a call's description) errored. */
export const siblingErrorMessage = (failed: string): string => `Cancelled: parallel tool call ${failed} errored`

/** The result of a call the user interrupted; `started` says whether it had begun running. */
export const userInterruptMessage = (call: string, started: boolean): string =>
  started
    ? `Interrupted by user: ${call} was stopped before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.`
    : `Interrupted by user: ${call} was not run. Wait for the user to tell you how to proceed.`

const cascades = (policy: CascadePolicy, call: TrackedCall): boolean => {
  if (Option.isNone(call.tool)) return false
  const tool = call.tool.value
  const listed = policy.tools === "none"
    ? false
    : policy.tools === "declared"
    ? tool.cascadeOnError
    : policy.tools.includes(tool.name)
  return listed && (policy.readOnly || !isReadOnly(call.tool, call.toolUse.input))
}

/**
 * An executor for the session `context`, living in the current scope: closing the scope aborts it as the
 * user would, waits for `block` calls, and ends `events`.
 */
export const make = (
  context: ToolUseContext,
  options: Options = {}
): Effect.Effect<StreamingToolExecutor, never, ToolOrchestration | Scope.Scope> =>
  Effect.gen(function*() {
    const orchestration = yield* ToolOrchestration
    const runtime = orchestration.runtime
    const maxConcurrency = Math.max(1, Math.floor(options.maxConcurrency ?? orchestration.settings.maxConcurrency))
    const policy = options.cascade ?? orchestration.settings.cascade

    const mailbox = yield* Mailbox.make<RuntimeEvent>()
    // Calls are forked from exit handlers as well as from `addTool`; they run in the caller's runtime (its
    // services, clock and tracer) and the finalizer below sees to it that none outlives the scope.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const calls: Array<TrackedCall> = []
    let nextToYield = 0
    // Counters and a cursor keep scheduling O(1) per call: a turn may stream thousands of calls.
    let executing = 0
    let executingUnsafe = 0
    let firstQueued = 0
    let ended = false
    let closed = false
    // While a cancellation walks the calls, nothing new may start (it would be cancelled next).
    let holdQueue = false
    let currentMessage = 0
    // A cascade or abort in the current message cancels the calls still streaming into it (the first reason
    // wins); an earlier message gets no more calls, so its cascades need no latch.
    let latched: { readonly message: number; readonly reason: CancelReason } | undefined
    const latch = (message: number, reason: CancelReason) => {
      if (message === currentMessage && latched?.message !== message) latched = { message, reason }
    }

    const emit = (event: RuntimeEvent) =>
      Effect.sync(() => {
        if (event._tag === "Progress") {
          const partial = ToolProgress.interruptedOutput(event.data)
          if (partial !== undefined) {
            const call = calls.find((candidate) => candidate.toolUse.id === event.toolUseId)
            if (call !== undefined) call.partialOutput = partial
          }
        }
        if (event._tag === "Progress" && Option.getOrElse(mailbox.unsafeSize(), () => 0) >= MAX_UNREAD_EVENTS) return
        mailbox.unsafeOffer(event)
      })

    const synthetic = (call: TrackedCall, reason: CancelReason): Message.ToolResult => {
      const description = describeCall(call.toolUse)
      const message = reason._tag === "Sibling"
        ? siblingErrorMessage(reason.description)
        : userInterruptMessage(description, call.startedAt !== undefined)
      const text = call.partialOutput === undefined
        ? message
        : `${message}\n\nOutput before it was stopped:\n${call.partialOutput}`
      return {
        _tag: "ToolResult",
        toolUseId: call.toolUse.id,
        toolName: call.toolUse.name,
        result: Message.toolResult(call.toolUse.id, wrapToolUseError(text), true),
        durationMs: Date.now() - (call.startedAt ?? call.addedAt)
      }
    }

    /** Emits the results that are next in call order; ends `events` when everything is out. */
    const flush = () => {
      while (nextToYield < calls.length && calls[nextToYield].status === "completed") {
        const call = calls[nextToYield]
        call.status = "yielded"
        if (call.result !== undefined) mailbox.unsafeOffer(call.result)
        nextToYield++
      }
      if ((ended || closed) && nextToYield === calls.length) mailbox.unsafeDone(Exit.void)
    }

    const cancelSiblings = (failed: TrackedCall) => {
      const reason: CancelReason = { _tag: "Sibling", description: describeCall(failed.toolUse) }
      latch(failed.message, reason)
      holdQueue = true
      for (const call of calls) {
        if (call === failed || call.message !== failed.message) continue
        if (call.status === "queued") settle(call, synthetic(call, reason))
        // Every running sibling, `block` ones too: as in Claude Code, `block` only holds off the user's interruption.
        else if (call.status === "executing") requestCancel(call, reason)
      }
      holdQueue = false
    }

    /** Records a call's one result (later ones are ignored), then lets the queue and the output move on. */
    function settle(call: TrackedCall, result: Message.ToolResult, ranToFailure = false) {
      if (call.result !== undefined) return
      call.result = result
      if (call.status === "executing") {
        executing--
        if (!call.safe) executingUnsafe--
      }
      call.status = "completed"
      if (ranToFailure && cascades(policy, call)) cancelSiblings(call)
      flush()
      processQueue()
    }

    const requestCancel = (call: TrackedCall, reason: CancelReason) => {
      call.cancel ??= reason
      // The fiber's exit handler turns the interruption into the call's result.
      call.fiber?.unsafeInterruptAsFork(FiberId.none)
    }

    const onExit = (call: TrackedCall) => (exit: Exit.Exit<Message.ToolResult>) =>
      Effect.sync(() => {
        if (Exit.isSuccess(exit)) {
          // A call that finished on its own keeps its real result, even if a cancel was on its way.
          return settle(call, exit.value, exit.value.result.is_error === true)
        }
        if (Exit.isInterrupted(exit)) return settle(call, synthetic(call, call.cancel ?? { _tag: "User" }))
        settle(call, {
          _tag: "ToolResult",
          toolUseId: call.toolUse.id,
          toolName: call.toolUse.name,
          result: Message.toolResult(
            call.toolUse.id,
            wrapToolUseError(`${call.toolUse.name} failed inside the executor: ${formatCause(exit.cause)}`),
            true
          ),
          durationMs: Date.now() - (call.startedAt ?? call.addedAt)
        })
      })

    /** Nothing runs, or this call and everything running are concurrency-safe and there is room. */
    const canExecuteTool = (call: TrackedCall): boolean =>
      executing === 0 || (call.safe && executing < maxConcurrency && executingUnsafe === 0)

    const start = (call: TrackedCall) => {
      call.status = "executing"
      executing++
      if (!call.safe) executingUnsafe++
      call.startedAt = Date.now()
      // Started from exit handlers too, which run uninterruptibly: the call itself must stay interruptible.
      call.fiber = runFork(
        runtime.execute(call.toolUse, context, emit).pipe(Effect.onExit(onExit(call)), Effect.interruptible)
      )
    }

    /**
     * Starts what may start, in order. A call that cannot start means something runs, and then no later call
     * can start either (a safe one meets the same limit, an unsafe one needs nothing running): stop there.
     */
    function processQueue() {
      if (closed || holdQueue) return
      while (firstQueued < calls.length && calls[firstQueued].status !== "queued") firstQueued++
      for (let index = firstQueued; index < calls.length; index++) {
        const call = calls[index]
        if (call.status !== "queued") continue
        if (!canExecuteTool(call)) break
        start(call)
      }
    }

    const add = (toolUse: ToolUseBlock) => {
      if (closed || ended) return
      const tool = runtime.findTool(toolUse.name)
      const call: TrackedCall = {
        toolUse,
        tool,
        safe: isConcurrencySafe(tool, toolUse.input),
        interruptBehavior: Option.match(tool, { onNone: () => "cancel", onSome: (t) => t.interruptBehavior }),
        addedAt: Date.now(),
        message: currentMessage,
        status: "queued",
        startedAt: undefined,
        fiber: undefined,
        cancel: undefined,
        result: undefined,
        partialOutput: undefined
      }
      calls.push(call)
      if (latched?.message === currentMessage) return settle(call, synthetic(call, latched.reason))
      processQueue()
    }

    /** The user's abort: queued calls cancelled, running `cancel` calls interrupted, `block` calls left to finish. */
    const abortNow = () => {
      const reason: CancelReason = { _tag: "User" }
      latch(currentMessage, reason)
      holdQueue = true
      for (const call of calls) {
        if (call.status === "queued") settle(call, synthetic(call, reason))
        else if (call.status === "executing" && call.interruptBehavior === "cancel") requestCancel(call, reason)
      }
      holdQueue = false
    }

    // Closing the scope is the strongest abort: `cancel` calls are interrupted, and the scope closes only once
    // they and the `block` calls have ended and every result is out on `events`.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closed = true
        abortNow()
        const running = calls.flatMap((call) => (call.status === "executing" && call.fiber ? [call.fiber] : []))
        yield* Fiber.awaitAll(running)
        yield* Effect.sync(flush)
        yield* mailbox.end
      })
    )

    return {
      addTool: (toolUse) => Effect.sync(() => add(toolUse)),
      addTools: (toolUses) => Effect.sync(() => toolUses.forEach(add)),
      addMessage: (toolUses) =>
        Effect.sync(() => {
          currentMessage++
          toolUses.forEach(add)
        }),
      end: Effect.sync(() => {
        ended = true
        flush()
      }),
      abort: Effect.sync(abortNow),
      events: Mailbox.toStream(mailbox),
      pending: Effect.sync(() => calls.length - nextToYield)
    } satisfies StreamingToolExecutor
  })
