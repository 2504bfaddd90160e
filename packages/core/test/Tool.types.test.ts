// Type tests: the compiler (pnpm check, run by the test command) rejects wrong handlers.
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { Tool, ToolPlugin, ToolProgress } from "../src/index.js"

class Database extends Context.Tag("test/Database")<Database, { readonly query: (sql: string) => Effect.Effect<number> }>() {}

describe("Tool types", () => {
  it("infers the handler's input from the Schema and its requirements from the handler", () => {
    const tool = Tool.make({
      name: "Query",
      description: "Runs a query",
      input: Schema.Struct({ sql: Schema.String, limit: Schema.optional(Schema.Number) }),
      call: (input) =>
        Effect.gen(function*() {
          const sql: string = input.sql
          const limit: number | undefined = input.limit
          // @ts-expect-error: no such parameter in the Schema
          void input.table
          yield* ToolProgress.report({ sql })
          const db = yield* Database
          return yield* db.query(`${sql} LIMIT ${limit ?? 10}`)
        }),
      mapToolResult: (rows) => `${rows.toFixed(0)} rows`
    })
    // ToolProgress is the runtime's; only Database is left for a plugin layer to provide.
    const needs: Tool.Tool<"Query", Schema.Struct<{ sql: typeof Schema.String; limit: Schema.optional<typeof Schema.Number> }>, number, Database> = tool
    // @ts-expect-error: a tool that needs a Database is not a ready tool
    const ready: Tool.Any = tool
    void ready
    // @ts-expect-error: a plugin must provide what its tools need
    ToolPlugin.make({ name: "p", version: "1", tools: [tool] }) satisfies ToolPlugin.ToolPlugin<never, never, never>
    assert.strictEqual(needs.name, "Query")
  })

  it("rejects a handler that returns the wrong input type", () => {
    Tool.make({
      name: "Typed",
      description: "x",
      input: Schema.Struct({ n: Schema.Number }),
      // @ts-expect-error: n is a number
      call: (input: { readonly n: string }) => Effect.succeed(input.n)
    })
    assert.ok(true)
  })
})
