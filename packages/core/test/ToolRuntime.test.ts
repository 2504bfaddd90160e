import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import { Tool, ToolErrors, ToolProgress, ToolRegistry, ToolRuntime, ToolUseContext } from "../src/index.js"

const Echo = Tool.make({
  name: "Echo",
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String, times: Schema.optional(Schema.Number) }),
  isReadOnly: () => true,
  call: ({ text }) =>
    Effect.gen(function*() {
      yield* ToolProgress.report({ step: 1 })
      return text
    })
})

const Boom = Tool.make({
  name: "Boom",
  description: "Fails",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.fail(new ToolErrors.ToolError({ message: "it broke" }))
})

const runtime = ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools([Echo, Boom])))
const context = ToolUseContext.make({ cwd: "/tmp" })

const run = (name: string, input: unknown) =>
  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
    rt.runToolUse({ type: "tool_use", id: "toolu_1", name, input }, context).pipe(Stream.runCollect)
  ).pipe(Effect.map((chunk) => Array.from(chunk)), Effect.provide(runtime))

describe("ToolRuntime", () => {
  it.effect("emits progress then exactly one result", () =>
    Effect.gen(function*() {
      const events = yield* run("Echo", { text: "hi" })
      assert.deepStrictEqual(events.map((e) => e._tag), ["Progress", "ToolResult"])
      const last = events[1]
      assert(last._tag === "ToolResult")
      assert.deepStrictEqual(last.result, { type: "tool_result", tool_use_id: "toolu_1", content: "hi" })
    }))

  it.effect("unknown tool", () =>
    Effect.gen(function*() {
      const [event] = yield* run("Nope", {})
      assert(event._tag === "ToolResult")
      assert.strictEqual(event.result.content, "<tool_use_error>Error: No such tool available: Nope</tool_use_error>")
      assert.strictEqual(event.result.is_error, true)
    }))

  it.effect("validation lists every problem", () =>
    Effect.gen(function*() {
      const [event] = yield* run("Echo", { times: "three", bogus: 1 })
      assert(event._tag === "ToolResult")
      assert.strictEqual(
        event.result.content,
        "<tool_use_error>InputValidationError: Echo failed due to the following issues:\n" +
          "The required parameter `text` is missing\n" +
          "The parameter `times` type is expected as `number` but provided as `string`\n" +
          "An unexpected parameter `bogus` was provided</tool_use_error>"
      )
    }))

  it.effect("a failing tool", () =>
    Effect.gen(function*() {
      const [event] = yield* run("Boom", {})
      assert(event._tag === "ToolResult")
      assert.strictEqual(event.result.content, "<tool_use_error>it broke</tool_use_error>")
    }))
})
