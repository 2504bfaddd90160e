/**
 * Claude Code's ListMcpResourcesTool and ReadMcpResourceTool: the resources (documents, records, files) the
 * connected MCP servers offer, and one of them read by its URI, so the model can follow a resource link a tool
 * result points at. `McpClientManager` offers them while a connected server declares the `resources`
 * capability; like server tools they are `source: "mcp"` and need an allow rule (`ReadMcpResourceTool`).
 */
import { PermissionRule, Tool, type ToolUseContext } from "@toolwright/core"
import { Effect, Either, Schema } from "effect"
import type { McpToolCallError } from "./McpErrors.js"
import * as McpToolName from "./McpToolName.js"

export const LIST_TOOL_NAME = "ListMcpResourcesTool"
export const READ_TOOL_NAME = "ReadMcpResourceTool"

/** One resource of one server, as the model reads it in the list. */
export interface Resource {
  readonly uri: string
  readonly name: string
  readonly mimeType?: string | undefined
  readonly description?: string | undefined
  readonly server: string
}

/** A listing: the resources found, and the servers with resources that could not be asked, with why. */
export interface Listing {
  readonly resources: ReadonlyArray<Resource>
  readonly unavailable: ReadonlyArray<{ readonly server: string; readonly reason: string }>
}

/** What the tools ask of the manager. */
export interface Resources {
  /** The resources of `server`, or of every server that has some when undefined (those that cannot answer noted). */
  readonly list: (server: string | undefined) => Effect.Effect<Listing, McpToolCallError>
  /** The contents of `uri` as the model reads them (binary parts saved to files). */
  readonly read: (
    server: string,
    uri: string,
    context: ToolUseContext.ToolUseContext
  ) => Effect.Effect<string, McpToolCallError>
}

const NO_RESOURCES = "No resources found. MCP servers may still provide tools even if they have no resources."

const listDescription = "Lists the resources the connected MCP servers offer (documents, records, files), each with " +
  `its server and URI; read one with ${READ_TOOL_NAME}. Give server to list one server's resources only.`

const readDescription = "Reads one resource of an MCP server by its URI (from ListMcpResourcesTool, or a resource " +
  "link in a tool result). Text comes back as it is; binary content is saved to a file whose path is given."

/**
 * The deny rule that names all of `server` (`mcp__srv`, `mcp__srv__*`), if one does: it covers the server's
 * resources as it covers its tools. A rule naming one tool (`mcp__srv__delete`) does not.
 */
const serverDenyRule = (server: string, context: ToolUseContext.ToolUseContext): string | undefined => {
  // No tool of the server can have this name: only a rule for the whole server covers it.
  const probe = { name: `${McpToolName.serverPrefix(server)}\u0000`, aliases: [] }
  return context.permissionContext.deny.find((entry) => {
    const parsed = PermissionRule.parse(entry.rule)
    return Either.isRight(parsed) && parsed.right.content === undefined &&
      PermissionRule.namesTool(parsed.right.toolName, probe)
  })?.rule
}

const deniedServer = (server: string, rule: string) => ({
  behavior: "deny" as const,
  message: `MCP server "${server}" is denied by the rule ${rule}, which covers its resources too.`
})

/** The two tools over `resources`. */
export const make = (resources: Resources): ReadonlyArray<Tool.Any> => [
  Tool.make({
    name: LIST_TOOL_NAME,
    description: listDescription,
    prompt: listDescription,
    input: Schema.Struct({
      server: Schema.optional(Schema.String.annotations({ description: "Only this server's resources" }))
    }),
    source: "mcp",
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    userFacingName: () => "List MCP resources",
    checkPermissions: ({ server }, context) => {
      const rule = server === undefined ? undefined : serverDenyRule(server, context)
      return Effect.succeed(rule === undefined || server === undefined ? { behavior: "passthrough" } : deniedServer(server, rule))
    },
    call: ({ server }, context) =>
      resources.list(server).pipe(
        Effect.map(({ resources: all, unavailable }) => {
          // Listing every server: a denied server's resources are left out, as its tools are.
          const allowed = (name: string) => serverDenyRule(name, context) === undefined
          const found = all.filter((resource) => allowed(resource.server))
          const missing = unavailable.filter((entry) => allowed(entry.server))
          const listed = found.length === 0 ? NO_RESOURCES : JSON.stringify(found)
          return missing.length === 0
            ? listed
            : `${listed}\n\nNot listed, because these servers could not be asked: ` +
              missing.map((entry) => `${entry.server} (${entry.reason})`).join("; ")
        })
      ),
  }),
  Tool.make({
    name: READ_TOOL_NAME,
    description: readDescription,
    prompt: readDescription,
    input: Schema.Struct({
      server: Schema.String.annotations({ description: "The MCP server's name" }),
      uri: Schema.String.annotations({ description: "The resource's URI" })
    }),
    source: "mcp",
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    userFacingName: () => "Read MCP resource",
    toClassifierInput: ({ server, uri }) => `${server} ${uri}`,
    checkPermissions: ({ server }, context) => {
      const rule = serverDenyRule(server, context)
      return Effect.succeed(rule === undefined ? { behavior: "passthrough" } : deniedServer(server, rule))
    },
    call: ({ server, uri }, context) => resources.read(server, uri, context),
  })
]
