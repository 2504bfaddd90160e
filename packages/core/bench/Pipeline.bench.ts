/**
 * The pipeline's own cost: a no-op tool through `ToolRuntime.execute` (the Effect that orchestrators
 * build on) and through `runToolUse` (one Stream per call), against calling its handler directly.
 * CPU time per call is the figure to read on a shared machine; wall time is printed beside it.
 * Goal: under 20 µs of overhead per call.
 */
import { Effect, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { Tool, ToolPlugin, ToolProgress, ToolRegistry, ToolRuntime, ToolUseContext } from "../src/index.js"

const Noop = Tool.make({
  name: "Noop",
  description: "Does nothing",
  input: Schema.Struct({ value: Schema.String }),
  isReadOnly: () => true,
  call: ({ value }) => Effect.succeed(value)
})

const runtime = ManagedRuntime.make(
  ToolRuntime.layerDefault.pipe(
    Layer.provideMerge(ToolRegistry.layerTools([Noop])),
    Layer.merge(ToolProgress.layerNoop)
  )
)
// Real tools come from plugins: the registry provides each plugin's context to its tools (`Tool.provide`).
const pluginRuntime = ManagedRuntime.make(
  ToolRuntime.layerDefault.pipe(
    Layer.provideMerge(ToolRegistry.layer([ToolPlugin.make({ name: "bench", version: "0.0.0", tools: [Noop] })])),
    Layer.merge(ToolProgress.layerNoop)
  )
)
const context = ToolUseContext.make({ cwd: process.cwd() })
const toolUse = { type: "tool_use" as const, id: "toolu_bench", name: "Noop", input: { value: "x" } }

interface Figures {
  readonly cpu: number
  readonly wall: number
}

const time = async (
  calls: number,
  body: Effect.Effect<unknown, never, ToolRuntime.ToolRuntime | ToolProgress.ToolProgress>,
  on: typeof runtime = runtime
): Promise<Figures> => {
  const loop = Effect.gen(function*() {
    for (let i = 0; i < calls; i++) yield* body
  })
  await on.runPromise(loop) // warm-up: JIT and caches
  const rounds: Array<Figures> = []
  for (let round = 0; round < 5; round++) {
    const cpuStart = process.cpuUsage()
    const wallStart = performance.now()
    await on.runPromise(loop)
    const cpu = process.cpuUsage(cpuStart)
    rounds.push({ cpu: (cpu.user + cpu.system) / calls, wall: ((performance.now() - wallStart) * 1000) / calls })
  }
  rounds.sort((a, b) => a.cpu - b.cpu)
  return rounds[2]
}

const direct = await time(20_000, Effect.orDie(Noop.call({ value: "x" }, context)))
const execute = await time(
  20_000,
  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) => rt.execute(toolUse, context, () => Effect.void))
)
const viaPlugin = await time(
  20_000,
  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) => rt.execute(toolUse, context, () => Effect.void)),
  pluginRuntime
)
const stream = await time(
  2_000,
  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) => Stream.runDrain(rt.runToolUse(toolUse, context)))
)

const fmt = (n: number) => n.toFixed(2)
const line = (label: string, figures: Figures) =>
  `${label}: ${fmt(figures.cpu)} µs CPU/call (wall ${fmt(figures.wall)} µs), overhead ${
    fmt(figures.cpu - direct.cpu)
  } µs (ratio ${fmt(figures.cpu / direct.cpu)}, goal overhead < 20 µs)`
console.log(`handler called directly: ${fmt(direct.cpu)} µs CPU/call (wall ${fmt(direct.wall)} µs) (baseline)`)
console.log(line("ToolRuntime.execute", execute))
console.log(line("ToolRuntime.execute, tool from a plugin (ToolRegistry.layer)", viaPlugin))
console.log(line("ToolRuntime.runToolUse (a Stream per call)", stream))
await runtime.dispose()
await pluginRuntime.dispose()
