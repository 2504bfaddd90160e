/**
 * `toolwright mcp …`: the MCP servers a project uses (`list`, `get`, `add`, `remove`, editing its
 * `.mcp.json` in Claude Code's format) and `serve`, which offers toolwright's own tools to MCP clients.
 */
import { Args, Command, Options } from "@effect/cli"
import { ToolExecutor, ToolRuntime } from "@toolwright/core"
import { McpClientManager, McpConfig, McpOAuth, McpServer } from "@toolwright/mcp"
import { Console, Effect, Layer, Logger, Option } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as CliOptions from "../CliOptions.js"
import { UsageError } from "../CliError.js"
import * as FileLock from "../FileLock.js"
import {
  makeSession,
  mcpEnvironment,
  mcpLayer,
  mcpSettingsFiles,
  resultStages,
  servedRegistryLayerFor,
  settingsStages,
  withPermissionRequestHooks
} from "../CliRuntime.js"

const projectDir = (cwd: Option.Option<string>) => path.resolve(Option.getOrElse(cwd, () => process.cwd()))

/** Where a disabled server is turned off: the settings files whose `disabledMcpjsonServers` list it. */
const disabledWhere = (server: McpClientManager.ServerStatus) =>
  `disabled by disabledMcpjsonServers in ${(server.disabledBy ?? []).join(" and ")}`

const describeConfig = (config: McpConfig.ServerConfig | undefined): string => {
  if (config === undefined) return ""
  if (config.type === "stdio") return [config.command, ...config.args].join(" ")
  if (config.type === "sdk") return "(in-process)"
  return config.url
}


/**
 * `KEY=VALUE` (`--env`) or `Name: value` (`--header`) items as a record; else the usage error for the first
 * item without a name or the first name given twice, which would silently keep only the last value.
 */
const pairs = (items: ReadonlyArray<string>, kind: "env" | "header"): Record<string, string> | UsageError => {
  const record: Record<string, string> = {}
  const seen = new Map<string, string>()
  for (const item of items) {
    const at = item.indexOf(kind === "env" ? "=" : ":")
    if (at <= 0) {
      return new UsageError({
        message: kind === "env"
          ? `--env ${JSON.stringify(item)} is not KEY=VALUE, e.g. --env API_KEY=\${API_KEY}`
          : `--header ${JSON.stringify(item)} is not "Name: value", e.g. --header "Authorization: Bearer \${TOKEN}"`
      })
    }
    const name = kind === "env" ? item.slice(0, at) : item.slice(0, at).trim()
    // HTTP header names ignore case; environment variable names do not.
    const key = kind === "env" ? name : name.toLowerCase()
    const earlier = seen.get(key)
    if (earlier !== undefined) {
      return new UsageError({
        message: kind === "env"
          ? `--env ${JSON.stringify(name)} is given more than once: give each variable once.`
          : `--header ${JSON.stringify(name)} is given more than once${
            earlier === name ? "" : ` (as ${JSON.stringify(earlier)}; header names ignore case)`
          }: give each header once.`
      })
    }
    seen.set(key, name)
    record[name] = kind === "env" ? item.slice(at + 1) : item.slice(at + 1).trim()
  }
  return record
}

/**
 * Edits `.mcp.json` through `update` holding its lock: `mcp add` and `mcp remove` each read, change and
 * rewrite the file, so two run at once would otherwise keep only one of their changes.
 */
const editProjectFile = (
  cwd: string,
  update: (servers: Record<string, unknown>) => Effect.Effect<Record<string, unknown>, McpConfig.McpConfigFileError>
): Effect.Effect<string, UsageError> =>
  FileLock.withLock(McpConfig.projectFile(cwd), McpConfig.updateProjectFile(cwd, update)).pipe(
    Effect.mapError((error) => new UsageError({ message: error.message }))
  )

export const list = Command.make(
  "list",
  { json: CliOptions.json, cwd: CliOptions.cwd, settings: CliOptions.settings },
  ({ cwd, json, settings }) =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const servers = manager.servers()
      if (json) {
        yield* Console.log(JSON.stringify(
          servers.map((server) => ({
            name: server.name,
            type: server.type,
            state: server.state,
            tools: server.toolCount,
            error: server.error,
            source: server.source,
            target: describeConfig(server.config),
            disabledBy: server.disabledBy
          })),
          null,
          2
        ))
        return
      }
      if (servers.length === 0) {
        yield* Console.log(
          `No MCP servers configured for ${projectDir(cwd)}. Add one with: toolwright mcp add NAME -- COMMAND ARGS...`
        )
        return
      }
      const width = Math.max(4, ...servers.map((server) => server.name.length))
      yield* Console.log(`${"NAME".padEnd(width)}  TYPE   STATE       TOOLS  TARGET`)
      for (const server of servers) {
        yield* Console.log(
          `${server.name.padEnd(width)}  ${(server.type ?? "-").padEnd(5)}  ${server.state.padEnd(10)}  ${
            String(server.toolCount).padStart(5)
          }  ${describeConfig(server.config)}`
        )
        if (server.error !== undefined) yield* Console.log(`${" ".repeat(width)}  ↳ ${server.error.replace(/\n/g, "\n    ")}`)
        if (server.state === "disabled") yield* Console.log(`${" ".repeat(width)}  ↳ ${disabledWhere(server)}`)
      }
    }).pipe(Effect.provide(mcpLayer({ cwd, settings }, false)))
).pipe(Command.withDescription("List the configured MCP servers with their state and tool counts"))

const REDACTED = "(redacted)"

/**
 * A server's configuration without the values of its env, headers and client secret: they are expanded from
 * ${VAR}s and often hold tokens, which `mcp get --json` output (logs, bug reports) must not carry. The text
 * output names the keys only, for the same reason.
 */
const redacted = (config: McpConfig.ServerConfig | undefined) => {
  const hide = (values: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.keys(values).map((key) => [key, REDACTED]))
  if (config === undefined || config.type === "sdk") return config
  if (config.type === "stdio") return { ...config, env: hide(config.env) }
  const oauth = config.oauth?.clientSecret === undefined ? config.oauth : { ...config.oauth, clientSecret: REDACTED }
  return { ...config, headers: hide(config.headers), ...(oauth === undefined ? {} : { oauth }) }
}

export const get = Command.make(
  "get",
  { name: Args.text({ name: "NAME" }), json: CliOptions.json, cwd: CliOptions.cwd, settings: CliOptions.settings },
  ({ cwd, json, name, settings }) =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const server = manager.servers().find((entry) => entry.name === name)
      if (server === undefined) {
        return yield* new UsageError({
          message: `No MCP server named "${name}" is configured. Run \`toolwright mcp list\` to see them.`
        })
      }
      const tools = manager.tools().filter((tool) => tool.mcpInfo?.serverName === name)
      if (json) {
        yield* Console.log(
          JSON.stringify({ ...server, config: redacted(server.config), tools: tools.map((tool) => tool.name) }, null, 2)
        )
        return
      }
      const lines = [
        `${server.name}:`,
        `  Source: ${server.source}`,
        `  Type: ${server.type ?? "-"}`,
        ...(server.config?.type === "stdio"
          ? [
            `  Command: ${server.config.command}`,
            `  Args: ${server.config.args.join(" ")}`,
            ...(Object.keys(server.config.env).length > 0 ? [`  Env: ${Object.keys(server.config.env).join(", ")}`] : [])
          ]
          : server.config !== undefined && server.config.type !== "sdk"
          ? [
            `  URL: ${server.config.url}`,
            ...Object.keys(server.config.headers).map((key) => `  Header: ${key}`),
            // The command, as written; what it prints is headers, often a token, and is never shown.
            ...(server.config.headersHelper === undefined ? [] : [`  Headers helper: ${server.config.headersHelper}`])
          ]
          : []),
        ...(server.state === "disabled"
          ? [
            `  State: ${disabledWhere(server)}: remove "${server.name}" from ${
              (server.disabledBy ?? []).length > 1 ? "those lists" : "that list"
            } to enable it`
          ]
          : [`  State: ${server.state}${server.error === undefined ? "" : ` (${server.error})`}`]),
        ...(server.serverInfo !== undefined ? [`  Server: ${server.serverInfo.name} ${server.serverInfo.version}`] : []),
        ...(server.logFile !== undefined ? [`  Log: ${server.logFile}`] : []),
        // A disabled server was never asked for its tools.
        ...(server.state === "disabled" ? [] : [
          `  Tools (${tools.length}):`,
          ...tools.map((tool) => `    ${tool.name}${tool.isReadOnly({}) ? " (read-only)" : ""}`)
        ])
      ]
      yield* Console.log(lines.join("\n"))
    }).pipe(Effect.provide(mcpLayer({ cwd, settings }, false)))
).pipe(Command.withDescription("Show one MCP server: configuration, state, log file and tools"))

const transport = Options.choice("transport", ["stdio", "sse", "http", "ws"]).pipe(
  Options.withDescription("How to reach the server (default: stdio with a command, ws with a ws:// or wss:// --url, else http)"),
  Options.optional
)

export const add = Command.make(
  "add",
  {
    name: Args.text({ name: "NAME" }),
    transport,
    url: Options.text("url").pipe(Options.withDescription("The server's URL (sse, http, ws)"), Options.optional),
    env: Options.text("env").pipe(Options.withDescription("KEY=VALUE for a stdio server (repeatable)"), Options.repeated),
    header: Options.text("header").pipe(
      Options.withDescription("\"Name: value\" sent to a remote server"),
      Options.repeated
    ),
    cwd: CliOptions.cwd,
    command: Args.text({ name: "COMMAND" }).pipe(Args.repeated)
  },
  (options) =>
    Effect.gen(function*() {
      if (!/^[A-Za-z0-9_-]+$/.test(options.name)) {
        // As Claude Code's `mcp add`: the name becomes part of every tool name (mcp__NAME__tool) and of rules.
        return yield* new UsageError({
          message: `${JSON.stringify(options.name)} is not a valid MCP server name: use only letters, digits, ` +
            `hyphens and underscores (it becomes part of its tools' names, mcp__NAME__tool).`
        })
      }
      // Without --transport, as .mcp.json reads an entry without "type": a ws:// or wss:// URL is WebSocket.
      const type = Option.getOrElse(
        options.transport,
        () => Option.isNone(options.url) ? "stdio" : /^wss?:/i.test(options.url.value) ? "ws" : "http"
      )
      let entry: Record<string, unknown>
      if (type === "stdio") {
        if (Option.isSome(options.url)) {
          return yield* new UsageError({ message: "A stdio server takes a command, not --url: use --transport http." })
        }
        const [command, ...args] = options.command
        if (command === undefined) {
          return yield* new UsageError({
            message: `Give the command that starts the server after --, e.g. toolwright mcp add ${options.name} -- npx -y @modelcontextprotocol/server-everything`
          })
        }
        // Dropping a flag that does not apply would write a server that silently lacks it.
        if (options.header.length > 0) {
          return yield* new UsageError({
            message: "--header is for remote servers (--url); give a stdio server what it needs with --env KEY=VALUE."
          })
        }
        entry = { type: "stdio", command, args }
        if (options.env.length > 0) {
          const env = pairs(options.env, "env")
          if (env instanceof UsageError) return yield* env
          entry.env = env
        }
      } else {
        const server = `${type === "ws" ? "A" : "An"} ${type} server`
        if (Option.isNone(options.url)) {
          return yield* new UsageError({ message: `${server} needs --url, e.g. --url https://example.com/mcp` })
        }
        if (options.command.length > 0) {
          return yield* new UsageError({ message: `${server} takes --url, not a command.` })
        }
        if (options.env.length > 0) {
          return yield* new UsageError({
            message: `--env is for stdio servers, which toolwright starts; send ${server.toLowerCase()} what it needs ` +
              `with --header "Name: value".`
          })
        }
        entry = { type, url: options.url.value }
        if (options.header.length > 0) {
          const headers = pairs(options.header, "header")
          if (headers instanceof UsageError) return yield* headers
          entry.headers = headers
        }
      }
      // Checked as it will be read, with every ${VAR} treated as set: variables may be set later.
      const anyVariable = new Proxy<Record<string, string | undefined>>({}, { get: () => "x" })
      const checked = McpConfig.parseEntry(options.name, entry, ".mcp.json", anyVariable)
      if (checked instanceof McpConfig.McpConfigError) return yield* new UsageError({ message: checked.message })
      const cwd = projectDir(options.cwd)
      const file = yield* editProjectFile(cwd, (servers) =>
        options.name in servers
          ? Effect.fail(
            new McpConfig.McpConfigFileError({
              source: McpConfig.projectFile(cwd),
              message: `An MCP server named "${options.name}" already exists in ${
                McpConfig.projectFile(cwd)
              }. Remove it first with: toolwright mcp remove ${options.name}`
            })
          )
          : Effect.succeed({ ...servers, [options.name]: entry }))
      yield* Console.log(`Added ${type} MCP server "${options.name}" to ${file}`)
      const shadowing = yield* settingsDefining(cwd, options.name)
      if (shadowing.length > 0) {
        yield* Console.error(
          `warning: ${shadowing.at(-1)} also defines MCP server "${options.name}" in mcpServers, and settings take ` +
            `precedence over .mcp.json: remove it there for this entry to be used.`
        )
      }
    })
).pipe(Command.withDescription("Add a server to the project's .mcp.json: add NAME -- COMMAND ARGS... or add NAME --url URL"))

export const remove = Command.make(
  "remove",
  { name: Args.text({ name: "NAME" }), cwd: CliOptions.cwd },
  ({ cwd, name }) =>
    Effect.gen(function*() {
      const dir = projectDir(cwd)
      const file = yield* editProjectFile(dir, (servers) => {
        if (!(name in servers)) {
          return Effect.flatMap(settingsDefining(dir, name), (defining) =>
            Effect.fail(
              new McpConfig.McpConfigFileError({
                source: McpConfig.projectFile(dir),
                message: `No MCP server named "${name}" in ${McpConfig.projectFile(dir)}.` + (defining.length > 0
                  ? ` It is configured in ${defining.join(" and ")}: remove it from mcpServers there.`
                  : " Run `toolwright mcp list` to see the configured servers.")
              })
            ))
        }
        const { [name]: _, ...rest } = servers
        return Effect.succeed(rest)
      })
      yield* Console.log(`Removed MCP server "${name}" from ${file}`)
    })
).pipe(Command.withDescription("Remove a server from the project's .mcp.json"))

/** The settings files (no --settings) whose `mcpServers` name `name`: they take precedence over `.mcp.json`. */
const settingsDefining = (dir: string, name: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(McpConfig.loadSettingsServers(mcpSettingsFiles(dir, Option.none())), (sources) =>
    sources.flatMap((source) => [
      ...source.servers.filter((server) => server.name === name).map((server) => server.source),
      ...source.errors.filter((error) => error.server === name).map((error) => error.source)
    ]))

/** Opens a URL in the user's browser when there is one; the URL is printed either way. */
const openBrowser = (url: string) => {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open"
  try {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore" })
    child.on("error", () => undefined)
    child.unref()
  } catch {
    // No browser here: the printed URL is the way.
  }
}

export const login = Command.make(
  "login",
  { name: Args.text({ name: "NAME" }), cwd: CliOptions.cwd, settings: CliOptions.settings },
  ({ cwd, name, settings }) =>
    Effect.gen(function*() {
      const dir = projectDir(cwd)
      // The entry as run and exec read it: a ${VAR} from settings' env gives the URL they connect to, whose login
      // this must be.
      const { env } = yield* mcpEnvironment(dir, settings)
      const project = yield* McpConfig.loadProjectServers(dir, env).pipe(
        Effect.mapError((error) => new UsageError({ message: error.message }))
      )
      const fromSettings = yield* McpConfig.loadSettingsServers(mcpSettingsFiles(dir, settings), env)
      const merged = McpConfig.mergeServers([project, ...fromSettings])
      const entry = merged.servers.find((server) => server.name === name)
      if (entry === undefined) {
        const broken = merged.errors.find((error) => error.server === name)
        return yield* new UsageError({
          message: broken?.message ?? `No MCP server named "${name}" is configured. Run \`toolwright mcp list\` to see them.`
        })
      }
      if (entry.config.type !== "http" && entry.config.type !== "sse") {
        return yield* new UsageError({ message: `MCP server "${name}" is a ${entry.config.type} server: only http and sse servers log in.` })
      }
      const store = new McpOAuth.CredentialsStore()
      yield* McpOAuth.login({
        serverName: name,
        config: entry.config,
        store,
        onAuthorizationUrl: (url) => {
          process.stderr.write(`Open this URL to log in to "${name}" (opening your browser):\n${url.toString()}\n`)
          openBrowser(url.toString())
        }
      }).pipe(Effect.mapError((error) => new UsageError({ message: error.message })))
      yield* Console.log(`Logged in to MCP server "${name}"; credentials saved in ${store.file}`)
    })
).pipe(Command.withDescription("Log in to a remote MCP server with OAuth (browser, PKCE, loopback redirect)"))

/** The served endpoint as a URL: an IPv6 address goes in brackets. */
const serveUrl = (host: string, port: number) =>
  `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}/mcp`

export const serve = Command.make(
  "serve",
  {
    transport: Options.choice("transport", ["stdio", "http"]).pipe(
      Options.withDescription("stdio (default) or streamable HTTP"),
      Options.withDefault("stdio" as const)
    ),
    port: Options.integer("port").pipe(
      Options.withDescription("The HTTP port (default: a free port, printed on stderr)"),
      Options.optional
    ),
    host: Options.text("host").pipe(
      Options.withDescription("The loopback address to bind: 127.0.0.1 (default), ::1 or localhost; nothing else is served"),
      Options.optional
    ),
    cwd: CliOptions.cwd,
    settings: CliOptions.settings,
    permissionMode: CliOptions.permissionMode
  },
  (options) =>
    Effect.gen(function*() {
      if (options.transport === "stdio" && (Option.isSome(options.port) || Option.isSome(options.host))) {
        // Ignoring them would leave the user waiting for an HTTP server that never listens.
        return yield* new UsageError({
          message: "--port and --host are for --transport http; over stdio (the default) the client starts " +
            "toolwright mcp serve itself. Add --transport http to serve over HTTP."
        })
      }
      const port = Option.getOrElse(options.port, () => 0)
      if (port < 0 || port > 65535) {
        return yield* new UsageError({
          message: `--port must be a port number from 1 to 65535 (or 0 for a free port), not ${port}.`
        })
      }
      const host = Option.getOrElse(options.host, () => "127.0.0.1")
      const session = yield* makeSession(options)
      if (options.transport === "stdio") return yield* McpServer.serveStdio({ context: session.context })
      return yield* McpServer.serveHttp({
        context: session.context,
        port,
        host,
        onListening: (port) => process.stderr.write(`toolwright MCP server listening on ${serveUrl(host, port)}\n`)
      }).pipe(Effect.mapError((error) =>
        new UsageError({
          message: "code" in error && error.code === "EADDRINUSE"
            ? `Cannot serve MCP over HTTP: ${serveUrl(host, port)} is already in use by another program. ` +
              "Choose another --port, or --port 0 for a free one."
            : `Cannot serve MCP over HTTP: ${error.message}`
        })
      ))
    }).pipe(
      // The served pool is toolwright's own tools: serving the project's MCP servers back could loop.
      Effect.provide(
        ToolRuntime.layer.pipe(
          // Settings' rules and hooks apply as in `run`; asks go to the client's user, never to this terminal.
          // Big results are persisted with a preview, as in `run` and `exec`.
          Layer.provide(
            Layer.mergeAll(
              resultStages,
              settingsStages,
              // PermissionRequest hooks may answer for the client's user, as they do for run's.
              withPermissionRequestHooks(McpServer.prompterLayer),
              ToolExecutor.layerConfig.pipe(Layer.mapError((error) => new UsageError({ message: error.message })))
            )
          ),
          // Settings' sandbox and plugins apply as in run: a served Bash is sandboxed like any other.
          Layer.provideMerge(servedRegistryLayerFor(options)),
          Layer.provideMerge(McpServer.bridgeLayer)
        )
      ),
      // stdout belongs to the protocol: logs go to stderr.
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.stringLogger)))
    )
).pipe(Command.withDescription("Serve toolwright's tools to MCP clients (every call goes through the full pipeline)"))

export const command = Command.make("mcp").pipe(
  Command.withDescription("Manage MCP servers and serve toolwright's tools over MCP"),
  Command.withSubcommands([list, get, add, remove, login, serve])
)
