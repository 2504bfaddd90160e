/**
 * The pipeline reads a stage's answer on the spot when it is a plain value (`Effect.succeed`) and runs it
 * otherwise; the default stages answer with plain values where they can, and the executor swaps the fiber's
 * context by hand instead of `Effect.provideService`. These fast paths must not show: the same calls through
 * stages (and tools) whose every answer has to run give the same results and events, and a call leaves its
 * fiber's context as it found it however it ends.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Ref, Schema, TestClock } from "effect"
import {
  InputValidator,
  Message,
  PermissionPolicy,
  PermissionPrompter,
  Tool,
  ToolErrors,
  ToolExecutor,
  ToolHooks,
  ToolProgress,
  ToolRegistry,
  ToolResultStore,
  ToolRuntime,
  ToolUseContext
} from "../src/index.js"

const Input = Schema.Struct({ text: Schema.String })
type Input = typeof Input.Type

/** An answer that has to run: the same value, but not an `Exit` the pipeline could read on the spot. */
const deferred = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.suspend(() => effect)

/** The tools, with their own checks answering directly or deferred. */
const makeTools = (defer: boolean): ReadonlyArray<Tool.Any> => {
  const answer = <A, E>(effect: Effect.Effect<A, E>) => (defer ? deferred(effect) : effect)
  type Options = Partial<Tool.Options<string, typeof Input, unknown, ToolProgress.ToolProgress>>
  const make = (name: string, options: Options) =>
    Tool.make({ name, description: name, input: Input, call: ({ text }) => Effect.succeed(text), ...options })
  return [
    make("Reader", {
      isReadOnly: () => true,
      call: ({ text }) => Effect.as(ToolProgress.report({ read: text }), text === "empty" ? "" : `read ${text}`)
    }),
    make("Writer", {}),
    make("Fails", {
      isReadOnly: () => true,
      call: () => Effect.fail(new ToolErrors.ToolError({ message: "failed on purpose" }))
    }),
    make("Dies", { isReadOnly: () => true, call: () => Effect.die(new Error("died on purpose")) }),
    make("Checked", {
      isReadOnly: () => true,
      validateInput: ({ text }: Input) =>
        text === "bad"
          ? answer(Effect.fail(new ToolErrors.ToolError({ message: "Checked refuses bad" })))
          : text === "die"
          ? answer(Effect.die(new Error("the check died")))
          : answer(Effect.void),
      checkPermissions: ({ text }: Input) =>
        answer(Effect.succeed(
          text === "deny"
            ? { behavior: "deny" as const, message: "Checked denies this" }
            : text === "allow"
            ? { behavior: "allow" as const, updatedInput: { text: "allowed by its check" } }
            : text === "broken"
            ? { behavior: "allow" as const, updatedInput: { text: 1 } }
            : { behavior: "passthrough" as const }
        ))
    })
  ]
}

const hookOutcome = (input: unknown): ToolHooks.PreToolUseOutcome => {
  const text = Schema.is(Input)(input) ? input.text : ""
  switch (text) {
    case "stop":
      return { stop: { reason: "enough" } }
    case "rewrite":
      return { updatedInput: { text: "rewritten" }, additionalContext: ["pre said so"] }
    case "rewrite-bad":
      return { updatedInput: { text: 3 } }
    case "hook-deny":
      return { permissionDecision: "deny", reason: "the hook denies" }
    case "hook-allow":
      return { permissionDecision: "allow" }
    default:
      return {}
  }
}

/** Hooks that say something for some inputs, answering directly or deferred. */
const makeHooks = (defer: boolean): ToolHooks.Service => {
  const answer = <A>(value: A) => (defer ? deferred(Effect.succeed(value)) : Effect.succeed(value))
  return {
    preToolUse: (_tool, input) => answer(hookOutcome(input)),
    postToolUse: (_tool, input) =>
      answer(
        Schema.is(Input)(input) && input.text === "post"
          ? { additionalContext: ["post said so"], block: { reason: "post blocks" } }
          : {}
      ),
    postToolUseFailure: () => answer({ additionalContext: ["failure noted"] }),
    hearsInterrupts: () => false,
    permissionDenied: (_tool, _input, reason) => answer({ additionalContext: [`denied: ${reason}`] })
  }
}

/** Every method of a stage service answering through `Effect.suspend`. */
const deferAll = <S extends object>(service: S): S => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(service)) {
    out[key] = typeof value === "function"
      ? (...args: Array<unknown>) => {
        const result: unknown = value(...args)
        return Effect.isEffect(result) ? deferred(result) : result
      }
      : value
  }
  return Object.assign(Object.create(Object.getPrototypeOf(service)), service, out)
}

const prompter: PermissionPrompter.Service = {
  ask: (request) =>
    Effect.succeed(
      Schema.is(Input)(request.input) && request.input.text === "ask-rewrite"
        ? { behavior: "allow" as const, updatedInput: { text: "the person rewrote it" } }
        : Schema.is(Input)(request.input) && request.input.text === "ask-allow"
        ? { behavior: "allow" as const }
        : { behavior: "deny" as const, message: "the person said no" }
    )
}

const runtimeFor = (defer: boolean): Layer.Layer<ToolRuntime.ToolRuntime> => {
  const stage = <S extends object>(service: S) => (defer ? deferAll(service) : service)
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(InputValidator.InputValidator, stage(InputValidator.make)),
      Layer.succeed(ToolHooks.ToolHooks, makeHooks(defer)),
      Layer.effect(PermissionPolicy.PermissionPolicy, Effect.map(PermissionPolicy.PermissionPolicy, stage)).pipe(
        Layer.provide(PermissionPolicy.layer)
      ),
      Layer.succeed(PermissionPrompter.PermissionPrompter, stage(prompter)),
      Layer.succeed(ToolExecutor.ToolExecutor, ToolExecutor.make),
      Layer.effect(ToolResultStore.ToolResultStore, Effect.map(ToolResultStore.ToolResultStore, stage)).pipe(
        Layer.provide(ToolResultStore.layerInline)
      )
    )),
    Layer.provide(ToolRegistry.layerTools(makeTools(defer)))
  )
}

const calls: ReadonlyArray<{ readonly name: string; readonly input: unknown }> = [
  ...["plain", "empty", "stop", "rewrite", "rewrite-bad", "hook-deny", "post"].map((text) => ({
    name: "Reader",
    input: { text }
  })),
  { name: "Reader", input: { text: 1 } },
  { name: "Reader", input: { text: "x", extra: true } },
  { name: "Nope", input: {} },
  ...["plain", "hook-allow", "ask-allow", "ask-rewrite"].map((text) => ({ name: "Writer", input: { text } })),
  { name: "Fails", input: { text: "x" } },
  { name: "Dies", input: { text: "x" } },
  ...["plain", "bad", "die", "deny", "allow", "broken", "rewrite"].map((text) => ({ name: "Checked", input: { text } }))
]

const runAll = (defer: boolean) =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const context = ToolUseContext.make({ cwd: "/project", sessionId: "s" })
    const out: Array<unknown> = []
    for (const [index, call] of calls.entries()) {
      const events: Array<Message.RuntimeEvent> = []
      const result = yield* runtime.execute(
        { type: "tool_use", id: `toolu_${index}`, name: call.name, input: call.input },
        context,
        (event) => Effect.sync(() => events.push(event))
      )
      // durationMs is wall time; everything else must match.
      out.push({ events, result: { ...result, durationMs: 0 } })
    }
    return out
  }).pipe(Effect.provide(runtimeFor(defer)))

describe("stage answers read on the spot", () => {
  it.effect("give the same results and events as answers that have to run", () =>
    Effect.gen(function*() {
      const direct = yield* runAll(false)
      const deferredRuns = yield* runAll(true)
      assert.deepStrictEqual(direct, deferredRuns)
      // The scenarios do reach their branches (a spot check, so the comparison is not between two failures).
      const texts = direct.map((entry) => {
        const { result } = entry as { result: Message.ToolResult }
        return result.result.content
      })
      const invalid = (tool: string, issue: string) =>
        `<tool_use_error>InputValidationError: ${tool} failed due to the following issue:\n${issue}</tool_use_error>`
      const notAString = "The parameter `text` type is expected as `string` but provided as `number`"
      assert.deepStrictEqual(texts, [
        "read plain",
        "(Reader completed with no output)",
        "<tool_use_error>Reader was not run: a PreToolUse hook stopped the session: enough</tool_use_error>",
        "read rewritten\n\npre said so",
        `<tool_use_error>A PreToolUse hook rewrote the input: ${invalid("Reader", notAString).slice(16)}`,
        "the hook denies\n\ndenied: the hook denies",
        "read post\n\npost said so\n\nPostToolUse hook blocked: post blocks",
        invalid("Reader", notAString),
        invalid("Reader", "An unexpected parameter `extra` was provided"),
        "<tool_use_error>Error: No such tool available: Nope</tool_use_error>",
        "the person said no\n\ndenied: the person said no",
        "hook-allow",
        "ask-allow",
        "the person rewrote it",
        "<tool_use_error>failed on purpose</tool_use_error>\n\nfailure noted",
        "<tool_use_error>died on purpose</tool_use_error>\n\nfailure noted",
        "plain",
        "<tool_use_error>Checked refuses bad</tool_use_error>",
        "<tool_use_error>Checked could not check its input: Error: the check died</tool_use_error>",
        "Checked denies this\n\ndenied: Checked denies this",
        "allowed by its check",
        invalid("Checked", notAString),
        "rewritten\n\npre said so"
      ])
    }))

  it.effect("a validateInput that throws fails the call inside the runtime, not the check", () =>
    Effect.gen(function*() {
      const Throws = Tool.make({
        name: "Throws",
        description: "its check throws",
        input: Input,
        isReadOnly: () => true,
        validateInput: () => {
          throw new Error("thrown by the check")
        },
        call: () => Effect.succeed("unreachable")
      })
      const validated = InputValidator.make.validate(Throws, { text: "x" }, ToolUseContext.make({ cwd: "/" }))
      const exit = yield* Effect.exit(validated)
      assert(Exit.isFailure(exit))
      assert.deepStrictEqual(exit.cause._tag, "Die")
    }))
})

describe("the executor's context swap", () => {
  class Marker extends Context.Tag("test/Marker")<Marker, string>() {}
  const context = ToolUseContext.forCall(ToolUseContext.make({ cwd: "/" }), "toolu_x")
  const tool = (call: Effect.Effect<unknown, unknown, ToolProgress.ToolProgress>, timeoutMs?: number) =>
    Tool.make({
      name: "T",
      description: "T",
      input: Input,
      call: () => call,
      ...(timeoutMs === undefined ? {} : { timeoutMs })
    })
  const report = (data: unknown) => Effect.sync(() => reported.push(data))
  const reported: Array<unknown> = []

  /** Runs the call, then reads the fiber's context: the marker must be there and `ToolProgress` must not. */
  const runAndCheck = (call: Effect.Effect<unknown, unknown, ToolProgress.ToolProgress>, timeoutMs?: number) =>
    Effect.gen(function*() {
      const exit = yield* ToolExecutor.make.execute(tool(call, timeoutMs), { text: "x" }, context, report)
      const after = yield* Effect.context<never>()
      assert.strictEqual(Context.getOption(after, Marker)._tag, "Some")
      assert.strictEqual(Context.getOption(after, ToolProgress.ToolProgress)._tag, "None")
      return exit
    }).pipe(Effect.provideService(Marker, "outer"))

  it.effect("success, failure, defect and a throwing call each leave the context as they found it", () =>
    Effect.gen(function*() {
      reported.length = 0
      const ok = yield* runAndCheck(Effect.as(ToolProgress.report("step"), "done"))
      assert.deepStrictEqual(ok, Exit.succeed("done"))
      assert.deepStrictEqual(reported, ["step"])
      const failed = yield* runAndCheck(Effect.fail("no"))
      assert(Exit.isFailure(failed))
      const died = yield* runAndCheck(Effect.die("boom"))
      assert(Exit.isFailure(died))
      const thrown = yield* Effect.gen(function*() {
        const Throwing = Tool.make({
          name: "Throwing",
          description: "throws while building its Effect",
          input: Input,
          call: () => {
            throw new Error("thrown while building")
          }
        })
        return yield* ToolExecutor.make.execute(Throwing, { text: "x" }, context, report)
      })
      assert(Exit.isFailure(thrown))
      assert.deepStrictEqual(ToolExecutor.wasInterrupted(thrown), false)
    }))

  it.effect("a call stopped at its time limit leaves the context as it found it", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(runAndCheck(Effect.never, 1_000))
      yield* TestClock.adjust(1_000)
      const exit = yield* Fiber.join(fiber)
      assert(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "timed out")
    }))

  it.effect("an interrupted call leaves the context of the fiber's finalizers as it found it", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const started = yield* Effect.makeLatch(false)
      const call = tool(Effect.zipRight(started.open, Effect.never))
      const fiber = yield* Effect.fork(
        ToolExecutor.make.execute(call, { text: "x" }, context, report).pipe(
          Effect.onInterrupt(() =>
            Effect.flatMap(Effect.context<never>(), (after) =>
              Ref.set(seen, [
                Context.getOption(after, Marker)._tag,
                Context.getOption(after, ToolProgress.ToolProgress)._tag
              ]))
          ),
          Effect.provideService(Marker, "outer")
        )
      )
      yield* started.await
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* Ref.get(seen), ["Some", "None"])
    }))
})
