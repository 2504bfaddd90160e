import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer, Option, Schema, Stream } from "effect"
import * as Tool from "../src/Tool.js"
import * as ToolExecutor from "../src/ToolExecutor.js"
import * as ToolOrchestration from "../src/ToolOrchestration.js"
import * as ToolRegistry from "../src/ToolRegistry.js"
import * as ToolRuntime from "../src/ToolRuntime.js"
import {
  advance,
  collect,
  context,
  describeEvents,
  keyOf,
  keysOf,
  layerFor,
  makeProbe,
  makeTools,
  use
} from "./orchestrationFixtures.js"

const findIn = (tools: ReadonlyArray<Tool.Any>) => (name: string) =>
  Option.fromNullable(tools.find((tool) => tool.name === name))

describe("partitionToolCalls", () => {
  const tools = makeTools(makeProbe())

  it("R, R, W, R, R gives three batches in order", () => {
    const uses = [use("R", "a", 1), use("R", "b", 1), use("W", "c", 1), use("R", "d", 1), use("R", "e", 1)]
    const batches = ToolOrchestration.partitionToolCalls(uses, findIn(tools))
    assert.deepStrictEqual(
      batches.map((batch) => ({ concurrent: batch.concurrent, keys: batch.toolUses.map(keyOf) })),
      [
        { concurrent: true, keys: ["a", "b"] },
        { concurrent: false, keys: ["c"] },
        { concurrent: true, keys: ["d", "e"] }
      ]
    )
  })

  it("an unknown tool, an invalid input and consecutive unsafe calls each run alone", () => {
    const uses = [
      use("R", "a", 1),
      { type: "tool_use" as const, id: "bad", name: "R", input: { key: "b", ms: "soon" } },
      use("R", "c", 1),
      { type: "tool_use" as const, id: "nope", name: "Nope", input: {} },
      use("W", "d", 1),
      use("W", "e", 1)
    ]
    const batches = ToolOrchestration.partitionToolCalls(uses, findIn(tools))
    assert.deepStrictEqual(batches.map((batch) => [batch.concurrent, batch.toolUses.map((u) => u.id)]), [
      [true, [uses[0].id]],
      [false, ["bad"]],
      [true, [uses[2].id]],
      [false, ["nope"]],
      [false, [uses[4].id]],
      [false, [uses[5].id]]
    ])
  })

  it("a tool whose isConcurrencySafe throws counts as unsafe", () => {
    const Odd = Tool.make({
      name: "Odd",
      description: "throws",
      input: Schema.Struct({}),
      isConcurrencySafe: () => {
        throw new Error("no")
      },
      call: () => Effect.void
    })
    const batches = ToolOrchestration.partitionToolCalls(
      [{ type: "tool_use", id: "1", name: "Odd", input: {} }, { type: "tool_use", id: "2", name: "Odd", input: {} }],
      findIn([Odd])
    )
    assert.deepStrictEqual(batches.map((b) => b.concurrent), [false, false])
  })
})

describe("runTools", () => {
  it.effect("results come in call order whatever order the calls finish in; progress as it happens", () =>
    Effect.gen(function*() {
      const uses = [use("R", "slow", 30), use("R", "fast", 10), use("R", "mid", 20)]
      const keys = keysOf(uses)
      const seen: Array<string> = []
      const fiber = yield* ToolOrchestration.runTools(uses, context).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(...describeEvents([event], keys)))),
        Effect.fork
      )
      yield* advance(25)
      // fast and mid are done, slow still runs: their progress is out, their results wait for slow's.
      assert.deepStrictEqual(seen, ["progress:done fast", "progress:done mid"])
      yield* advance(15)
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(seen, [
        "progress:done fast",
        "progress:done mid",
        "progress:done slow",
        "result:slow:slow ok",
        "result:fast:fast ok",
        "result:mid:mid ok"
      ])
    }).pipe(Effect.provide(layerFor(makeTools(makeProbe())))))

  it.effect("batches run one after another: the write waits for the reads before it, the reads after wait for it", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const uses = [use("R", "a", 10), use("R", "b", 5), use("W", "c", 5), use("R", "d", 5), use("R", "e", 1)]
      const fiber = yield* ToolOrchestration.runTools(uses, context).pipe(collect, Effect.fork)
      yield* advance(30)
      const events = yield* Fiber.join(fiber)
      assert.deepStrictEqual(probe.log, [
        "start a",
        "start b",
        "end b",
        "end a",
        "start c",
        "end c",
        "start d",
        "start e",
        "end e",
        "end d"
      ])
      assert.deepStrictEqual(
        events.filter((e) => e._tag === "ToolResult").map((e) => e.toolUseId),
        uses.map((u) => u.id)
      )
    }).pipe(Effect.provide(layerFor(makeTools(probe))))
  })

  it.effect("a concurrent batch runs at most maxConcurrency calls at once", () => {
    const probe = makeProbe()
    return Effect.gen(function*() {
      const uses = Array.from({ length: 7 }, (_, i) => use("R", `r${i}`, 10 + i))
      const fiber = yield* ToolOrchestration.runTools(uses, context).pipe(collect, Effect.fork)
      yield* advance(100)
      const events = yield* Fiber.join(fiber)
      assert.strictEqual(probe.peak, 3)
      assert.strictEqual(events.filter((e) => e._tag === "ToolResult").length, 7)
    }).pipe(Effect.provide(layerFor(makeTools(probe), { maxConcurrency: 3 })))
  })

  it.effect("a failing call is an error result and its batch goes on", () =>
    Effect.gen(function*() {
      const uses = [use("R", "a", 5, { fail: true }), use("R", "b", 5)]
      const fiber = yield* ToolOrchestration.runTools(uses, context).pipe(collect, Effect.fork)
      yield* advance(10)
      const results = (yield* Fiber.join(fiber)).filter((e) => e._tag === "ToolResult")
      assert.deepStrictEqual(results.map((r) => r.result), [
        { type: "tool_result", tool_use_id: uses[0].id, content: "<tool_use_error>a failed</tool_use_error>", is_error: true },
        { type: "tool_result", tool_use_id: uses[1].id, content: "b ok" }
      ])
    }).pipe(Effect.provide(layerFor(makeTools(makeProbe())))))
})

describe("settings", () => {
  const load = (env: Record<string, string>) =>
    ToolOrchestration.loadSettings.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

  it.effect("defaults: 10 at once, declared tools cascade, read-only failures do not", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* load({}), {
        maxConcurrency: 10,
        cascade: { tools: "declared", readOnly: false }
      })
      assert.deepStrictEqual(
        yield* load({
          TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY: "4",
          TOOLWRIGHT_TOOL_ERROR_CASCADE: "Bash, Edit",
          TOOLWRIGHT_TOOL_ERROR_CASCADE_READ_ONLY: "true"
        }),
        { maxConcurrency: 4, cascade: { tools: ["Bash", "Edit"], readOnly: true } }
      )
    }))

  it.effect("an invalid value is a start-up error naming the variable, not a silent default", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(load({ TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY: "ten" }))
      assert.strictEqual(
        error.message,
        "TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY must be a whole number of at least 1, but it is \"ten\". Set it to how many concurrency-safe tool calls may run at once, or unset it to use the default (10)."
      )
      const zero = yield* Effect.flip(load({ TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY: "0" }))
      assert.strictEqual(zero.variable, "TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY")
      const cascade = yield* Effect.flip(load({ TOOLWRIGHT_TOOL_ERROR_CASCADE: "Bash(npm)" }))
      assert.strictEqual(cascade.variable, "TOOLWRIGHT_TOOL_ERROR_CASCADE")
      const layerError = yield* Layer.build(ToolOrchestration.layer).pipe(
        Effect.scoped,
        Effect.provide(ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools([])))),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY", "-2"]]))),
        Effect.flip
      )
      assert.strictEqual(layerError._tag, "OrchestrationConfigError")
    }))

  it("a cascade setting from a settings file", () => {
    const decode = Schema.decodeUnknownSync(ToolOrchestration.CascadeSetting)
    assert.deepStrictEqual(ToolOrchestration.cascadePolicyFromSetting(decode("none")), { tools: "none", readOnly: false })
    assert.deepStrictEqual(ToolOrchestration.cascadePolicyFromSetting(decode({ tools: ["Bash"], readOnly: true })), {
      tools: ["Bash"],
      readOnly: true
    })
  })
})

describe("timeouts", () => {
  const Slow = Tool.make({
    name: "Slow",
    description: "sleeps",
    input: Schema.Struct({ ms: Schema.Number }),
    isReadOnly: () => true,
    timeoutMs: 50,
    call: ({ ms }) => Effect.as(Effect.sleep(ms), "woke")
  })
  const Sleepy = Tool.make({
    name: "Sleepy",
    description: "sleeps, no own limit",
    input: Schema.Struct({ ms: Schema.Number }),
    isReadOnly: () => true,
    call: ({ ms }) => Effect.as(Effect.sleep(ms), "woke")
  })
  const Unbounded = Tool.make({
    name: "Unbounded",
    description: "bounds itself",
    input: Schema.Struct({ ms: Schema.Number }),
    isReadOnly: () => true,
    timeoutMs: Infinity,
    call: ({ ms }) => Effect.as(Effect.sleep(ms), "woke")
  })
  const layer = ToolOrchestration.layerWith({}).pipe(
    Layer.provideMerge(ToolRuntime.layer),
    Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, ToolExecutor.layerTimeout("1 second"))),
    Layer.provide(ToolRegistry.layerTools([Slow, Sleepy, Unbounded]))
  )

  it.effect("a call past its tool's limit or the runtime's default ends with an error result naming the limit", () =>
    Effect.gen(function*() {
      const uses = [
        { type: "tool_use" as const, id: "t1", name: "Slow", input: { ms: 10_000 } },
        { type: "tool_use" as const, id: "t2", name: "Sleepy", input: { ms: 10_000 } },
        { type: "tool_use" as const, id: "t3", name: "Sleepy", input: { ms: 10 } },
        { type: "tool_use" as const, id: "t4", name: "Unbounded", input: { ms: 1500 } }
      ]
      const fiber = yield* ToolOrchestration.runTools(uses, context).pipe(collect, Effect.fork)
      yield* advance(2700, 50)
      const results = (yield* Fiber.join(fiber)).flatMap((e) => (e._tag === "ToolResult" ? [e.result] : []))
      assert.deepStrictEqual(results, [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content:
            "<tool_use_error>Slow timed out: it ran longer than its limit of 50ms (50 ms, Slow's own limit) and was stopped. Its work may be incomplete; split the task into smaller calls or run it in the background.</tool_use_error>",
          is_error: true
        },
        {
          type: "tool_result",
          tool_use_id: "t2",
          content:
            "<tool_use_error>Sleepy timed out: it ran longer than its limit of 1s (1000 ms, the runtime's default limit) and was stopped. Its work may be incomplete; split the task into smaller calls or run it in the background.</tool_use_error>",
          is_error: true
        },
        { type: "tool_result", tool_use_id: "t3", content: "woke" },
        { type: "tool_result", tool_use_id: "t4", content: "woke" }
      ])
    }).pipe(Effect.provide(layer)))
})
