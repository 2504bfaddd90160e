/**
 * MCP server configuration in Claude Code's format (`.mcp.json` and the settings' `mcpServers`): parsing
 * with errors that name the server and the field, `${VAR}` / `${VAR:-default}` expansion, and editing a
 * `.mcp.json` atomically without losing what else it holds.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** How a server is reached; `sdk` is an in-process server an embedder hands over. */
export type McpServerType = "stdio" | "sse" | "http" | "ws" | "sdk"

export interface StdioServerConfig {
  readonly type: "stdio"
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string | undefined
}

/** OAuth settings of a remote server (Claude Code's `oauth` field, plus the client-credentials grant). */
export interface OAuthConfig {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | undefined
  readonly scope?: string | undefined
  /** The loopback port of the login redirect, for servers whose client registration fixes it. */
  readonly callbackPort?: number | undefined
  readonly grantType?: "authorization_code" | "client_credentials" | undefined
  /**
   * The authorization server's issuer URL: a configured client secret is sent to that server only, never
   * to whichever one the MCP server names (the SDK's `expectedIssuer`).
   */
  readonly issuer?: string | undefined
}

export interface RemoteServerConfig {
  readonly type: "sse" | "http" | "ws"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly oauth?: OAuthConfig | undefined
  /**
   * A shell command printing a JSON object of headers, run on every connect; its headers win over `headers`
   * (Claude Code's dynamic headers, for tokens that expire).
   */
  readonly headersHelper?: string | undefined
}

/**
 * A server an embedder runs in its own process (e.g. an SDK `McpServer` over an in-memory transport):
 * never read from a file, handed to `McpClientManager` in code.
 */
export interface SdkServerConfig {
  readonly type: "sdk"
  /** A fresh transport to the server, called on every (re)connect. */
  readonly transport: () => Transport
}

export type ServerConfig = StdioServerConfig | RemoteServerConfig | SdkServerConfig

/** One configured server, with the file it came from so messages can point at it. */
export interface ServerEntry {
  readonly name: string
  readonly source: string
  readonly config: ServerConfig
}

/** A server entry that cannot be used. The other servers still start. */
export class McpConfigError extends Schema.TaggedError<McpConfigError>("@toolwright/mcp/McpConfigError")(
  "McpConfigError",
  { server: Schema.String, field: Schema.String, source: Schema.String, message: Schema.String }
) {}

/** The file could not be read or is not JSON: none of its servers can start. */
export class McpConfigFileError extends Schema.TaggedError<McpConfigFileError>(
  "@toolwright/mcp/McpConfigFileError"
)("McpConfigFileError", { source: Schema.String, message: Schema.String }) {}

/** What a configuration source yields: the usable servers and the reasons the others are not. */
export interface ParsedServers {
  readonly servers: ReadonlyArray<ServerEntry>
  readonly errors: ReadonlyArray<McpConfigError>
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/**
 * Expands `${VAR}` and `${VAR:-default}` as Claude Code does. Returns the names of variables that are
 * unset and have no default, so the caller can refuse the entry instead of sending a literal `${TOKEN}`.
 */
export const expandVariables = (
  text: string,
  env: Readonly<Record<string, string | undefined>>
): { readonly value: string; readonly missing: ReadonlyArray<string> } => {
  const missing: Array<string> = []
  const value = text.replace(VARIABLE, (whole, name: string, fallback: string | undefined) => {
    const found = env[name]
    if (found !== undefined) return found
    if (fallback !== undefined) return fallback
    missing.push(name)
    return whole
  })
  return { value, missing }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const describeJson = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `a ${typeof u}`

const STDIO_KEYS = new Set(["type", "command", "args", "env", "cwd"])
const REMOTE_KEYS = new Set(["type", "url", "headers", "oauth", "headersHelper"])

/** Parses one entry; the first problem found is reported with the dotted path of its field. */
export const parseEntry = (
  name: string,
  raw: unknown,
  source: string,
  env: Readonly<Record<string, string | undefined>>
): ServerEntry | McpConfigError => {
  const fail = (field: string, problem: string) =>
    new McpConfigError({
      server: name,
      field,
      source,
      message: `MCP server "${name}" in ${source}: ${field} ${problem}`
    })
  const expand = (field: string, text: string): string | McpConfigError => {
    const { missing, value } = expandVariables(text, env)
    if (missing.length > 0) {
      return fail(
        field,
        `uses the environment variable${missing.length > 1 ? "s" : ""} ${
          missing.join(", ")
        }, which ${missing.length > 1 ? "are" : "is"} not set; set ${
          missing.length > 1 ? "them" : "it"
        } or write \${${missing[0]}:-default}`
      )
    }
    return value
  }
  /** A string field, its variables expanded. */
  const stringField = (field: string, value: unknown): string | McpConfigError =>
    typeof value === "string" ? expand(field, value) : fail(field, `must be a string, not ${describeJson(value)}`)
  const urlField = (field: string, text: string): URL | McpConfigError => {
    try {
      return new URL(text)
    } catch {
      return fail(field, `is not a valid URL: ${JSON.stringify(text)}`)
    }
  }
  const stringMap = (field: string, value: unknown): Record<string, string> | McpConfigError => {
    if (value === undefined) return {}
    if (!isRecord(value)) return fail(field, `must be an object of strings, not ${describeJson(value)}`)
    const out: Record<string, string> = {}
    for (const [key, item] of Object.entries(value)) {
      if (typeof item !== "string") return fail(`${field}.${key}`, `must be a string, not ${describeJson(item)}`)
      const expanded = expand(`${field}.${key}`, item)
      if (typeof expanded !== "string") return expanded
      out[key] = expanded
    }
    return out
  }

  if (name.trim() === "") return fail("name", "must not be empty")
  if (!isRecord(raw)) return fail("(entry)", `must be an object, not ${describeJson(raw)}`)
  const declared = raw.type
  if (declared !== undefined && typeof declared !== "string") {
    return fail("type", `must be one of "stdio", "sse", "http", "ws", not ${describeJson(declared)}`)
  }
  let type = declared
  if (type === undefined) {
    if (raw.command !== undefined) type = "stdio"
    else if (typeof raw.url === "string") type = /^wss?:/i.test(raw.url) ? "ws" : "http"
    else if (raw.url !== undefined) return fail("url", `must be a string, not ${describeJson(raw.url)}`)
    else return fail("command", "is missing: give a command (stdio server) or a url (remote server)")
  }

  if (type === "stdio") {
    for (const key of Object.keys(raw)) {
      if (!STDIO_KEYS.has(key)) return fail(key, `is not a field of a stdio server (use command, args, env, cwd)`)
    }
    if (typeof raw.command !== "string" || raw.command.trim() === "") {
      return fail("command", raw.command === undefined ? "is missing" : "must be a non-empty string")
    }
    const command = expand("command", raw.command)
    if (typeof command !== "string") return command
    const args: Array<string> = []
    if (raw.args !== undefined) {
      if (!Array.isArray(raw.args)) return fail("args", `must be an array of strings, not ${describeJson(raw.args)}`)
      for (const [index, item] of raw.args.entries()) {
        if (typeof item !== "string") return fail(`args[${index}]`, `must be a string, not ${describeJson(item)}`)
        const expanded = expand(`args[${index}]`, item)
        if (typeof expanded !== "string") return expanded
        args.push(expanded)
      }
    }
    const envMap = stringMap("env", raw.env)
    if (envMap instanceof McpConfigError) return envMap
    let cwd: string | undefined
    if (raw.cwd !== undefined) {
      if (typeof raw.cwd !== "string") return fail("cwd", `must be a string, not ${describeJson(raw.cwd)}`)
      const expanded = expand("cwd", raw.cwd)
      if (typeof expanded !== "string") return expanded
      cwd = expanded
    }
    return { name, source, config: { type: "stdio", command, args, env: envMap, cwd } }
  }

  if (type === "sse" || type === "http" || type === "ws") {
    for (const key of Object.keys(raw)) {
      if (!REMOTE_KEYS.has(key)) {
        return fail(
          key,
          `is not a field of ${type === "ws" ? "a" : "an"} ${type} server (use url, headers, headersHelper, oauth)`
        )
      }
    }
    if (typeof raw.url !== "string") {
      return fail("url", raw.url === undefined ? "is missing" : `must be a string, not ${describeJson(raw.url)}`)
    }
    const url = expand("url", raw.url)
    if (typeof url !== "string") return url
    const parsed = urlField("url", url)
    if (parsed instanceof McpConfigError) return parsed
    const schemes = type === "ws" ? ["ws:", "wss:"] : ["http:", "https:"]
    if (!schemes.includes(parsed.protocol)) {
      return fail("url", `must start with ${schemes.map((s) => `${s}//`).join(" or ")} for ${type === "ws" ? "a" : "an"} ${type} server`)
    }
    const headers = stringMap("headers", raw.headers)
    if (headers instanceof McpConfigError) return headers
    if (raw.headersHelper !== undefined && (typeof raw.headersHelper !== "string" || raw.headersHelper.trim() === "")) {
      return fail(
        "headersHelper",
        `must be a shell command (a non-empty string), not ${describeJson(raw.headersHelper)}`
      )
    }
    const helper = raw.headersHelper === undefined ? {} : { headersHelper: raw.headersHelper }
    if (raw.oauth === undefined) return { name, source, config: { type, url, headers, ...helper } }
    if (!isRecord(raw.oauth)) return fail("oauth", `must be an object, not ${describeJson(raw.oauth)}`)
    const oauth: { -readonly [K in keyof OAuthConfig]: OAuthConfig[K] } = {}
    for (const [key, value] of Object.entries(raw.oauth)) {
      if (key === "clientId" || key === "clientSecret" || key === "scope") {
        const expanded = stringField(`oauth.${key}`, value)
        if (typeof expanded !== "string") return expanded
        oauth[key] = expanded
      } else if (key === "issuer") {
        const expanded = stringField("oauth.issuer", value)
        if (typeof expanded !== "string") return expanded
        const issuer = urlField("oauth.issuer", expanded)
        if (issuer instanceof McpConfigError) return issuer
        // RFC 8414: an https URL without query or fragment; plain http only for a server on this machine.
        const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(issuer.hostname)
        if (issuer.protocol !== "https:" && !(issuer.protocol === "http:" && loopback)) {
          return fail("oauth.issuer", "must start with https:// (http:// only for localhost)")
        }
        if (issuer.search !== "" || issuer.hash !== "") {
          return fail("oauth.issuer", "must not have a query or fragment: give the authorization server's issuer URL")
        }
        oauth.issuer = expanded
      } else if (key === "callbackPort") {
        if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 65535) {
          return fail("oauth.callbackPort", `must be a port number (1-65535), not ${JSON.stringify(value)}`)
        }
        oauth.callbackPort = value
      } else if (key === "grantType") {
        if (value !== "authorization_code" && value !== "client_credentials") {
          return fail("oauth.grantType", `must be "authorization_code" or "client_credentials", not ${JSON.stringify(value)}`)
        }
        oauth.grantType = value
      } else {
        return fail(
          `oauth.${key}`,
          "is not an oauth field (use clientId, clientSecret, scope, callbackPort, grantType, issuer)"
        )
      }
    }
    if (oauth.grantType === "client_credentials" && (oauth.clientId === undefined || oauth.clientSecret === undefined)) {
      return fail("oauth", "with grantType client_credentials needs clientId and clientSecret")
    }
    return { name, source, config: { type, url, headers, oauth, ...helper } }
  }
  return fail("type", `must be one of "stdio", "sse", "http", "ws", not ${JSON.stringify(type)}`)
}

/**
 * Parses an `mcpServers` object (from `.mcp.json` or settings). Bad entries become errors; good ones
 * are returned in the order written.
 */
export const parseServers = (
  mcpServers: unknown,
  source: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): ParsedServers => {
  if (mcpServers === undefined) return { servers: [], errors: [] }
  if (!isRecord(mcpServers)) {
    return {
      servers: [],
      errors: [
        new McpConfigError({
          server: "(all)",
          field: "mcpServers",
          source,
          message: `${source}: mcpServers must be an object mapping server names to their configuration, not ${
            describeJson(mcpServers)
          }`
        })
      ]
    }
  }
  const servers: Array<ServerEntry> = []
  const errors: Array<McpConfigError> = []
  for (const [name, raw] of Object.entries(mcpServers)) {
    const entry = parseEntry(name, raw, source, env)
    if (entry instanceof McpConfigError) errors.push(entry)
    else servers.push(entry)
  }
  return { servers, errors }
}

/** The `.mcp.json` of a project directory. */
export const projectFile = (cwd: string): string => path.join(cwd, ".mcp.json")

const readJsonFile = (file: string): Effect.Effect<unknown, McpConfigFileError> =>
  Effect.try({
    try: (): unknown => JSON.parse(fs.readFileSync(file, "utf8")),
    catch: (error) =>
      new McpConfigFileError({
        source: file,
        message: `Cannot read MCP configuration ${file}: ${
          error instanceof SyntaxError ? `it is not valid JSON (${error.message})` : String(error)
        }. Fix or remove the file.`
      })
  })

/** Reads `.mcp.json` from `cwd`: no file means no servers; a broken file is an error naming it. */
export const loadProjectServers = (
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<ParsedServers, McpConfigFileError> =>
  Effect.suspend(() => {
    const file = projectFile(cwd)
    if (!fs.existsSync(file)) return Effect.succeed({ servers: [], errors: [] })
    return Effect.flatMap(readJsonFile(file), (json) => {
      if (!isRecord(json)) {
        return Effect.fail(
          new McpConfigFileError({
            source: file,
            message: `${file} must hold a JSON object with an "mcpServers" field, not ${describeJson(json)}`
          })
        )
      }
      return Effect.succeed(parseServers(json.mcpServers, file, env))
    })
  })

/**
 * The `mcpServers` of settings files, in the order given (missing files are skipped). A file that is
 * not JSON is reported as a failed entry naming it rather than dropped.
 */
export const loadSettingsServers = (
  files: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<ReadonlyArray<ParsedServers>> =>
  Effect.forEach(files, (file) =>
    Effect.suspend(() => {
      if (!fs.existsSync(file)) return Effect.succeed<ParsedServers>({ servers: [], errors: [] })
      return readJsonFile(file).pipe(
        Effect.map((json): ParsedServers => (isRecord(json) ? parseServers(json.mcpServers, file, env) : { servers: [], errors: [] })),
        Effect.catchAll((error) =>
          Effect.succeed<ParsedServers>({
            servers: [],
            errors: [new McpConfigError({ server: `(${path.basename(file)})`, field: "(file)", source: file, message: error.message })]
          })
        )
      )
    }))

/**
 * The `.mcp.json` servers the settings files turn off (Claude Code's `disabledMcpjsonServers`, merged over
 * the files), each with the files that list it, so a user can be told where to turn it back on. Files that are
 * missing or unreadable add nothing: `loadSettingsServers` reports the latter.
 */
export const disabledProjectServers = (files: ReadonlyArray<string>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const names = new Map<string, Array<string>>()
  for (const file of files) {
    let json: unknown
    try {
      json = JSON.parse(fs.readFileSync(file, "utf8"))
    } catch {
      continue
    }
    const listed = isRecord(json) ? json.disabledMcpjsonServers : undefined
    if (!Array.isArray(listed)) continue
    for (const name of new Set(listed)) {
      if (typeof name === "string") names.set(name, [...(names.get(name) ?? []), file])
    }
  }
  return names
}

/**
 * Merges sources, earlier first: a server named again in a later source replaces the earlier entry
 * (project `.mcp.json`, then settings, as Claude Code's scopes override).
 */
export const mergeServers = (sources: ReadonlyArray<ParsedServers>): ParsedServers => {
  const byName = new Map<string, ServerEntry>()
  const errors: Array<McpConfigError> = []
  for (const source of sources) {
    for (const server of source.servers) {
      byName.delete(server.name)
      byName.set(server.name, server)
    }
    errors.push(...source.errors)
  }
  return { servers: [...byName.values()], errors }
}

/**
 * Rewrites `.mcp.json` through `update` atomically (a temp file renamed over it), keeping every other
 * key of the file. `update` gets the current `mcpServers` object and returns the new one.
 */
export const updateProjectFile = (
  cwd: string,
  update: (servers: Record<string, unknown>) => Effect.Effect<Record<string, unknown>, McpConfigFileError>
): Effect.Effect<string, McpConfigFileError> =>
  Effect.gen(function*() {
    const file = projectFile(cwd)
    const current = fs.existsSync(file) ? yield* readJsonFile(file) : {}
    if (!isRecord(current)) {
      return yield* new McpConfigFileError({
        source: file,
        message: `${file} must hold a JSON object, not ${describeJson(current)}; fix it before editing servers`
      })
    }
    const servers = current.mcpServers === undefined ? {} : current.mcpServers
    if (!isRecord(servers)) {
      return yield* new McpConfigFileError({
        source: file,
        message: `${file}: mcpServers must be an object, not ${describeJson(servers)}; fix it before editing servers`
      })
    }
    const next = { ...current, mcpServers: yield* update({ ...servers }) }
    // The file keeps its permissions (a 0600 .mcp.json holding tokens stays private) and, when it is a
    // symlink, the link: the rename replaces its target.
    const existing = fs.existsSync(file)
      ? { target: fs.realpathSync(file), mode: fs.statSync(file).mode & 0o777 }
      : undefined
    const target = existing?.target ?? file
    const temp = `${target}.${process.pid}.${Date.now()}.tmp`
    yield* Effect.try({
      try: () => {
        fs.writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 })
        fs.chmodSync(temp, existing?.mode ?? 0o644)
        fs.renameSync(temp, target)
      },
      catch: (error) => {
        fs.rmSync(temp, { force: true })
        return new McpConfigFileError({ source: file, message: `Cannot write ${file}: ${String(error)}` })
      }
    })
    return file
  })
