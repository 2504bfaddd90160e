/**
 * What concurrency buys and what orchestration costs: (a) 10 read-only calls that each wait 100 ms, through
 * `runTools`, against the same calls one after another; (b) 10,000 no-op calls through `runTools` (one
 * concurrent batch) against `ToolRuntime.execute` in a loop, with throughput and memory; (c) the same
 * 10,000 calls through the `StreamingToolExecutor`.
 */
import { Effect, Layer, ManagedRuntime, Schema, Stream } from "effect"
import {
  StreamingToolExecutor,
  Tool,
  ToolOrchestration,
  ToolRegistry,
  ToolRuntime,
  ToolUseContext
} from "../src/index.js"

const Wait = Tool.make({
  name: "Wait",
  description: "waits",
  input: Schema.Struct({ ms: Schema.Number }),
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: ({ ms }) => Effect.as(Effect.sleep(ms), "waited")
})
const Noop = Tool.make({
  name: "Noop",
  description: "does nothing",
  input: Schema.Struct({ value: Schema.String }),
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: ({ value }) => Effect.succeed(value)
})

const runtime = ManagedRuntime.make(
  ToolOrchestration.layerWith({ maxConcurrency: 10 }).pipe(
    Layer.provideMerge(ToolRuntime.layerDefault),
    Layer.provide(ToolRegistry.layerTools([Wait, Noop]))
  )
)
const context = ToolUseContext.make({ cwd: process.cwd() })
const gc = (globalThis as { gc?: () => void }).gc
const heapMb = () => {
  gc?.()
  return process.memoryUsage().heapUsed / 1024 / 1024
}
const time = async (body: Effect.Effect<unknown, never, ToolOrchestration.ToolOrchestration | ToolRuntime.ToolRuntime>) => {
  const start = performance.now()
  await runtime.runPromise(body)
  return performance.now() - start
}
// The best of a few rounds: on a shared machine the slower rounds measure the neighbours.
const best = (values: Array<number>) => Math.min(...values)
const fmt = (n: number, digits = 1) => n.toFixed(digits)

const drain = (stream: Stream.Stream<unknown>) => Stream.runDrain(stream)
const runTools = (uses: ReadonlyArray<{ type: "tool_use"; id: string; name: string; input: unknown }>) =>
  Effect.flatMap(ToolOrchestration.ToolOrchestration, (o) => drain(o.runTools(uses, context)))
const serially = (uses: ReadonlyArray<{ type: "tool_use"; id: string; name: string; input: unknown }>) =>
  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
    Effect.forEach(uses, (use) => rt.execute(use, context, () => Effect.void), { discard: true }))
const streaming = (uses: ReadonlyArray<{ type: "tool_use"; id: string; name: string; input: unknown }>) =>
  Effect.scoped(Effect.gen(function*() {
    const executor = yield* StreamingToolExecutor.make(context)
    yield* executor.addTools(uses)
    yield* executor.end
    yield* drain(executor.events)
  }))

// (a) Ten 100 ms reads.
const waits = Array.from({ length: 10 }, (_, i) => ({ type: "tool_use" as const, id: `w${i}`, name: "Wait", input: { ms: 100 } }))
await time(runTools(waits))
const concurrentMs = best([await time(runTools(waits)), await time(runTools(waits)), await time(runTools(waits))])
const serialMs = await time(serially(waits))
console.log(
  `runTools, 10 read-only calls of 100 ms each: ${fmt(concurrentMs)} ms wall vs ${fmt(serialMs)} ms serial (ratio ${
    fmt(concurrentMs / serialMs, 3)
  }, goal <= 0.15)`
)

// (b) 10,000 no-op calls.
const N = 10_000
const noops = Array.from({ length: N }, (_, i) => ({ type: "tool_use" as const, id: `n${i}`, name: "Noop", input: { value: "x" } }))
const warmUp = noops.slice(0, 1000)
await time(runTools(warmUp))
await time(serially(warmUp))
await time(streaming(warmUp))
const baseline = best([await time(serially(noops)), await time(serially(noops))])
const heapBefore = heapMb()
let peakRss = process.memoryUsage().rss
const rssProbe = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5)
const orchestrated = best([await time(runTools(noops)), await time(runTools(noops))])
clearInterval(rssProbe)
const heapAfter = heapMb()
const streamed = best([await time(streaming(noops)), await time(streaming(noops))])
const perSecond = (ms: number) => Math.round(N / (ms / 1000)).toLocaleString("en-US")
console.log(
  `runTools, ${N.toLocaleString("en-US")} no-op calls: ${fmt(orchestrated)} ms (${perSecond(orchestrated)} calls/s) vs execute in a loop ${
    fmt(baseline)
  } ms (${perSecond(baseline)} calls/s) (ratio ${fmt(orchestrated / baseline, 2)}, goal <= 2.0)`
)
console.log(
  `runTools memory: heap ${fmt(heapBefore)} MB before, ${fmt(heapAfter)} MB after (retained ${
    fmt(heapAfter - heapBefore, 2)
  } MB, goal < 1 MB), peak RSS ${fmt(peakRss / 1024 / 1024)} MB${gc ? "" : " (run with --expose-gc for exact heap figures)"}`
)
console.log(
  `StreamingToolExecutor, ${N.toLocaleString("en-US")} no-op calls: ${fmt(streamed)} ms (${perSecond(streamed)} calls/s) vs execute in a loop ${
    fmt(baseline)
  } ms (ratio ${fmt(streamed / baseline, 2)}, goal <= 2.0)`
)
await runtime.dispose()
