// The pipeline's promise: whatever the caller passes and however a tool or stage misbehaves, the
// stream ends with exactly one tool_result and never fails.
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Schema, Stream } from "effect"
import {
  PermissionPolicy,
  Tool,
  ToolErrors,
  ToolHooks,
  ToolProgress,
  ToolRegistry,
  ToolRuntime,
  ToolUseContext
} from "../src/index.js"

const Input = Schema.Struct({ text: Schema.String, count: Schema.optional(Schema.Number) })
const behaving = (name: string, call: Tool.Options<string, typeof Input, unknown, ToolProgress.ToolProgress>["call"]) =>
  Tool.make({ name, description: name, input: Input, isReadOnly: () => true, call })

const tools = [
  behaving("Ok", ({ text }) => Effect.succeed(text)),
  behaving("Fails", () => Effect.fail(new ToolErrors.ToolError({ message: "failed on purpose" }))),
  behaving("Dies", () => Effect.die(new Error("died on purpose"))),
  behaving("Throws", () =>
    Effect.sync(() => {
      throw new TypeError("thrown on purpose")
    })),
  behaving("Interrupts", () => Effect.interrupt),
  behaving("Progress", ({ count }) =>
    Effect.gen(function*() {
      for (let i = 0; i < (count ?? 0) % 5; i++) yield* ToolProgress.report(i)
      return undefined
    })),
  Tool.make({
    name: "BadMapper",
    description: "its mapToolResult throws",
    input: Input,
    isReadOnly: () => true,
    call: () => Effect.succeed(1),
    mapToolResult: () => {
      throw new Error("mapper exploded")
    }
  }),
  Tool.make({
    name: "BadChecks",
    description: "its checks die",
    input: Input,
    isReadOnly: () => {
      throw new Error("isReadOnly exploded")
    },
    validateInput: () => Effect.die("validateInput exploded"),
    call: () => Effect.succeed("unreachable")
  }),
  Tool.make({
    name: "Writer",
    description: "not read-only: asks, and nobody answers",
    input: Input,
    call: () => Effect.succeed("wrote")
  })
]
const names = [...tools.map((t) => t.name), "Missing", ""]

const dyingHooks = Layer.succeed(ToolHooks.ToolHooks, {
  ...ToolHooks.noop,
  postToolUse: () => Effect.die(new Error("post hook exploded"))
})

const layers = {
  default: ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools(tools))),
  dyingHooks: ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, dyingHooks, ToolRegistry.layerTools(tools)))
  ),
  dyingPolicy: ToolRuntime.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        ToolRuntime.defaultStages,
        Layer.succeed(PermissionPolicy.PermissionPolicy, {
          decide: () => Effect.die("policy exploded"),
          isBlanketDenied: () => false
        }),
        ToolRegistry.layerTools(tools)
      )
    )
  )
}

// Built once: providing a layer per run would measure layer construction, not the pipeline.
const runtimes = {
  default: Effect.runSync(Effect.scoped(Layer.build(layers.default))),
  dyingHooks: Effect.runSync(Effect.scoped(Layer.build(layers.dyingHooks))),
  dyingPolicy: Effect.runSync(Effect.scoped(Layer.build(layers.dyingPolicy)))
}

const context = ToolUseContext.make({ cwd: "/tmp" })

const runOnce = (name: string, id: string, input: unknown, runtime: keyof typeof runtimes) =>
  Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
    rt.runToolUse({ type: "tool_use", id, name, input }, context).pipe(Stream.runCollect)).pipe(
      Effect.provide(runtimes[runtime]),
      Effect.map((chunk) => Array.from(chunk))
    )

const inputs = fc.oneof(
  fc.anything(),
  fc.record({ text: fc.string(), count: fc.oneof(fc.integer(), fc.string(), fc.constant(undefined)) }, {
    requiredKeys: []
  }),
  fc.record({ text: fc.string() })
)

describe("the pipeline never ends in a defect", () => {
  it.effect.prop(
    "exactly one tool_result, last, for any tool, input and misbehaving stage",
    {
      name: fc.constantFrom(...names),
      id: fc.string(),
      input: inputs,
      runtime: fc.constantFrom("default", "dyingHooks", "dyingPolicy")
    },
    ({ id, input, name, runtime }) =>
      Effect.gen(function*() {
        const events = yield* runOnce(name, id, input, runtime as keyof typeof runtimes)
        const results = events.filter((event) => event._tag === "ToolResult")
        assert.strictEqual(results.length, 1)
        const last = events[events.length - 1]
        assert(last._tag === "ToolResult")
        assert.strictEqual(last.result.tool_use_id, id)
        assert.strictEqual(last.result.type, "tool_result")
        const content = last.result.content
        assert(typeof content === "string" || Array.isArray(content))
      }),
    { timeout: 120_000, fastCheck: { numRuns: 2000 } }
  )

  it.effect("the texts of misbehaving tools", () =>
    Effect.gen(function*() {
      const text = (name: string) =>
        runOnce(name, "t", { text: "x" }, "default").pipe(
          Effect.map((events) => {
            const last = events[events.length - 1]
            return last._tag === "ToolResult" ? [last.result.content, last.result.is_error] : []
          })
        )
      assert.deepStrictEqual(yield* text("Fails"), ["<tool_use_error>failed on purpose</tool_use_error>", true])
      assert.deepStrictEqual(yield* text("Dies"), ["<tool_use_error>died on purpose</tool_use_error>", true])
      assert.deepStrictEqual(yield* text("Throws"), ["<tool_use_error>thrown on purpose</tool_use_error>", true])
      assert.deepStrictEqual(yield* text("Interrupts"), [
        "<tool_use_error>Interrupts was interrupted before it finished.</tool_use_error>",
        true
      ])
      assert.deepStrictEqual(yield* text("Progress"), ["(Progress completed with no output)", undefined])
      assert.deepStrictEqual(yield* text("BadMapper"), [
        "<tool_use_error>BadMapper failed inside the runtime: mapper exploded</tool_use_error>",
        true
      ])
    }))
})
