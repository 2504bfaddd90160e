import { assert, describe, it } from "@effect/vitest"
import type { McpElicitation } from "@toolwright/mcp"
import { Chunk, Effect, Fiber, Stream } from "effect"
import * as JsonLinesElicitation from "../src/JsonLinesElicitation.js"

const request: McpElicitation.Request = {
  server: "tickets",
  message: "Which size?",
  requestedSchema: {
    type: "object",
    properties: { size: { type: "string", enum: ["s", "m"] }, owner: { type: "string" } },
    required: ["owner"]
  }
}

/** A request asked in its own fiber, once its `elicitation_request` line is out. */
const ask = (made: Effect.Effect.Success<typeof JsonLinesElicitation.make>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(made.elicitation.elicit(request))
    const [line] = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(made.service.requests, 1)))
    return { fiber, id: String(line?.id) }
  })

describe("JsonLinesElicitation", () => {
  it.live("an answer not fitting the schema is refused and the request keeps waiting for a good one", () =>
    Effect.gen(function*() {
      const made = yield* JsonLinesElicitation.make
      const { fiber, id } = yield* ask(made)
      assert.deepStrictEqual(yield* made.service.answer({ id, action: "accept", content: { size: "xl" } }), {
        _tag: "Rejected",
        problem: "the elicitation_response for \"elicitation-1\" was not used: its content does not match the " +
          "requested schema (data must have required property 'owner', data/size must be equal to one of the " +
          "allowed values); \"elicitation-1\" still waits: send a corrected elicitation_response"
      })
      assert.deepStrictEqual(yield* made.service.answer({ id, action: "accept", content: { owner: { name: "me" } } }), {
        _tag: "Rejected",
        problem: "the elicitation_response for \"elicitation-1\" was not used: its `content` must map field names to " +
          "strings, numbers, booleans or arrays of strings; \"elicitation-1\" still waits: send a corrected elicitation_response"
      })
      assert.deepStrictEqual(yield* made.service.answer({ id, action: "accept", content: { owner: "me" } }), {
        _tag: "Answered"
      })
      assert.deepStrictEqual(yield* Fiber.join(fiber), { action: "accept", content: { owner: "me" } })
    }))

  it.live("a request the server withdraws stops waiting, and a late answer for it is dropped", () =>
    Effect.gen(function*() {
      const made = yield* JsonLinesElicitation.make
      const { fiber, id } = yield* ask(made)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* made.service.answer({ id, action: "decline" }), { _tag: "Withdrawn" })
    }))

  it.live("closed: waiting requests are cancelled, later ones at once without a line; an abort cancels only the waiting", () =>
    Effect.gen(function*() {
      const made = yield* JsonLinesElicitation.make
      const first = yield* ask(made)
      yield* made.service.cancelPending
      assert.deepStrictEqual(yield* Fiber.join(first.fiber), { action: "cancel" })
      const second = yield* ask(made)
      assert.strictEqual(second.id, "elicitation-2")
      yield* made.service.close
      assert.deepStrictEqual(yield* Fiber.join(second.fiber), { action: "cancel" })
      assert.deepStrictEqual(yield* made.elicitation.elicit(request), { action: "cancel" })
      assert.deepStrictEqual(yield* made.service.answer({ id: "elicitation-2", action: "decline" }), {
        _tag: "Withdrawn"
      })
    }))
})
