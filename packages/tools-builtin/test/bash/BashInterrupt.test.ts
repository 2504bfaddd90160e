// A Bash call the user interrupts ends with a result that says so and shows the output it had produced.
import { assert, describe, it } from "@effect/vitest"
import { ToolOrchestration, StreamingToolExecutor } from "@toolwright/core"
import { Effect, Fiber, Layer, Scope, Exit, Stream } from "effect"
import { runtimeLayer, session, tempDir, marker, survivors } from "./support.js"

describe("Bash interrupted by the user", () => {
  it.scopedLive("the result carries the partial output, and nothing survives", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const name = marker()
      const scope = yield* Scope.make()
      const executor = yield* StreamingToolExecutor.make(session(dir)).pipe(Scope.extend(scope))
      const reader = yield* Stream.runCollect(executor.events).pipe(Effect.fork)
      yield* executor.addTool({
        type: "tool_use",
        id: "toolu_long",
        name: "Bash",
        input: { command: `echo first line; echo second line; exec -a ${name} sleep 100` }
      })
      for (let i = 0; i < 300 && survivors(name) === 0; i++) yield* Effect.sleep("20 millis")
      // Let the output reach the tool's buffer before the user interrupts.
      yield* Effect.sleep("200 millis")
      yield* executor.abort
      yield* executor.end
      const events = Array.from(yield* Fiber.join(reader))
      const result = events.flatMap((event) => (event._tag === "ToolResult" ? [event.result] : []))
      assert.strictEqual(result.length, 1)
      assert.strictEqual(
        result[0].content,
        "<tool_use_error>Interrupted by user: Bash(echo first line; echo second line; exec …) was stopped " +
          "before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.\n\n" +
          "Output before it was stopped:\nfirst line\nsecond line</tool_use_error>"
      )
      assert.strictEqual(survivors(name), 0)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(ToolOrchestration.layer.pipe(Layer.provideMerge(runtimeLayer())))))
})
