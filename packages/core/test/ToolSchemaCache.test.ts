import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, ToolRegistry, ToolSchemaCache } from "../src/index.js"

const make = (name: string, source: Tool.Source, description = `The ${name} tool`) =>
  Tool.make({
    name,
    description,
    source,
    input: Schema.Struct({
      path: Schema.String.annotations({ description: "Where to look" }),
      limit: Schema.optional(Schema.Number)
    }),
    call: () => Effect.succeed("ok")
  })

const pool = ToolRegistry.assembleToolPool([
  make("mcp__srv__b", "mcp"),
  make("Read", "builtin"),
  make("Glob", "builtin"),
  make("Acme", "plugin")
])

describe("ToolSchemaCache", () => {
  it.effect("renders the pool in pool order with descriptions, byte-identical the second time", () =>
    Effect.gen(function*() {
      const cache = yield* ToolSchemaCache.ToolSchemaCache
      const first = yield* cache.render(pool)
      const second = yield* cache.render([...pool])
      assert.strictEqual(first, second)
      const definitions = yield* cache.definitions(pool)
      assert.deepStrictEqual(definitions.map((d) => d.name), ["Glob", "Read", "Acme", "mcp__srv__b"])
      assert.deepStrictEqual(definitions[1], {
        name: "Read",
        description: "The Read tool",
        input_schema: {
          type: "object",
          required: ["path"],
          properties: { path: { type: "string", description: "Where to look" }, limit: { type: "number" } },
          additionalProperties: false
        }
      })
      assert.strictEqual(first, JSON.stringify(definitions))
      // Not only cached: a new session (a resumed one, a sub-agent) renders the same pool to the same bytes.
      const otherSession = yield* ToolSchemaCache.make
      assert.strictEqual(yield* otherSession.render(pool), first)
    }).pipe(Effect.provide(ToolSchemaCache.layer)))

  it.effect("serves the cached rendering by name until cleared", () =>
    Effect.gen(function*() {
      const cache = yield* ToolSchemaCache.ToolSchemaCache
      const before = yield* cache.definition(make("Acme", "plugin"))
      // A server reconnects with a new description: the session keeps the bytes it already sent...
      const cached = yield* cache.definition(make("Acme", "plugin", "Changed"))
      assert.strictEqual(cached, before)
      // ...until the cache is cleared on purpose.
      yield* ToolSchemaCache.clearToolSchemaCache
      const fresh = yield* cache.definition(make("Acme", "plugin", "Changed"))
      assert.strictEqual(fresh.description, "Changed")
    }).pipe(Effect.provide(ToolSchemaCache.layer)))

  it.effect("marks deferred tools with defer_loading and sizes definitions", () =>
    Effect.gen(function*() {
      const cache = yield* ToolSchemaCache.ToolSchemaCache
      const definitions = yield* cache.definitions(pool, { deferLoading: new Set(["mcp__srv__b"]) })
      assert.strictEqual(definitions[3].defer_loading, true)
      assert.isUndefined(definitions[0].defer_loading)
      const size = yield* cache.size(pool[0])
      assert.strictEqual(size, JSON.stringify(Tool.definition(pool[0])).length)
    }).pipe(Effect.provide(ToolSchemaCache.layer)))
})
