/**
 * `toolwright mcp serve`: the runtime's tool pool as an MCP server, over stdio or streamable HTTP. Every
 * call goes through the whole pipeline (validation, hooks, permissions, result store), unlike Claude
 * Code's `mcp serve`; a permission `ask` is put to the client's user through MCP elicitation when the
 * client supports it, and otherwise denied with the reason (never left hanging). `notifications/cancelled`
 * interrupts the call; progress events become `notifications/progress`.
 */
import { PermissionPrompter, type Permission, Tool, ToolRuntime } from "@toolwright/core"
import type { Message, ToolUseContext } from "@toolwright/core"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type RequestId
} from "@modelcontextprotocol/sdk/types.js"
import { Context, Effect, Layer, Runtime, Schema } from "effect"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import * as McpContent from "./McpContent.js"

/** The calls in flight, by tool_use id, so a permission ask can reach the session and request it belongs to. */
export interface Bridge {
  readonly calls: Map<string, { readonly server: Server; readonly requestId: RequestId }>
}

export class McpServeBridge extends Context.Tag("@toolwright/mcp/McpServeBridge")<McpServeBridge, Bridge>() {}

/** How long a client's user has to answer an elicitation before the ask is denied. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000

const PermissionAnswerSchema = Schema.Struct({ decision: Schema.Literal("allow", "deny") })

/**
 * The prompter for served calls: asks the client's user through elicitation when the client declared
 * it, else denies with a message naming the rule or mode that would allow the call.
 */
export const prompterLayer: Layer.Layer<PermissionPrompter.PermissionPrompter, never, McpServeBridge> = Layer.effect(
  PermissionPrompter.PermissionPrompter,
  Effect.map(McpServeBridge, (bridge) => ({
    ask: (request: PermissionPrompter.Request): Effect.Effect<Permission.PermissionAnswer> => {
      const call = bridge.calls.get(request.context.toolUseId)
      const unanswerable = Effect.succeed<Permission.PermissionAnswer>({
        behavior: "deny",
        message: `${PermissionPrompter.unansweredMessage(request)} (The MCP client does not support elicitation, ` +
          `so toolwright mcp serve cannot ask; start it with --permission-mode to decide up front.)`
      })
      if (call === undefined || call.server.getClientCapabilities()?.elicitation === undefined) return unanswerable
      const title = request.tool.userFacingName(request.input)
      // The signal withdraws the question (notifications/cancelled) when the call is cancelled or interrupted,
      // so the client's dialog does not stay open for a call that no longer exists.
      return Effect.tryPromise((signal) =>
        call.server.elicitInput({
          mode: "form",
          message: `toolwright: allow ${title}? ${request.message}`,
          requestedSchema: {
            type: "object",
            properties: {
              decision: {
                type: "string",
                title: `Allow ${title}?`,
                enum: ["allow", "deny"],
                description: request.message
              }
            },
            required: ["decision"]
          }
        }, { relatedRequestId: call.requestId, timeout: ELICITATION_TIMEOUT_MS, signal })
      ).pipe(
        Effect.map((result): Permission.PermissionAnswer => {
          const decoded = Schema.decodeUnknownOption(PermissionAnswerSchema)(result.content)
          if (result.action === "accept" && decoded._tag === "Some" && decoded.value.decision === "allow") {
            return { behavior: "allow" }
          }
          return {
            behavior: "deny",
            message: `The user of the MCP client denied permission to use ${request.tool.name}` +
              (result.action === "accept" ? "." : ` (the request was ${result.action === "decline" ? "declined" : "cancelled"}).`)
          }
        }),
        Effect.catchAll((error) =>
          Effect.succeed<Permission.PermissionAnswer>({
            behavior: "deny",
            message: `Permission to use ${request.tool.name} was not granted: asking the MCP client failed (${
              error.error instanceof Error ? error.error.message : String(error.error)
            }).`
          })
        )
      )
    }
  }))
)

const safely = (check: () => boolean): boolean => {
  try {
    return check()
  } catch {
    return false
  }
}

/**
 * The MCP listing of a tool: its model-facing description, JSON Schema and behaviour hints. `destructiveHint`
 * false promises "only additive updates" whatever the input; a tool's `isDestructive` answers for one input
 * (Bash's `ls` is harmless, its `rm` is not), so every tool that is not read-only is listed as MCP's default, true.
 */
export const toolListing = (tool: Tool.Any, inputSchema: Tool.JsonSchema) => {
  const readOnly = safely(() => tool.isReadOnly({}))
  return {
    name: tool.name,
    title: safely(() => tool.userFacingName(undefined) !== tool.name) ? tool.userFacingName(undefined) : tool.name,
    description: tool.prompt,
    inputSchema: { ...inputSchema, type: "object" as const },
    annotations: {
      readOnlyHint: readOnly,
      destructiveHint: !readOnly,
      openWorldHint: tool.source === "mcp"
    }
  }
}

/** The longest progress message sent: a client shows it as one status line. */
const MAX_PROGRESS_MESSAGE = 200

/**
 * A progress event as the status line a client shows its user: the event's own message, else the last
 * non-blank line of the output it reports (Bash's `bash_progress`; none when it reported only blank lines), else
 * the event as JSON.
 */
const progressMessage = (data: unknown): string | undefined => {
  if (typeof data === "string") return data
  if (typeof data === "object" && data !== null) {
    if ("message" in data && typeof data.message === "string") return data.message
    if ("output" in data && typeof data.output === "string") {
      const lines = data.output.split("\n").map((line) => line.trim()).filter((line) => line !== "")
      const last = lines.at(-1)
      if (last === undefined) return undefined
      return last.length > MAX_PROGRESS_MESSAGE ? `${last.slice(0, MAX_PROGRESS_MESSAGE - 1)}…` : last
    }
  }
  return JSON.stringify(data) ?? ""
}

let callCounter = 0

/**
 * Each session's calls in flight, settled once the call's fiber has ended (finalizers included), so closing
 * a session can wait until a cancelled Bash has really stopped its process before the CLI exits.
 */
const inFlight = new WeakMap<Server, Set<Promise<void>>>()

/** Closes a session: the SDK aborts its calls in flight, and this waits until they have stopped. */
export const closeServer = (server: Server): Effect.Effect<void> =>
  Effect.promise(async () => {
    await server.close().catch(() => undefined)
    await Promise.all(inFlight.get(server) ?? [])
  })

/**
 * One MCP server session over the runtime. The SDK's `Server` speaks to one client, so HTTP makes one
 * per session; they share the runtime and the bridge.
 */
export const makeServer = (
  runtime: ToolRuntime.Service,
  bridge: Bridge,
  context: ToolUseContext.ToolUseContext,
  effectRuntime: Runtime.Runtime<never>,
  info: { readonly name: string; readonly version: string }
): Server => {
  const server = new Server(info, { capabilities: { tools: { listChanged: false } } })
  const runPromise = Runtime.runPromise(effectRuntime)
  const running = new Set<Promise<void>>()
  inFlight.set(server, running)

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: runtime.pool(context).map((tool) => toolListing(tool, inputJsonSchema(tool)))
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const toolUseId = `toolu_mcp_${Date.now().toString(36)}_${(callCounter++).toString(36)}`
    const progressToken = request.params._meta?.progressToken
    let progress = 0
    const emit = (event: Message.RuntimeEvent): Effect.Effect<void> => {
      if (event._tag !== "Progress" || progressToken === undefined) return Effect.void
      progress++
      const data = event.data
      const message = progressMessage(data)
      const numeric = typeof data === "object" && data !== null && "progress" in data && typeof data.progress === "number"
      return Effect.promise(() =>
        extra.sendNotification({
          method: "notifications/progress",
          params: {
            progressToken,
            progress: numeric ? Number(Reflect.get(data, "progress")) : progress,
            ...(numeric && typeof Reflect.get(data, "total") === "number" ? { total: Number(Reflect.get(data, "total")) } : {}),
            ...(message === undefined ? {} : { message })
          }
        }).catch(() => undefined)
      )
    }
    bridge.calls.set(toolUseId, { server, requestId: extra.requestId })
    const execution = runPromise(
      runtime.execute(
        { type: "tool_use", id: toolUseId, name: request.params.name, input: request.params.arguments ?? {} },
        context,
        emit
      ),
      { signal: extra.signal }
    )
    const settled = execution.then(() => undefined, () => undefined)
    running.add(settled)
    try {
      const result = await execution
      const content = McpContent.toMcpContent(result.result.content)
      return result.result.is_error === true ? { content, isError: true } : { content }
    } finally {
      bridge.calls.delete(toolUseId)
      running.delete(settled)
    }
  })
  return server
}

/** Tool schemas are derived once per tool object: listing is on the hot path of every client start. */
const schemaCache = new WeakMap<Tool.Any, Tool.JsonSchema>()
const inputJsonSchema = (tool: Tool.Any): Tool.JsonSchema => {
  let schema = schemaCache.get(tool)
  if (schema === undefined) {
    schema = Tool.inputJsonSchema(tool)
    schemaCache.set(tool, schema)
  }
  return schema
}

export interface ServeOptions {
  readonly context: ToolUseContext.ToolUseContext
  readonly serverInfo?: { readonly name: string; readonly version: string }
}

/** Serves over stdin/stdout until the client closes stdin. */
export const serveStdio = (options: ServeOptions): Effect.Effect<void, never, ToolRuntime.ToolRuntime | McpServeBridge> =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const bridge = yield* McpServeBridge
    const effectRuntime = yield* Effect.runtime<never>()
    const server = makeServer(runtime, bridge, options.context, effectRuntime, options.serverInfo ?? defaultInfo)
    const transport = new StdioServerTransport()
    yield* Effect.async<void>((resume) => {
      const done = () => resume(Effect.void)
      process.stdin.once("end", done)
      process.stdin.once("close", done)
      // Set before connecting, so the SDK chains its own close handling (which aborts the calls in flight)
      // instead of being replaced by this one.
      transport.onclose = done
      server.connect(transport).catch(done)
    }).pipe(
      // Also on interruption (SIGINT/SIGTERM): the calls' processes stop before the CLI exits.
      Effect.ensuring(closeServer(server))
    )
  })

const defaultInfo = { name: "toolwright", version: "0.1.0" }

export interface HttpOptions extends ServeOptions {
  readonly port: number
  /** 127.0.0.1 unless said otherwise. */
  readonly host?: string
  /** Called once the server listens, with its port (useful with port 0). */
  readonly onListening?: (port: number) => void
  /**
   * How long a session may go without a request (and with no request open, such as its event stream) before
   * it is closed: clients that go away without a DELETE would otherwise be kept forever. Default 30 minutes.
   */
  readonly sessionIdleMs?: number
}

/** The default for `HttpOptions.sessionIdleMs`. */
export const SESSION_IDLE_MS = 30 * 60_000

/** Whether a request's Host and Origin are this server's own: blocks DNS rebinding from web pages. */
export const isAllowedRequest = (
  headers: http.IncomingHttpHeaders,
  port: number,
  host: string
): { readonly ok: true } | { readonly ok: false; readonly reason: string } => {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host}:${port}`])
  if (headers.host === undefined || !hosts.has(headers.host.toLowerCase())) {
    return { ok: false, reason: `Host header ${JSON.stringify(headers.host ?? "")} is not allowed` }
  }
  // Only browsers send Origin, and `null` is one too (a sandboxed iframe, a file: page): refuse it like any
  // foreign origin. Native MCP clients send no Origin at all.
  const origin = headers.origin
  if (origin !== undefined) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || !hosts.has(parsed.host.toLowerCase())) {
      return { ok: false, reason: `Origin ${JSON.stringify(origin)} is not allowed` }
    }
  }
  return { ok: true }
}

/**
 * Whether `host` is a loopback address. Only these may be bound: the server has no authentication and a
 * non-browser client can send any Host header, so the Host check protects nothing on another interface.
 */
const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host)

/** Serves streamable HTTP at `/mcp` until interrupted; each client session gets its own MCP server. */
export const serveHttp = (options: HttpOptions): Effect.Effect<never, Error, ToolRuntime.ToolRuntime | McpServeBridge> =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const bridge = yield* McpServeBridge
    const effectRuntime = yield* Effect.runtime<never>()
    const host = options.host ?? "127.0.0.1"
    if (!isLoopback(host)) {
      return yield* Effect.fail(
        new Error(
          `refusing to serve on ${host}: toolwright mcp serve has no authentication and runs tools for whoever ` +
            `connects, so it only binds a loopback address (127.0.0.1, ::1 or localhost)`
        )
      )
    }
    // Loaded here, not at start-up: it brings Hono's Node adapter, whose first touch of the fetch globals
    // loads Node's undici (~30 ms), which a stdio server (every MCP client's spawn) never needs.
    const { StreamableHTTPServerTransport } = yield* Effect.promise(() =>
      import("@modelcontextprotocol/sdk/server/streamableHttp.js")
    )
    interface Session {
      readonly transport: StreamableHTTPServerTransport
      readonly server: Server
      /** When its last request ended, and how many are open now (a client's event stream stays open). */
      lastSeen: number
      open: number
    }
    const sessions = new Map<string, Session>()
    let port = options.port
    const idleMs = options.sessionIdleMs ?? SESSION_IDLE_MS
    const runFork = Runtime.runFork(effectRuntime)

    /** Counts a request against its session while it is open: an open one keeps the session. */
    const track = (session: Session, res: http.ServerResponse) => {
      session.open++
      res.once("close", () => {
        session.open--
        session.lastSeen = Date.now()
      })
    }
    // A client that went away without a DELETE: its session (a server, its transport) goes after idleMs.
    const sweeper = setInterval(() => {
      const now = Date.now()
      for (const [id, session] of sessions) {
        if (session.open > 0 || now - session.lastSeen < idleMs) continue
        sessions.delete(id)
        runFork(closeServer(session.server))
      }
    }, Math.max(10, Math.min(idleMs / 4, 60_000)))
    sweeper.unref()
    yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(sweeper)))

    const reject = (res: http.ServerResponse, status: number, message: string) => {
      res.writeHead(status, { "content-type": "application/json" }).end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null })
      )
    }

    const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (url.pathname !== "/mcp") return reject(res, 404, "Not found: the MCP endpoint is /mcp")
      const allowed = isAllowedRequest(req.headers, port, host)
      if (!allowed.ok) return reject(res, 403, `Forbidden: ${allowed.reason}`)
      const sessionId = req.headers["mcp-session-id"]
      if (typeof sessionId === "string") {
        const session = sessions.get(sessionId)
        if (session === undefined) return reject(res, 404, "Session not found: initialize a new session")
        track(session, res)
        return session.transport.handleRequest(req, res)
      }
      if (req.method !== "POST") return reject(res, 400, "Bad request: no session; send initialize first")
      const server = makeServer(runtime, bridge, options.context, effectRuntime, options.serverInfo ?? defaultInfo)
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          const session: Session = { transport, server, lastSeen: Date.now(), open: 0 }
          sessions.set(id, session)
          track(session, res)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      }
      await server.connect(transport)
      await transport.handleRequest(req, res)
      if (transport.sessionId === undefined) await server.close()
    }

    const httpServer = http.createServer((req, res) => {
      handle(req, res).catch((error) => {
        if (!res.headersSent) reject(res, 500, `Internal error: ${error instanceof Error ? error.message : String(error)}`)
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        httpServer.once("error", (error) => resume(Effect.fail(error)))
        // "[::1]" is how a URL writes the address; listen() wants it bare.
        httpServer.listen(options.port, host.replace(/^\[(.*)\]$/, "$1"), () => {
          const address = httpServer.address()
          port = typeof address === "object" && address !== null ? address.port : options.port
          options.onListening?.(port)
          resume(Effect.void)
        })
      }),
      () =>
        Effect.zipRight(
          // Every session's calls are interrupted and waited for, so none outlives the server.
          Effect.forEach([...sessions.values()], ({ server }) => closeServer(server), { concurrency: "unbounded" }),
          Effect.promise(async () => {
            const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()))
            // close() alone waits for open connections (a client's SSE stream) to end on their own.
            httpServer.closeAllConnections()
            await closed
          })
        )
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)

/** A bridge with no calls in flight; `serve*` fill it as calls arrive. */
export const bridgeLayer: Layer.Layer<McpServeBridge> = Layer.sync(McpServeBridge, () => ({ calls: new Map() }))
