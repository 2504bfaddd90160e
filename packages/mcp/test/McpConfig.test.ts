import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpConfig, McpToolName } from "../src/index.js"

describe("McpConfig", () => {
  it("expands ${VAR} and ${VAR:-default} and reports unset variables", () => {
    const env = { HOST: "example.com", EMPTY: "" }
    assert.deepStrictEqual(McpConfig.expandVariables("https://${HOST}/${PATH:-mcp}", env), {
      value: "https://example.com/mcp",
      missing: []
    })
    assert.deepStrictEqual(McpConfig.expandVariables("[${EMPTY}]", env), { value: "[]", missing: [] })
    assert.deepStrictEqual(McpConfig.expandVariables("Bearer ${TOKEN}", env), {
      value: "Bearer ${TOKEN}",
      missing: ["TOKEN"]
    })
  })

  it("parses Claude Code's format and infers the type", () => {
    const parsed = McpConfig.parseServers({
      fs: { command: "npx", args: ["-y", "server-filesystem", "${HOME}"], env: { DEBUG: "1" } },
      web: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ${KEY}" } },
      old: { type: "sse", url: "http://localhost:3001/sse" },
      sock: { url: "wss://example.com/ws" },
      helped: { type: "http", url: "https://example.com/mcp", headersHelper: "./get-token.sh" }
    }, ".mcp.json", { HOME: "/home/me", KEY: "k" })
    assert.deepStrictEqual(parsed.errors, [])
    assert.deepStrictEqual(parsed.servers.map((server) => server.config), [
      { type: "stdio", command: "npx", args: ["-y", "server-filesystem", "/home/me"], env: { DEBUG: "1" }, cwd: undefined },
      { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer k" } },
      { type: "sse", url: "http://localhost:3001/sse", headers: {} },
      { type: "ws", url: "wss://example.com/ws", headers: {} },
      { type: "http", url: "https://example.com/mcp", headers: {}, headersHelper: "./get-token.sh" }
    ])
  })

  it("names the server and the field of a bad entry, and keeps the good ones", () => {
    const parsed = McpConfig.parseServers({
      a: { command: "ok" },
      b: { command: "x", args: ["fine", 3] },
      c: { type: "http", url: "ftp://nope" },
      d: { type: "carrier-pigeon", url: "x" },
      e: { command: "x", env: { TOKEN: "${NOT_SET}" } },
      f: "npx server",
      g: { command: "x", url: "http://x" },
      h: { url: 5 },
      i: { url: "https://x", headersHelper: ["get-token"] }
    }, "/p/.mcp.json", {})
    assert.deepStrictEqual(parsed.servers.map((server) => server.name), ["a"])
    assert.deepStrictEqual(parsed.errors.map((error) => [error.server, error.field, error.message]), [
      ["b", "args[1]", `MCP server "b" in /p/.mcp.json: args[1] must be a string, not a number`],
      ["c", "url", `MCP server "c" in /p/.mcp.json: url must start with http:// or https:// for an http server`],
      ["d", "type", `MCP server "d" in /p/.mcp.json: type must be one of "stdio", "sse", "http", "ws", not "carrier-pigeon"`],
      [
        "e",
        "env.TOKEN",
        `MCP server "e" in /p/.mcp.json: env.TOKEN uses the environment variable NOT_SET, which is not set; set it or write \${NOT_SET:-default}`
      ],
      ["f", "(entry)", `MCP server "f" in /p/.mcp.json: (entry) must be an object, not a string`],
      ["g", "url", `MCP server "g" in /p/.mcp.json: url is not a field of a stdio server (use command, args, env, cwd)`],
      ["h", "url", `MCP server "h" in /p/.mcp.json: url must be a string, not a number`],
      ["i", "headersHelper", `MCP server "i" in /p/.mcp.json: headersHelper must be a shell command (a non-empty string), not an array`]
    ])
  })

  it("oauth.issuer: expanded, an https URL (http for localhost), errors naming server and field", () => {
    const remote = (issuer: unknown) => ({ type: "http", url: "https://mcp.example.com/mcp", oauth: { issuer } })
    const parsed = McpConfig.parseServers({
      ok: remote("${AUTH}"),
      local: remote("http://127.0.0.1:9000/"),
      number: remote(42),
      plain: remote("http://auth.example.com"),
      query: remote("https://auth.example.com/?tenant=1"),
      broken: remote("not a url")
    }, "/p/.mcp.json", { AUTH: "https://auth.example.com/" })
    assert.deepStrictEqual(
      parsed.servers.map((server) => [server.name, server.config.type === "http" ? server.config.oauth : undefined]),
      [["ok", { issuer: "https://auth.example.com/" }], ["local", { issuer: "http://127.0.0.1:9000/" }]]
    )
    assert.deepStrictEqual(parsed.errors.map((error) => [error.server, error.field, error.message]), [
      ["number", "oauth.issuer", `MCP server "number" in /p/.mcp.json: oauth.issuer must be a string, not a number`],
      [
        "plain",
        "oauth.issuer",
        `MCP server "plain" in /p/.mcp.json: oauth.issuer must start with https:// (http:// only for localhost)`
      ],
      [
        "query",
        "oauth.issuer",
        `MCP server "query" in /p/.mcp.json: oauth.issuer must not have a query or fragment: give the authorization ` +
        `server's issuer URL`
      ],
      ["broken", "oauth.issuer", `MCP server "broken" in /p/.mcp.json: oauth.issuer is not a valid URL: "not a url"`]
    ])
  })

  it.effect("edits .mcp.json atomically and keeps its other content", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-config-"))
      fs.writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ note: "keep", mcpServers: { a: { command: "a" } } }))
      yield* McpConfig.updateProjectFile(dir, (servers) => Effect.succeed({ ...servers, b: { type: "http", url: "http://x" } }))
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(dir, ".mcp.json"), "utf8")), {
        note: "keep",
        mcpServers: { a: { command: "a" }, b: { type: "http", url: "http://x" } }
      })
      assert.deepStrictEqual(fs.readdirSync(dir), [".mcp.json"])
      // A private file stays private, and a symlinked one stays a link to the file it names.
      fs.chmodSync(path.join(dir, ".mcp.json"), 0o600)
      yield* McpConfig.updateProjectFile(dir, (servers) => Effect.succeed({ ...servers, c: { command: "c" } }))
      assert.strictEqual(fs.statSync(path.join(dir, ".mcp.json")).mode & 0o777, 0o600)
      const shared = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-shared-"))
      fs.renameSync(path.join(dir, ".mcp.json"), path.join(shared, "mcp.json"))
      fs.symlinkSync(path.join(shared, "mcp.json"), path.join(dir, ".mcp.json"))
      yield* McpConfig.updateProjectFile(dir, ({ c: _, ...servers }) => Effect.succeed(servers))
      assert.isTrue(fs.lstatSync(path.join(dir, ".mcp.json")).isSymbolicLink())
      assert.deepStrictEqual(Object.keys(JSON.parse(fs.readFileSync(path.join(shared, "mcp.json"), "utf8")).mcpServers), ["a", "b"])
      assert.deepStrictEqual(fs.readdirSync(shared), ["mcp.json"])
      fs.rmSync(path.join(dir, ".mcp.json"))
      fs.writeFileSync(path.join(dir, ".mcp.json"), "{ broken")
      const error = yield* Effect.flip(McpConfig.loadProjectServers(dir))
      assert.match(error.message, /^Cannot read MCP configuration .*\.mcp\.json: it is not valid JSON/)
    }))
})

describe("McpToolName", () => {
  it("normalises, bounds to 64 characters and resolves collisions deterministically", () => {
    assert.strictEqual(McpToolName.make("my server", "do.thing"), "mcp__my_server__do_thing")
    // A rule for server `a` (mcp__a, mcp__a__*) must not cover the tools of server `a__b`.
    assert.strictEqual(McpToolName.make("a__b", "t"), "mcp__a_b__t")
    assert.strictEqual(McpToolName.make("a_", "t"), "mcp__a__t")
    assert.strictEqual(McpToolName.make("x", "get__all"), "mcp__x__get__all")
    const long = McpToolName.make("s", "x".repeat(100))
    assert.strictEqual(long.length, 64)
    assert.match(long, /^mcp__s__x+_[0-9a-f]{8}$/)
    const tools = [
      { serverName: "a.b", toolName: "t" },
      { serverName: "a_b", toolName: "t" }
    ]
    const names = McpToolName.assign(tools)
    const reversed = McpToolName.assign([...tools].reverse())
    assert.deepStrictEqual([...names.entries()], [...reversed.entries()])
    assert.strictEqual(names.get(McpToolName.assignKey("a.b", "t")), "mcp__a_b__t")
    assert.match(names.get(McpToolName.assignKey("a_b", "t"))!, /^mcp__a_b__t_[0-9a-f]{8}$/)
  })
})
