// The README's embedding example, as written: a runtime with one stage swapped, over the built-ins.
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { PermissionPrompter, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import type { Message } from "@toolwright/core"
import { BuiltinTools } from "@toolwright/tools-builtin"
import { Effect, Layer, Stream } from "effect"
import * as path from "node:path"

const myPrompter = PermissionPrompter.layerCallback((request) =>
  Effect.succeed({ behavior: "deny", message: `Not now: ${request.message}` })
)

const runtime = ToolRuntime.layer.pipe(
  Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, myPrompter)),
  Layer.provideMerge(ToolRegistry.layer([BuiltinTools.plugin])),
  Layer.provide(NodeContext.layer)
)

const root = path.join(import.meta.dirname, "..", "..", "..")

describe("embedding the runtime (README example)", () => {
  it.scoped("runs a built-in through the stream, and the swapped prompter answers asks", () =>
    Effect.gen(function*() {
      const tools = yield* ToolRuntime.ToolRuntime
      const context = ToolUseContext.make({ cwd: root })
      const events: Array<Message.RuntimeEvent> = []
      yield* tools.runToolUse({ type: "tool_use", id: "toolu_1", name: "Glob", input: { pattern: "*.md" } }, context)
        .pipe(Stream.runForEach((event) => Effect.sync(() => events.push(event))))
      const last = events.at(-1)
      assert(last?._tag === "ToolResult")
      const listed = String(last.result.content).split("\n").sort()
      assert.deepStrictEqual(listed, ["ARCHITECTURE.md", "README.md"])

      const asked = yield* tools.execute(
        { type: "tool_use", id: "toolu_2", name: "Write", input: { file_path: "x.txt", content: "x" } },
        context,
        () => Effect.void
      )
      assert.strictEqual(asked.result.is_error, true)
      assert.match(String(asked.result.content), /^Not now: /)
    }).pipe(Effect.provide(runtime)))
})
