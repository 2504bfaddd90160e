import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { InputValidator, Tool, ToolErrors, ToolUseContext } from "../src/index.js"

const context = ToolUseContext.make({ cwd: "/tmp" })

const Read = Tool.make({
  name: "Read",
  description: "Reads a file",
  input: Schema.Struct({
    file_path: Schema.String,
    offset: Schema.optional(Schema.Number),
    limit: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive()))
  }),
  call: () => Effect.succeed("")
})

const Nested = Tool.make({
  name: "Nested",
  description: "Has nested input",
  input: Schema.Struct({
    edits: Schema.Array(Schema.Struct({ old_string: Schema.String, mode: Schema.Literal("replace", "insert") })),
    options: Schema.Struct({ depth: Schema.Number })
  }),
  call: () => Effect.succeed(""),
  validateInput: (input) =>
    input.edits.length === 0 ? Effect.fail(new ToolErrors.ToolError({ message: "Give at least one edit." })) : Effect.void
})

const failure = (tool: Tool.Any, input: unknown) =>
  InputValidator.make.validate(tool, input, context).pipe(Effect.flip, Effect.map((error) => error.message))

describe("InputValidator", () => {
  it.effect("decodes a valid input", () =>
    Effect.gen(function*() {
      const decoded = yield* InputValidator.make.validate(Read, { file_path: "/a", limit: 3 }, context)
      assert.deepStrictEqual(decoded, { file_path: "/a", limit: 3 })
    }))

  it.effect("one problem: the singular header and Claude Code's wording", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure(Read, {}),
        "InputValidationError: Read failed due to the following issue:\nThe required parameter `file_path` is missing"
      )
    }))

  it.effect("every problem at once: missing, mistyped, unexpected", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure(Read, { limit: "ten", bogus: true }),
        "InputValidationError: Read failed due to the following issues:\n" +
          "The required parameter `file_path` is missing\n" +
          "The parameter `limit` type is expected as `number` but provided as `string`\n" +
          "An unexpected parameter `bogus` was provided"
      )
    }))

  it.effect("numbers and booleans sent as strings are read as Claude Code reads them; nothing else is", () =>
    Effect.gen(function*() {
      const Flags = Tool.make({
        name: "Flags",
        description: "Has scalar parameters",
        input: Schema.Struct({
          count: Schema.Number.pipe(Schema.int()),
          ratio: Schema.optional(Schema.Number),
          all: Schema.optional(Schema.Boolean),
          label: Schema.optional(Schema.Union(Schema.String, Schema.Number))
        }),
        call: () => Effect.succeed("")
      })
      const decoded = yield* InputValidator.make.validate(
        Flags,
        { count: "3", ratio: "-0.5", all: "false", label: "7" },
        context
      )
      assert.deepStrictEqual(decoded, { count: 3, ratio: -0.5, all: false, label: "7" })
      // Only exact spellings: no hex, exponent, spaces or other words; the error names what is still wrong.
      for (const [count, all] of [["0x10", "true"], ["1e3", "true"], [" 3", "true"], ["3", "yes"], ["3", "True"]]) {
        const message = yield* failure(Flags, { count, all })
        assert.strictEqual(
          message,
          count === "3"
            ? "InputValidationError: Flags failed due to the following issue:\n" +
              "The parameter `all` type is expected as `boolean` but provided as `string`"
            : "InputValidationError: Flags failed due to the following issue:\n" +
              "The parameter `count` type is expected as `number` but provided as `string`"
        )
      }
      // A string that spells a number the refinement refuses is refused for that.
      assert.strictEqual(
        yield* failure(Flags, { count: "2.5" }),
        "InputValidationError: Flags failed due to the following issue:\n" +
          "The parameter `count` is invalid: expected an integer, got 2.5"
      )
      // JSON has no Infinity: a number too large for a double is no number a model could have meant.
      assert.strictEqual(
        yield* failure(Flags, { count: "9".repeat(400) }),
        "InputValidationError: Flags failed due to the following issue:\n" +
          "The parameter `count` type is expected as `number` but provided as `string`"
      )
    }))

  it.effect("refinements say what was expected", () =>
    Effect.gen(function*() {
      const message = yield* failure(Read, { file_path: "/a", limit: -1 })
      assert.strictEqual(
        message,
        "InputValidationError: Read failed due to the following issue:\nThe parameter `limit` is invalid: expected a positive number, got -1"
      )
    }))

  it.effect("nested paths are written a.b[0].c", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure(Nested, { edits: [{ old_string: 1, mode: "replace" }, { old_string: "x", mode: "zap" }], options: {} }),
        "InputValidationError: Nested failed due to the following issues:\n" +
          "The required parameter `options.depth` is missing\n" +
          "The parameter `edits[0].old_string` type is expected as `string` but provided as `number`\n" +
          "The parameter `edits[1].mode` type is expected as `\"replace\" | \"insert\"` but provided as `string`"
      )
    }))

  it.effect("a non-object input", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure(Read, "file.txt"),
        "InputValidationError: Read failed due to the following issue:\nThe input is expected as `object` but provided as `string`"
      )
      assert.strictEqual(
        yield* failure(Read, { file_path: ["a"] }),
        "InputValidationError: Read failed due to the following issue:\nThe parameter `file_path` type is expected as `string` but provided as `array`"
      )
    }))

  it.effect("the tool's own validateInput runs after the schema", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* failure(Nested, { edits: [], options: { depth: 1 } }), "Give at least one edit.")
    }))
})
