/**
 * Who answers an MCP server's `elicitation/create` (form mode) for the client: a terminal prompt, an
 * embedder's callback, or nobody (decline). Mirrors core's `PermissionPrompter`: whatever the layer, a
 * server never waits for an answer that cannot come, and a request the server cancels stops being asked
 * (the answering effect is interrupted). `McpClientManager` uses it when it is in the context, else declines.
 */
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Context, Effect, Layer } from "effect"

export interface Request {
  /** The configured name of the server asking. */
  readonly server: string
  readonly message: string
  /** A flat object of primitive fields; a field the answer leaves out gets the schema's `default` (SEP-1034). */
  readonly requestedSchema: ElicitRequestFormParams["requestedSchema"]
}

/** `accept` with the fields given, `decline` (the user said no) or `cancel` (dismissed without a choice). */
export type Answer = ElicitResult

export interface Service {
  readonly elicit: (request: Request) => Effect.Effect<Answer>
}

export class McpElicitation extends Context.Tag("@toolwright/mcp/McpElicitation")<McpElicitation, Service>() {}

/** Declines every request: for CI and non-interactive runs, and when nothing else is provided. */
export const decline: Service = { elicit: () => Effect.succeed({ action: "decline" }) }

export const layerDecline: Layer.Layer<McpElicitation> = Layer.succeed(McpElicitation, decline)

/** Asks an embedder's function. */
export const layerCallback = (elicit: (request: Request) => Effect.Effect<Answer>): Layer.Layer<McpElicitation> =>
  Layer.succeed(McpElicitation, { elicit })
