import { assert, describe, it } from "@effect/vitest"
import { Message, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpClientManager, McpConfig, McpOAuth, McpToolRegistry } from "../src/index.js"

const oauthServer = path.join(import.meta.dirname, "fixtures/oauth-server.mjs")

const startOAuthServer = Effect.acquireRelease(
  Effect.async<{ readonly child: ChildProcess; readonly port: number }>((resume) => {
    const child = spawn(process.execPath, [oauthServer], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(String(chunk))
      if (match !== null) resume(Effect.succeed({ child, port: Number(match[1]) }))
    })
  }),
  ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
)

/** The fixture's machine client (client-credentials grant), its secret bound to `issuer`. */
const machineClient = (port: number, issuer: string) => ({
  type: "http",
  url: `http://127.0.0.1:${port}/mcp`,
  oauth: { grantType: "client_credentials", clientId: "machine", clientSecret: "s3cret", issuer }
})

/** A manager over one server, with credentials in `credentialsFile`; returns its status and a caller. */

const connect = (mcpServers: unknown, credentialsFile: string) =>
  Effect.gen(function*() {
    const dir = path.dirname(credentialsFile)
    const built = yield* Layer.build(
      ToolRuntime.layerDefault.pipe(
        Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
        Layer.provideMerge(McpClientManager.layer({
          servers: McpConfig.parseServers(mcpServers, "test.mcp.json", {}),
          cwd: dir,
          logDir: path.join(dir, "logs"),
          credentialsFile
        }))
      )
    )
    const manager = yield* Effect.provide(McpClientManager.McpClientManager, built)
    const context = ToolUseContext.make({
      cwd: dir,
      permissionContext: { mode: "bypassPermissions", allow: [], deny: [], ask: [], additionalDirectories: [] }
    })
    const call = (name: string) =>
      Effect.flatMap(ToolRuntime.ToolRuntime, (runtime) =>
        runtime.execute({ type: "tool_use", id: "toolu_o", name, input: {} }, context, () => Effect.void)).pipe(
          Effect.map((result) => Message.contentText(result.result.content)),
          Effect.provide(built)
        )
    return { status: manager.servers()[0], call }
  })

/** `toolwright mcp login guarded`, the test as the browser; returns the authorization URLs visited. */
const loginAsBrowser = (config: McpConfig.RemoteServerConfig, credentialsFile: string) =>
  Effect.gen(function*() {
    const visited: Array<string> = []
    yield* McpOAuth.login({
      serverName: "guarded",
      config,
      store: new McpOAuth.CredentialsStore(credentialsFile),
      // The server approves at once and redirects to our loopback.
      onAuthorizationUrl: (url) => {
        visited.push(url.toString())
        void fetch(url).then((response) => response.text())
      }
    })
    return visited
  })

describe("McpOAuth", () => {
  it.scopedLive("needs-auth until `login`: authorization code with PKCE over a loopback redirect, tokens kept 0600", () =>
    Effect.gen(function*() {
      const { port } = yield* startOAuthServer
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-oauth-"))
      const credentialsFile = path.join(dir, "home", ".toolwright", "mcp-credentials.json")
      const config = { type: "http" as const, url: `http://127.0.0.1:${port}/mcp`, headers: {} }

      const before = yield* connect({ guarded: config }, credentialsFile)
      assert.strictEqual(before.status.state, "needs-auth")
      assert.include(before.status.error ?? "", "Run `toolwright mcp login guarded`")

      const visited = yield* loginAsBrowser(config, credentialsFile)
      assert.strictEqual(visited.length, 1)
      const authorization = new URL(visited[0])
      assert.strictEqual(authorization.searchParams.get("code_challenge_method"), "S256")
      assert.match(authorization.searchParams.get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
      assert.strictEqual(fs.statSync(credentialsFile).mode & 0o777, 0o600)
      const stored = JSON.parse(fs.readFileSync(credentialsFile, "utf8"))
      assert.match(stored[`guarded|${config.url}`].tokens.access_token, /^at-/)

      const after = yield* connect({ guarded: config }, credentialsFile)
      assert.strictEqual(after.status.state, "connected")
      assert.match(yield* after.call("mcp__guarded__whoami"), /^client [0-9a-f-]{36}$/)
    }))

  it.scopedLive("two projects' servers of one name keep their own logins; a login stored by name alone still counts", () =>
    Effect.gen(function*() {
      const first = yield* startOAuthServer
      const second = yield* startOAuthServer
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-oauth-"))
      const credentialsFile = path.join(dir, "home", ".toolwright", "mcp-credentials.json")
      const configA = { type: "http" as const, url: `http://127.0.0.1:${first.port}/mcp`, headers: {} }
      const configB = { type: "http" as const, url: `http://127.0.0.1:${second.port}/mcp`, headers: {} }
      yield* loginAsBrowser(configA, credentialsFile)
      yield* loginAsBrowser(configB, credentialsFile)
      assert.strictEqual((yield* connect({ guarded: configA }, credentialsFile)).status.state, "connected")
      assert.strictEqual((yield* connect({ guarded: configB }, credentialsFile)).status.state, "connected")

      // A file written before logins were kept per URL: its entry is used, and moved to its new key on update.
      const stored = JSON.parse(fs.readFileSync(credentialsFile, "utf8"))
      fs.writeFileSync(credentialsFile, JSON.stringify({ guarded: stored[`guarded|${configA.url}`] }))
      assert.strictEqual((yield* connect({ guarded: configA }, credentialsFile)).status.state, "connected")
      const store = new McpOAuth.CredentialsStore(credentialsFile)
      store.update("guarded", configA.url, (current) => ({ ...current, stepUpScope: "admin" }))
      assert.deepStrictEqual(Object.keys(JSON.parse(fs.readFileSync(credentialsFile, "utf8"))), [`guarded|${configA.url}`])
      assert.strictEqual(store.get("guarded", configA.url).stepUpScope, "admin")
    }))

  // Streamable HTTP, and the legacy SSE transport, whose calls are POSTs beside the event stream.
  for (const [type, endpoint] of [["http", "/mcp"], ["sse", "/sse"]] as const) {
    it.scopedLive(`step-up over ${type}: a 403 insufficient_scope says to log in again, and the next login asks for that scope`, () =>
      Effect.gen(function*() {
        const { port } = yield* startOAuthServer
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tw-mcp-oauth-step-up-${type}-`))
        const credentialsFile = path.join(dir, "credentials.json")
        const config = { type, url: `http://127.0.0.1:${port}${endpoint}`, headers: {} }
        yield* loginAsBrowser(config, credentialsFile)
        const { call, status } = yield* connect({ guarded: config }, credentialsFile)
        assert.strictEqual(status.state, "connected")
        assert.match(yield* call("mcp__guarded__whoami"), /^client [0-9a-f-]{36}$/)
        assert.strictEqual(
          yield* call("mcp__guarded__write"),
          `<tool_use_error>MCP server "guarded" refused mcp__guarded__write: it needs the OAuth scope "write", which ` +
            "the current token lacks. Run `toolwright mcp login guarded` to grant it, then try again.</tool_use_error>"
        )
        const stored = () => JSON.parse(fs.readFileSync(credentialsFile, "utf8"))[`guarded|${config.url}`]
        assert.strictEqual(stored().stepUpScope, "write")

        // The stored refresh token is not used: it would renew the narrower scope.
        const visited = yield* loginAsBrowser(config, credentialsFile)
        assert.strictEqual(visited.length, 1)
        assert.strictEqual(new URL(visited[0]).searchParams.get("scope"), "write")
        assert.isUndefined(stored().stepUpScope)
        const after = yield* connect({ guarded: config }, credentialsFile)
        assert.strictEqual(yield* after.call("mcp__guarded__write"), "written with scopes write")
        assert.match(yield* after.call("mcp__guarded__whoami"), /^client [0-9a-f-]{36}$/)
      }))
  }

  it.scopedLive("the client-credentials grant connects without a login", () =>
    Effect.gen(function*() {
      const { port } = yield* startOAuthServer
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-oauth-cc-"))
      const { call, status } = yield* connect(
        { machine: machineClient(port, `http://127.0.0.1:${port}/`) },
        path.join(dir, "credentials.json")
      )
      assert.strictEqual(status.state, "connected")
      assert.strictEqual(yield* call("mcp__machine__whoami"), "client machine")
    }))

  it.scopedLive("client credentials bound to another issuer are not sent to the server's authorization server", () =>
    Effect.gen(function*() {
      const { port } = yield* startOAuthServer
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-oauth-issuer-"))
      const { status } = yield* connect(
        { machine: machineClient(port, "https://auth.example.com/") },
        path.join(dir, "credentials.json")
      )
      assert.strictEqual(status.state, "failed")
      assert.strictEqual(
        status.error,
        `OAuth client information is bound to authorization server https://auth.example.com/ and is not presented ` +
          `to http://127.0.0.1:${port}/. Clear the stored client information, or correct oauth.issuer in ` +
          `test.mcp.json, if the authorization server has moved.`
      )
    }))
})
