/**
 * MCP servers' questions (elicitation, form mode) put to a peer speaking JSON lines (`toolwright exec`): each
 * request goes out as an `elicitation_request` line with an id of its own, and the server waits for the
 * `elicitation_response` line carrying that id. When the peer cannot answer any more (stdin closed, the
 * session interrupted), waiting requests are cancelled and later ones are cancelled at once; an abort
 * cancels the waiting ones. `cancel`, not `decline`: in MCP, decline says a user refused, cancel that nobody
 * made a choice — which is what happened. A request the server withdraws stops waiting, and a late answer
 * for it is dropped quietly.
 */
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js"
import type { McpElicitation } from "@toolwright/mcp"
import { Context, Deferred, Effect, FiberId, Queue, Stream } from "effect"

/** A peer's answer to an `elicitation_request`, as read from its line. */
export interface ElicitationResponse {
  readonly id: string
  readonly action: "accept" | "decline" | "cancel"
  /** With `accept`: the fields given; a field left out gets the schema's default (SEP-1034). */
  readonly content?: Record<string, unknown>
}

/** What became of an answer. */
export type Outcome =
  | { readonly _tag: "Answered" }
  /** The request was withdrawn (the server cancelled it, the session was aborted): nobody waits for it. */
  | { readonly _tag: "Withdrawn" }
  /** Not used, and why; a request it named still waits for a corrected answer. */
  | { readonly _tag: "Rejected"; readonly problem: string }

export interface Service {
  /** The `elicitation_request` lines to write, in the order the requests came. */
  readonly requests: Stream.Stream<Record<string, unknown>>
  /** Hands an answer to the request with its id, if the answer fits the request's schema. */
  readonly answer: (response: ElicitationResponse) => Effect.Effect<Outcome>
  /** Cancels every waiting request (the session was aborted); later requests still go to the peer. */
  readonly cancelPending: Effect.Effect<void>
  /** The peer is gone: waiting requests and every later one are cancelled. */
  readonly close: Effect.Effect<void>
}

export class JsonLinesElicitation
  extends Context.Tag("@toolwright/cli/JsonLinesElicitation")<JsonLinesElicitation, Service>()
{}

const CANCEL: McpElicitation.Answer = { action: "cancel" }

interface Waiting {
  readonly request: McpElicitation.Request
  readonly answer: Deferred.Deferred<McpElicitation.Answer>
}

// Every member of a JSON Schema object is optional; the request's schema is one, typed by the SDK's zod parse.
const isSchemaObject = (value: unknown): value is JsonSchemaType => typeof value === "object" && value !== null

// The validator the MCP SDK's server checks an accepted answer with; made at the first accepted answer.
let validator: AjvJsonSchemaValidator | undefined

/**
 * An accepted answer's content as the server will get it, or why it would not reach the server's code: the
 * SDK client parses the result (`ElicitResultSchema`), fills the omitted fields that have a default
 * (McpClientManager declares `applyDefaults`), and the SDK server then validates the content against
 * `requestedSchema`. So a field with a default may be left out here; everything else is checked as the
 * server will check it, and the defaults are left to the SDK.
 */
const acceptedContent = (
  request: McpElicitation.Request,
  content: Record<string, unknown>
): { readonly content: NonNullable<McpElicitation.Answer["content"]> } | { readonly problem: string } => {
  const parsed = ElicitResultSchema.safeParse({ action: "accept", content })
  if (!parsed.success || parsed.data.content === undefined) {
    return { problem: "its `content` must map field names to strings, numbers, booleans or arrays of strings" }
  }
  const schema = request.requestedSchema
  const required = (schema.required ?? []).filter((name) => schema.properties[name]?.default === undefined)
  const checked: unknown = { ...schema, required }
  if (!isSchemaObject(checked)) return { content: parsed.data.content }
  try {
    validator ??= new AjvJsonSchemaValidator()
    const result = validator.getValidator(checked)(parsed.data.content)
    if (!result.valid) return { problem: `its content does not match the requested schema (${result.errorMessage})` }
  } catch {
    // A schema the validator cannot compile: the server, which must compile it too, has the last word.
  }
  return { content: parsed.data.content }
}

export const make = Effect.gen(function*() {
  const outgoing = yield* Queue.unbounded<Record<string, unknown>>()
  const waiting = new Map<string, Waiting>()
  const withdrawn = new Set<string>()
  const answered = new Set<string>()
  let closed = false
  let count = 0

  const cancelAll = Effect.suspend(() =>
    Effect.forEach(
      [...waiting.entries()],
      ([id, entry]) =>
        Effect.map(Deferred.succeed(entry.answer, CANCEL), (done) => {
          if (done) withdrawn.add(id)
        }),
      { discard: true }
    )
  )

  const elicitation: McpElicitation.Service = {
    elicit: (request) =>
      Effect.suspend(() => {
        if (closed) return Effect.succeed(CANCEL)
        const id = `elicitation-${++count}`
        const entry: Waiting = { request, answer: Deferred.unsafeMake<McpElicitation.Answer>(FiberId.none) }
        // Registered before its line goes out, so the peer's answer finds it however fast it comes.
        waiting.set(id, entry)
        return Queue.offer(outgoing, {
          type: "elicitation_request",
          id,
          server: request.server,
          message: request.message,
          requested_schema: request.requestedSchema
        }).pipe(
          Effect.zipRight(Deferred.await(entry.answer)),
          // Interrupted: the server cancelled the request (or its connection closed).
          Effect.onInterrupt(() => Effect.sync(() => withdrawn.add(id))),
          Effect.ensuring(Effect.sync(() => waiting.delete(id)))
        )
      })
  }

  const rejected = (problem: string): Outcome => ({ _tag: "Rejected", problem })

  const service: Service = {
    requests: Stream.fromQueue(outgoing),
    answer: (response) =>
      Effect.suspend(() => {
        const id = JSON.stringify(response.id)
        const entry = waiting.get(response.id)
        if (answered.has(response.id)) return Effect.succeed(rejected(`the elicitation_request ${id} was already answered`))
        if (withdrawn.has(response.id)) return Effect.succeed<Outcome>({ _tag: "Withdrawn" })
        if (entry === undefined) return Effect.succeed(rejected(`no elicitation_request is waiting for id ${id}`))
        let answer: McpElicitation.Answer = { action: response.action }
        if (response.action === "accept") {
          const accepted = acceptedContent(entry.request, response.content ?? {})
          if ("problem" in accepted) {
            return Effect.succeed(rejected(
              `the elicitation_response for ${id} was not used: ${accepted.problem}; ` +
                `${id} still waits: send a corrected elicitation_response`
            ))
          }
          // Without content, McpClientManager passes an empty one, which the SDK fills with the defaults.
          if (response.content !== undefined) answer = { action: "accept", content: accepted.content }
        }
        return Effect.map(Deferred.succeed(entry.answer, answer), (done): Outcome => {
          if (!done) return { _tag: "Withdrawn" }
          answered.add(response.id)
          return { _tag: "Answered" }
        })
      }),
    cancelPending: cancelAll,
    close: Effect.suspend(() => {
      closed = true
      return cancelAll
    })
  }
  return { elicitation, service }
})
