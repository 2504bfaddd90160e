/**
 * Errors of the MCP client that cross a boundary: a tool call that failed (read by the model inside
 * `<tool_use_error>`), and a lookup of a server nobody configured.
 */
import { Schema } from "effect"

/** An MCP tool call did not produce a result: the server is down, refused, timed out or said `isError`. */
export class McpToolCallError extends Schema.TaggedError<McpToolCallError>("@toolwright/mcp/McpToolCallError")(
  "McpToolCallError",
  { server: Schema.String, tool: Schema.String, message: Schema.String }
) {}

/** A command named a server that is not configured. */
export class McpServerNotFound extends Schema.TaggedError<McpServerNotFound>("@toolwright/mcp/McpServerNotFound")(
  "McpServerNotFound",
  { server: Schema.String, message: Schema.String }
) {}
