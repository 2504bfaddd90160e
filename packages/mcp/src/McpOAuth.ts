/**
 * OAuth for remote MCP servers, on the SDK's `OAuthClientProvider`: the authorization-code flow with
 * PKCE and a loopback redirect (`toolwright mcp login NAME`), the client-credentials grant for machine
 * clients, and the credentials kept in `~/.toolwright/mcp-credentials.json` (mode 0600) so later runs
 * connect without asking; the SDK refreshes expired tokens with the stored refresh token. A call refused
 * with 403 `insufficient_scope` (step-up) leaves the scope it needs in the store; the next login asks for it.
 */
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import type { RemoteServerConfig } from "./McpConfig.js"

/** Logging in to a server failed: what happened and what to do. */
export class McpAuthError extends Schema.TaggedError<McpAuthError>("@toolwright/mcp/McpAuthError")("McpAuthError", {
  server: Schema.String,
  message: Schema.String
}) {}

/** A connection found no usable token and has nobody to ask: the user must run `toolwright mcp login`. */
export class LoginRequiredError extends Error {
  constructor(serverName: string) {
    super(`no valid OAuth token: run \`toolwright mcp login ${serverName}\``)
    this.name = "LoginRequiredError"
  }
}

/** What is stored for one server. */
interface StoredCredentials {
  readonly url: string
  readonly clientInformation?: OAuthClientInformationMixed | undefined
  readonly tokens?: OAuthTokens | undefined
  readonly codeVerifier?: string | undefined
  /**
   * The scope the server last asked for with 403 `insufficient_scope` (step-up): the next login requests
   * it instead of refreshing the token it has, whose scope falls short.
   */
  readonly stepUpScope?: string | undefined
}

/** The file is toolwright's own, written by `CredentialsStore`: checking the binding URL is enough. */
const isStoredCredentials = (u: unknown): u is StoredCredentials => isRecord(u) && typeof u.url === "string"

export const defaultCredentialsFile = (): string => path.join(os.homedir(), ".toolwright", "mcp-credentials.json")

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const keyOf = (server: string, url: string): string => `${server}|${url}`

/** The credentials file: read whole, written whole through a temp file, readable by the user only. */
export class CredentialsStore {
  readonly file: string
  constructor(file: string = defaultCredentialsFile()) {
    this.file = file
  }

  #readAll(): Record<string, StoredCredentials> {
    try {
      const json: unknown = JSON.parse(fs.readFileSync(this.file, "utf8"))
      if (!isRecord(json)) return {}
      const out: Record<string, StoredCredentials> = {}
      for (const [key, value] of Object.entries(json)) {
        if (isStoredCredentials(value)) out[key] = value
      }
      return out
    } catch {
      return {}
    }
  }

  /**
   * Credentials are kept per server name and URL: one file serves every project, and two projects' servers of
   * one name (a "docs" at each company) must not log each other out. A server moved elsewhere starts afresh.
   * Entries written under the name alone are still read when their URL matches, and moved on the next update.
   */
  get(server: string, url: string): StoredCredentials {
    const all = this.#readAll()
    const entry = all[keyOf(server, url)] ?? all[server]
    return entry !== undefined && entry.url === url ? entry : { url }
  }

  update(server: string, url: string, change: (current: StoredCredentials) => StoredCredentials): void {
    const all = this.#readAll()
    const next = change(this.get(server, url))
    if (all[server]?.url === url) delete all[server]
    all[keyOf(server, url)] = next
    this.#writeAll(all)
  }

  /** Forgets every login of the servers of this name. */
  remove(server: string): void {
    const all = this.#readAll()
    const keys = Object.keys(all).filter((key) => key === server || key.startsWith(`${server}|`))
    if (keys.length === 0) return
    for (const key of keys) delete all[key]
    this.#writeAll(all)
  }

  #writeAll(all: Record<string, StoredCredentials>): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 })
    const temp = `${this.file}.${process.pid}.tmp`
    fs.writeFileSync(temp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 })
    fs.chmodSync(temp, 0o600)
    fs.renameSync(temp, this.file)
  }
}

export interface AuthorizationCodeOptions {
  readonly serverName: string
  readonly serverUrl: string
  readonly store: CredentialsStore
  /** The loopback redirect; undefined for a provider that only uses stored tokens. */
  readonly redirectUrl: string | undefined
  readonly clientId?: string | undefined
  readonly clientSecret?: string | undefined
  readonly scope?: string | undefined
  /** The authorization server a configured client id and secret belong to (`oauth.issuer`). */
  readonly issuer?: string | undefined
  /** Where the user must go to authorise; a connection without a person to ask leaves it undefined. */
  readonly onAuthorizationUrl?: ((url: URL) => void) | undefined
}

/**
 * A provider backed by the credentials store. Without `onAuthorizationUrl` it never starts a login:
 * the connection fails with 401 and the server shows as needs-auth until `toolwright mcp login`.
 */
export const authorizationCodeProvider = (options: AuthorizationCodeOptions): OAuthClientProvider => {
  const { serverName, serverUrl, store } = options
  const metadata: OAuthClientMetadata = {
    client_name: "toolwright",
    redirect_uris: options.redirectUrl === undefined ? [] : [options.redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: options.clientSecret === undefined ? "none" : "client_secret_post",
    ...(options.scope !== undefined ? { scope: options.scope } : {})
  }
  return {
    get redirectUrl() {
      return options.redirectUrl
    },
    get clientMetadata() {
      return metadata
    },
    clientInformation: () => {
      if (options.clientId !== undefined) {
        return {
          client_id: options.clientId,
          ...(options.clientSecret !== undefined ? { client_secret: options.clientSecret } : {}),
          ...(options.issuer !== undefined ? { issuer: options.issuer } : {})
        }
      }
      return store.get(serverName, serverUrl).clientInformation
    },
    saveClientInformation: (clientInformation) =>
      store.update(serverName, serverUrl, (current) => ({ ...current, clientInformation })),
    tokens: () => store.get(serverName, serverUrl).tokens,
    saveTokens: (tokens) => store.update(serverName, serverUrl, (current) => ({ ...current, tokens })),
    redirectToAuthorization: (url) => {
      if (options.onAuthorizationUrl === undefined) {
        throw new LoginRequiredError(serverName)
      }
      options.onAuthorizationUrl(url)
    },
    saveCodeVerifier: (codeVerifier) => store.update(serverName, serverUrl, (current) => ({ ...current, codeVerifier })),
    codeVerifier: () => {
      const verifier = store.get(serverName, serverUrl).codeVerifier
      if (verifier === undefined) throw new Error("No PKCE code verifier was saved for this login; start it again")
      return verifier
    },
    invalidateCredentials: (scope) =>
      store.update(serverName, serverUrl, (current) => {
        if (scope === "all") return { url: current.url }
        if (scope === "tokens") return { ...current, tokens: undefined }
        if (scope === "client") return { ...current, clientInformation: undefined }
        if (scope === "verifier") return { ...current, codeVerifier: undefined }
        return current
      })
  }
}

/** The provider a connection uses: client credentials when configured, else stored tokens. */
export const providerFor = (
  serverName: string,
  config: RemoteServerConfig,
  store: CredentialsStore
): OAuthClientProvider | undefined => {
  const oauth = config.oauth
  if (oauth?.grantType === "client_credentials" && oauth.clientId !== undefined && oauth.clientSecret !== undefined) {
    return new ClientCredentialsProvider({
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      clientName: "toolwright",
      ...(oauth.scope !== undefined ? { scope: oauth.scope } : {}),
      ...(oauth.issuer !== undefined ? { expectedIssuer: oauth.issuer } : {})
    })
  }
  // Only servers that have been logged in to (or declare oauth) get a provider; others keep plain headers.
  const stored = store.get(serverName, config.url)
  if (stored.tokens === undefined && oauth === undefined) return undefined
  return authorizationCodeProvider({
    serverName,
    serverUrl: config.url,
    store,
    redirectUrl: undefined,
    clientId: oauth?.clientId,
    clientSecret: oauth?.clientSecret,
    scope: oauth?.scope,
    issuer: oauth?.issuer
  })
}

export interface LoginOptions {
  readonly serverName: string
  readonly config: RemoteServerConfig
  readonly store: CredentialsStore
  /** Shown to the user (and opened in a browser by the CLI). */
  readonly onAuthorizationUrl: (url: URL) => void
  /** How long to wait for the browser to come back; default 5 minutes. */
  readonly timeoutMs?: number
}

/**
 * The authorization-code flow with PKCE: a loopback server on 127.0.0.1 receives the redirect, the code
 * is exchanged and the tokens stored. With the client-credentials grant configured, tokens are fetched
 * directly instead.
 */
export const login = (options: LoginOptions): Effect.Effect<void, McpAuthError> =>
  Effect.gen(function*() {
    const { config, serverName, store } = options
    const fail = (message: string) => new McpAuthError({ server: serverName, message })
    const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))
    if (config.oauth?.grantType === "client_credentials") {
      const provider = providerFor(serverName, config, store)
      if (provider === undefined) {
        return yield* fail(`MCP server "${serverName}" uses client credentials but oauth.clientId or oauth.clientSecret is missing`)
      }
      const result = yield* Effect.tryPromise({
        try: () => auth(provider, { serverUrl: config.url }),
        catch: (error) => fail(`Client-credentials login to "${serverName}" failed: ${describe(error)}`)
      })
      if (result !== "AUTHORIZED") return yield* fail(`The server of "${serverName}" did not issue a token`)
      return
    }

    const codes: Array<string> = []
    let notify: ((result: { code?: string; error?: string }) => void) | undefined
    const callback = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      if (url.pathname !== "/callback") {
        res.writeHead(404).end()
        return
      }
      const code = url.searchParams.get("code")
      const error = url.searchParams.get("error")
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(
        code !== null
          ? "<p>toolwright is now logged in. You can close this tab.</p>"
          : `<p>Login failed: ${(error ?? "no code").replace(/[<>&]/g, "")}</p>`
      )
      if (code !== null) codes.push(code)
      notify?.(code !== null ? { code } : { error: error ?? "the redirect carried no code" })
    })
    const port = yield* Effect.async<number, McpAuthError>((resume) => {
      callback.once("error", (error) => resume(Effect.fail(fail(`Cannot listen for the login redirect: ${error.message}`))))
      callback.listen(config.oauth?.callbackPort ?? 0, "127.0.0.1", () => {
        const address = callback.address()
        resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
      })
    })
    const provider = authorizationCodeProvider({
      serverName,
      serverUrl: config.url,
      store,
      redirectUrl: `http://127.0.0.1:${port}/callback`,
      clientId: config.oauth?.clientId,
      clientSecret: config.oauth?.clientSecret,
      scope: config.oauth?.scope,
      issuer: config.oauth?.issuer,
      onAuthorizationUrl: options.onAuthorizationUrl
    })
    // Stepping up, the stored refresh token must not be used: it would renew the scope that fell short.
    const stepUpScope = store.get(serverName, config.url).stepUpScope
    const firstProvider = stepUpScope === undefined ? provider : { ...provider, tokens: () => undefined }
    const flow = Effect.gen(function*() {
      const first = yield* Effect.tryPromise({
        try: () =>
          auth(firstProvider, { serverUrl: config.url, ...(stepUpScope !== undefined ? { scope: stepUpScope } : {}) }),
        catch: (error) => fail(`Login to "${serverName}" failed: ${describe(error)}`)
      })
      if (first === "AUTHORIZED") return
      const answer = yield* Effect.async<{ code?: string; error?: string }>((resume) => {
        if (codes.length > 0) resume(Effect.succeed({ code: codes[0] }))
        else notify = (result) => resume(Effect.succeed(result))
      }).pipe(
        Effect.timeoutFail({
          duration: options.timeoutMs ?? 5 * 60_000,
          onTimeout: () => fail(`Login to "${serverName}" timed out: the browser never came back to ${provider.redirectUrl}`)
        })
      )
      if (answer.code === undefined) {
        return yield* fail(`Login to "${serverName}" was refused: ${answer.error ?? "no authorization code"}`)
      }
      const code = answer.code
      const second = yield* Effect.tryPromise({
        try: () => auth(provider, { serverUrl: config.url, authorizationCode: code }),
        catch: (error) => fail(`Exchanging the authorization code of "${serverName}" failed: ${describe(error)}`)
      })
      if (second !== "AUTHORIZED") return yield* fail(`The server of "${serverName}" did not issue a token`)
    })
    yield* flow.pipe(
      Effect.ensuring(Effect.promise(() => new Promise<void>((resolve) => callback.close(() => resolve()))))
    )
    if (stepUpScope !== undefined) {
      store.update(serverName, config.url, (current) => ({ ...current, stepUpScope: undefined }))
    }
  })
