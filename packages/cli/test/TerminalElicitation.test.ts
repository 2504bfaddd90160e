import { assert, describe, it } from "@effect/vitest"
import type { McpElicitation } from "@toolwright/mcp"
import { Effect } from "effect"
import * as TerminalElicitation from "../src/TerminalElicitation.js"
import * as TerminalPrompter from "../src/TerminalPrompter.js"
import { fakeTerminal } from "./fakeTerminal.js"

const request: McpElicitation.Request = {
  server: "tickets",
  message: "Which widget?",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Name", default: "gear" },
      count: { type: "integer", description: "how many", default: 3 },
      urgent: { type: "boolean" },
      size: { type: "string", enum: ["s", "m", "l"] },
      tags: { type: "array", items: { type: "string", enum: ["red", "blue"] } },
      owner: { type: "string" }
    },
    required: ["owner"]
  }
}

/** Types `typed` (undefined: end of input) at a terminal and returns the answer and what was shown. */
const answer = (typed: string | undefined) =>
  Effect.gen(function*() {
    const fake = fakeTerminal()
    const terminal = yield* TerminalPrompter.makeTerminal(fake)
    fake.type(typed)
    const result = yield* TerminalElicitation.make(terminal).elicit(request)
    return { result, shown: fake.shown() }
  }).pipe(Effect.scoped)

describe("TerminalElicitation", () => {
  it.live("asks each field; an empty line keeps the default or leaves an optional field out", () =>
    Effect.gen(function*() {
      const { result, shown } = yield* answer("1\n\n7.5\n7\nmaybe\nyes\nm\nred, blue\nme\n")
      assert.deepStrictEqual(result, {
        action: "accept",
        content: { count: 7, urgent: true, size: "m", tags: ["red", "blue"], owner: "me" }
      })
      assert.strictEqual(
        shown,
        [
          `[MCP server "tickets"] asks: Which widget?`,
          "  1) answer   2) decline   3) cancel",
          "choice [1/2/3]:   Name (string, default gear):   count — how many (integer, default 3): " +
          "  answer a whole number:   urgent (yes/no, optional):   answer yes or no:   size (one of s, m, l, optional): " +
          "  tags (any of red, blue, comma-separated, optional):   owner (string, required): "
        ].join("\n")
      )
    }))

  it.live("decline, cancel, end of input, and a required field left empty twice", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* answer("2\n")).result, { action: "decline" })
      assert.deepStrictEqual((yield* answer("3\n")).result, { action: "cancel" })
      assert.deepStrictEqual((yield* answer(undefined)).result, { action: "cancel" })
      assert.deepStrictEqual((yield* answer("what\nhuh\n")).result, { action: "cancel" })
      assert.deepStrictEqual((yield* answer("1\n\n\n\n\n\n\n\n")).result, { action: "cancel" })
    }))
})
