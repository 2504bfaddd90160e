import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Schema } from "effect"
import { FeatureFlags, Tool, ToolRegistry, ToolRuntime, ToolUseContext } from "../src/index.js"

const make = (name: string) =>
  Tool.make({
    name,
    description: `The ${name} tool`,
    source: "builtin",
    input: Schema.Struct({}),
    isReadOnly: () => true,
    call: () => Effect.succeed(`${name} ran`)
  })

const tools = ["Agent", "Bash", "Read", "SendMessage", "TaskStop", "WebSearch"].map(make)
const registry = ToolRegistry.layerTools(tools)

const poolNames = Effect.map(ToolRegistry.ToolRegistry, (r) => r.pool().map((tool) => tool.name))

describe("FeatureFlags", () => {
  it.effect("coordinator mode keeps only the coordinator tools that exist", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* poolNames, ["Agent", "SendMessage", "TaskStop"])
      const r = yield* ToolRegistry.ToolRegistry
      assert.isTrue(Option.isNone(r.find("Bash")))
      assert.deepStrictEqual(r.tools.map((tool) => tool.name), ["Agent", "SendMessage", "TaskStop"])
    }).pipe(
      Effect.provide(
        FeatureFlags.layerRegistry(registry).pipe(
          Layer.provide(FeatureFlags.layer({ flags: { coordinatorMode: true } }))
        )
      )
    ))

  it.effect("a conditional tool shows only when its flag is on", () =>
    Effect.gen(function*() {
      const off = yield* poolNames.pipe(
        Effect.provide(
          FeatureFlags.layerRegistry(registry).pipe(
            Layer.provide(FeatureFlags.layer({ conditionalTools: { WebSearch: "webSearch" } }))
          )
        )
      )
      assert.deepStrictEqual(off, ["Agent", "Bash", "Read", "SendMessage", "TaskStop"])
      const on = yield* poolNames.pipe(
        Effect.provide(
          FeatureFlags.layerRegistry(registry).pipe(
            Layer.provide(
              FeatureFlags.layer({ flags: { "web-search": true }, conditionalTools: { WebSearch: "webSearch" } })
            )
          )
        )
      )
      assert.deepStrictEqual(on, ["Agent", "Bash", "Read", "SendMessage", "TaskStop", "WebSearch"])
    }))

  it.effect("reads TOOLWRIGHT_FEATURE_<NAME> from the environment and rejects non-booleans", () =>
    Effect.gen(function*() {
      assert.strictEqual(FeatureFlags.envName("coordinatorMode"), "TOOLWRIGHT_FEATURE_COORDINATOR_MODE")
      const env = (entries: Record<string, string>) =>
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))
      const flags = yield* FeatureFlags.FeatureFlags.pipe(
        Effect.provide(
          FeatureFlags.layerEnv({ conditionalTools: { WebSearch: "webSearch" } }).pipe(
            Layer.provide(env({ TOOLWRIGHT_FEATURE_COORDINATOR_MODE: "0", TOOLWRIGHT_FEATURE_WEB_SEARCH: "yes" }))
          )
        )
      )
      assert.isFalse(flags.isEnabled("coordinatorMode"))
      assert.isTrue(flags.allowsTool(make("WebSearch")))
      const error = yield* Effect.flip(
        FeatureFlags.FeatureFlags.pipe(
          Effect.provide(
            FeatureFlags.layerEnv().pipe(Layer.provide(env({ TOOLWRIGHT_FEATURE_COORDINATOR_MODE: "maybe" })))
          )
        )
      )
      assert.include(String(error), "TOOLWRIGHT_FEATURE_COORDINATOR_MODE")
    }))

  it.effect("a hidden tool cannot be called through the pipeline", () =>
    Effect.gen(function*() {
      const runtime = yield* ToolRuntime.ToolRuntime
      const event = yield* runtime.execute(
        { type: "tool_use", id: "toolu_1", name: "Bash", input: {} },
        ToolUseContext.make({ cwd: "/tmp" }),
        () => Effect.void
      )
      assert.strictEqual(event.result.content, "<tool_use_error>Error: No such tool available: Bash</tool_use_error>")
    }).pipe(
      Effect.provide(
        ToolRuntime.layerDefault.pipe(
          Layer.provide(FeatureFlags.layerRegistry(registry)),
          Layer.provide(FeatureFlags.layer({ flags: { COORDINATOR_MODE: true } }))
        )
      )
    ))
})
