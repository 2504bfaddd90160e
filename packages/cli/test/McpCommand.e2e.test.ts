/**
 * `toolwright mcp …` end to end: the bundled CLI editing a real `.mcp.json`, connecting to a real MCP
 * server, `run` calling that server's tool, and `mcp serve` driven over stdio by the MCP SDK's client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as net from "node:net"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"

const cliDir = join(import.meta.dirname, "..")
const bin = join(cliDir, "dist", "toolwright.mjs")
const scripted = join(cliDir, "..", "mcp", "test", "fixtures", "scripted-server.mjs")
const oauthServer = join(cliDir, "..", "mcp", "test", "fixtures", "oauth-server.mjs")
let dir = ""

beforeAll(() => {
  const built = spawnSync(process.execPath, ["build.mjs"], { cwd: cliDir, encoding: "utf8" })
  if (built.status !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
  dir = mkdtempSync(join(tmpdir(), "tw-mcp-cli-"))
  writeFileSync(join(dir, "notes.txt"), "first line\nsecond line\n")
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const toolwright = (...args: Array<string>) => {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: "utf8",
    env: { ...process.env, HOME: dir }
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Each `mcp add ARGS` is a usage error with exactly that message, and writes no .mcp.json. */
const assertAddRefused = (project: string, cases: ReadonlyArray<[Array<string>, string]>) => {
  for (const [args, message] of cases) {
    const added = toolwright("mcp", "add", ...args, "--cwd", project)
    assert.strictEqual(added.code, 2, args.join(" "))
    assert.strictEqual(added.stderr, `Error: ${message}\n`)
    assert.isFalse(existsSync(join(project, ".mcp.json")))
  }
}

/** An MCP SDK client connected to `toolwright mcp serve --cwd project` over stdio, closed with the scope. */
const serveClient = (project: string) =>
  Effect.gen(function*() {
    const client = new Client({ name: "e2e", version: "1" })
    yield* Effect.acquireRelease(
      Effect.promise(() =>
        client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [bin, "mcp", "serve", "--cwd", project],
            env: { ...process.env, HOME: dir } as Record<string, string>,
            stderr: "ignore"
          })
        )
      ),
      () => Effect.promise(() => client.close())
    )
    return client
  })

/** The OAuth-protected MCP server fixture on a free port; killed with the scope. */
const startOAuthServer = Effect.acquireRelease(
  Effect.async<{ kill: () => void; port: number }>((resume) => {
    const child = spawn(process.execPath, [oauthServer], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.on("data", (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(String(chunk))
      if (match !== null) resume(Effect.succeed({ kill: () => child.kill("SIGKILL"), port: Number(match[1]) }))
    })
  }),
  (server) => Effect.sync(server.kill)
)

/**
 * `toolwright mcp login NAME --cwd project`, its authorization URL fetched as a browser would (the fixture approves
 * at once); no browser opener on PATH.
 */
const loginInBrowser = (name: string, project: string) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = spawn(process.execPath, [bin, "mcp", "login", name, "--cwd", project], {
      env: { ...process.env, HOME: dir, PATH: "/nonexistent" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let pending = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += String(chunk)
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += String(chunk)
      pending += String(chunk)
      const match = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\S*)$/m.exec(pending)
      if (match !== null) {
        pending = ""
        void fetch(match[1]).then((response) => response.text())
      }
    })
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

describe("toolwright mcp", () => {
  it("add, list, get, run and remove a server in the project's .mcp.json", () => {
    writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ owner: "kept", mcpServers: {} }))
    const added = toolwright("mcp", "add", "scripted", "--cwd", dir, "--", process.execPath, scripted)
    assert.strictEqual(added.code, 0, added.stderr)
    assert.strictEqual(added.stdout, `Added stdio MCP server "scripted" to ${join(dir, ".mcp.json")}\n`)
    const again = toolwright("mcp", "add", "scripted", "--cwd", dir, "--", "node")
    assert.strictEqual(again.code, 2)
    assert.include(again.stderr, `An MCP server named "scripted" already exists`)
    const remote = toolwright("mcp", "add", "remote", "--cwd", dir, "--url", "http://127.0.0.1:9/mcp")
    assert.strictEqual(remote.code, 0, remote.stderr)
    assert.deepStrictEqual(JSON.parse(readFileSync(join(dir, ".mcp.json"), "utf8")), {
      owner: "kept",
      mcpServers: {
        scripted: { type: "stdio", command: process.execPath, args: [scripted] },
        remote: { type: "http", url: "http://127.0.0.1:9/mcp" }
      }
    })

    const listed = toolwright("mcp", "list", "--cwd", dir, "--json")
    assert.strictEqual(listed.code, 0, listed.stderr)
    const servers = JSON.parse(listed.stdout) as Array<{ name: string; state: string; tools: number; error?: string }>
    assert.deepStrictEqual(servers.map((server) => [server.name, server.state]), [
      ["scripted", "connected"],
      ["remote", "failed"]
    ])
    assert.strictEqual(servers[0].tools, 20)
    assert.match(servers[1].error ?? "", /fetch failed|ECONNREFUSED/)

    const got = toolwright("mcp", "get", "scripted", "--cwd", dir)
    assert.include(got.stdout, "  State: connected\n  Server: scripted 1.2.3\n")
    assert.include(got.stdout, "    mcp__scripted__slow (read-only)\n")

    const run = toolwright("run", "mcp__scripted__slow", "--input", `{"ms":50}`, "--cwd", dir, "--permission-mode", "bypassPermissions")
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(run.stdout, "slept 50 ms\n")
    assert.include(run.stderr, `warning: MCP server "remote" failed:`)

    const removed = toolwright("mcp", "remove", "remote", "--cwd", dir)
    assert.strictEqual(removed.code, 0)
    const missing = toolwright("mcp", "remove", "remote", "--cwd", dir)
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, `No MCP server named "remote" in ${join(dir, ".mcp.json")}.`)
    assert.deepStrictEqual(Object.keys(JSON.parse(readFileSync(join(dir, ".mcp.json"), "utf8")).mcpServers), ["scripted"])
  })

  it("add refuses a name that cannot be part of a tool name, and leaves .mcp.json as it was", () => {
    const project = mkdtempSync(join(dir, "names-"))
    const before = `${JSON.stringify({ mcpServers: { ok: { command: "node" } } }, null, 2)}\n`
    writeFileSync(join(project, ".mcp.json"), before)
    for (const name of ["we b", "a.b/c", "ümlaut", ""]) {
      const added = toolwright("mcp", "add", name, "--cwd", project, "--", "node", "server.js")
      assert.strictEqual(added.code, 2, name)
      assert.strictEqual(
        added.stderr,
        `Error: ${JSON.stringify(name)} is not a valid MCP server name: use only letters, digits, hyphens and ` +
          `underscores (it becomes part of its tools' names, mcp__NAME__tool).\n`
      )
      assert.strictEqual(readFileSync(join(project, ".mcp.json"), "utf8"), before)
    }
    assert.strictEqual(toolwright("mcp", "add", "My_server-2", "--cwd", project, "--", "node", "server.js").code, 0)
  })

  it("add refuses flags that do not apply to the server's transport instead of dropping them", () => {
    const project = mkdtempSync(join(dir, "flags-"))
    const cases: Array<[Array<string>, string]> = [
      [
        ["remote", "--url", "https://example.com/mcp", "--env", "TOKEN=x"],
        `--env is for stdio servers, which toolwright starts; send an http server what it needs with --header "Name: value".`
      ],
      [
        ["local", "--header", "Authorization: Bearer x", "--", "node", "server.js"],
        "--header is for remote servers (--url); give a stdio server what it needs with --env KEY=VALUE."
      ],
      [["local", "--env", "NOEQUALS", "--", "node", "server.js"], `--env "NOEQUALS" is not KEY=VALUE, e.g. --env API_KEY=\${API_KEY}`],
      [["events", "--transport", "sse", "--", "node", "server.js"], "An sse server needs --url, e.g. --url https://example.com/mcp"]
    ]
    assertAddRefused(project, cases)
    const added = toolwright("mcp", "add", "local", "--env", "A=1", "--env", "B=x=y", "--cwd", project, "--", "node", "s.js")
    assert.strictEqual(added.code, 0, added.stderr)
    assert.deepStrictEqual(JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8")), {
      mcpServers: { local: { type: "stdio", command: "node", args: ["s.js"], env: { A: "1", B: "x=y" } } }
    })
  })

  it("add refuses an --env or --header name given twice instead of keeping only the last value", () => {
    const project = mkdtempSync(join(dir, "repeated-"))
    const cases: Array<[Array<string>, string]> = [
      [
        ["local", "--env", "K=1", "--env", "OTHER=x", "--env", "K=2", "--", "node", "s.js"],
        `--env "K" is given more than once: give each variable once.`
      ],
      [
        ["remote", "--url", "https://example.com/mcp", "--header", "X-Key: a", "--header", "X-Key: b"],
        `--header "X-Key" is given more than once: give each header once.`
      ],
      [
        ["remote", "--url", "https://example.com/mcp", "--header", "X-Key: a", "--header", " x-key : b"],
        `--header "x-key" is given more than once (as "X-Key"; header names ignore case): give each header once.`
      ]
    ]
    assertAddRefused(project, cases)
    // Environment variable names are case-sensitive: k and K are two variables.
    const added = toolwright("mcp", "add", "local", "--env", "K=1", "--env", "k=2", "--cwd", project, "--", "node", "s.js")
    assert.strictEqual(added.code, 0, added.stderr)
    assert.deepStrictEqual(JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8")).mcpServers.local.env, {
      K: "1",
      k: "2"
    })
  })

  it("add and remove say when the name is configured in settings, which take precedence over .mcp.json", () => {
    const project = mkdtempSync(join(dir, "shadowed-"))
    mkdirSync(join(project, ".toolwright"))
    const settings = join(project, ".toolwright", "settings.json")
    writeFileSync(settings, JSON.stringify({ mcpServers: { docs: { url: "https://example.com/mcp" } } }))
    const removed = toolwright("mcp", "remove", "docs", "--cwd", project)
    assert.strictEqual(removed.code, 2)
    assert.strictEqual(
      removed.stderr,
      `Error: No MCP server named "docs" in ${join(project, ".mcp.json")}. It is configured in ${settings}: ` +
        "remove it from mcpServers there.\n"
    )
    const added = toolwright("mcp", "add", "docs", "--cwd", project, "--", "node", "docs.js")
    assert.strictEqual(added.code, 0, added.stderr)
    assert.strictEqual(
      added.stderr,
      `warning: ${settings} also defines MCP server "docs" in mcpServers, and settings take precedence over ` +
        ".mcp.json: remove it there for this entry to be used.\n"
    )
  })

  it("add takes a ws:// or wss:// --url as a WebSocket server, as .mcp.json reads an entry without a type", () => {
    const project = mkdtempSync(join(dir, "ws-"))
    const added = toolwright("mcp", "add", "live", "--url", "wss://example.com/ws", "--cwd", project)
    assert.strictEqual(added.code, 0, added.stderr)
    assert.strictEqual(added.stdout, `Added ws MCP server "live" to ${join(project, ".mcp.json")}\n`)
    const http = toolwright("mcp", "add", "web", "--url", "ws://example.com/ws", "--transport", "http", "--cwd", project)
    assert.strictEqual(http.code, 2)
    assert.strictEqual(
      http.stderr,
      `Error: MCP server "web" in .mcp.json: url must start with http:// or https:// for an http server\n`
    )
    assert.deepStrictEqual(JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8")), {
      mcpServers: { live: { type: "ws", url: "wss://example.com/ws" } }
    })
  })

  it("list and get show a server turned off by settings' disabledMcpjsonServers as disabled, where and how to enable", () => {
    const project = mkdtempSync(join(dir, "disabled-"))
    // Started, heavy would leave a file behind: it must not be started to be listed.
    const marker = join(project, "heavy-started")
    writeFileSync(
      join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          kept: { command: process.execPath, args: [scripted] },
          heavy: {
            command: process.execPath,
            args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`]
          }
        }
      })
    )
    mkdirSync(join(project, ".toolwright"))
    const settings = join(project, ".toolwright", "settings.json")
    writeFileSync(settings, JSON.stringify({ disabledMcpjsonServers: ["heavy"] }))
    const heavyCommand = `${process.execPath} -e require("fs").writeFileSync(${JSON.stringify(marker)}, "")`

    const listed = toolwright("mcp", "list", "--cwd", project)
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.strictEqual(
      listed.stdout,
      "NAME   TYPE   STATE       TOOLS  TARGET\n" +
        `kept   stdio  connected      20  ${process.execPath} ${scripted}\n` +
        `heavy  stdio  disabled        0  ${heavyCommand}\n` +
        `       ↳ disabled by disabledMcpjsonServers in ${settings}\n`
    )
    const json: Array<unknown> = JSON.parse(toolwright("mcp", "list", "--cwd", project, "--json").stdout)
    assert.deepStrictEqual(json[1], {
      name: "heavy",
      type: "stdio",
      state: "disabled",
      tools: 0,
      source: join(project, ".mcp.json"),
      target: heavyCommand,
      disabledBy: [settings]
    })

    const got = toolwright("mcp", "get", "heavy", "--cwd", project)
    assert.strictEqual(got.code, 0, got.stderr)
    assert.strictEqual(
      got.stdout,
      "heavy:\n" +
        `  Source: ${join(project, ".mcp.json")}\n` +
        "  Type: stdio\n" +
        `  Command: ${process.execPath}\n` +
        `  Args: -e require("fs").writeFileSync(${JSON.stringify(marker)}, "")\n` +
        `  State: disabled by disabledMcpjsonServers in ${settings}: remove "heavy" from that list to enable it\n`
    )
    const gotJson = JSON.parse(toolwright("mcp", "get", "heavy", "--cwd", project, "--json").stdout)
    assert.deepStrictEqual([gotJson.state, gotJson.disabledBy, gotJson.tools], ["disabled", [settings], []])
    assert.isFalse(existsSync(marker), "a disabled server was started")
  })

  it("get --json leaves out the values of env, headers and the client secret, as the text output does", () => {
    const project = mkdtempSync(join(dir, "secrets-"))
    writeFileSync(
      join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          docs: {
            url: "http://127.0.0.1:9/mcp",
            headers: { Authorization: "Bearer ${TOKEN}" },
            oauth: { clientId: "app", clientSecret: "${TOKEN}" }
          },
          local: { command: "node", args: ["missing.js"], env: { API_KEY: "${TOKEN}" } }
        }
      })
    )
    const get = (name: string) =>
      spawnSync(process.execPath, [bin, "mcp", "get", name, "--json", "--cwd", project], {
        encoding: "utf8",
        env: { ...process.env, HOME: dir, TOKEN: "tok-3141592" }
      })
    const docs = get("docs")
    assert.strictEqual(docs.status, 0, docs.stderr)
    assert.notInclude(docs.stdout, "tok-3141592")
    assert.deepStrictEqual(JSON.parse(docs.stdout).config, {
      type: "http",
      url: "http://127.0.0.1:9/mcp",
      headers: { Authorization: "(redacted)" },
      oauth: { clientId: "app", clientSecret: "(redacted)" }
    })
    const local = get("local")
    assert.strictEqual(local.status, 0, local.stderr)
    assert.notInclude(local.stdout, "tok-3141592")
    assert.deepStrictEqual(JSON.parse(local.stdout).config.env, { API_KEY: "(redacted)" })
  })

  it("get shows a remote server's headersHelper command, never what it prints", () => {
    const project = mkdtempSync(join(dir, "helper-"))
    const helper = `printf '{"Authorization": "Bearer %s"}' "$DOCS_TOKEN"`
    writeFileSync(
      join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: { docs: { url: "http://127.0.0.1:9/mcp", headers: { "X-Team": "tools" }, headersHelper: helper } }
      })
    )
    const got = spawnSync(process.execPath, [bin, "mcp", "get", "docs", "--cwd", project], {
      encoding: "utf8",
      env: { ...process.env, HOME: dir, DOCS_TOKEN: "tok-2718281" }
    })
    assert.strictEqual(got.status, 0, got.stderr)
    const lines = got.stdout.split("\n")
    assert.deepStrictEqual(lines.slice(0, 6), [
      "docs:",
      `  Source: ${join(project, ".mcp.json")}`,
      "  Type: http",
      "  URL: http://127.0.0.1:9/mcp",
      "  Header: X-Team",
      `  Headers helper: ${helper}`
    ])
    // The helper ran and did its part (the server failed after it, at port 9), and its token stays unseen.
    assert.match(lines[6], /^  State: failed \(/)
    assert.notInclude(lines[6], "headersHelper")
    assert.notInclude(got.stdout, "tok-2718281")
  })

  it("serve: a bad --port, or --port/--host without --transport http, is a usage error that says what to do", () => {
    const outOfRange = toolwright("mcp", "serve", "--transport", "http", "--port", "70000", "--cwd", dir)
    assert.strictEqual(outOfRange.code, 2)
    assert.strictEqual(outOfRange.stderr, "Error: --port must be a port number from 1 to 65535 (or 0 for a free port), not 70000.\n")
    const negative = toolwright("mcp", "serve", "--transport", "http", "--port", "-5", "--cwd", dir)
    assert.strictEqual(negative.code, 2)
    assert.strictEqual(negative.stderr, "Error: --port must be a port number from 1 to 65535 (or 0 for a free port), not -5.\n")
    for (const flag of [["--port", "7331"], ["--host", "::1"]]) {
      const ignored = toolwright("mcp", "serve", ...flag, "--cwd", dir)
      assert.strictEqual(ignored.code, 2)
      assert.strictEqual(
        ignored.stderr,
        "Error: --port and --host are for --transport http; over stdio (the default) the client starts toolwright " +
          "mcp serve itself. Add --transport http to serve over HTTP.\n"
      )
    }
  })

  it.scopedLive("serve: a port already in use is a usage error naming it and what to do", () =>
    Effect.gen(function*() {
      const taken = yield* Effect.acquireRelease(
        Effect.async<net.Server>((resume) => {
          const server = net.createServer().listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.sync(() => server.close())
      )
      const address = taken.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const result = toolwright("mcp", "serve", "--transport", "http", "--port", String(port), "--cwd", dir)
      assert.strictEqual(result.code, 2)
      assert.strictEqual(
        result.stderr,
        `Error: Cannot serve MCP over HTTP: http://127.0.0.1:${port}/mcp is already in use by another program. ` +
          "Choose another --port, or --port 0 for a free one.\n"
      )
    }))

  it.scopedLive("serve: an MCP client lists the built-in tools and calls them through the pipeline", () =>
    Effect.gen(function*() {
      const client = yield* serveClient(dir)
      const { tools } = yield* Effect.promise(() => client.listTools())
      const names = tools.map((tool) => tool.name)
      assert.include(names, "Read")
      assert.include(names, "Write")
      assert.isFalse(names.some((name) => name.startsWith("mcp__")))
      assert.strictEqual(tools.find((tool) => tool.name === "Read")?.annotations?.readOnlyHint, true)

      const read = yield* Effect.promise(() =>
        client.callTool({ name: "Read", arguments: { file_path: join(dir, "notes.txt") } })
      )
      assert.isUndefined(read.isError)
      assert.include((read.content as Array<{ text: string }>)[0].text, "first line")

      const write = yield* Effect.promise(() =>
        client.callTool({ name: "Write", arguments: { file_path: join(dir, "new.txt"), content: "x" } })
      )
      assert.isTrue(write.isError)
      assert.include((write.content as Array<{ text: string }>)[0].text, "so toolwright mcp serve cannot ask")
    }))

  it.scopedLive("serve: settings' plugins, PermissionRequest hooks and ToolSearch apply as in run", () =>
    Effect.gen(function*() {
      const project = mkdtempSync(join(dir, "served-"))
      mkdirSync(join(project, ".toolwright"))
      const hook = join(project, "allow-writes.sh")
      writeFileSync(
        hook,
        `#!/bin/sh\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'\n`,
        { mode: 0o755 }
      )
      writeFileSync(
        join(project, ".toolwright", "settings.json"),
        JSON.stringify({
          plugins: [join(cliDir, "test", "fixtures", "shout-plugin.mjs")],
          hooks: { PermissionRequest: [{ matcher: "Write", hooks: [{ type: "command", command: hook }] }] }
        })
      )
      const client = yield* serveClient(project)
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.include(tools.map((tool) => tool.name), "Shout")
      const shout = yield* Effect.promise(() => client.callTool({ name: "Shout", arguments: { text: "hi" } }))
      assert.deepStrictEqual(shout.content, [{ type: "text", text: "HI" }])
      // No elicitation here: the hook answers for the user.
      const write = yield* Effect.promise(() =>
        client.callTool({ name: "Write", arguments: { file_path: join(project, "hooked.txt"), content: "ok\n" } })
      )
      assert.isUndefined(write.isError, JSON.stringify(write.content))
      assert.strictEqual(readFileSync(join(project, "hooked.txt"), "utf8"), "ok\n")
      const search = yield* Effect.promise(() => client.callTool({ name: "ToolSearch", arguments: { query: "select:Shout" } }))
      assert.deepStrictEqual(search.content, [{ type: "text", text: "[tool reference Shout]" }])
    }))

  it.scopedLive("serve: a client going away mid-call stops the call's processes before serve exits", () =>
    Effect.gen(function*() {
      const marker = `sleep 999.${process.pid}${Date.now() % 1000}`
      const running = () =>
        spawnSync("ps", ["-eo", "args"], { encoding: "utf8" }).stdout.split("\n").some((line) => line === marker)
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [bin, "mcp", "serve", "--cwd", dir, "--permission-mode", "bypassPermissions"],
        env: { ...process.env, HOME: dir } as Record<string, string>,
        stderr: "ignore"
      })
      const client = new Client({ name: "e2e", version: "1" })
      yield* Effect.promise(() => client.connect(transport))
      const call = client.callTool({ name: "Bash", arguments: { command: marker } }).then(() => "finished", () => "gone")
      for (let i = 0; i < 200 && !running(); i++) yield* Effect.sleep("25 millis")
      assert.isTrue(running(), "the Bash call should have started")
      yield* Effect.promise(() => client.close())
      assert.strictEqual(yield* Effect.promise(() => call), "gone")
      // serve has exited by now (close waits for it); its Bash child must not outlive it.
      for (let i = 0; i < 40 && running(); i++) yield* Effect.sleep("25 millis")
      assert.isFalse(running(), `${marker} outlived toolwright mcp serve`)
    }))

  it.scopedLive("login: OAuth in the browser (here: fetched), then the server connects", () =>
    Effect.gen(function*() {
      const server = yield* startOAuthServer
      const project = mkdtempSync(join(dir, "oauth-"))
      const url = `http://127.0.0.1:${server.port}/mcp`
      assert.strictEqual(toolwright("mcp", "add", "guarded", "--cwd", project, "--url", url).code, 0)
      const before = JSON.parse(toolwright("mcp", "list", "--cwd", project, "--json").stdout)
      assert.strictEqual(before[0].state, "needs-auth")

      const login = yield* loginInBrowser("guarded", project)
      assert.strictEqual(login.code, 0, login.stderr)
      assert.strictEqual(statSync(join(dir, ".toolwright", "mcp-credentials.json")).mode & 0o777, 0o600)
      const after = JSON.parse(toolwright("mcp", "list", "--cwd", project, "--json").stdout)
      assert.strictEqual(after[0].state, "connected")
    }))

  it.scopedLive("login expands ${VAR} with settings' env, as run and mcp list do: it logs in to the URL they use", () =>
    Effect.gen(function*() {
      const server = yield* startOAuthServer
      const project = mkdtempSync(join(dir, "oauth-env-"))
      writeFileSync(
        join(project, ".mcp.json"),
        JSON.stringify({ mcpServers: { docs: { type: "http", url: "http://127.0.0.1:${DOCS_PORT}/mcp" } } })
      )
      mkdirSync(join(project, ".toolwright"))
      writeFileSync(
        join(project, ".toolwright", "settings.json"),
        JSON.stringify({ env: { DOCS_PORT: String(server.port) } })
      )
      const before = JSON.parse(toolwright("mcp", "list", "--cwd", project, "--json").stdout)
      assert.deepStrictEqual([before[0].state, before[0].target], ["needs-auth", `http://127.0.0.1:${server.port}/mcp`])

      const login = yield* loginInBrowser("docs", project)
      assert.strictEqual(login.code, 0, login.stderr)
      assert.strictEqual(
        login.stdout,
        `Logged in to MCP server "docs"; credentials saved in ${join(dir, ".toolwright", "mcp-credentials.json")}\n`
      )
      const after = JSON.parse(toolwright("mcp", "list", "--cwd", project, "--json").stdout)
      assert.strictEqual(after[0].state, "connected")
    }))
})
