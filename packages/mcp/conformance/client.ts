/**
 * The adapter the MCP conformance suite runs as "the client": toolwright's `McpClientManager` pointed at
 * the scenario's server (the last argument), doing what the scenario (`MCP_CONFORMANCE_SCENARIO`) needs.
 * OAuth scenarios log in first with `McpOAuth.login`, following the authorization redirect headlessly.
 */
import { ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpClientManager, McpConfig, McpElicitation, McpOAuth, McpToolRegistry } from "../src/index.js"

const url = process.argv[process.argv.length - 1]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const context: Record<string, unknown> = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-conformance-"))
const credentialsFile = path.join(dir, "credentials.json")

const oauth = typeof context.client_id === "string" && typeof context.client_secret === "string"
  ? { grantType: "client_credentials", clientId: context.client_id, clientSecret: context.client_secret }
  : undefined
const entry = { type: scenario === "sse" ? "sse" : "http", url, ...(oauth !== undefined ? { oauth } : {}) }
const servers = McpConfig.parseServers({ server: entry }, "conformance", {})

const arguments_: Record<string, Record<string, unknown>> = { add_numbers: { a: 2, b: 3 } }

/** `toolwright mcp login server`, the browser following the authorization redirect headlessly. */
const login = Effect.suspend(() => {
  const server = servers.servers[0]
  if (server === undefined || (server.config.type !== "http" && server.config.type !== "sse")) return Effect.void
  return McpOAuth.login({
    serverName: "server",
    config: server.config,
    store: new McpOAuth.CredentialsStore(credentialsFile),
    onAuthorizationUrl: (authorization) => {
      void fetch(authorization).then((response) => response.text()).catch(() => undefined)
    },
    timeoutMs: 20_000
  }).pipe(Effect.catchAll((error) => Effect.sync(() => console.error(error.message))))
})

const program = Effect.gen(function*() {
  if (scenario.startsWith("auth/") && oauth === undefined) yield* login
  const built = yield* Layer.build(
    ToolRuntime.layerDefault.pipe(
      Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
      Layer.provideMerge(McpClientManager.layer({
        servers,
        cwd: dir,
        logDir: path.join(dir, "logs"),
        credentialsFile,
        reconnect: { maxAttempts: 0, initialDelayMs: 100 }
      }).pipe(
        // A user who accepts every form without typing anything: the schema's defaults fill it (SEP-1034).
        Layer.provide(McpElicitation.layerCallback(() => Effect.succeed({ action: "accept", content: {} })))
      ))
    )
  )
  const manager = yield* Effect.provide(McpClientManager.McpClientManager, built)
  const runtime = yield* Effect.provide(ToolRuntime.ToolRuntime, built)
  console.error(JSON.stringify(manager.servers().map(({ config: _, ...status }) => status)))
  const session = ToolUseContext.make({
    cwd: dir,
    permissionContext: { mode: "bypassPermissions", allow: [], deny: [], ask: [], additionalDirectories: [] }
  })
  for (const tool of manager.tools()) {
    const run = runtime.execute(
      { type: "tool_use", id: `toolu_${tool.name}`, name: tool.name, input: arguments_[tool.mcpInfo?.toolName ?? ""] ?? {} },
      session,
      () => Effect.void
    )
    let result = yield* run
    // A call that needs a larger scope (step-up) says to log in again: the user does, and calls again.
    if (result.result.is_error === true && JSON.stringify(result.result).includes("toolwright mcp login server")) {
      yield* login
      result = yield* run
    }
    console.log(JSON.stringify(result.result))
  }
}).pipe(Effect.scoped)

Effect.runPromise(program).then(
  () => fs.rmSync(dir, { recursive: true, force: true }),
  (error) => {
    console.error(error)
    process.exitCode = 1
  }
)
