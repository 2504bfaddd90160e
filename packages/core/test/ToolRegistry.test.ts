import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Ref, Schema } from "effect"
import { Tool, ToolPlugin, ToolProgress, ToolRegistry, ToolUseContext } from "../src/index.js"

const tool = (name: string, source: Tool.Source, extra: { aliases?: ReadonlyArray<string>; enabled?: boolean } = {}) =>
  Tool.make({
    name,
    description: `${name} (${source})`,
    input: Schema.Struct({}),
    source,
    aliases: extra.aliases ?? [],
    isEnabled: () => extra.enabled ?? true,
    call: () => Effect.succeed(`${name} from ${source}`)
  })

class Counter extends Context.Tag("test/Counter")<Counter, Ref.Ref<number>>() {}

describe("ToolRegistry", () => {
  it("assembleToolPool: built-ins sorted as a prefix, then the rest sorted, first of a name wins", () => {
    const pool = ToolRegistry.assembleToolPool([
      tool("mcp__srv__b", "mcp"),
      tool("Read", "mcp"),
      tool("Write", "builtin"),
      tool("Bash", "builtin"),
      tool("acme_jira", "plugin"),
      tool("Read", "builtin")
    ])
    assert.deepStrictEqual(pool.map((t) => `${t.name}:${t.source}`), [
      "Bash:builtin",
      "Read:builtin",
      "Write:builtin",
      "Read:mcp",
      "acme_jira:plugin",
      "mcp__srv__b:mcp"
    ].filter((entry) => entry !== "Read:mcp"))
  })

  it("find: by name first, then alias; disabled tools are not registered", () => {
    const registry = ToolRegistry.fromTools([
      tool("Task", "builtin", { aliases: ["Agent"] }),
      tool("Agent", "plugin"),
      tool("Hidden", "builtin", { enabled: false }),
      tool("Shell", "builtin", { aliases: ["sh"] })
    ])
    assert.strictEqual(Option.getOrThrow(registry.find("Agent")).source, "plugin")
    assert.strictEqual(Option.getOrThrow(registry.find("sh")).name, "Shell")
    assert.isTrue(Option.isNone(registry.find("Hidden")))
    assert.isTrue(Option.isNone(registry.find("Nope")))
    assert.deepStrictEqual(registry.pool((t) => t.name === "Shell").map((t) => t.name), ["Task", "Agent"])
  })

  it.scoped("a plugin's layer is built once and provided to its tools; it closes with the registry", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const Count = Tool.make({
        name: "Count",
        description: "Counts its calls",
        input: Schema.Struct({}),
        call: () => Effect.flatMap(Counter, (ref) => Ref.updateAndGet(ref, (n) => n + 1))
      })
      const plugin = ToolPlugin.make({
        name: "@acme/counter",
        version: "1.2.3",
        tools: [Count],
        layer: Layer.scoped(
          Counter,
          Effect.acquireRelease(
            Effect.sync(() => log.push("built")).pipe(Effect.zipRight(Ref.make(0))),
            () => Effect.sync(() => log.push("closed"))
          )
        )
      })
      const context = ToolUseContext.make({ cwd: "/tmp" })
      yield* Effect.scoped(
        Effect.gen(function*() {
          const registry = yield* ToolRegistry.ToolRegistry
          const count = Option.getOrThrow(registry.find("Count"))
          assert.strictEqual(yield* Effect.orDie(count.call({}, context)), 1)
          assert.strictEqual(yield* Effect.orDie(count.call({}, context)), 2)
          assert.deepStrictEqual(Option.getOrThrow(registry.pluginOf("Count")), { name: "@acme/counter", version: "1.2.3" })
        }).pipe(Effect.provide(Layer.merge(ToolRegistry.layer([plugin]), ToolProgress.layerNoop)))
      )
      assert.deepStrictEqual(log, ["built", "closed"])
    }))
})
