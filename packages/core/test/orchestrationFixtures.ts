/**
 * Fake tools for the orchestration tests: each call sleeps `ms` on the (test) clock, reports progress,
 * may fail, and records into a probe when it starts and ends and how many calls ran at once.
 */
import { Effect, Layer, Predicate, Schema, Stream, TestClock } from "effect"
import type * as Message from "../src/Message.js"
import * as Permission from "../src/Permission.js"
import * as Tool from "../src/Tool.js"
import * as ToolErrors from "../src/ToolErrors.js"
import * as ToolProgress from "../src/ToolProgress.js"
import * as ToolRegistry from "../src/ToolRegistry.js"
import * as ToolRuntime from "../src/ToolRuntime.js"
import * as ToolUseContext from "../src/ToolUseContext.js"
import * as ToolOrchestration from "../src/ToolOrchestration.js"

export interface Probe {
  running: number
  peak: number
  readonly log: Array<string>
}

export const makeProbe = (): Probe => ({ running: 0, peak: 0, log: [] })

const StepInput = Schema.Struct({
  key: Schema.String,
  ms: Schema.Number,
  fail: Schema.optional(Schema.Boolean),
  command: Schema.optional(Schema.String),
  readOnly: Schema.optional(Schema.Boolean)
})
type StepInput = typeof StepInput.Type

const step = (probe: Probe) => (input: StepInput) =>
  Effect.gen(function*() {
    probe.running++
    probe.peak = Math.max(probe.peak, probe.running)
    probe.log.push(`start ${input.key}`)
    yield* Effect.sleep(input.ms)
    yield* ToolProgress.report(`done ${input.key}`)
    if (input.fail === true) return yield* new ToolErrors.ToolError({ message: `${input.key} failed` })
    return `${input.key} ok`
  }).pipe(
    Effect.onExit((exit) =>
      Effect.sync(() => {
        probe.running--
        probe.log.push(`${exit._tag === "Success" ? "end" : "stop"} ${input.key}`)
      })
    )
  )

/** R: read-only and concurrency-safe. W: neither. Sh: cascades like Bash, safe, read-only when told. Blk: blocks aborts. */
export const makeTools = (probe: Probe) => [
  Tool.make({
    name: "R",
    description: "reads",
    input: StepInput,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: step(probe)
  }),
  Tool.make({ name: "W", description: "writes", input: StepInput, call: step(probe) }),
  Tool.make({
    name: "Sh",
    description: "a shell",
    input: StepInput,
    cascadeOnError: true,
    isReadOnly: (input) => input.readOnly === true,
    isConcurrencySafe: () => true,
    call: step(probe)
  }),
  Tool.make({
    name: "Blk",
    description: "must not be cut off",
    input: StepInput,
    interruptBehavior: "block",
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: step(probe)
  })
]

export const context = ToolUseContext.make({
  cwd: "/tmp",
  sessionId: "session-test",
  permissionContext: Permission.emptyPermissionContext("bypassPermissions")
})

export const layerFor = (tools: ReadonlyArray<Tool.Any>, settings: Partial<ToolOrchestration.Settings> = {}) =>
  ToolOrchestration.layerWith(settings).pipe(
    Layer.provideMerge(ToolRuntime.layerDefault),
    Layer.provide(ToolRegistry.layerTools(tools))
  )

let counter = 0
export const use = (
  name: string,
  key: string,
  ms: number,
  extra: { fail?: boolean; command?: string; readOnly?: boolean } = {}
): Message.ToolUseBlock => ({
  type: "tool_use",
  id: `toolu_${key}_${++counter}`,
  name,
  input: { key, ms, ...extra }
})

/** Moves the test clock forward in small steps, so every fiber gets to react between them. */
export const advance = (ms: number, stepMs = 5) =>
  Effect.gen(function*() {
    for (let t = 0; t < ms; t += stepMs) yield* TestClock.adjust(stepMs)
  })

/** A compact view of events: `progress:<data>` and `result:<key>:<content>`. */
export const describeEvents = (events: ReadonlyArray<Message.RuntimeEvent>, keys: Map<string, string>) =>
  events.map((event) => {
    switch (event._tag) {
      case "Progress":
        return `progress:${String(event.data)}`
      case "PermissionRequest":
        return `ask:${keys.get(event.toolUseId) ?? event.toolUseId}`
      case "HookMessage":
        return `hook:${keys.get(event.toolUseId) ?? event.toolUseId}:${event.message}`
      case "ToolResult":
        return `result:${keys.get(event.toolUseId) ?? event.toolUseId}:${String(event.result.content)}`
    }
  })

/** The `key` a call of the fake tools was made with. */
export const keyOf = (use: Message.ToolUseBlock): string =>
  Predicate.hasProperty(use.input, "key") && typeof use.input.key === "string" ? use.input.key : use.id

export const keysOf = (uses: ReadonlyArray<Message.ToolUseBlock>) => new Map(uses.map((use) => [use.id, keyOf(use)]))

export const collect = <E, R>(stream: Stream.Stream<Message.RuntimeEvent, E, R>) =>
  Stream.runCollect(stream).pipe(Effect.map((chunk) => Array.from(chunk)))
