/**
 * The MCP client side: connects to every configured server at once (each bounded by a connect timeout,
 * none blocking the others), keeps their tool lists current (after connecting and on
 * `notifications/tools/list_changed`), reconnects with backoff when a connection drops, and turns each
 * server tool into a toolwright tool named `mcp__<server>__<tool>`. The client declares `elicitation` (form
 * mode, answered by `McpElicitation`) and `roots` (the session's working directories); not `sampling`, since
 * there is no model here to sample. HTTP and SSE connections are pinged while calls are in flight, so a
 * server that freezes fails its calls within seconds instead of at the tool timeout.
 */
import { extractWWWAuthenticateParams, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type ProgressNotification,
  ProgressNotificationSchema,
  type Tool as McpTool,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { InputValidator, type Message, Tool, ToolErrors, ToolProgress, ToolResultStorage } from "@toolwright/core"
import type { ToolUseContext as ToolUseContextModule } from "@toolwright/core"
import { Context, Deferred, Duration, Effect, Fiber, FiberSet, Layer, Option, Predicate, Runtime, type RuntimeFlags, Schema } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { WebSocketClientTransport } from "./internal/WebSocketClientTransport.js"
import { compile, type Validator } from "./internal/jsonSchema.js"
import type {
  McpConfigError,
  McpServerType,
  ParsedServers,
  RemoteServerConfig,
  ServerConfig,
  ServerEntry
} from "./McpConfig.js"
import * as McpConfig from "./McpConfig.js"
import * as McpContent from "./McpContent.js"
import * as McpElicitation from "./McpElicitation.js"
import * as McpOAuth from "./McpOAuth.js"
import { McpServerNotFound, McpToolCallError } from "./McpErrors.js"
import * as McpResourceTools from "./McpResourceTools.js"
import * as McpToolName from "./McpToolName.js"

/**
 * Where a server is: still connecting, usable, given up on (with the reason), waiting for credentials, or turned
 * off by settings' `disabledMcpjsonServers` (never connected).
 */
export type ServerState = "pending" | "connected" | "failed" | "needs-auth" | "disabled"

export interface ServerStatus {
  readonly name: string
  /** Undefined for an entry whose configuration could not be read. */
  readonly type: McpServerType | undefined
  readonly source: string
  readonly state: ServerState
  /** Why the server is failed or needs auth. */
  readonly error: string | undefined
  readonly toolCount: number
  readonly serverInfo: { readonly name: string; readonly version: string } | undefined
  /** The stdio server's stderr log. */
  readonly logFile: string | undefined
  /** The stdio server's process id while connected. */
  readonly pid: number | undefined
  readonly config: ServerConfig | undefined
  /** The settings files whose `disabledMcpjsonServers` list this `.mcp.json` server (state `disabled`). */
  readonly disabledBy?: ReadonlyArray<string> | undefined
}

/** A configured server that settings turn off: listed, never connected. */
export interface DisabledServer {
  readonly name: string
  readonly source: string
  /** Undefined for an entry whose configuration could not be read. */
  readonly config: ServerConfig | undefined
  /** The settings files that turn it off. */
  readonly disabledBy: ReadonlyArray<string>
}

export interface Service {
  /**
   * Every configured server: those connecting in configuration order, then the disabled ones, then bad entries
   * as failed.
   */
  readonly servers: () => ReadonlyArray<ServerStatus>
  /** The tools of every connected server, named and ordered deterministically. */
  readonly tools: () => ReadonlyArray<Tool.Any>
  /** Changes whenever a server's state or tool list changes, so callers can cache what they derive. */
  readonly version: () => number
  /** Closes the server's connection and connects again, re-listing its tools. */
  readonly reconnect: (name: string) => Effect.Effect<ServerStatus, McpServerNotFound>
  /** Replaces the roots servers see (`roots/list`) and tells the connected ones (`roots/list_changed`). */
  readonly setRoots: (directories: ReadonlyArray<string>) => Effect.Effect<void>
}

export class McpClientManager extends Context.Tag("@toolwright/mcp/McpClientManager")<McpClientManager, Service>() {}

export interface Options {
  readonly servers: ParsedServers
  /** Servers settings turn off: listed with state `disabled`, never connected. */
  readonly disabledServers?: ReadonlyArray<DisabledServer>
  /** In-process servers (`McpServerType` "sdk"), added after the configured ones. */
  readonly sdkServers?: ReadonlyArray<{ readonly name: string; readonly transport: () => Transport }>
  /** The project directory: stdio servers start here unless their entry says `cwd`. */
  readonly cwd: string
  /** Where stdio servers' stderr is logged (`<logDir>/<server>.log`). */
  readonly logDir?: string
  /** Connect timeout per server; default `MCP_TIMEOUT` or 30 s. */
  readonly connectTimeoutMs?: number
  /** Per-call timeout, reset by each progress notification; default `MCP_TOOL_TIMEOUT` or ~27.8 hours. */
  readonly toolTimeoutMs?: number
  /** Reconnect policy after a connection drops: attempts and the first delay (doubled each time, ≤ 30 s). */
  readonly reconnect?: { readonly maxAttempts: number; readonly initialDelayMs: number }
  readonly clientInfo?: { readonly name: string; readonly version: string }
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Where OAuth credentials are kept; default `~/.toolwright/mcp-credentials.json`. */
  readonly credentialsFile?: string
  /** The directories servers get from `roots/list` (as `file://` URIs); default `[cwd]`. */
  readonly roots?: ReadonlyArray<string>
  /**
   * HTTP/SSE liveness: while a call is in flight, a `ping` every `intervalMs` that must be answered within
   * `timeoutMs`, else (or when the connection breaks under it) the calls fail and the connection is re-made
   * with backoff. A JSON-RPC error or an HTTP error status (429, 502) is an answer. Default 3 s and 3 s.
   */
  readonly heartbeat?: { readonly intervalMs: number; readonly timeoutMs: number }
  /** How long a remote server's `headersHelper` may run before it is killed; default 10 s, as in Claude Code. */
  readonly headersHelperTimeoutMs?: number
}

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000
const DEFAULT_TOOL_TIMEOUT_MS = 100_000_000
/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2_147_483_647
let nextProgressToken = 0
/** Descriptions longer than this are cut: some servers ship whole manuals in them. */
const MAX_DESCRIPTION_CHARS = 2_048
/** Output of MCP tools beyond this is persisted by the result store, as for any tool. */
const MCP_MAX_RESULT_SIZE_CHARS = 100_000

const envNumber = (env: Readonly<Record<string, string | undefined>>, name: string): number | undefined => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return undefined
  const value = Number(raw)
  return Number.isFinite(value) && value > 0 ? value : undefined
}

/** `~/.toolwright/logs/mcp/<project>`: one directory per project so logs of different projects stay apart. */
export const defaultLogDir = (cwd: string): string =>
  path.join(os.homedir(), ".toolwright", "logs", "mcp", cwd.replace(/[^A-Za-z0-9]/g, "-"))

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : Predicate.hasProperty(error, "message") ? String(error.message) : String(error)

/** The HTTP status behind a transport error, when there is one. */
const httpStatus = (error: unknown): number | undefined => {
  if (error instanceof UnauthorizedError || error instanceof McpOAuth.LoginRequiredError) return 401
  if (error instanceof StreamableHTTPError || error instanceof SseError) return error.code
  if (Predicate.hasProperty(error, "httpStatus") && typeof error.httpStatus === "number") return error.httpStatus
  return undefined
}

const isAuthError = (error: unknown): boolean => httpStatus(error) === 401

/**
 * A streamable HTTP event stream (a call's response, or the server's GET stream) that broke off. The SDK tells
 * of it only in words, the network error flattened into its text; the fetch below reports it as this instead,
 * in the same words, before the SDK does.
 */
class EventStreamBroken extends Error {
  constructor(error: unknown) {
    super(`SSE stream disconnected: ${error}`)
  }
}

/**
 * Errors after which a remote connection is dead, though the SDK would keep waiting on its pending calls. Told
 * by what the error is, never by its text (a proxy's 502 or a gateway's JSON-RPC error often names the
 * upstream's ECONNRESET while the connection to it works): fetch's network error, which the Fetch standard
 * makes a `TypeError` (refused, reset, a response cut off); an event stream broken off (for SSE, an `SseError`
 * with a reason but no HTTP status; one with neither is the stream ending cleanly, which the event source
 * re-opens); or the SDK's ConnectionClosed. Anything else came back from the server or a proxy: a JSON-RPC
 * error (`McpError`), an HTTP status (`StreamableHTTPError`, `SseError`, the SSE transport's POST error).
 */
const isConnectionLost = (error: unknown): boolean =>
  error instanceof TypeError ||
  error instanceof EventStreamBroken ||
  (error instanceof SseError && error.code === undefined && error.event.message !== undefined) ||
  (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)

/** The system error code behind an error: its own, its cause's, or one its message quotes (SSE errors). */
const systemCode = (error: unknown): string | undefined => {
  for (const candidate of [error, Predicate.hasProperty(error, "cause") ? error.cause : undefined]) {
    if (Predicate.hasProperty(candidate, "code") && typeof candidate.code === "string") return candidate.code
  }
  return /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH)\b/.exec(messageOf(error))?.[1]
}

/** "fetch failed" says nothing: the cause says what failed. */
const detailOf = (error: unknown): string => {
  const message = messageOf(error)
  const cause = Predicate.hasProperty(error, "cause") ? error.cause : undefined
  return message === "fetch failed" && cause !== undefined ? `${message}: ${messageOf(cause)}` : message
}

/** What a server says to a request that did not reach an MCP endpoint of the configured transport. */
const ENDPOINT_STATUSES = new Set([400, 404, 405, 406, 415, 501])

/**
 * An HTTP error's words on one short line: the SDK puts the whole response body in its message, often an HTML
 * error page, whose text (not its markup) says what happened.
 */
const pageText = (message: string): string => {
  const text = message
    .replace(/^Streamable HTTP error: Error POSTing to endpoint: /, "")
    .replace(/<!DOCTYPE[^>]*>/gi, " ")
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim()
  return text.length > 200 ? `${text.slice(0, 199)}…` : text
}

/** Why a server did not start, in words that say what to do about it. */
const startFailure = (entry: ServerEntry, error: unknown): string => {
  const config = entry.config
  const code = systemCode(error)
  const detail = detailOf(error)
  if (config.type === "stdio") {
    if (code === "ENOENT") {
      return `its command ${config.command} was not found${config.command.includes("/") ? "" : " on PATH"} (${detail}). ` +
        `Install it, or fix "command" of "${entry.name}" in ${entry.source}.`
    }
    if (code === "EACCES") {
      return `its command ${config.command} cannot be run (${detail}). Make it executable, or fix "command" of ` +
        `"${entry.name}" in ${entry.source}.`
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return `it exited before answering the MCP handshake (${detail})`
    }
    return detail
  }
  if (config.type === "sdk") return detail
  const status = httpStatus(error)
  if (status !== undefined && (error instanceof StreamableHTTPError || error instanceof SseError)) {
    return `it answered HTTP ${status} (${pageText(detail)}).` + (ENDPOINT_STATUSES.has(status)
      ? ` Check that "url" of "${entry.name}" in ${entry.source} is the server's MCP endpoint and "type" its ` +
        `transport ("http" for streamable HTTP, "sse" for the older HTTP+SSE).`
      : "")
  }
  if (code === "ECONNREFUSED") {
    return `nothing answers at ${config.url} (${detail}). Start the server, or fix "url" of "${entry.name}" in ${entry.source}.`
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `the host of ${config.url} was not found (${detail}). Check "url" of "${entry.name}" in ${entry.source}.`
  }
  return detail
}

/** How long a remote server's `headersHelper` may run, as in Claude Code. */
const HEADERS_HELPER_TIMEOUT_MS = 10_000
/** The most a headersHelper may print: a few headers are a few kilobytes. */
const HEADERS_HELPER_MAX_OUTPUT = 1024 * 1024
/** How long a helper that has exited may leave its output open (a child it started still holding it). */
const HEADERS_HELPER_OUTPUT_GRACE_MS = 1_000

/** What is wrong with a headersHelper's output, or its headers. */
const helperHeaders = (stdout: string): Record<string, string> | string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(stdout)
  } catch {
    return "its output is not JSON"
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return `it printed ${Array.isArray(parsed) ? "an array" : parsed === null ? "null" : `a ${typeof parsed}`}`
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== "string") return `its header ${JSON.stringify(name)} is not a string`
    headers[name] = value
  }
  return headers
}

/**
 * Runs a remote server's `headersHelper` in a shell, with the server's name and URL in its environment (Claude
 * Code's variables): the headers it prints, or why there are none, in words that say what to fix. The shell
 * leads its own process group, killed whole (SIGKILL) at the time limit or an interruption, as command hooks
 * are: a child of the helper (a `sleep`, a token fetch) would otherwise outlive it.
 */
const runHeadersHelper = (
  entry: ServerEntry,
  config: RemoteServerConfig,
  helper: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs: number
): Effect.Effect<Record<string, string>, string> =>
  Effect.async((resume) => {
    const fix = `Fix "headersHelper" of "${entry.name}" in ${entry.source}.`
    const failed = (why: string, stderr: string) => {
      const said = stderr.trim().split("\n").slice(-3).join("\n")
      return Effect.fail(`its headersHelper ${why}${said === "" ? "" : `: ${said}`}. ${fix}`)
    }
    const child = childProcess.spawn(helper, {
      cwd,
      env: { ...env, CLAUDE_CODE_MCP_SERVER_NAME: entry.name, CLAUDE_CODE_MCP_SERVER_URL: config.url },
      shell: true,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const killGroup = () => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {
        // The group is gone already, or there are no process groups (Windows): the shell at least.
        child.kill("SIGKILL")
      }
    }
    let cutShort: string | undefined
    const stop = (why: string) => {
      cutShort ??= why
      killGroup()
    }
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    let size = 0
    const collect = (into: Array<Buffer>) => (chunk: Buffer) => {
      size += chunk.length
      if (size > HEADERS_HELPER_MAX_OUTPUT) {
        return stop(`printed more than ${HEADERS_HELPER_MAX_OUTPUT / 1024 / 1024} MB`)
      }
      into.push(chunk)
    }
    child.stdout.on("data", collect(stdout))
    child.stderr.on("data", collect(stderr))
    const timer = setTimeout(() => stop(`did not finish within ${timeoutMs / 1000} s`), timeoutMs)
    let grace: ReturnType<typeof setTimeout> | undefined
    // The helper is done when its shell exits: what it started and left holding the output dies then.
    child.on("exit", () => {
      grace = setTimeout(killGroup, HEADERS_HELPER_OUTPUT_GRACE_MS)
    })
    let done = false
    const finish = (result: Effect.Effect<Record<string, string>, string>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearTimeout(grace)
      resume(result)
    }
    child.on("error", (error) => finish(failed(`could not run (${error.message})`, "")))
    child.on("close", (code, signal) => {
      const said = Buffer.concat(stderr).toString("utf8")
      if (cutShort !== undefined) return finish(failed(cutShort, said))
      if (code !== 0) {
        return finish(failed(code === null ? `was killed by ${signal}` : `failed (exit code ${code})`, said))
      }
      const headers = helperHeaders(Buffer.concat(stdout).toString("utf8"))
      finish(
        typeof headers === "string"
          ? Effect.fail(
            `its headersHelper must print a JSON object of header names to string values, but ${headers}. ${fix}`
          )
          : Effect.succeed(headers)
      )
    })
    return Effect.sync(() => {
      done = true
      clearTimeout(timer)
      clearTimeout(grace)
      killGroup()
    })
  })

/** The handshake and tool listing together took longer than MCP_TIMEOUT. */
class ConnectTimeout extends Error {}

/** What a call is told when the connection broke under a heartbeat ping. */
const pingFailed = (error: unknown): string => `its connection broke during a ping: ${messageOf(error)}`

/** The last lines a stdio server wrote to stderr since `offset`, to say why it failed. */
const stderrTail = (file: string | undefined, offset: number): string => {
  if (file === undefined) return ""
  try {
    const text = fs.readFileSync(file, "utf8").slice(offset)
    return text.split("\n").map((line) => line.trimEnd()).filter((line) => line !== "").slice(-5).join("\n")
  } catch {
    return ""
  }
}

interface Connection {
  readonly entry: ServerEntry
  state: ServerState
  error: string | undefined
  client: Client | undefined
  tools: ReadonlyArray<McpTool>
  /** The server declared the `resources` capability (kept, like its tools, while it reconnects). */
  resources: boolean
  serverInfo: { readonly name: string; readonly version: string } | undefined
  logFile: string | undefined
  pid: number | undefined
  /** Where this run's part of the log starts. */
  logOffset: number
  /** Resolves when the connect attempt in flight ends; set while connecting or reconnecting. */
  inFlight: Deferred.Deferred<void> | undefined
  reconnecting: boolean
  /** A client this module closed on purpose: its close must not trigger a reconnect. */
  readonly retired: WeakSet<Client>
  /** Progress listeners of the calls in flight, by the progress token sent with each. */
  readonly progress: Map<string, (progress: ProgressParams) => void>
  /** Why the heartbeat gave up on the connection, until a connect succeeds again. */
  unresponsive: string | undefined
  /** The stdio server sent a message over the SDK's read limit, and the SDK closed the connection for it. */
  oversized: boolean
  /** A heartbeat ping is on its way: a connection-level error now is the ping's failure. */
  pinging: boolean
  /** The scope of the last HTTP 403 `insufficient_scope` (step-up), until a call failure reports it. */
  insufficientScope: string | undefined
}

interface ToolEntry {
  readonly tool: Tool.Any
  readonly serverName: string
}

type ProgressParams = ProgressNotification["params"]

const InputRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

type SdkCallResult = Awaited<ReturnType<Client["callTool"]>>

/** A call that did not get a result: what went wrong, and on which client (a reconnect replaces it). */
interface AttemptFailure {
  readonly error: unknown
  readonly client: Client
}

/**
 * What the SDK's `Protocol.request` reads of a call's AbortSignal: `aborted`, `reason`, `throwIfAborted()` and
 * one `abort` listener, which sends notifications/cancelled and rejects the call. Node's AbortSignal is an
 * EventTarget that costs ~6 µs to make, a fifth of a small call's whole way through the pipeline; the
 * interruption tests cancel through this one.
 */
class CallSignal {
  aborted = false
  reason: unknown = undefined
  listeners: Array<() => void> | undefined = undefined

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }
  addEventListener(type: string, listener: () => void): void {
    if (type === "abort") (this.listeners ??= []).push(listener)
  }
  removeEventListener(type: string, listener: () => void): void {
    if (type === "abort") this.listeners = this.listeners?.filter((entry) => entry !== listener)
  }
  abort(): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = new DOMException("This operation was aborted", "AbortError")
    for (const listener of this.listeners ?? []) listener()
  }
}

/**
 * One call in flight: its progress listener (progress is read off the transport under our own token: the
 * SDK dispatches notifications a tick late and drops any that arrive just before the response), its idle
 * timer (reset by each progress report) and its cancellation, as plain callbacks. This is on every call's
 * path, and each fiber, controller or listener costs microseconds; the fiber that reports progress is made
 * only when a server reports some.
 */
class PendingCall {
  readonly token = `toolwright-${nextProgressToken++}`
  readonly cancel = new CallSignal()
  lastActivity = Date.now()
  timer: ReturnType<typeof setTimeout> | undefined = undefined
  reports: Array<Fiber.RuntimeFiber<void>> | undefined = undefined
  report: ((effect: Effect.Effect<void, never, ToolProgress.ToolProgress>) => Fiber.RuntimeFiber<void>) | undefined =
    undefined
  done = false

  constructor(
    readonly connection: Connection,
    readonly client: Client,
    readonly fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly runtimeFlags: RuntimeFlags.RuntimeFlags,
    readonly timeoutMs: number,
    readonly resume: (effect: Effect.Effect<SdkCallResult, AttemptFailure>) => void
  ) {}

  /**
   * Sends the call; the returned effect is its canceler (the SDK then sends notifications/cancelled). The
   * canceler also interrupts the progress reports already started and waits for them, so none outlives the
   * call: it runs, too, when the call is interrupted while `finish` joins them.
   */
  start(name: string, args: Record<string, unknown>): Effect.Effect<void> {
    this.connection.progress.set(this.token, (progress) => {
      this.lastActivity = Date.now()
      this.report ??= Runtime.runFork(Runtime.make({
        context: this.fiber.currentContext as Context.Context<ToolProgress.ToolProgress>,
        fiberRefs: this.fiber.getFiberRefs(),
        runtimeFlags: this.runtimeFlags
      }))
      ;(this.reports ??= []).push(this.report(ToolProgress.report({
        progress: progress.progress,
        ...(progress.total !== undefined ? { total: progress.total } : {}),
        ...(progress.message !== undefined ? { message: progress.message } : {})
      })))
    })
    this.arm(Math.min(this.timeoutMs, MAX_TIMER_MS))
    this.client.callTool({ name, arguments: args, _meta: { progressToken: this.token } }, undefined, {
      signal: this.cancel as unknown as AbortSignal,
      timeout: MAX_TIMER_MS
    }).then(
      (result) => this.finish(Effect.succeed(result)),
      (error) => this.finish(Effect.fail({ error, client: this.client }))
    )
    return Effect.suspend(() => {
      if (this.settle()) this.cancel.abort()
      return this.reports === undefined ? Effect.void : Fiber.interruptAll(this.reports)
    })
  }

  /** The call's limit, counted from its last sign of life. */
  arm(delay: number): void {
    this.timer = setTimeout(() => {
      const remaining = this.lastActivity + this.timeoutMs - Date.now()
      if (remaining > 0) return this.arm(Math.min(remaining, MAX_TIMER_MS))
      this.finish(Effect.fail({ error: new McpError(ErrorCode.RequestTimeout, "Request timed out"), client: this.client }))
      // Tells the server to stop (notifications/cancelled).
      this.cancel.abort()
    }, delay)
  }

  /** Ends the call's bookkeeping once; false when it had already ended. */
  settle(): boolean {
    if (this.done) return false
    this.done = true
    clearTimeout(this.timer)
    this.connection.progress.delete(this.token)
    return true
  }

  /** The outcome, after the progress reports already sent have reached the pipeline. */
  finish(outcome: Effect.Effect<SdkCallResult, AttemptFailure>): void {
    if (!this.settle()) return
    this.resume(this.reports === undefined ? outcome : Effect.zipRight(Fiber.joinAll(this.reports), outcome))
  }
}

/**
 * The fetch of an HTTP or SSE server's requests. A 403 insufficient_scope needs a login with the larger scope
 * (step-up), which the SDK cannot do without a person: the call fails, and the scope is noted so the failure
 * can name it and `toolwright mcp login` asks for it. With `broke`, the event streams it hands over are watched.
 */
const scopeWatchingFetch = (connection: Connection, broke?: (error: EventStreamBroken) => void) =>
  async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init)
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response)
      if (error === "insufficient_scope" && scope !== undefined) connection.insufficientScope = scope
    }
    return broke === undefined ? response : watchEventStream(response, init?.signal, broke)
  }

/** An event stream that tells `broke` how it broke off, unless its request was aborted (the client closing). */
const watchEventStream = (
  response: Response,
  signal: AbortSignal | null | undefined,
  broke: (error: EventStreamBroken) => void
): Response => {
  const body = response.body
  if (body === null || !response.ok || response.headers.get("content-type")?.includes("text/event-stream") !== true) {
    return response
  }
  const reader = body.getReader()
  const watched = new ReadableStream<Uint8Array>({
    pull: (controller) =>
      reader.read().then(
        (chunk) => chunk.done ? controller.close() : controller.enqueue(chunk.value),
        (error: unknown) => {
          if (signal?.aborted !== true) broke(new EventStreamBroken(error))
          controller.error(error)
        }
      ),
    cancel: (reason) => reader.cancel(reason)
  })
  return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/** Where a call's binary content is saved; the path is worked out only for a result that has some. */
class SessionBlobSink implements McpContent.BlobSink {
  constructor(readonly context: ToolUseContextModule.ToolUseContext) {}
  // One path segment each, as the result store does: `..` in an id cannot leave the project dir, and two ids
  // never share a file.
  get directory(): string {
    return path.join(this.context.projectDir, ToolResultStorage.safeSegment(this.context.sessionId), "mcp-output")
  }
  get prefix(): string {
    return ToolResultStorage.safeSegment(this.context.toolUseId)
  }
}

/** Builds the manager; its connections close when the scope does. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const env = options.env ?? process.env
    const connectTimeoutMs = options.connectTimeoutMs ?? envNumber(env, "MCP_TIMEOUT") ?? DEFAULT_CONNECT_TIMEOUT_MS
    const toolTimeoutMs = options.toolTimeoutMs ?? envNumber(env, "MCP_TOOL_TIMEOUT") ?? DEFAULT_TOOL_TIMEOUT_MS
    const reconnectPolicy = options.reconnect ?? { maxAttempts: 5, initialDelayMs: 1_000 }
    const clientInfo = options.clientInfo ?? { name: "toolwright", version: "0.1.0" }
    const logDir = options.logDir ?? defaultLogDir(options.cwd)
    const heartbeatPolicy = options.heartbeat ?? { intervalMs: 3_000, timeoutMs: 3_000 }
    const elicitation = Option.getOrElse(
      yield* Effect.serviceOption(McpElicitation.McpElicitation),
      () => McpElicitation.decline
    )
    const runElicitation = Runtime.runPromise(yield* Effect.runtime<never>())
    let roots: ReadonlyArray<string> = options.roots ?? [options.cwd]
    const fibers = yield* FiberSet.make()
    const fork = yield* FiberSet.runtime(fibers)<never>()
    let closing = false
    let version = 0
    let cachedVersion = -1
    let cachedTools: ReadonlyArray<ToolEntry> = []

    const sdkEntries: ReadonlyArray<ServerEntry> = (options.sdkServers ?? []).map((server) => ({
      name: server.name,
      source: "sdk",
      config: { type: "sdk", transport: server.transport }
    }))
    const connections: Array<Connection> = [...options.servers.servers, ...sdkEntries].map((entry) => ({
      entry,
      state: "pending",
      error: undefined,
      client: undefined,
      tools: [],
      resources: false,
      serverInfo: undefined,
      logFile: undefined,
      pid: undefined,
      logOffset: 0,
      inFlight: undefined,
      reconnecting: false,
      retired: new WeakSet(),
      progress: new Map(),
      unresponsive: undefined,
      oversized: false,
      pinging: false,
      insufficientScope: undefined
    }))
    const configErrors: ReadonlyArray<McpConfigError> = options.servers.errors
    const changed = () => {
      version++
    }

    const credentials = new McpOAuth.CredentialsStore(options.credentialsFile)
    const authOption = (name: string, config: RemoteServerConfig) => {
      const authProvider = McpOAuth.providerFor(name, config, credentials)
      return authProvider === undefined ? {} : { authProvider }
    }

    const makeTransport = (
      connection: Connection,
      dynamicHeaders: Readonly<Record<string, string>>
    ): { transport: Transport; logFd: number | undefined; offset: number } => {
      const config = connection.entry.config
      switch (config.type) {
        case "stdio": {
          // A server's stderr can hold tokens and private paths: only the user may read the logs.
          fs.mkdirSync(logDir, { recursive: true, mode: 0o700 })
          const logFile = path.join(logDir, `${connection.entry.name.replace(/[^A-Za-z0-9_.-]/g, "_")}.log`)
          connection.logFile = logFile
          const header = `--- ${new Date().toISOString()} starting: ${[config.command, ...config.args].join(" ")}\n`
          fs.appendFileSync(logFile, header, { mode: 0o600 })
          fs.chmodSync(logFile, 0o600)
          const offset = fs.statSync(logFile).size
          connection.logOffset = offset
          const logFd = fs.openSync(logFile, "a")
          const inherited: Record<string, string> = {}
          for (const [key, value] of Object.entries(env)) if (value !== undefined) inherited[key] = value
          const transport = new StdioClientTransport({
            command: config.command,
            args: [...config.args],
            env: { ...inherited, ...config.env },
            cwd: config.cwd === undefined ? options.cwd : path.resolve(options.cwd, config.cwd),
            stderr: logFd
          })
          return { transport, logFd, offset }
        }
        case "http": {
          const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(config.url), {
            requestInit: { headers: { ...config.headers, ...dynamicHeaders } },
            ...authOption(connection.entry.name, config),
            // A broken stream reaches `client.onerror` as any transport error does.
            fetch: scopeWatchingFetch(connection, (error) => transport.onerror?.(error)),
            // A stream the server closes cleanly is resumed (honouring its `retry`); a broken one is
            // detected by the errors below and the connection is closed at once.
            reconnectionOptions: {
              maxRetries: 2,
              initialReconnectionDelay: 500,
              maxReconnectionDelay: 30_000,
              reconnectionDelayGrowFactor: 1.5
            }
          })
          return { transport, logFd: undefined, offset: 0 }
        }
        case "sse":
          return {
            transport: new SSEClientTransport(new URL(config.url), {
              requestInit: { headers: { ...config.headers, ...dynamicHeaders } },
              ...authOption(connection.entry.name, config),
              // The calls' POSTs; the event stream has its own fetch below.
              fetch: scopeWatchingFetch(connection),
              eventSourceInit: {
                fetch: (url, init) =>
                  fetch(url, {
                    ...init,
                    headers: { ...Object.fromEntries(new Headers(init?.headers)), ...config.headers, ...dynamicHeaders }
                  })
              }
            }),
            logFd: undefined,
            offset: 0
          }
        case "ws":
          return {
            transport: new WebSocketClientTransport(new URL(config.url), { ...config.headers, ...dynamicHeaders }),
            logFd: undefined,
            offset: 0
          }
        case "sdk":
          return { transport: config.transport(), logFd: undefined, offset: 0 }
      }
    }

    const listTools = (client: Client) =>
      Effect.tryPromise(async () => {
        const tools: Array<McpTool> = []
        let cursor: string | undefined
        do {
          const page = await client.listTools(cursor === undefined ? undefined : { cursor })
          tools.push(...page.tools)
          cursor = page.nextCursor
        } while (cursor !== undefined)
        return tools
      })

    /** Re-lists a connected server's tools; a failure keeps the previous list (the server is still up). */
    const relist = (connection: Connection, client: Client) =>
      listTools(client).pipe(
        Effect.tap((tools) =>
          Effect.sync(() => {
            if (connection.client !== client) return
            connection.tools = tools
            changed()
          })
        ),
        Effect.ignore
      )

    const describeFailure = (
      connection: Connection,
      error: unknown,
      offset: number,
      stdoutNoise: string | undefined
    ): string => {
      const timedOut = (error instanceof McpError && error.code === ErrorCode.RequestTimeout) ||
        error instanceof ConnectTimeout
      const base = timedOut && stdoutNoise !== undefined
        ? `it wrote text that is not JSON-RPC to stdout, so its answer was lost (${stdoutNoise}). An MCP stdio ` +
          `server must write only JSON-RPC messages to stdout (its logs belong on stderr): fix the server or the ` +
          `command that starts it`
        : error instanceof McpError && error.code === ErrorCode.RequestTimeout
        ? `did not answer within ${connectTimeoutMs} ms (MCP_TIMEOUT)`
        // The SDK names its own option; the user wrote `oauth.issuer`.
        : startFailure(connection.entry, error).replace("`expectedIssuer`", `oauth.issuer in ${connection.entry.source}`)
      const tail = stderrTail(connection.logFile, offset)
      return tail === "" ? base : `${base}; its stderr ended with:\n${tail}`
    }

    const onConnectionLost = (connection: Connection, client: Client, reason: string) => {
      if (closing || connection.client !== client || connection.retired.has(client)) return
      connection.retired.add(client)
      connection.client = undefined
      connection.state = "failed"
      connection.error = `connection lost: ${reason}`
      changed()
      fork(reconnectLoop(connection))
    }

    /** One connect attempt: transport, initialize, tool list. Leaves the connection connected or failed. */
    const connect = (connection: Connection): Effect.Effect<void> =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<void>()
        connection.inFlight = done
        const previous = connection.client
        if (previous !== undefined) {
          connection.retired.add(previous)
          connection.client = undefined
          yield* Effect.promise(() => previous.close().catch(() => undefined))
        }
        const config = connection.entry.config
        const helped = config.type === "http" || config.type === "sse" || config.type === "ws"
          ? config.headersHelper === undefined
            ? undefined
            : yield* runHeadersHelper(
              connection.entry,
              config,
              config.headersHelper,
              options.cwd,
              env,
              options.headersHelperTimeoutMs ?? HEADERS_HELPER_TIMEOUT_MS
            ).pipe(Effect.either)
          : undefined
        if (helped?._tag === "Left") {
          connection.state = "failed"
          connection.error = helped.left
          changed()
          return
        }
        const made = yield* Effect.try(() => makeTransport(connection, helped?.right ?? {})).pipe(Effect.either)
        if (made._tag === "Left") {
          connection.state = "failed"
          connection.error = messageOf(made.left.error)
          changed()
          return
        }
        const { logFd, offset, transport } = made.right
        // `applyDefaults`: the SDK fills the fields an accepted answer leaves out with the schema's defaults.
        const client = new Client(clientInfo, {
          capabilities: { elicitation: { form: { applyDefaults: true } }, roots: { listChanged: true } }
        })
        client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
          const params = request.params
          // Only form mode is declared, so the SDK refuses URL mode before this handler.
          if (params.mode === "url") return { action: "decline" }
          // The server cancelling its request (or the connection closing) aborts the signal: the question stops.
          return runElicitation(
            elicitation.elicit({
              server: connection.entry.name,
              message: params.message,
              requestedSchema: params.requestedSchema
            }).pipe(
              // An accept without content still gets the defaults (the SDK fills only a content object).
              Effect.map((answer) => answer.action === "accept" ? { ...answer, content: answer.content ?? {} } : answer)
            ),
            { signal: extra.signal }
          )
        })
        // A request the client declared no capability for (sampling above all: servers often ask anyway) gets
        // an error a model can act on: the SDK's bare "Method not found" is what the server's tool reports.
        // The SDK answers with the error's `code` and `message` (an McpError's message would carry its prefix).
        client.fallbackRequestHandler = (request) =>
          Promise.reject(Object.assign(
            new Error(
              request.method === "sampling/createMessage"
                ? "toolwright does not support MCP sampling (sampling/createMessage): it has no model to sample " +
                  "from, so a tool that needs one cannot run here"
                : `toolwright does not handle ${request.method} requests`
            ),
            { code: ErrorCode.MethodNotFound }
          ))
        client.setRequestHandler(ListRootsRequestSchema, () => ({
          roots: roots.map((directory) => ({ uri: pathToFileURL(directory).href, name: path.basename(directory) }))
        }))
        // Runs before the SDK's own dispatch (which keeps it), in the order messages arrive.
        transport.onmessage = (message) => {
          if (!("method" in message) || message.method !== "notifications/progress" || "id" in message) return
          const decoded = ProgressNotificationSchema.safeParse(message)
          if (!decoded.success) return
          const token = decoded.data.params.progressToken
          connection.progress.get(String(token))?.(decoded.data.params)
        }
        // A stdio server's MCP log messages join its stderr in its log file, where `mcp get` points.
        const logFile = connection.logFile
        if (connection.entry.config.type === "stdio" && logFile !== undefined) {
          client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
            const text = typeof params.data === "string" ? params.data : JSON.stringify(params.data)
            try {
              fs.appendFileSync(logFile, `[${params.level}]${params.logger === undefined ? "" : ` ${params.logger}:`} ${text}\n`)
            } catch {
              // A log line that cannot be written is not worth failing the server for.
            }
          })
        }
        // A stdio line that is not JSON-RPC (a banner printed without a newline swallows the answer after it)
        // reaches onerror as the parse error; if the handshake then times out, that is why.
        let stdoutNoise: string | undefined
        if (connection.entry.config.type === "stdio") {
          client.onerror = (error) => {
            if (error instanceof SyntaxError || (error instanceof Error && error.name === "ZodError")) {
              stdoutNoise ??= messageOf(error).replace(/\s+/g, " ").slice(0, 200)
            }
          }
        }
        const attempt = Effect.tryPromise((signal) =>
          client.connect(transport, { timeout: connectTimeoutMs, signal })
        ).pipe(
          Effect.flatMap(() => listTools(client)),
          Effect.timeoutFail({
            duration: Duration.millis(connectTimeoutMs),
            onTimeout: () => new ConnectTimeout(`did not answer within ${connectTimeoutMs} ms (MCP_TIMEOUT)`)
          }),
          Effect.either
        )
        const result = yield* attempt
        if (logFd !== undefined) fs.closeSync(logFd)
        if (result._tag === "Left") {
          const cause = Predicate.hasProperty(result.left, "error") ? result.left.error : result.left
          connection.retired.add(client)
          yield* Effect.promise(() => client.close().catch(() => undefined))
          connection.state = isAuthError(cause) ? "needs-auth" : "failed"
          connection.error = isAuthError(cause)
            ? `the server requires authentication (HTTP 401): ${messageOf(cause)}. ` +
              `Run \`toolwright mcp login ${connection.entry.name}\`, or give credentials in its headers.`
            : describeFailure(connection, cause, offset, stdoutNoise)
          changed()
          return
        }
        connection.client = client
        connection.pid = transport instanceof StdioClientTransport ? transport.pid ?? undefined : undefined
        connection.tools = result.right
        connection.resources = client.getServerCapabilities()?.resources !== undefined
        connection.state = "connected"
        connection.error = undefined
        const info = client.getServerVersion()
        connection.serverInfo = info === undefined ? undefined : { name: info.name, version: info.version }
        client.onclose = () => onConnectionLost(connection, client, "the server closed the connection")
        // Other errors come here too, such as the SDK not knowing our own progress tokens; they are not
        // connection failures.
        client.onerror = (error) => {
          // The SDK's stdio transport reads at most STDIO_DEFAULT_MAX_BUFFER_SIZE, then closes; it tells of it
          // only in words, and the calls then just see the connection closed.
          if (
            connection.entry.config.type === "stdio" && error instanceof Error &&
            error.message.startsWith("ReadBuffer exceeded maximum size")
          ) connection.oversized = true
          if (connection.entry.config.type !== "stdio" && isConnectionLost(error)) {
            // The SDK reports a failed send here before the ping rejects: say what broke, for the calls.
            if (connection.pinging && connection.client === client) connection.unresponsive = pingFailed(error)
            onConnectionLost(connection, client, messageOf(error))
            // Closing rejects every pending request now instead of leaving it to a timeout.
            void client.close().catch(() => undefined)
          }
        }
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          fork(relist(connection, client))
        })
        connection.unresponsive = undefined
        connection.oversized = false
        if (connection.entry.config.type === "http" || connection.entry.config.type === "sse") {
          fork(heartbeat(connection, client))
        }
        changed()
      }).pipe(
        Effect.ensuring(Effect.suspend(() => {
          const done = connection.inFlight
          connection.inFlight = undefined
          return done === undefined ? Effect.void : Deferred.succeed(done, undefined)
        }))
      )

    /**
     * Pings an HTTP/SSE server while calls are in flight. The transport cannot tell a frozen server (a
     * stopped process, a dropped network) from a slow call; an unanswered ping can. A server answering
     * the ping with an error is alive, and so is one whose proxy answers with an HTTP error status (429,
     * 502): the calls go on. Only a ping left unanswered or a broken connection gives up on it.
     */
    const heartbeat = (connection: Connection, client: Client): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (connection.client === client && !closing) {
          yield* Effect.sleep(Duration.millis(heartbeatPolicy.intervalMs))
          if (connection.client !== client || connection.progress.size === 0) continue
          connection.pinging = true
          const answer = yield* Effect.tryPromise((signal) =>
            client.ping({ signal, timeout: heartbeatPolicy.timeoutMs })
          ).pipe(Effect.either, Effect.ensuring(Effect.sync(() => {
            connection.pinging = false
          })))
          if (answer._tag === "Right") continue
          const error = answer.left.error
          const unanswered = error instanceof McpError && error.code === ErrorCode.RequestTimeout
          // Any other failure is an answer: a JSON-RPC error (-32601 from a server without ping), an HTTP
          // error status (429, 502 from a proxy).
          if (!unanswered && !isConnectionLost(error)) continue
          if (connection.client !== client) return
          const reason = unanswered
            ? `it did not answer a ping within ${heartbeatPolicy.timeoutMs} ms`
            : pingFailed(error)
          connection.unresponsive = reason
          onConnectionLost(connection, client, unanswered ? `${reason} (frozen or unreachable)` : reason)
          // Closing rejects the calls in flight now.
          yield* Effect.promise(() => client.close().catch(() => undefined))
        }
      })

    const reconnectLoop = (connection: Connection): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (connection.reconnecting || closing) return
        connection.reconnecting = true
        let delay = reconnectPolicy.initialDelayMs
        for (let attempt = 1; attempt <= reconnectPolicy.maxAttempts && !closing; attempt++) {
          yield* Effect.sleep(Duration.millis(delay))
          yield* connect(connection)
          if (connection.state === "connected" || connection.state === "needs-auth") break
          delay = Math.min(delay * 2, 30_000)
        }
      }).pipe(Effect.ensuring(Effect.sync(() => {
        connection.reconnecting = false
      })))

    const find = (name: string) => connections.find((connection) => connection.entry.name === name)

    const notConnected = (connection: Connection, toolName: string): McpToolCallError => {
      const name = connection.entry.name
      const message = connection.state === "needs-auth"
        ? `MCP server "${name}" needs authentication before ${toolName} can run: ${connection.error ?? "HTTP 401"}. ` +
          `Run \`toolwright mcp login ${name}\` (or add credentials to its headers in ${connection.entry.source}), then try again.`
        : `MCP server "${name}" is not connected, so ${toolName} cannot run: ${connection.error ?? "it is still connecting"}.` +
          (connection.reconnecting ? " It is reconnecting; try again shortly." : ` Check the server (toolwright mcp get ${name}).`)
      return new McpToolCallError({ server: name, tool: toolName, message })
    }

    /** One try of a call on the connection's current client: the SDK's result, or the error and the client. */
    const attempt = (
      connection: Connection,
      mcpToolName: string,
      toolName: string,
      args: Record<string, unknown>
    ): Effect.Effect<SdkCallResult, McpToolCallError | AttemptFailure, ToolProgress.ToolProgress> =>
      Effect.withFiberRuntime((fiber, status) => {
        const client = connection.client
        if (connection.state !== "connected" || client === undefined) return notConnected(connection, toolName)
        return Effect.async<SdkCallResult, AttemptFailure>((resume) => new PendingCall(
          connection,
          client,
          fiber,
          status.runtimeFlags,
          toolTimeoutMs,
          resume
        ).start(mcpToolName, args))
      })

    /**
     * A call to a server tool. On every call's path, so the way through is kept short: one fiber-runtime
     * read, one `Effect.async` (the call's listeners, timer and cancellation are plain callbacks, see
     * `PendingCall`) and one `matchEffect`; the failure cases (reconnecting, 401, a forgotten session, a
     * timeout) are Effects built only when a call fails.
     */
    const callTool = (
      connection: Connection,
      mcpToolName: string,
      toolName: string,
      args: Record<string, unknown>,
      context: ToolUseContextModule.ToolUseContext
    ): Effect.Effect<Message.ToolResultContent, McpToolCallError, ToolProgress.ToolProgress> => {
      const finish = (result: SdkCallResult) => succeeded(connection, mcpToolName, toolName, context, result)
      const first = attempt(connection, mcpToolName, toolName, args)
      const call = Effect.matchEffect(first, {
        onSuccess: finish,
        onFailure: (failure) => failed(connection, toolName, failure, () => Effect.flatMap(first, finish))
      })
      // Still connecting (start-up, a reconnect): wait for that attempt, bounded, before trying.
      return Effect.suspend(() =>
        connection.state !== "connected" && connection.inFlight !== undefined
          ? Effect.zipRight(
            Deferred.await(connection.inFlight).pipe(Effect.timeout(Duration.millis(connectTimeoutMs)), Effect.ignore),
            call
          )
          : call
      )
    }

    const succeeded = (
      connection: Connection,
      mcpToolName: string,
      toolName: string,
      context: ToolUseContextModule.ToolUseContext,
      result: SdkCallResult
    ): Effect.Effect<Message.ToolResultContent, McpToolCallError> => {
      const serverName = connection.entry.name
      // The SDK has checked the result against SdkCallResultSchema. Servers on the 2024-10-07 protocol
      // answer `{ toolResult }`, which that schema keeps beside an empty content list: that is the result.
      const checked = result as McpContent.CallResult
      const normalized: McpContent.CallResult = "toolResult" in result && (checked.content ?? []).length === 0 &&
          checked.structuredContent === undefined
        ? { content: [], structuredContent: result.toolResult, isError: false }
        : checked
      if (normalized.isError === true) {
        return Effect.fail(
          new McpToolCallError({
            server: serverName,
            tool: toolName,
            message: McpContent.errorText(normalized, serverName, mcpToolName)
          })
        )
      }
      return Effect.succeed(McpContent.toToolResultContent(normalized, serverName, new SessionBlobSink(context)))
    }

    const failed = (
      connection: Connection,
      toolName: string,
      failure: McpToolCallError | AttemptFailure,
      again: () => Effect.Effect<Message.ToolResultContent, McpToolCallError | AttemptFailure, ToolProgress.ToolProgress>
    ): Effect.Effect<Message.ToolResultContent, McpToolCallError, ToolProgress.ToolProgress> =>
      Effect.gen(function*() {
        if (failure instanceof McpToolCallError) return yield* failure
        const { client, error } = failure
        const status = httpStatus(error)
        if (status === 401) {
          connection.retired.add(client)
          connection.client = undefined
          connection.state = "needs-auth"
          connection.error = `the server answered HTTP 401: ${messageOf(error)}`
          changed()
          void client.close().catch(() => undefined)
          return yield* notConnected(connection, toolName)
        }
        if ((status === 404 || status === 400) && connection.entry.config.type === "http") {
          // The server forgot our session (it restarted): initialise a new one and send the call once more.
          yield* connect(connection)
          return yield* Effect.catchIf(
            again(),
            (second): second is AttemptFailure => !(second instanceof McpToolCallError),
            (second) => callFailure(connection, toolName, second.error)
          )
        }
        return yield* callFailure(connection, toolName, error)
      })
    const callFailure = (connection: Connection, toolName: string, error: unknown) => {
      const name = connection.entry.name
      let message: string
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        message = `MCP server "${name}" did not answer ${toolName} within ${toolTimeoutMs} ms (MCP_TOOL_TIMEOUT).`
      } else if (
        connection.insufficientScope !== undefined &&
        (connection.entry.config.type === "http" || connection.entry.config.type === "sse")
      ) {
        const scope = connection.insufficientScope
        const config = connection.entry.config
        connection.insufficientScope = undefined
        const machine = config.oauth?.grantType === "client_credentials"
        // `toolwright mcp login` requests this scope next time instead of refreshing the narrower token.
        if (!machine) credentials.update(name, config.url, (current) => ({ ...current, stepUpScope: scope }))
        message = `MCP server "${name}" refused ${toolName}: it needs the OAuth scope "${scope}", which the current ` +
          `token lacks. ` +
          (machine
            ? `Add it to oauth.scope of "${name}" in ${connection.entry.source}, then try again.`
            : `Run \`toolwright mcp login ${name}\` to grant it, then try again.`)
      } else if (connection.unresponsive !== undefined) {
        message = `MCP server "${name}" stopped answering while ${toolName} was running: ${connection.unresponsive}. ` +
          (reconnectPolicy.maxAttempts > 0
            ? `toolwright is reconnecting to it; try again shortly, or check the server (toolwright mcp get ${name}).`
            : `This session does not reconnect to servers (reconnect attempts: 0); check the server (toolwright mcp ` +
              `get ${name}) and start a new session.`)
      } else if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && connection.oversized) {
        // Which call's answer it was is not known: every call in flight on the connection ends with this.
        message = `MCP server "${name}" sent a message larger than ${STDIO_DEFAULT_MAX_BUFFER_SIZE / 1024 / 1024} MB, ` +
          `the most toolwright reads from a stdio server, while ${toolName} was running, so toolwright closed the ` +
          `connection` + (reconnectPolicy.maxAttempts > 0 ? " (and starts the server again)" : "") +
          `, ending every call in flight on it. If ${toolName}'s answer can be that large, ask it for less at a ` +
          `time (a smaller range, a filter); otherwise try it again.`
      } else if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        const tail = stderrTail(connection.logFile, connection.logOffset).split("\n").slice(-3).join("\n")
        message = `MCP server "${name}" closed the connection while ${toolName} was running.` +
          (connection.entry.config.type === "stdio" && tail !== "" ? ` Its stderr ended with:\n${tail}` : "")
      } else if (error instanceof McpError) {
        message = `MCP server "${name}" refused ${toolName}: ${error.message}`
      } else {
        message = `MCP server "${name}" failed during ${toolName}: ${messageOf(error)}`
      }
      return new McpToolCallError({ server: name, tool: toolName, message })
    }

    const makeTool = (connection: Connection, definition: McpTool, name: string): Tool.Any => {
      const serverName = connection.entry.name
      const annotations = definition.annotations ?? {}
      const readOnly = annotations.readOnlyHint === true
      const destructive = annotations.destructiveHint === true
      const description = definition.description ?? `${definition.name} (MCP tool of server ${serverName})`
      const schema: Tool.JsonSchema = definition.inputSchema
      // The SDK refuses such a call itself, in words for its own users ("use client.experimental.tasks…").
      const taskOnly = definition.execution?.taskSupport === "required"
        ? new McpToolCallError({
          server: serverName,
          tool: name,
          message: `${name} cannot run: MCP server "${serverName}" runs ${definition.name} only as a task (MCP ` +
            `tasks, execution.taskSupport "required"), which toolwright does not support. Do not retry it; use ` +
            `another tool.`
        })
        : undefined
      let validator: Validator | undefined
      const tool = Tool.make<string, typeof InputRecord, Message.ToolResultContent, ToolProgress.ToolProgress>({
        name,
        description: description.length > MAX_DESCRIPTION_CHARS
          ? `${description.slice(0, MAX_DESCRIPTION_CHARS)}… [truncated]`
          : description,
        prompt: description.length > MAX_DESCRIPTION_CHARS
          ? `${description.slice(0, MAX_DESCRIPTION_CHARS)}… [truncated]`
          : description,
        input: InputRecord,
        inputJsonSchema: schema,
        source: "mcp",
        mcpInfo: { serverName, toolName: definition.name },
        maxResultSizeChars: MCP_MAX_RESULT_SIZE_CHARS,
        isReadOnly: () => readOnly,
        isConcurrencySafe: () => readOnly,
        isDestructive: () => destructive,
        userFacingName: () => `${serverName} - ${annotations.title ?? definition.title ?? definition.name} (MCP)`,
        toClassifierInput: (input) => `${definition.name} ${JSON.stringify(input)}`,
        validateInput: (input) =>
          Effect.suspend(() => {
            validator ??= compile(schema)
            const issues = validator(input)
            return issues.length === 0
              ? Effect.void
              : Effect.fail(new ToolErrors.ToolError({ message: InputValidator.formatValidationMessage(name, issues) }))
          }),
        call: taskOnly === undefined
          ? (input, context) => callTool(connection, definition.name, name, input, context)
          : () => Effect.fail(taskOnly),
        mapToolResult: (output) => output
      })
      return tool
    }

    /** A server ListMcpResourcesTool or ReadMcpResourceTool names, if it can be asked for resources now. */
    const resourceServer = (
      name: string,
      toolName: string
    ): Effect.Effect<{ readonly connection: Connection; readonly client: Client }, McpToolCallError> => {
      const connection = find(name)
      if (connection === undefined || !connection.resources) {
        const offering = connections.filter((candidate) => candidate.resources).map((candidate) => candidate.entry.name)
        return new McpToolCallError({
          server: name,
          tool: toolName,
          message: `${connection === undefined ? `No MCP server is named "${name}"` : `MCP server "${name}" offers no resources`}. ` +
            (offering.length === 0
              ? "No configured server offers resources."
              : `Servers with resources: ${offering.join(", ")}.`)
        })
      }
      const client = connection.client
      if (connection.state !== "connected" || client === undefined) return notConnected(connection, toolName)
      return Effect.succeed({ connection, client })
    }

    const listResources = (connection: Connection, client: Client) =>
      Effect.tryPromise(async () => {
        const found: Array<McpResourceTools.Resource> = []
        let cursor: string | undefined
        do {
          const page = await client.listResources(cursor === undefined ? undefined : { cursor })
          for (const resource of page.resources) {
            found.push({
              uri: resource.uri,
              name: resource.name,
              ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType }),
              ...(resource.description === undefined ? {} : { description: resource.description }),
              server: connection.entry.name
            })
          }
          cursor = page.nextCursor
        } while (cursor !== undefined)
        return found
      }).pipe(Effect.mapError((failure) => callFailure(connection, McpResourceTools.LIST_TOOL_NAME, failure.error)))

    const resourceTools = McpResourceTools.make({
      list: (server) =>
        server !== undefined
          ? Effect.flatMap(
            resourceServer(server, McpResourceTools.LIST_TOOL_NAME),
            ({ client, connection }) =>
              Effect.map(listResources(connection, client), (resources) => ({ resources, unavailable: [] }))
          )
          // Every server: one that cannot answer now is noted rather than failing the others' list.
          : Effect.forEach(
            connections.filter((connection) => connection.resources),
            (connection) => {
              const client = connection.client
              return connection.state !== "connected" || client === undefined
                ? Effect.succeed({
                  resources: [],
                  unavailable: [{ server: connection.entry.name, reason: connection.error ?? `it is ${connection.state}` }]
                })
                : listResources(connection, client).pipe(
                  Effect.map((resources) => ({ resources, unavailable: [] })),
                  Effect.catchAll((failure) =>
                    Effect.succeed({
                      resources: [],
                      unavailable: [{ server: connection.entry.name, reason: failure.message }]
                    })
                  )
                )
            },
            { concurrency: "unbounded" }
          ).pipe(Effect.map((lists) => ({
            resources: lists.flatMap((list) => list.resources),
            unavailable: lists.flatMap((list) => list.unavailable)
          }))),
      read: (server, uri, context) =>
        Effect.flatMap(resourceServer(server, McpResourceTools.READ_TOOL_NAME), ({ client, connection }) =>
          Effect.tryPromise(() => client.readResource({ uri })).pipe(
            Effect.mapError((failure) => callFailure(connection, McpResourceTools.READ_TOOL_NAME, failure.error)),
            Effect.map((result) => McpContent.resourceContentsText(result.contents, new SessionBlobSink(context)))
          ))
    }).map((tool) => ({ serverName: "", tool }))

    const currentTools = (): ReadonlyArray<ToolEntry> => {
      if (cachedVersion === version) return cachedTools
      // A server that dropped or needs auth keeps its last tools: a call then says why it cannot run,
      // which tells the model more than the tool vanishing would.
      const live = connections.filter((connection) => connection.state !== "pending")
      const names = McpToolName.assign(
        live.flatMap((connection) =>
          connection.tools.map((tool) => ({ serverName: connection.entry.name, toolName: tool.name }))
        )
      )
      cachedTools = live.flatMap((connection) =>
        connection.tools.map((definition) => ({
          serverName: connection.entry.name,
          tool: makeTool(
            connection,
            definition,
            names.get(McpToolName.assignKey(connection.entry.name, definition.name)) ??
              McpToolName.make(connection.entry.name, definition.name)
          )
        }))
      )
      if (live.some((connection) => connection.resources)) cachedTools = [...cachedTools, ...resourceTools]
      cachedVersion = version
      return cachedTools
    }

    const status = (connection: Connection): ServerStatus => ({
      name: connection.entry.name,
      type: connection.entry.config.type,
      source: connection.entry.source,
      state: connection.state,
      error: connection.error,
      toolCount: connection.tools.length,
      serverInfo: connection.serverInfo,
      logFile: connection.logFile,
      pid: connection.state === "connected" ? connection.pid : undefined,
      config: connection.entry.config
    })

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        yield* Effect.forEach(
          connections,
          (connection) =>
            Effect.promise(async () => {
              const client = connection.client
              if (client === undefined) return
              connection.retired.add(client)
              connection.client = undefined
              await client.close().catch(() => undefined)
            }),
          { concurrency: "unbounded", discard: true }
        )
      })
    )

    yield* Effect.forEach(connections, connect, { concurrency: "unbounded", discard: true })

    const service: Service = {
      servers: () => [
        ...connections.map(status),
        ...(options.disabledServers ?? []).map((server): ServerStatus => ({
          name: server.name,
          type: server.config?.type,
          source: server.source,
          state: "disabled",
          error: undefined,
          toolCount: 0,
          serverInfo: undefined,
          logFile: undefined,
          pid: undefined,
          config: server.config,
          disabledBy: server.disabledBy
        })),
        ...configErrors.map((error): ServerStatus => ({
          name: error.server,
          type: undefined,
          source: error.source,
          state: "failed",
          error: error.message,
          toolCount: 0,
          serverInfo: undefined,
          logFile: undefined,
          pid: undefined,
          config: undefined
        }))
      ],
      tools: () => currentTools().map((entry) => entry.tool),
      version: () => version,
      reconnect: (name) =>
        Effect.gen(function*() {
          const connection = find(name)
          if (connection === undefined) {
            return yield* new McpServerNotFound({
              server: name,
              message: `No MCP server named "${name}" is configured. Run \`toolwright mcp list\` to see them.`
            })
          }
          yield* connect(connection)
          return status(connection)
        }),
      setRoots: (directories) =>
        Effect.promise(async () => {
          roots = [...directories]
          await Promise.all(
            connections.map((connection) => connection.client?.sendRootsListChanged().catch(() => undefined))
          )
        })
    }
    return service
  })

/** A manager over the given servers. */
export const layer = (options: Options): Layer.Layer<McpClientManager> =>
  Layer.scoped(McpClientManager, make(options))

/**
 * A manager over the `.mcp.json` of `cwd` plus the `mcpServers` of settings files (later files win on a
 * name clash); the `.mcp.json` servers the settings' `disabledMcpjsonServers` name are listed as disabled and
 * not connected. A file that cannot be read shows up as a failed entry naming it: nothing is silently ignored.
 */
export const layerProject = (
  options: Omit<Options, "servers"> & { readonly settingsFiles?: ReadonlyArray<string> }
): Layer.Layer<McpClientManager> =>
  Layer.scoped(
    McpClientManager,
    Effect.gen(function*() {
      const env = options.env ?? process.env
      const project = yield* McpConfig.loadProjectServers(options.cwd, env).pipe(
        Effect.catchAll((error) =>
          Effect.succeed<ParsedServers>({
            servers: [],
            errors: [
              new McpConfig.McpConfigError({
                server: "(.mcp.json)",
                field: "(file)",
                source: error.source,
                message: error.message
              })
            ]
          })
        )
      )
      const settings = yield* McpConfig.loadSettingsServers(options.settingsFiles ?? [], env)
      const disabled = McpConfig.disabledProjectServers(options.settingsFiles ?? [])
      const enabled: ParsedServers = {
        servers: project.servers.filter((server) => !disabled.has(server.name)),
        errors: project.errors.filter((error) => !disabled.has(error.server))
      }
      // A name the settings define themselves is theirs, and runs: only the .mcp.json entry is off.
      const settingsNames = new Set(settings.flatMap((source) => [
        ...source.servers.map((server) => server.name),
        ...source.errors.map((error) => error.server)
      ]))
      const off = (name: string) => settingsNames.has(name) ? undefined : disabled.get(name)
      const disabledServers: Array<DisabledServer> = []
      for (const server of project.servers) {
        const disabledBy = off(server.name)
        if (disabledBy !== undefined) disabledServers.push({ ...server, disabledBy })
      }
      for (const error of project.errors) {
        const disabledBy = off(error.server)
        if (disabledBy !== undefined) {
          disabledServers.push({ name: error.server, source: error.source, config: undefined, disabledBy })
        }
      }
      return yield* make({ ...options, servers: McpConfig.mergeServers([enabled, ...settings]), disabledServers })
    })
  )

/** A manager with no servers: for runtimes that do not load MCP configuration. */
export const layerEmpty: Layer.Layer<McpClientManager> = layer({
  servers: { servers: [], errors: [] },
  cwd: process.cwd()
})

/** The status of one server. */
export const serverStatus = (name: string) =>
  Effect.flatMap(McpClientManager, (manager) =>
    Option.match(Option.fromNullable(manager.servers().find((server) => server.name === name)), {
      onNone: () =>
        Effect.fail(
          new McpServerNotFound({
            server: name,
            message: `No MCP server named "${name}" is configured. Run \`toolwright mcp list\` to see them.`
          })
        ),
      onSome: Effect.succeed
    }))
