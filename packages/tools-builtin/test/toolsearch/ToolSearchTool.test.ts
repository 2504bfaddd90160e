import { assert, describe, it } from "@effect/vitest"
import { Tool, ToolPlugin, ToolRegistry, ToolRuntime, ToolSearch, ToolUseContext } from "@toolwright/core"
import { Effect, Layer, Schema } from "effect"
import { plugin } from "../../src/BuiltinTools.js"

const mcpTool = (name: string, description: string) =>
  Tool.make({
    name,
    description,
    source: "mcp",
    input: Schema.Struct({}),
    isReadOnly: () => true,
    call: () => Effect.succeed(`${name} ran`)
  })

const server = ToolPlugin.make({
  name: "slack-server",
  version: "1.0.0",
  tools: [
    mcpTool("mcp__slack__read_channel", "Reads the messages of a channel"),
    mcpTool("mcp__slack__post_message", "Posts a message to a channel")
  ]
})

const runtimeWith = (settings: ToolSearch.Settings) =>
  ToolRuntime.layerDefault.pipe(
    Layer.provideMerge(ToolSearch.withDeferredTools(ToolRegistry.layer([plugin, server]), settings)),
    Layer.orDie
  )

const call = (input: unknown) =>
  Effect.flatMap(ToolRuntime.ToolRuntime, (runtime) =>
    runtime.execute(
      { type: "tool_use", id: "toolu_search", name: "ToolSearch", input },
      ToolUseContext.make({ cwd: "/tmp" }),
      () => Effect.void
    ))

describe("ToolSearch tool", () => {
  it.effect("returns tool_reference blocks for keyword and select queries", () =>
    Effect.gen(function*() {
      const keyword = yield* call({ query: "slack message" })
      assert.deepStrictEqual(keyword.result, {
        type: "tool_result",
        tool_use_id: "toolu_search",
        content: [
          { type: "tool_reference", tool_name: "mcp__slack__post_message" },
          { type: "tool_reference", tool_name: "mcp__slack__read_channel" }
        ]
      })
      const select = yield* call({ query: "select:mcp__slack__read_channel", max_results: 1 })
      assert.deepStrictEqual(select.result.content, [{ type: "tool_reference", tool_name: "mcp__slack__read_channel" }])
      const none = yield* call({ query: "kubernetes" })
      assert.strictEqual(none.result.content, "No matching deferred tools found")
      assert.isUndefined(none.result.is_error)
    }).pipe(Effect.provide(runtimeWith({ mode: "tst" }))))

  it.effect("finds nothing to load when nothing is deferred, and rejects a bad max_results", () =>
    Effect.gen(function*() {
      const keyword = yield* call({ query: "slack" })
      assert.strictEqual(keyword.result.content, "No matching deferred tools found")
      const bad = yield* call({ query: "slack", max_results: 0 })
      assert.strictEqual(bad.result.is_error, true)
      assert.strictEqual(
        bad.result.content,
        "<tool_use_error>max_results must be a whole number from 1 to 100, got 0. " +
          "Omit it to get up to 5 results.</tool_use_error>"
      )
    }).pipe(Effect.provide(runtimeWith({ mode: "standard" }))))

  it.effect("says clearly when the runtime gave it no pool", () =>
    Effect.gen(function*() {
      const result = yield* call({ query: "slack" })
      assert.strictEqual(result.result.is_error, true)
      assert.strictEqual(
        result.result.content,
        "<tool_use_error>ToolSearch is not connected to a tool pool in this runtime, so it cannot search deferred " +
          "tools. Call the tools listed in the request directly; a runtime author wires the pool with " +
          "ToolSearch.withDeferredTools(registryLayer, settings).</tool_use_error>"
      )
    }).pipe(Effect.provide(ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layer([plugin])), Layer.orDie))))

  it("is registered as a built-in that is never deferred", () => {
    const tool = plugin.tools.find((t) => t.name === "ToolSearch")
    assert(tool !== undefined)
    assert.isTrue(tool.alwaysLoad)
    assert.isFalse(ToolSearch.isDeferrable(tool))
  })
})
