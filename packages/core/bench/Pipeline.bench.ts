/**
 * The pipeline's own cost: a no-op tool through `ToolRuntime.execute` and `runToolUse` versus calling its
 * handler directly, in µs per call. Goal: under 20 µs of overhead per call.
 */
import { Effect, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { Tool, ToolProgress, ToolRegistry, ToolRuntime, ToolUseContext } from "../src/index.js"

const Noop = Tool.make({
  name: "Noop",
  description: "Does nothing",
  input: Schema.Struct({ value: Schema.String }),
  isReadOnly: () => true,
  call: ({ value }) => Effect.succeed(value)
})

const runtime = ManagedRuntime.make(
  ToolRuntime.layerDefault.pipe(Layer.provideMerge(ToolRegistry.layerTools([Noop])), Layer.merge(ToolProgress.layerNoop))
)
const context = ToolUseContext.make({ cwd: process.cwd() })
const toolUse = { type: "tool_use" as const, id: "toolu_bench", name: "Noop", input: { value: "x" } }

const N = 5_000
const time = async (body: Effect.Effect<unknown, never, ToolRuntime.ToolRuntime | ToolProgress.ToolProgress>) => {
  const loop = Effect.gen(function*() {
    for (let i = 0; i < N; i++) yield* body
  })
  await runtime.runPromise(loop) // warm-up
  const best: Array<number> = []
  for (let round = 0; round < 5; round++) {
    const start = performance.now()
    await runtime.runPromise(loop)
    best.push(((performance.now() - start) * 1000) / N)
  }
  best.sort((a, b) => a - b)
  return best[Math.floor(best.length / 2)]
}

const direct = await time(Effect.orDie(Noop.call({ value: "x" }, context)))
const execute = await time(

  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) => rt.execute(toolUse, context, () => Effect.void))
)
const stream = await time(

  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) => Stream.runDrain(rt.runToolUse(toolUse, context)))
)
const fmt = (n: number) => n.toFixed(2)
console.log(`handler called directly: ${fmt(direct)} µs/call (baseline)`)
console.log(
  `ToolRuntime.execute: ${fmt(execute)} µs/call, overhead ${fmt(execute - direct)} µs (ratio ${
    fmt(execute / direct)
  }, goal overhead < 20 µs)`
)
console.log(
  `ToolRuntime.runToolUse (Stream): ${fmt(stream)} µs/call, overhead ${fmt(stream - direct)} µs (ratio ${
    fmt(stream / direct)
  }, goal overhead < 20 µs)`
)
await runtime.dispose()
