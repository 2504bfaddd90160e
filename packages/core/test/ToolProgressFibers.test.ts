/**
 * Progress a tool reports from other fibers than its own — a forked child, parallel workers — reaches
 * the events of the call that started them, and only that call, for tools registered directly and
 * tools that come from a plugin (`ToolRegistry.layer`, which provides the plugin's context per call).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, Schema } from "effect"
import { Message, Tool, ToolPlugin, ToolProgress, ToolRegistry, ToolRuntime, ToolUseContext } from "../src/index.js"

const Forking = Tool.make({
  name: "Forking",
  description: "Reports from a forked child fiber and from parallel workers",
  input: Schema.Struct({ label: Schema.String }),
  isReadOnly: () => true,
  call: ({ label }) =>
    Effect.gen(function*() {
      yield* ToolProgress.report(`${label}: own fiber`)
      const child = yield* Effect.fork(ToolProgress.report(`${label}: child fiber`))
      yield* Fiber.join(child)
      yield* Effect.forEach(
        [1, 2],
        (n) => Effect.zipRight(Effect.yieldNow(), ToolProgress.report(`${label}: worker ${n}`)),
        { concurrency: "unbounded", discard: true }
      )
      return label
    })
})

const context = ToolUseContext.make({ cwd: "/tmp" })

const progressOf = (events: ReadonlyArray<Message.RuntimeEvent>, toolUseId: string): Array<unknown> =>
  events.flatMap((event) => event._tag === "Progress" && event.toolUseId === toolUseId ? [event.data] : [])

const callTwiceConcurrently = Effect.gen(function*() {
  const runtime = yield* ToolRuntime.ToolRuntime
  const events = yield* Ref.make<ReadonlyArray<Message.RuntimeEvent>>([])
  const emit = (event: Message.RuntimeEvent) => Ref.update(events, (all) => [...all, event])
  const results = yield* Effect.all(
    ["a", "b"].map((label) =>
      runtime.execute({ type: "tool_use", id: `toolu_${label}`, name: "Forking", input: { label } }, context, emit)
    ),
    { concurrency: "unbounded" }
  )
  return { results, events: yield* Ref.get(events) }
})

// Sorted, as the events are: the order across fibers is not the point.
const expected = (label: string) => [`${label}: child fiber`, `${label}: own fiber`, `${label}: worker 1`, `${label}: worker 2`]

describe("ToolProgress from other fibers", () => {
  const check = (layer: Layer.Layer<ToolRuntime.ToolRuntime>) =>
    Effect.gen(function*() {
      const { events, results } = yield* Effect.provide(callTwiceConcurrently, layer)
      assert.deepStrictEqual(results.map((result) => result.result), [
        { type: "tool_result", tool_use_id: "toolu_a", content: "a" },
        { type: "tool_result", tool_use_id: "toolu_b", content: "b" }
      ])
      assert.deepStrictEqual(progressOf(events, "toolu_a").sort(), expected("a"))
      assert.deepStrictEqual(progressOf(events, "toolu_b").sort(), expected("b"))
    })

  it.effect("a tool registered directly", () =>
    check(ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools([Forking])))))

  it.effect("a tool from a plugin", () =>
    check(
      ToolRuntime.layerDefault.pipe(
        Layer.provide(ToolRegistry.layer([ToolPlugin.make({ name: "test", version: "1.0.0", tools: [Forking] })]))
      )
    ))

  it.effect("a progress service in the environment does not swallow the call's progress", () =>
    check(
      ToolRuntime.layerDefault.pipe(
        Layer.provide(ToolRegistry.layer([ToolPlugin.make({ name: "test", version: "1.0.0", tools: [Forking] })])),
        Layer.provide(ToolProgress.layerNoop)
      )
    ))
})
