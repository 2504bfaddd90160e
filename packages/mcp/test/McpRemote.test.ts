import { assert, describe, it } from "@effect/vitest"
import { Message, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Fiber, Layer } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpClientManager, McpConfig, McpToolRegistry } from "../src/index.js"
import { freePort } from "./support.js"

const here = import.meta.dirname
const everything = path.join(here, "../node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const scripted = path.join(here, "fixtures/scripted-server.mjs")

/** Spawns a server and waits for the line saying it listens; killed when the scope closes. */
const startServer = (args: ReadonlyArray<string>, ready: RegExp, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.async<{ readonly child: ChildProcess; readonly port: number }>((resume) => {
      const child = spawn(process.execPath, [...args], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, ...env }
      })
      let done = false
      const onData = (chunk: Buffer) => {
        const match = ready.exec(String(chunk))
        if (match !== null && !done) {
          done = true
          resume(Effect.succeed({ child, port: Number(match[1]) }))
        }
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", onData)
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

const startScripted = (mode: "http" | "ws", port = 0, extra: ReadonlyArray<string> = []) =>
  startServer([scripted, mode, String(port), ...extra], /listening (\d+)/)

const runtimeFor = (mcpServers: unknown, options: Partial<McpClientManager.Options> = {}) =>
  Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-remote-"))
    const manager = McpClientManager.layer({
      servers: McpConfig.parseServers(mcpServers, "test.mcp.json", { TEST_TOKEN: "secret" }),
      cwd: dir,
      logDir: path.join(dir, "logs"),
      reconnect: { maxAttempts: 40, initialDelayMs: 50 },
      ...options
    })
    const layer = ToolRuntime.layerDefault.pipe(
      Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
      Layer.provideMerge(manager)
    )
    const context = ToolUseContext.make({
      cwd: dir,
      projectDir: path.join(dir, "project"),
      permissionContext: { mode: "bypassPermissions", allow: [], deny: [], ask: [], additionalDirectories: [] }
    })
    const built = yield* Layer.build(layer)
    const call = (name: string, input: unknown) =>
      Effect.gen(function*() {
        const runtime = yield* ToolRuntime.ToolRuntime
        const events: Array<Message.RuntimeEvent> = []
        const result = yield* runtime.execute({ type: "tool_use", id: "toolu_r", name, input }, context, (event) =>
          Effect.sync(() => {
            events.push(event)
          }))
        return { result: result.result, events, text: Message.contentText(result.result.content) }
      }).pipe(Effect.provide(built))
    const manager_ = yield* Effect.provide(McpClientManager.McpClientManager, built)
    const waitFor = (state: McpClientManager.ServerState) =>
      Effect.gen(function*() {
        for (let i = 0; i < 500 && manager_.servers()[0].state !== state; i++) yield* Effect.sleep("20 millis")
        return manager_.servers()[0]
      })
    return { call, manager: manager_, waitFor }
  })

describe("McpClientManager over streamable HTTP", () => {
  it.scopedLive("connects, calls with progress and follows list_changed", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http")
      const { call, manager } = yield* runtimeFor({ web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } })
      assert.strictEqual(manager.servers()[0].state, "connected")
      assert.strictEqual(manager.servers()[0].type, "http")
      const slow = yield* call("mcp__web__slow", { ms: 100 })
      assert.strictEqual(slow.text, "slept 100 ms")
      assert.strictEqual(slow.events.filter((event) => event._tag === "Progress").length, 2)
      yield* call("mcp__web__add-tool", { name: "fresh" })
      for (let i = 0; i < 100 && !manager.tools().some((tool) => tool.name === "mcp__web__fresh"); i++) {
        yield* Effect.sleep("20 millis")
      }
      assert.strictEqual((yield* call("mcp__web__fresh", {})).text, "fresh ran")
    }))

  it.scopedLive("a server killed mid-call fails the call, and the client reconnects when it is back", () =>
    Effect.gen(function*() {
      const first = yield* startScripted("http")
      const { call, waitFor } = yield* runtimeFor({ web: { type: "http", url: `http://127.0.0.1:${first.port}/mcp` } })
      const pending = yield* Effect.fork(call("mcp__web__slow", { ms: 60_000 }))
      yield* Effect.sleep("200 millis")
      first.child.kill("SIGKILL")
      const failed = yield* pending.await.pipe(Effect.flatten)
      assert.isTrue(failed.result.is_error)
      assert.match(failed.text, /^<tool_use_error>MCP server "web" (failed during|closed the connection while) mcp__web__slow/)
      const down = yield* call("mcp__web__slow", { ms: 10 })
      assert.isTrue(down.result.is_error)
      assert.include(down.text, `MCP server "web" is not connected, so mcp__web__slow cannot run: connection lost:`)

      yield* startScripted("http", first.port)
      const status = yield* waitFor("connected")
      assert.strictEqual(status.state, "connected")
      assert.strictEqual((yield* call("mcp__web__slow", { ms: 10 })).text, "slept 10 ms")
    }))

  it.scopedLive("a frozen server (SIGSTOP) misses a ping: the call fails within seconds, then the client reconnects", () =>
    Effect.gen(function*() {
      const { child, port } = yield* startScripted("http")
      const { call, manager, waitFor } = yield* runtimeFor(
        { web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
        { heartbeat: { intervalMs: 300, timeoutMs: 700 }, connectTimeoutMs: 2_000 }
      )
      const pending = yield* Effect.fork(call("mcp__web__sleep-silently", { ms: 600_000 }))
      yield* Effect.sleep("500 millis")
      child.kill("SIGSTOP")
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGCONT")))
      const started = Date.now()
      const failed = yield* pending.await.pipe(Effect.flatten)
      assert.isBelow(Date.now() - started, 20_000)
      assert.isTrue(failed.result.is_error)
      assert.strictEqual(
        failed.text,
        `<tool_use_error>MCP server "web" stopped answering while mcp__web__sleep-silently was running: ` +
          `it did not answer a ping within 700 ms. toolwright is reconnecting to it; try again shortly, or check ` +
          `the server (toolwright mcp get web).</tool_use_error>`
      )
      assert.strictEqual(
        manager.servers()[0].error,
        "connection lost: it did not answer a ping within 700 ms (frozen or unreachable)"
      )
      child.kill("SIGCONT")
      assert.strictEqual((yield* waitFor("connected")).state, "connected")
      assert.strictEqual((yield* call("mcp__web__slow", { ms: 10 })).text, "slept 10 ms")
    }))

  it.scopedLive("a ping answered with HTTP 429 or 502, or a JSON-RPC error, means the server is alive: the call runs to its end", () =>
    Effect.gen(function*() {
      // The answers' texts name network failures (ECONNREFUSED, ECONNRESET), but they came over the connection.
      for (const status of ["429", "502", "method-not-found", "upstream-error"]) {
        const { port } = yield* startScripted("http", 0, ["--ping", status])
        const { call, manager } = yield* runtimeFor(
          { web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
          { heartbeat: { intervalMs: 200, timeoutMs: 700 } }
        )
        const done = yield* call("mcp__web__sleep-silently", { ms: 1_500 })
        assert.strictEqual(done.text, "slept 1500 ms silently", status)
        assert.strictEqual(manager.servers()[0].state, "connected", status)
      }
    }))

  it.scopedLive("a call's event stream broken off under a live server fails the call and drops the connection", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http", 0, ["--cut-call-streams"])
      const { call, manager } = yield* runtimeFor(
        { web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
        { reconnect: { maxAttempts: 0, initialDelayMs: 50 } }
      )
      // The server still answers pings: only the stream's break can end this call before its timeout.
      const cut = yield* call("mcp__web__slow", { ms: 600_000 })
      assert.strictEqual(
        cut.text,
        `<tool_use_error>MCP server "web" closed the connection while mcp__web__slow was running.</tool_use_error>`
      )
      assert.strictEqual(manager.servers()[0].state, "failed")
      assert.strictEqual(manager.servers()[0].error, "connection lost: SSE stream disconnected: TypeError: terminated")
    }))

  it.scopedLive("a ping whose connection breaks fails the call with what happened", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http", 0, ["--ping", "drop"])
      const { call, manager } = yield* runtimeFor(
        { web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
        { heartbeat: { intervalMs: 200, timeoutMs: 700 }, reconnect: { maxAttempts: 0, initialDelayMs: 50 } }
      )
      const failed = yield* call("mcp__web__sleep-silently", { ms: 600_000 })
      assert.isTrue(failed.result.is_error)
      assert.strictEqual(
        failed.text,
        `<tool_use_error>MCP server "web" stopped answering while mcp__web__sleep-silently was running: its ` +
          `connection broke during a ping: fetch failed. This session does not reconnect to servers (reconnect ` +
          `attempts: 0); check the server (toolwright mcp get web) and start a new session.</tool_use_error>`
      )
      assert.strictEqual(manager.servers()[0].error, "connection lost: fetch failed")
    }))

  it.scopedLive("a stale session (HTTP 404) is re-initialised and the call is sent again", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http")
      const { call } = yield* runtimeFor({ web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } })
      assert.strictEqual((yield* call("mcp__web__forget-sessions", {})).text, "forgotten")
      yield* Effect.sleep("50 millis")
      assert.strictEqual((yield* call("mcp__web__slow", { ms: 10 })).text, "slept 10 ms")
    }))

  it.scopedLive("HTTP 401 makes the server needs-auth and its tools say so", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http", 0, ["--token", "secret"])
      const { call, manager } = yield* runtimeFor({
        web: { type: "http", url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: "Bearer ${TEST_TOKEN}" } },
        anonymous: { type: "http", url: `http://127.0.0.1:${port}/mcp` }
      })
      const anonymous = manager.servers().find((server) => server.name === "anonymous")!
      assert.strictEqual(anonymous.state, "needs-auth")
      assert.strictEqual(manager.servers()[0].state, "connected")
      assert.strictEqual((yield* call("mcp__web__revoke-token", {})).text, "revoked")
      yield* Effect.sleep("50 millis")
      const refused = yield* call("mcp__web__slow", { ms: 10 })
      assert.isTrue(refused.result.is_error)
      assert.match(
        refused.text,
        /^<tool_use_error>MCP server "web" needs authentication before mcp__web__slow can run: the server answered HTTP 401/
      )
      assert.strictEqual(manager.servers()[0].state, "needs-auth")
    }))
})

describe("McpClientManager headersHelper (Claude Code's dynamic headers)", () => {
  it.scopedLive("the helper's JSON headers win over static ones; a helper that fails or prints no object fails its server", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http", 0, ["--token", "secret"])
      const url = `http://127.0.0.1:${port}/mcp`
      const { call, manager } = yield* runtimeFor({
        web: {
          type: "http",
          url,
          headers: { Authorization: "Bearer stale" },
          // Run by a shell, with the server's name and URL in its environment.
          headersHelper: `test "$CLAUDE_CODE_MCP_SERVER_NAME $CLAUDE_CODE_MCP_SERVER_URL" = "web ${url}" && ` +
            `echo '{"Authorization": "Bearer secret"}'`
        },
        broken: { type: "http", url, headersHelper: "echo 'no token for you' >&2; exit 3" },
        wordy: { type: "http", url, headersHelper: "echo 'Bearer secret'" }
      })
      assert.strictEqual(manager.servers()[0].state, "connected")
      assert.strictEqual((yield* call("mcp__web__slow", { ms: 10 })).text, "slept 10 ms")
      const [, broken, wordy] = manager.servers()
      assert.strictEqual(broken.state, "failed")
      assert.strictEqual(
        broken.error,
        `its headersHelper failed (exit code 3): no token for you. Fix "headersHelper" of "broken" in test.mcp.json.`
      )
      assert.strictEqual(wordy.state, "failed")
      assert.strictEqual(
        wordy.error,
        // What it printed is not quoted: it may well be a token.
        `its headersHelper must print a JSON object of header names to string values, but its output is not JSON. ` +
          `Fix "headersHelper" of "wordy" in test.mcp.json.`
      )
    }))
})

/** Whether a process is gone (a zombie nobody has reaped yet counts as gone: it runs nothing). */
const isGone = (pid: number) => {
  const stat = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim()
  return stat === "" || stat.startsWith("Z")
}

/** Polls until `pid` is gone, for at most 5 s; whether it is. */
const waitGone = (pid: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 250 && !isGone(pid); i++) yield* Effect.sleep("20 millis")
    return isGone(pid)
  })

/** The pid `file` holds once it exists (polled), for at most 5 s. */
const readPid = (file: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 250 && !fs.existsSync(file); i++) yield* Effect.sleep("20 millis")
    return Number(fs.readFileSync(file, "utf8"))
  })

/**
 * A headersHelper whose child (`sleep 30`) would outlive the shell running it: it writes the child's pid to
 * `<name>.pid` (whole, by a rename) and waits for it.
 */
const lingeringHelper = (dir: string, name: string) => {
  const pidFile = path.join(dir, `${name}.pid`)
  const script = path.join(dir, `${name}.sh`)
  fs.writeFileSync(script, `sleep 30 &\necho $! > '${pidFile}.tmp'\nmv '${pidFile}.tmp' '${pidFile}'\nwait\n`)
  return { command: `sh '${script}'`, pidFile }
}

describe("McpClientManager headersHelper: what the helper started ends with it", () => {
  it.scopedLive("a helper over its time is killed with its process group, and the server fails saying so", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-helper-"))
      const helper = lingeringHelper(dir, "slow")
      const { manager } = yield* runtimeFor(
        { slow: { type: "http", url: "http://127.0.0.1:9/mcp", headersHelper: helper.command } },
        { headersHelperTimeoutMs: 1_000 }
      )
      assert.deepStrictEqual([manager.servers()[0].state, manager.servers()[0].error], [
        "failed",
        `its headersHelper did not finish within 1 s. Fix "headersHelper" of "slow" in test.mcp.json.`
      ])
      const pid = yield* readPid(helper.pidFile)
      assert.isTrue(yield* waitGone(pid), `the helper's child ${pid} outlived its timeout`)
    }))

  it.scopedLive("a helper that exits leaving a child on its output is answered by its output; the child dies", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("http", 0, ["--token", "secret"])
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-helper-"))
      const pidFile = path.join(dir, "left.pid")
      const script = path.join(dir, "left.sh")
      // The sleep inherits the helper's stdout and would hold it open for 30 s after the shell has exited.
      fs.writeFileSync(
        script,
        `sleep 30 &\necho $! > '${pidFile}.tmp'\nmv '${pidFile}.tmp' '${pidFile}'\n` +
          `echo '{"Authorization": "Bearer secret"}'\n`
      )
      const { call, manager } = yield* runtimeFor({
        left: { type: "http", url: `http://127.0.0.1:${port}/mcp`, headersHelper: `sh '${script}'` }
      })
      assert.strictEqual(manager.servers()[0].state, "connected")
      assert.strictEqual((yield* call("mcp__left__slow", { ms: 10 })).text, "slept 10 ms")
      const pid = yield* readPid(pidFile)
      assert.isTrue(yield* waitGone(pid), `the helper's child ${pid} outlived the helper`)
    }))

  it.scopedLive("a connect interrupted while its helper runs kills the helper's process group", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-helper-"))
      const helper = lingeringHelper(dir, "held")
      const connecting = yield* Effect.fork(Effect.scoped(Layer.build(McpClientManager.layer({
        servers: McpConfig.parseServers(
          { held: { type: "http", url: "http://127.0.0.1:9/mcp", headersHelper: helper.command } },
          "test.mcp.json",
          {}
        ),
        cwd: dir,
        logDir: path.join(dir, "logs")
      }))))
      const pid = yield* readPid(helper.pidFile)
      yield* Fiber.interrupt(connecting)
      assert.isTrue(yield* waitGone(pid), `the helper's child ${pid} outlived the interruption`)
    }))
})

describe("McpClientManager: a URL that is not the server's MCP endpoint", () => {
  it.scopedLive("says the HTTP status and the page's words, not its HTML, and what to check", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* startServer([everything, "streamableHttp"], /listening on port (\d+)/, { PORT: String(port) })
      const { manager } = yield* runtimeFor({
        path: { type: "http", url: `http://127.0.0.1:${port}/nope` },
        transport: { type: "sse", url: `http://127.0.0.1:${port}/mcp` }
      })
      const check = (name: string) =>
        `Check that "url" of "${name}" in test.mcp.json is the server's MCP endpoint and "type" its transport ` +
        `("http" for streamable HTTP, "sse" for the older HTTP+SSE).`
      assert.deepStrictEqual(manager.servers().map((server) => [server.name, server.state, server.error]), [
        ["path", "failed", `it answered HTTP 404 (Error Cannot POST /nope). ${check("path")}`],
        ["transport", "failed", `it answered HTTP 400 (SSE error: Non-200 status code (400)). ${check("transport")}`]
      ])
    }))
})

describe("McpClientManager over SSE and WebSocket", () => {
  it.scopedLive("SSE: server-everything's echo", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* startServer([everything, "sse"], /running on port (\d+)/, { PORT: String(port) })
      const { call, manager } = yield* runtimeFor({ legacy: { type: "sse", url: `http://127.0.0.1:${port}/sse` } })
      assert.strictEqual(manager.servers()[0].state, "connected")
      assert.strictEqual((yield* call("mcp__legacy__echo", { message: "over sse" })).text, "Echo: over sse")
    }))

  it.scopedLive("SSE: a frozen server (SIGSTOP) misses a ping and its call fails within seconds", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const { child } = yield* startServer([everything, "sse"], /running on port (\d+)/, { PORT: String(port) })
      const { call } = yield* runtimeFor(
        { legacy: { type: "sse", url: `http://127.0.0.1:${port}/sse` } },
        { heartbeat: { intervalMs: 300, timeoutMs: 700 }, reconnect: { maxAttempts: 0, initialDelayMs: 50 } }
      )
      const pending = yield* Effect.fork(call("mcp__legacy__trigger-long-running-operation", { duration: 600, steps: 600 }))
      yield* Effect.sleep("500 millis")
      child.kill("SIGSTOP")
      const started = Date.now()
      const failed = yield* pending.await.pipe(Effect.flatten)
      assert.isBelow(Date.now() - started, 20_000)
      assert.strictEqual(
        failed.text,
        `<tool_use_error>MCP server "legacy" stopped answering while mcp__legacy__trigger-long-running-operation was ` +
          `running: it did not answer a ping within 700 ms. This session does not reconnect to servers (reconnect ` +
          `attempts: 0); check the server (toolwright mcp get legacy) and start a new session.</tool_use_error>`
      )
    }))

  it.scopedLive("WebSocket: calls and progress", () =>
    Effect.gen(function*() {
      const { port } = yield* startScripted("ws")
      const { call, manager } = yield* runtimeFor({ sock: { url: `ws://127.0.0.1:${port}` } })
      assert.strictEqual(manager.servers()[0].type, "ws")
      const slow = yield* call("mcp__sock__slow", { ms: 100 })
      assert.strictEqual(slow.text, "slept 100 ms")
      assert.strictEqual(slow.events.filter((event) => event._tag === "Progress").length, 2)
    }))
})
