import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FastCheck, Fiber, Schema, Scope, Stream } from "effect"
import type * as Message from "../src/Message.js"
import * as StreamingToolExecutor from "../src/StreamingToolExecutor.js"
import * as Tool from "../src/Tool.js"
import * as ToolProgress from "../src/ToolProgress.js"
import type * as ToolOrchestration from "../src/ToolOrchestration.js"
import {
  advance,
  collect,
  context,
  describeEvents,
  keysOf,
  layerFor,
  makeProbe,
  makeTools,
  type Probe,
  use
} from "./orchestrationFixtures.js"

/** Starts an executor in its own scope with a reader collecting its events outside that scope. */
const startExecutor = (options: StreamingToolExecutor.Options = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const executor = yield* StreamingToolExecutor.make(context, options).pipe(Scope.extend(scope))
    const reader = yield* collect(executor.events).pipe(Effect.fork)
    return { scope, executor, reader }
  })

const results = (events: ReadonlyArray<Message.RuntimeEvent>) =>
  events.flatMap((event) => (event._tag === "ToolResult" ? [event] : []))

const withTools = (probe: Probe, settings: Partial<ToolOrchestration.Settings> = {}) =>
  Effect.provide(layerFor(makeTools(probe), settings))

describe("StreamingToolExecutor", () => {
  it.effect("calls start as they arrive when canExecuteTool allows; an unsafe call waits and holds back later ones", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader, scope } = yield* startExecutor()
      const uses = [use("R", "a", 20), use("R", "b", 5), use("W", "c", 5), use("R", "d", 5)]
      yield* executor.addTool(uses[0])
      yield* advance(5)
      assert.deepStrictEqual(probe.log, ["start a"])
      // The model is still streaming: b arrives and joins a at once.
      yield* executor.addTool(uses[1])
      yield* advance(0)
      yield* Effect.yieldNow()
      assert.deepStrictEqual(probe.log, ["start a", "start b"])
      yield* executor.addTools([uses[2], uses[3]])
      yield* advance(10)
      // c needs to run alone, and d (safe) may not overtake it.
      assert.deepStrictEqual(probe.log, ["start a", "start b", "end b"])
      yield* advance(30)
      yield* executor.end
      const events = yield* Fiber.join(reader)
      assert.deepStrictEqual(probe.log, ["start a", "start b", "end b", "end a", "start c", "end c", "start d", "end d"])
      assert.deepStrictEqual(results(events).map((r) => r.toolUseId), uses.map((u) => u.id))
      yield* Scope.close(scope, Exit.void)
    }).pipe(withTools(probe))
  })

  it.effect("progress is yielded at once; results wait for the calls before them", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const scope = yield* Scope.make()
      const executor = yield* StreamingToolExecutor.make(context).pipe(Scope.extend(scope))
      const uses = [use("R", "slow", 30), use("R", "fast", 5)]
      const keys = keysOf(uses)
      const seen: Array<string> = []
      const reader = yield* executor.events.pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(...describeEvents([event], keys)))),
        Effect.fork
      )
      yield* executor.addTools(uses)
      yield* executor.end
      yield* advance(10)
      // fast is done and slow still runs: fast's progress is out, its result waits for slow's.
      assert.deepStrictEqual(seen, ["progress:done fast"])
      yield* advance(30)
      yield* Fiber.join(reader)
      assert.deepStrictEqual(seen, [
        "progress:done fast",
        "progress:done slow",
        "result:slow:slow ok",
        "result:fast:fast ok"
      ])
    }).pipe(withTools(probe))
  })

  it.effect("concurrency limit holds for streamed calls", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      yield* executor.addTools(Array.from({ length: 6 }, (_, i) => use("R", `r${i}`, 10)))
      yield* executor.end
      yield* advance(40)
      const events = yield* Fiber.join(reader)
      assert.strictEqual(probe.peak, 2)
      assert.strictEqual(results(events).length, 6)
    }).pipe(withTools(probe, { maxConcurrency: 2 }))
  })

  it.effect("a cascading failure cancels running and queued siblings with a result naming the failed call", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      const uses = [
        use("R", "long", 100),
        use("Sh", "test", 10, { fail: true, command: "npm test" }),
        use("R", "other", 100),
        use("W", "queued", 5)
      ]
      yield* executor.addTools(uses)
      yield* executor.end
      yield* advance(20)
      const events = yield* Fiber.join(reader)
      const cancelled = "<tool_use_error>Cancelled: parallel tool call Sh(npm test) errored</tool_use_error>"
      assert.deepStrictEqual(results(events).map((r) => [r.toolUseId, r.result.content, r.result.is_error]), [
        [uses[0].id, cancelled, true],
        [uses[1].id, "<tool_use_error>test failed</tool_use_error>", true],
        [uses[2].id, cancelled, true],
        [uses[3].id, cancelled, true]
      ])
      // The siblings' scopes closed; the queued call never started.
      assert.deepStrictEqual(probe.log.filter((l) => l.startsWith("stop")).sort(), ["stop long", "stop other", "stop test"])
      assert.isFalse(probe.log.includes("start queued"))
      assert.strictEqual(probe.running, 0)
    }).pipe(withTools(probe))
  })

  it.effect("a cascade interrupts block calls too: block only holds off the user's interruption, as in Claude Code", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      const uses = [use("Blk", "block", 100), use("Sh", "test", 10, { fail: true, command: "npm test" })]
      yield* executor.addTools(uses)
      yield* executor.end
      yield* advance(20)
      const events = yield* Fiber.join(reader)
      assert.deepStrictEqual(results(events).map((r) => r.result.content), [
        "<tool_use_error>Cancelled: parallel tool call Sh(npm test) errored</tool_use_error>",
        "<tool_use_error>test failed</tool_use_error>"
      ])
      assert.isTrue(probe.log.includes("stop block"))
    }).pipe(withTools(probe))
  })

  it.effect("the failed call is named by the first 40 characters of its command", () =>
    Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      const command = "node scripts/a-very-long-script-name-indeed.mjs --flag"
      const uses = [use("Sh", "x", 5, { fail: true, command }), use("R", "y", 50)]
      yield* executor.addTools(uses)
      yield* executor.end
      yield* advance(10)
      const [, second] = results(yield* Fiber.join(reader))
      assert.strictEqual(
        second.result.content,
        "<tool_use_error>Cancelled: parallel tool call Sh(node scripts/a-very-long-script-name-ind\u2026) errored</tool_use_error>"
      )
    }).pipe(withTools(makeProbe())))

  it.effect("a read-only failure does not cascade by default, a non-cascading tool never does", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      const uses = [
        use("Sh", "ls", 5, { fail: true, command: "ls missing", readOnly: true }),
        use("R", "read", 5, { fail: true }),
        use("R", "sibling", 20)
      ]
      yield* executor.addTools(uses)
      yield* executor.end
      yield* advance(30)
      const events = yield* Fiber.join(reader)
      assert.deepStrictEqual(results(events).map((r) => r.result.content), [
        "<tool_use_error>ls failed</tool_use_error>",
        "<tool_use_error>read failed</tool_use_error>",
        "sibling ok"
      ])
    }).pipe(withTools(probe))
  })

  it.effect("the policy decides: read-only failures may cascade, listed tools cascade, none disables", () =>
    Effect.gen(function*() {
      const run = (cascade: ToolOrchestration.CascadePolicy, uses: ReadonlyArray<Message.ToolUseBlock>) =>
        Effect.gen(function*() {
          const { executor, reader } = yield* startExecutor({ cascade })
          yield* executor.addTools(uses)
          yield* executor.end
          yield* advance(30)
          return results(yield* Fiber.join(reader)).map((r) => String(r.result.content))
        })
      const readOnly = yield* run({ tools: "declared", readOnly: true }, [
        use("Sh", "ls", 5, { fail: true, command: "ls missing", readOnly: true }),
        use("R", "s", 20)
      ])
      assert.strictEqual(readOnly[1], "<tool_use_error>Cancelled: parallel tool call Sh(ls missing) errored</tool_use_error>")
      const listed = yield* run({ tools: ["W"], readOnly: false }, [use("W", "w", 5, { fail: true }), use("R", "s", 5)])
      assert.strictEqual(listed[1], "<tool_use_error>Cancelled: parallel tool call W errored</tool_use_error>")
      const none = yield* run({ tools: "none", readOnly: false }, [
        use("Sh", "t", 5, { fail: true, command: "npm test" }),
        use("R", "s", 20)
      ])
      assert.strictEqual(none[1], "s ok")
    }).pipe(withTools(makeProbe())))

  it.effect("abort: cancel calls are interrupted, block calls finish, queued calls do not run", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      const uses = [use("R", "cancel", 100), use("Blk", "block", 30), use("W", "queued", 5)]
      yield* executor.addTools(uses)
      yield* advance(10)
      yield* executor.abort
      yield* executor.end
      yield* advance(40)
      const events = yield* Fiber.join(reader)
      assert.deepStrictEqual(results(events).map((r) => r.result), [
        {
          type: "tool_result",
          tool_use_id: uses[0].id,
          content:
            "<tool_use_error>Interrupted by user: R was stopped before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.</tool_use_error>",
          is_error: true
        },
        { type: "tool_result", tool_use_id: uses[1].id, content: "block ok" },
        {
          type: "tool_result",
          tool_use_id: uses[2].id,
          content:
            "<tool_use_error>Interrupted by user: W was not run. Wait for the user to tell you how to proceed.</tool_use_error>",
          is_error: true
        }
      ])
      assert.deepStrictEqual(probe.log, ["start cancel", "start block", "stop cancel", "end block"])
    }).pipe(withTools(probe))
  })

  it.effect("after an abort, later calls of the same message are cancelled too; a new message runs", () =>
    Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      yield* executor.abort
      yield* executor.addTool(use("R", "late", 5))
      yield* executor.addMessage([use("R", "next", 5)])
      yield* executor.end
      yield* advance(10)
      assert.deepStrictEqual(results(yield* Fiber.join(reader)).map((r) => r.result.content), [
        "<tool_use_error>Interrupted by user: R was not run. Wait for the user to tell you how to proceed.</tool_use_error>",
        "next ok"
      ])
    }).pipe(withTools(makeProbe())))

  it.effect("a cascade stays within its assistant message: calls of an earlier or a later message go on", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader } = yield* startExecutor()
      const earlier = use("R", "earlier", 50)
      const failing = use("Sh", "test", 10, { fail: true, command: "npm test" })
      const sibling = use("R", "sibling", 50)
      const later = use("R", "later", 5)
      yield* executor.addMessage([earlier])
      yield* advance(5)
      yield* executor.addMessage([failing, sibling])
      yield* advance(15)
      yield* executor.addMessage([later])
      yield* executor.end
      yield* advance(60)
      assert.deepStrictEqual(results(yield* Fiber.join(reader)).map((r) => [r.toolUseId, r.result.content]), [
        [earlier.id, "earlier ok"],
        [failing.id, "<tool_use_error>test failed</tool_use_error>"],
        [sibling.id, "<tool_use_error>Cancelled: parallel tool call Sh(npm test) errored</tool_use_error>"],
        [later.id, "later ok"]
      ])
      assert.isTrue(probe.log.includes("end earlier"))
    }).pipe(withTools(probe))
  })

  it.effect("closing the scope interrupts cancel calls, waits for block calls, and every call still gets its result", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const { executor, reader, scope } = yield* startExecutor()
      const uses = [use("R", "c", 100), use("Blk", "b", 30), use("W", "q", 5)]
      yield* executor.addTools(uses)
      yield* advance(10)
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.fork)
      yield* advance(40)
      yield* Fiber.join(closing)
      const events = yield* Fiber.join(reader)
      assert.deepStrictEqual(results(events).map((r) => [r.toolUseId, r.result.is_error === true]), [
        [uses[0].id, true],
        [uses[1].id, false],
        [uses[2].id, true]
      ])
      // Nothing runs after the scope closed, and nothing starts either.
      assert.strictEqual(probe.running, 0)
      yield* executor.addTool(use("R", "after", 1))
      yield* advance(10)
      assert.isFalse(probe.log.includes("start after"))
    }).pipe(withTools(probe))
  })

  it.effect("a reader that falls behind loses progress beyond the backlog bound, never a result", () =>
    Effect.gen(function*() {
      const Chatty = Tool.make({
        name: "Chatty",
        description: "reports a lot of progress",
        input: Schema.Struct({}),
        call: () =>
          Effect.forEach(
            Array.from({ length: 3 * StreamingToolExecutor.MAX_UNREAD_EVENTS }, (_, i) => i),
            (i) => ToolProgress.report(i),
            { discard: true }
          ).pipe(Effect.as("chatted"))
      })
      yield* Effect.gen(function*() {
        const executor = yield* StreamingToolExecutor.make(context)
        yield* executor.addTool({ type: "tool_use", id: "toolu_chatty", name: "Chatty", input: {} })
        yield* executor.end
        // Nobody reads until the call's result is out: the backlog holds progress up to the bound, then only the result.
        while ((yield* executor.pending) > 0) yield* Effect.yieldNow()
        const events = yield* collect(executor.events)
        assert.strictEqual(
          events.filter((event) => event._tag === "Progress").length,
          StreamingToolExecutor.MAX_UNREAD_EVENTS
        )
        assert.deepStrictEqual(results(events).map((r) => r.result.content), ["chatted"])
      }).pipe(Effect.scoped, Effect.provide(layerFor([Chatty])))
    }))

  const Plan = FastCheck.record({
    calls: FastCheck.array(
      FastCheck.record({
        tool: FastCheck.constantFrom("R", "W", "Sh", "Blk"),
        ms: FastCheck.integer({ min: 0, max: 40 }),
        fail: FastCheck.boolean(),
        newMessage: FastCheck.boolean(),
        addAt: FastCheck.integer({ min: 0, max: 30 })
      }),
      { minLength: 1, maxLength: 8 }
    ),
    abortAt: FastCheck.option(FastCheck.integer({ min: 0, max: 60 }), { nil: undefined }),
    closeAt: FastCheck.option(FastCheck.integer({ min: 0, max: 80 }), { nil: undefined }),
    maxConcurrency: FastCheck.integer({ min: 1, max: 4 })
  })

  it.effect.prop(
    "every added call gets exactly one result, in call order, under random durations, failures and aborts",
    { plan: Plan },
    ({ plan }) => {
      const probe = makeProbe()
      return Effect.gen(function*() {
        const { executor, reader, scope } = yield* startExecutor({ maxConcurrency: plan.maxConcurrency })
        const uses = plan.calls.map((call, i) =>
          use(call.tool, `k${i}`, call.ms, call.tool === "Sh" ? { fail: call.fail, command: `cmd ${i}` } : { fail: call.fail })
        )
        const order = plan.calls.map((call, i) => ({ at: call.addAt, i })).sort((a, b) => a.at - b.at || a.i - b.i)
        const added: Array<string> = []
        let closed = false
        for (let t = 0; t <= 80; t += 10) {
          for (const { at, i } of order) {
            if (at >= t && at < t + 10 && !closed) {
              yield* (plan.calls[i].newMessage ? executor.addMessage([uses[i]]) : executor.addTool(uses[i]))
              added.push(uses[i].id)
            }
          }
          if (plan.abortAt !== undefined && plan.abortAt >= t && plan.abortAt < t + 10) yield* executor.abort
          if (plan.closeAt !== undefined && plan.closeAt >= t && plan.closeAt < t + 10 && !closed) {
            closed = true
            yield* Scope.close(scope, Exit.void).pipe(Effect.fork)
          }
          yield* advance(10, 10)
        }
        yield* executor.end
        yield* advance(200, 100)
        const ids = results(yield* Fiber.join(reader)).map((r) => r.toolUseId)
        assert.deepStrictEqual(ids, added)
        assert.strictEqual(probe.running, 0)
      }).pipe(withTools(probe))
    },
    { fastCheck: { numRuns: 40 } }
  )
})
