// The MCP SDK's floor: a bare stdio server with one `echo` tool and nothing between the protocol and the
// answer. The benchmark's baseline for round trips and cold start.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

const server = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{
    name: "echo",
    description: "Echoes its message",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
    annotations: { readOnlyHint: true }
  }]
}))
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: "text", text: String(request.params.arguments?.message ?? "") }]
}))
// Not awaited at the top level, so the file also bundles as CommonJS (ColdStart.bench.ts).
server.connect(new StdioServerTransport())
