import { assert, describe, it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { Message, ToolRegistry, ToolResultStorage, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { McpClientManager, McpConfig, McpToolRegistry } from "../src/index.js"
import { freePort } from "./support.js"

const here = import.meta.dirname
const everything = path.join(here, "../node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const scripted = path.join(here, "fixtures/scripted-server.mjs")

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-"))

/** A runtime over the MCP tools of `mcpServers`, with permissions bypassed so calls reach the server. */
const setup = (mcpServers: unknown, options: Partial<McpClientManager.Options> = {}) => {
  const dir = tempDir()
  const manager = McpClientManager.layer({
    servers: McpConfig.parseServers(mcpServers, "test.mcp.json", { HOME_FOR_TEST: dir }),
    cwd: dir,
    logDir: path.join(dir, "logs"),
    ...options
  })
  const registry = McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))
  const layer = ToolRuntime.layerDefault.pipe(
    Layer.provideMerge(registry),
    Layer.provideMerge(manager)
  )
  const context = ToolUseContext.make({
    cwd: dir,
    projectDir: path.join(dir, "project"),
    sessionId: "s1",
    permissionContext: { mode: "bypassPermissions", allow: [], deny: [], ask: [], additionalDirectories: [] }
  })
  return { dir, layer, context }
}

const call = (context: ToolUseContext.ToolUseContext, name: string, input: unknown, id = "toolu_1") =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const events: Array<Message.RuntimeEvent> = []
    const result = yield* runtime.execute({ type: "tool_use", id, name, input }, context, (event) =>
      Effect.sync(() => {
        events.push(event)
      }))
    return { result: result.result, events }
  })

describe("ListMcpResourcesTool over several servers", () => {
  const { context, layer } = setup(
    {
      a: { command: process.execPath, args: [everything, "stdio"] },
      b: { command: process.execPath, args: [everything, "stdio"] }
    },
    { reconnect: { maxAttempts: 0, initialDelayMs: 1 } }
  )

  it.scopedLive("a server that cannot be asked is named with why, beside the others' resources", () =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      process.kill(manager.servers().find((status) => status.name === "b")!.pid!, "SIGKILL")
      for (let i = 0; i < 500 && manager.servers().find((status) => status.name === "b")!.state === "connected"; i++) {
        yield* Effect.sleep("20 millis")
      }
      const text = Message.contentText((yield* call(context, "ListMcpResourcesTool", {})).result.content)
      const [listed, missing] = text.split("\n\n")
      const resources: Array<{ server: string }> = JSON.parse(listed!)
      assert.isAbove(resources.length, 0)
      assert.isTrue(resources.every((resource) => resource.server === "a"))
      assert.strictEqual(
        missing,
        "Not listed, because these servers could not be asked: b (connection lost: the server closed the connection)"
      )
    }).pipe(Effect.provide(layer)))
})

describe("McpClientManager over stdio (server-everything)", () => {
  const { context, layer } = setup({ everything: { command: process.execPath, args: [everything, "stdio"] } })

  it.scopedLive("lists the server's tools as mcp__everything__* and calls them through the pipeline", () =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const [status] = manager.servers()
      assert.strictEqual(status.state, "connected")
      assert.strictEqual(status.type, "stdio")
      assert.isTrue(status.toolCount >= 10)
      const names = manager.tools().map((tool) => tool.name)
      assert.include(names, "mcp__everything__echo")
      assert.include(names, "mcp__everything__get-sum")
      const echo = manager.tools().find((tool) => tool.name === "mcp__everything__echo")!
      assert.strictEqual(echo.source, "mcp")
      assert.deepStrictEqual(echo.mcpInfo, { serverName: "everything", toolName: "echo" })
      assert.isTrue(echo.isReadOnly({}))
      assert.isTrue(echo.isConcurrencySafe({}))
      assert.strictEqual((echo.inputJsonSchema as { type?: string }).type, "object")

      const { result } = yield* call(context, "mcp__everything__echo", { message: "hello" })
      assert.deepStrictEqual(result, { type: "tool_result", tool_use_id: "toolu_1", content: "Echo: hello" })
      const sum = yield* call(context, "mcp__everything__get-sum", { a: 2, b: 3 })
      assert.strictEqual(sum.result.content, "The sum of 2 and 3 is 5.")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("validates arguments against the server's JSON Schema before calling", () =>
    Effect.gen(function*() {
      const { result } = yield* call(context, "mcp__everything__get-sum", { a: "2", extra: 1 })
      assert.isTrue(result.is_error)
      assert.strictEqual(
        result.content,
        "<tool_use_error>InputValidationError: mcp__everything__get-sum failed due to the following issues:\n" +
          "The required parameter `b` is missing\n" +
          "The parameter `a` type is expected as `number` but provided as `string`</tool_use_error>"
      )
    }).pipe(Effect.provide(layer)))

  it.scopedLive("maps images and structured content, and reports progress", () =>
    Effect.gen(function*() {
      const image = yield* call(context, "mcp__everything__get-tiny-image", {})
      assert.isArray(image.result.content)
      const blocks = image.result.content as ReadonlyArray<Message.ToolResultContentBlock>
      assert.deepStrictEqual(blocks.map((block) => block.type), ["text", "image", "text"])
      const picture = blocks[1]
      assert.isTrue(picture.type === "image" && picture.source.media_type === "image/png")

      const weather = yield* call(context, "mcp__everything__get-structured-content", { location: "Chicago" })
      assert.include(Message.contentText(weather.result.content), "temperature")

      const long = yield* call(context, "mcp__everything__trigger-long-running-operation", { duration: 0.2, steps: 2 })
      assert.strictEqual(long.result.content, "Long running operation completed. Duration: 0.2 seconds, Steps: 2.")
      const progress = long.events.filter((event) => event._tag === "Progress")
      // The last notification comes just before the response: the SDK alone would drop it.
      assert.deepStrictEqual(progress.map((event) => event._tag === "Progress" ? event.data : undefined), [
        { progress: 1, total: 2 },
        { progress: 2, total: 2 }
      ])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("ListMcpResourcesTool and ReadMcpResourceTool: a resource link in a result can be followed", () =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const names = manager.tools().map((tool) => tool.name)
      assert.includeMembers(names, ["ListMcpResourcesTool", "ReadMcpResourceTool"])
      const resources = manager.tools().find((tool) => tool.name === "ReadMcpResourceTool")!
      assert.strictEqual(resources.source, "mcp")
      assert.isTrue(resources.isReadOnly({ server: "everything", uri: "demo://x" }))

      const listed = yield* call(context, "ListMcpResourcesTool", {})
      const entries = JSON.parse(listed.result.content as string) as Array<Record<string, string>>
      assert.deepStrictEqual(entries[0], {
        uri: "demo://resource/static/document/architecture.md",
        name: "architecture.md",
        mimeType: "text/markdown",
        description: "Static document file exposed from /docs: architecture.md",
        server: "everything"
      })
      assert.deepStrictEqual((yield* call(context, "ListMcpResourcesTool", { server: "everything" })).result.content, listed.result.content)

      const text = yield* call(context, "ReadMcpResourceTool", { server: "everything", uri: "demo://resource/dynamic/text/1" })
      const read = JSON.parse(text.result.content as string) as { contents: Array<Record<string, string>> }
      assert.deepStrictEqual(Object.keys(read.contents[0]), ["uri", "mimeType", "text"])
      assert.match(read.contents[0].text, /^Resource 1: This is a plaintext resource created at /)

      const blob = yield* call(context, "ReadMcpResourceTool", { server: "everything", uri: "demo://resource/dynamic/blob/2" }, "toolu_blob")
      const saved = path.join(context.projectDir, "s1", "mcp-output", "toolu_blob-0.bin")
      assert.strictEqual(
        blob.result.content,
        JSON.stringify({ contents: [{ uri: "demo://resource/dynamic/blob/2", mimeType: "text/plain", blobSavedTo: saved }] })
      )
      assert.match(fs.readFileSync(saved, "utf8"), /^Resource 2: This is a base64 blob created at /)

      const unknown = yield* call(context, "ReadMcpResourceTool", { server: "nope", uri: "demo://x" })
      assert.deepStrictEqual(unknown.result, {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: `<tool_use_error>No MCP server is named "nope". Servers with resources: everything.</tool_use_error>`,
        is_error: true
      })
      const missing = yield* call(context, "ReadMcpResourceTool", { server: "everything", uri: "demo://nope" })
      assert.strictEqual(
        missing.result.content,
        `<tool_use_error>MCP server "everything" refused ReadMcpResourceTool: MCP error -32602: MCP error -32602: ` +
          "Resource demo://nope not found</tool_use_error>"
      )
    }).pipe(Effect.provide(layer)))

  it.scopedLive("the resource tools need an allow rule, as server tools do, though they only read", () =>
    Effect.gen(function*() {
      const ruled = (allow: Array<string>, deny: Array<string> = []) => ({
        ...context,
        permissionContext: {
          mode: "default" as const,
          allow: allow.map((rule) => ({ rule, source: "cli" })),
          deny: deny.map((rule) => ({ rule, source: "cli" })),
          ask: [],
          additionalDirectories: []
        }
      })
      const input = { server: "everything", uri: "demo://resource/dynamic/text/1" }
      for (const [name, toolInput] of [["ListMcpResourcesTool", {}], ["ReadMcpResourceTool", input]] as const) {
        const { result } = yield* call(ruled([]), name, toolInput)
        assert.deepStrictEqual(result, {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: `Permission to use ${name} was not granted: ${name} needs permission: no allow rule covers it. No ` +
            "one can answer a permission prompt here (non-interactive), so it was denied. To allow it, add a rule " +
            `such as "${name}" to permissions.allow in .toolwright/settings.json, or choose another permission mode.`,
          is_error: true
        })
      }
      const allowed = yield* call(ruled(["ReadMcpResourceTool"]), "ReadMcpResourceTool", input)
      assert.match(allowed.result.content as string, /"text":"Resource 1: This is a plaintext resource created at /)
      // A deny rule for the whole server covers its resources, whatever allows the resource tools.
      for (const deny of ["mcp__everything", "mcp__everything__*"]) {
        const denied = ruled(["ReadMcpResourceTool", "ListMcpResourcesTool"], [deny])
        for (const [name, toolInput] of [["ReadMcpResourceTool", input], ["ListMcpResourcesTool", { server: "everything" }]] as const) {
          assert.deepStrictEqual((yield* call(denied, name, toolInput)).result, {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: `MCP server "everything" is denied by the rule ${deny}, which covers its resources too.`,
            is_error: true
          })
        }
        const listed = yield* call(denied, "ListMcpResourcesTool", {})
        assert.strictEqual(
          listed.result.content,
          "No resources found. MCP servers may still provide tools even if they have no resources."
        )
      }
      // A rule for one of its tools does not.
      const oneTool = ruled(["ReadMcpResourceTool"], ["mcp__everything__echo"])
      assert.match((yield* call(oneTool, "ReadMcpResourceTool", input)).result.content as string, /"text":"Resource 1: /)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a tool that requires task-based execution fails at once, saying toolwright cannot run it", () =>
    Effect.gen(function*() {
      const { result } = yield* call(context, "mcp__everything__simulate-research-query", { topic: "tides" })
      assert.deepStrictEqual(result, {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: "<tool_use_error>mcp__everything__simulate-research-query cannot run: MCP server \"everything\" " +
          "runs simulate-research-query only as a task (MCP tasks, execution.taskSupport \"required\"), which " +
          "toolwright does not support. Do not retry it; use another tool.</tool_use_error>",
        is_error: true
      })
    }).pipe(Effect.provide(layer)))
})

describe("McpClientManager configuration", () => {
  it.scopedLive("a bad entry is an error naming server and field, and the other servers still start", () =>
    Effect.flatMap(freePort, (port) => {
      const { layer } = setup({
        broken: { command: ["node"] },
        missing: { command: "/nonexistent/mcp-server-binary" },
        unlisted: { command: "no-such-mcp-server-command" },
        refused: { type: "http", url: `http://127.0.0.1:${port}/mcp` },
        nohost: { type: "http", url: "http://no-such-host.invalid/mcp" },
        good: { command: process.execPath, args: [scripted] }
      })
      return Effect.gen(function*() {
        const manager = yield* McpClientManager.McpClientManager
        const byName = new Map(manager.servers().map((server) => [server.name, server]))
        assert.strictEqual(byName.get("good")?.state, "connected")
        assert.strictEqual(byName.get("broken")?.state, "failed")
        assert.strictEqual(
          byName.get("broken")?.error,
          `MCP server "broken" in test.mcp.json: command must be a non-empty string`
        )
        // Start-up failures say what failed and what to fix, not only the system's word for it.
        assert.strictEqual(byName.get("missing")?.state, "failed")
        assert.strictEqual(
          byName.get("missing")?.error,
          `its command /nonexistent/mcp-server-binary was not found (spawn /nonexistent/mcp-server-binary ENOENT). ` +
            `Install it, or fix "command" of "missing" in test.mcp.json.`
        )
        assert.strictEqual(
          byName.get("unlisted")?.error,
          `its command no-such-mcp-server-command was not found on PATH (spawn no-such-mcp-server-command ENOENT). ` +
            `Install it, or fix "command" of "unlisted" in test.mcp.json.`
        )
        assert.strictEqual(
          byName.get("refused")?.error,
          `nothing answers at http://127.0.0.1:${port}/mcp (fetch failed: connect ECONNREFUSED 127.0.0.1:${port}). ` +
            `Start the server, or fix "url" of "refused" in test.mcp.json.`
        )
        assert.match(
          byName.get("nohost")?.error ?? "",
          /^the host of http:\/\/no-such-host\.invalid\/mcp was not found \(fetch failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\)\. Check "url" of "nohost" in test\.mcp\.json\.$/
        )
        assert.include(manager.tools().map((tool) => tool.name), "mcp__good__slow")
      }).pipe(Effect.provide(layer))
    }))

  it.scopedLive("layerProject: .mcp.json and settings' mcpServers; disabledMcpjsonServers turns .mcp.json servers off", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const server = { command: process.execPath, args: [scripted] }
      fs.writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { kept: server, heavy: server, broken: 3 } }))
      const user = path.join(dir, "user-settings.json")
      const local = path.join(dir, "local-settings.json")
      fs.writeFileSync(user, JSON.stringify({ disabledMcpjsonServers: ["heavy"] }))
      // Names only .mcp.json's servers: a server of the settings themselves is not turned off by it.
      fs.writeFileSync(local, JSON.stringify({ disabledMcpjsonServers: ["broken", "own"], mcpServers: { own: server } }))
      const more = path.join(dir, "more-settings.json")
      fs.writeFileSync(more, JSON.stringify({ disabledMcpjsonServers: ["heavy"] }))
      const servers = yield* Effect.map(McpClientManager.McpClientManager, (manager) =>
        manager.servers().map((status) => [status.name, status.state, status.disabledBy, status.pid])).pipe(
          Effect.provide(
            McpClientManager.layerProject({
              cwd: dir,
              logDir: path.join(dir, "logs"),
              settingsFiles: [user, local, more]
            })
          )
        )
      // Turned-off servers are listed as such, with the files that turn them off, and never started (no pid).
      assert.deepStrictEqual(servers.map(([name, state, disabledBy]) => [name, state, disabledBy]), [
        ["kept", "connected", undefined],
        ["own", "connected", undefined],
        ["heavy", "disabled", [user, more]],
        ["broken", "disabled", [local]]
      ])
      assert.deepStrictEqual(servers.map(([, , , pid]) => typeof pid), ["number", "number", "undefined", "undefined"])
    }))

  it.scopedLive("a server that does not answer in time is failed with the reason", () => {
    const { layer } = setup(
      { mute: { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] } },
      { connectTimeoutMs: 300 }
    )
    return Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const [status] = manager.servers()
      assert.strictEqual(status.state, "failed")
      assert.strictEqual(status.error, "did not answer within 300 ms (MCP_TIMEOUT)")
      assert.deepStrictEqual(manager.tools(), [])
    }).pipe(Effect.provide(layer))
  })

  it.scopedLive("a server whose stdout is not only JSON-RPC is failed saying so, not as a server that never answered", () => {
    // A banner without a newline joins the server's first answer on one line, which is then not JSON.
    const banner = `process.stdout.write("Loading... "); await import(${JSON.stringify(pathToFileURL(scripted).href)})`
    const { layer } = setup(
      { chatty: { command: process.execPath, args: ["--input-type=module", "-e", banner] } },
      { connectTimeoutMs: 1_500 }
    )
    return Effect.gen(function*() {
      const [status] = (yield* McpClientManager.McpClientManager).servers()
      assert.strictEqual(status.state, "failed")
      assert.strictEqual(
        status.error,
        `it wrote text that is not JSON-RPC to stdout, so its answer was lost (Unexpected token 'L', "Loading..."... ` +
          "is not valid JSON). An MCP stdio server must write only JSON-RPC messages to stdout (its logs belong on " +
          "stderr): fix the server or the command that starts it; its stderr ended with:\nscripted server ready on stdio"
      )
    }).pipe(Effect.provide(layer))
  })

  it.scopedLive("a stdio server's MCP log messages (notifications/message) go to its log file beside its stderr", () => {
    const { context, dir, layer } = setup({ s: { command: process.execPath, args: [scripted] } })
    return Effect.gen(function*() {
      assert.strictEqual((yield* call(context, "mcp__s__log", {})).result.content, "logged")
      const log = fs.readFileSync(path.join(dir, "logs", "s.log"), "utf8")
      assert.include(log, "scripted server ready on stdio\n[warning] db: slow query: 1200 ms\n[error] {\"code\":17,\"reason\":\"lock timeout\"}\n")
    }).pipe(Effect.provide(layer))
  })

  it.scopedLive("stderr goes to the server's log file, and a failing server's reason quotes it", () => {
    const { dir, layer } = setup({
      noisy: { command: process.execPath, args: ["-e", "console.error('cannot open database'); process.exit(1)"] }
    })
    return Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const [status] = manager.servers()
      assert.strictEqual(status.state, "failed")
      assert.include(status.error ?? "", "its stderr ended with:\ncannot open database")
      assert.strictEqual(status.logFile, path.join(dir, "logs", "noisy.log"))
      assert.include(fs.readFileSync(status.logFile!, "utf8"), "cannot open database")
      // A server's stderr can hold tokens and paths: only the user may read it.
      assert.strictEqual(fs.statSync(status.logFile!).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.join(dir, "logs")).mode & 0o777, 0o700)
    }).pipe(Effect.provide(layer))
  })
})

describe("McpClientManager results through the result store", () => {
  it.scopedLive("a large MCP result is persisted to the session's tool-results with a preview", () => {
    const { context, dir } = setup({})
    const manager = McpClientManager.layer({
      servers: McpConfig.parseServers({ scripted: { command: process.execPath, args: [scripted] } }, "test.mcp.json"),
      cwd: dir,
      logDir: path.join(dir, "logs")
    })
    const layer = ToolRuntime.layer.pipe(
      Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, ToolResultStorage.layerFileSystem())),
      Layer.provide(NodeContext.layer),
      Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
      Layer.provideMerge(manager)
    )
    return Effect.gen(function*() {
      const { result } = yield* call(context, "mcp__scripted__big", { lines: 3_000 }, "toolu_big")
      const text = Message.contentText(result.content)
      const file = path.join(context.projectDir, "s1", "tool-results", "toolu_big.txt")
      assert.isTrue(text.startsWith("<persisted-output>"), text.slice(0, 200))
      assert.include(text, file)
      assert.include(text, "line 1 of a large MCP result")
      assert.strictEqual(fs.readFileSync(file, "utf8").split("\n").length, 3_000)
    }).pipe(Effect.provide(layer))
  })
})

describe("McpClientManager tool timeout (MCP_TOOL_TIMEOUT)", () => {
  const { context, layer } = setup({ scripted: { command: process.execPath, args: [scripted] } }, {
    toolTimeoutMs: 400
  })

  it.scopedLive("a silent call past the timeout fails; progress keeps a longer call alive", () =>
    Effect.gen(function*() {
      const silent = yield* call(context, "mcp__scripted__sleep-silently", { ms: 5_000 })
      assert.strictEqual(
        silent.result.content,
        `<tool_use_error>MCP server "scripted" did not answer mcp__scripted__sleep-silently within 400 ms (MCP_TOOL_TIMEOUT).</tool_use_error>`
      )
      const chatty = yield* call(context, "mcp__scripted__slow", { ms: 1_000 })
      assert.strictEqual(chatty.result.content, "slept 1000 ms")
      assert.strictEqual(chatty.events.length, 20)
    }).pipe(Effect.provide(layer)))
})

describe("McpClientManager faults (scripted server over stdio)", () => {
  const { context, layer } = setup({ scripted: { command: process.execPath, args: [scripted] } }, {
    reconnect: { maxAttempts: 3, initialDelayMs: 50 }
  })

  it.scopedLive("isError results, audio, embedded resources, links and structured-only content", () =>
    Effect.gen(function*() {
      // Behaviour comes from the server's annotations: only readOnlyHint makes a tool concurrency-safe.
      const manager = yield* McpClientManager.McpClientManager
      const hints = (name: string) => {
        const tool = manager.tools().find((candidate) => candidate.name === name)!
        return [tool.isReadOnly({}), tool.isConcurrencySafe({}), tool.isDestructive({})]
      }
      assert.deepStrictEqual(hints("mcp__scripted__slow"), [true, true, false])
      assert.deepStrictEqual(hints("mcp__scripted__fail"), [false, false, true])
      assert.deepStrictEqual(hints("mcp__scripted__sleep-silently"), [false, false, false])
      const fail = yield* call(context, "mcp__scripted__fail", {})
      assert.deepStrictEqual(fail.result, {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: "<tool_use_error>the widget is broken</tool_use_error>",
        is_error: true
      })
      const media = yield* call(context, "mcp__scripted__media", {}, "toolu_media")
      const audioFile = path.join(context.projectDir, "s1", "mcp-output", "toolu_media-0.wav")
      assert.strictEqual(
        media.result.content,
        `[Audio content (audio/wav, 16 bytes) saved to ${audioFile}]\n` +
          "[Resource from scripted at file:///notes.txt] remember the milk\n" +
          "[Resource link: big.csv] file:///big.csv (text/csv, the data)"
      )
      assert.strictEqual(fs.readFileSync(audioFile, "utf8"), "RIFF....WAVEfmt ")
      // Like persisted tool results, a server's payload is readable by the user only.
      assert.strictEqual(fs.statSync(audioFile).mode & 0o777, 0o600)
      // A session id is one path segment, as for persisted results: `..` in it cannot leave the project dir.
      yield* call({ ...context, sessionId: "../escaped" }, "mcp__scripted__media", {}, "toolu_media")
      assert.isFalse(fs.existsSync(path.join(context.projectDir, "..", "escaped")))
      assert.isTrue(fs.existsSync(path.join(context.projectDir, "%002e%002e%002fescaped", "mcp-output", "toolu_media-0.wav")))
      const slow = yield* call(context, "mcp__scripted__slow", { ms: 150 })
      assert.strictEqual(slow.result.content, "slept 150 ms")
      assert.deepStrictEqual(slow.events.map((event) => event._tag === "Progress" ? event.data : event._tag), [
        { progress: 50, total: 150, message: "waited 50 ms" },
        { progress: 100, total: 150, message: "waited 100 ms" },
        { progress: 150, total: 150, message: "waited 150 ms" }
      ])
      const structured = yield* call(context, "mcp__scripted__structured", {})
      assert.strictEqual(structured.result.content, `{"total":42}`)
      // A 2024-10-07 server's `toolResult` is the result (the SDK's schema keeps it beside empty content).
      const legacy = yield* call(context, "mcp__scripted__legacy", {})
      assert.deepStrictEqual(legacy.result, { type: "tool_result", tool_use_id: "toolu_1", content: `{"answer":42}` })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an image's media type is read from its bytes: a mislabelled PNG or image/jpg still reaches the model", () =>
    Effect.gen(function*() {
      const mediaType = (content: Message.ToolResultContent) =>
        (content as ReadonlyArray<Message.ToolResultContentBlock>).map((block) =>
          block.type === "image" ? block.source.media_type : block.type
        )
      for (const [mimeType, embedded] of [["image/jpeg", false], ["image/jpg", false], ["image/jpg", true]] as const) {
        const { result } = yield* call(context, "mcp__scripted__picture", { bytes: 100, embedded, mimeType })
        assert.deepStrictEqual(mediaType(result.content), ["image/png"], `${mimeType}, embedded: ${embedded}`)
      }
      // Bytes that are no image the API takes (an SVG, say) are not sent as one, whatever the label: saved.
      for (const embedded of [false, true]) {
        const { result } = yield* call(context, "mcp__scripted__picture", { bytes: 100, embedded, notAnImage: true }, "toolu_raw")
        const text = String(result.content)
        const saved = new RegExp(
          `^${embedded ? "\\[Resource from scripted at file:///shot\\.png\\] \\[Binary" : "\\[Image"} content ` +
            "\\(image/png, 100 bytes\\) saved to (\\S+)\\]$"
        ).exec(text)
        assert.isNotNull(saved, text)
        assert.deepStrictEqual(fs.readFileSync(saved![1]), Buffer.alloc(100, 7))
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an image over the 5 MB a model takes inline is saved to a file instead, and the model told where", () =>
    Effect.gen(function*() {
      const small = yield* call(context, "mcp__scripted__picture", { bytes: 1_000, embedded: false }, "toolu_small")
      assert.deepStrictEqual(
        (small.result.content as ReadonlyArray<Message.ToolResultContentBlock>).map((block) => block.type),
        ["image"]
      )
      // 3,932,161 bytes are 5,242,884 characters of base64, just over the API's 5 MB (5,242,880).
      const image = yield* call(context, "mcp__scripted__picture", { bytes: 3_932_161, embedded: false }, "toolu_big")
      const saved = path.join(context.projectDir, "s1", "mcp-output", "toolu_big-0.png")
      assert.strictEqual(
        image.result.content,
        `[Image content (image/png, 3932161 bytes) saved to ${saved}: too large to show inline (over 5 MB as ` +
          `base64); Read the file to see it resized]`
      )
      assert.strictEqual(fs.statSync(saved).size, 3_932_161)
      assert.strictEqual(fs.readFileSync(saved).subarray(0, 8).toString("hex"), "89504e470d0a1a0a")
      const embedded = yield* call(context, "mcp__scripted__picture", { bytes: 3_932_161, embedded: true }, "toolu_res")
      assert.strictEqual(
        embedded.result.content,
        `[Resource from scripted at file:///shot.png] [Image content (image/png, 3932161 bytes) saved to ` +
          `${path.join(context.projectDir, "s1", "mcp-output", "toolu_res-0.png")}: too large to show inline (over 5 MB ` +
          `as base64); Read the file to see it resized]`
      )
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a stdio message over the SDK's 10 MB ends the call saying so, and the server is started again", () =>
    Effect.gen(function*() {
      const flood = yield* call(context, "mcp__scripted__flood", { mb: 11 })
      assert.deepStrictEqual(flood.result, {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: "<tool_use_error>MCP server \"scripted\" sent a message larger than 10 MB, the most toolwright " +
          "reads from a stdio server, while mcp__scripted__flood was running, so toolwright closed the connection " +
          "(and starts the server again), ending every call in flight on it. If mcp__scripted__flood's answer can be " +
          "that large, ask it for less at a time (a smaller range, a filter); otherwise try it again.</tool_use_error>",
        is_error: true
      })
      const manager = yield* McpClientManager.McpClientManager
      for (let i = 0; i < 1_000 && manager.servers()[0].state !== "connected"; i++) yield* Effect.sleep("20 millis")
      assert.strictEqual(manager.servers()[0].state, "connected", "the server was started again")
      const after = yield* call(context, "mcp__scripted__flood", { mb: 1 })
      assert.strictEqual((after.result.content as string).length, 1024 * 1024)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("notifications/tools/list_changed re-lists the tools", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.ToolRegistry
      assert.isTrue(registry.find("mcp__scripted__late").pipe((found) => found._tag === "None"))
      const added = yield* call(context, "mcp__scripted__add-tool", { name: "late" })
      assert.strictEqual(added.result.content, "added late")
      let found = false
      for (let i = 0; i < 100 && !found; i++) {
        found = registry.find("mcp__scripted__late")._tag === "Some"
        if (!found) yield* Effect.sleep("20 millis")
      }
      assert.isTrue(found)
      const late = yield* call(context, "mcp__scripted__late", {})
      assert.strictEqual(late.result.content, "late ran")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a server exiting mid-call ends the call with an error result at once, then reconnects", () =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const crash = yield* call(context, "mcp__scripted__crash", {})
      assert.isTrue(crash.result.is_error)
      assert.strictEqual(
        crash.result.content,
        `<tool_use_error>MCP server "scripted" closed the connection while mcp__scripted__crash was running. ` +
          `Its stderr ended with:\nscripted server ready on stdio\nfatal: the scripted server crashed on purpose</tool_use_error>`
      )
      let state = manager.servers()[0].state
      for (let i = 0; i < 200 && state !== "connected"; i++) {
        yield* Effect.sleep("20 millis")
        state = manager.servers()[0].state
      }
      assert.strictEqual(state, "connected")
      const again = yield* call(context, "mcp__scripted__slow", { ms: 50 })
      assert.strictEqual(again.result.content, "slept 50 ms")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("interrupting a call cancels it on the server (notifications/cancelled), and the next call runs", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(call(context, "mcp__scripted__wait-for-cancel", {}))
      yield* Effect.sleep("200 millis")
      yield* Fiber.interrupt(fiber)
      let reasons = ""
      for (let i = 0; i < 100 && reasons !== `["AbortError: This operation was aborted"]`; i++) {
        reasons = Message.contentText((yield* call(context, "mcp__scripted__cancellations", {})).result.content)
        if (reasons === "[]") yield* Effect.sleep("20 millis")
      }
      assert.strictEqual(reasons, `["AbortError: This operation was aborted"]`)
      const again = yield* call(context, "mcp__scripted__slow", { ms: 50 })
      assert.strictEqual(again.result.content, "slept 50 ms")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an interrupted call ends its progress reports before its interruption returns: none is delivered later", () =>
    Effect.gen(function*() {
      const runtime = yield* ToolRuntime.ToolRuntime
      const arrived = yield* Deferred.make<void>()
      // A consumer that takes its time over each report (a slow terminal, a full pipe): it is held here until
      // the call is over.
      const consumerFree = yield* Deferred.make<void>()
      const interruptedReports: Array<unknown> = []
      const delivered: Array<unknown> = []
      const fiber = yield* Effect.fork(runtime.execute(
        { type: "tool_use", id: "toolu_progress", name: "mcp__scripted__progress-then-wait", input: {} },
        context,
        (event) =>
          event._tag !== "Progress" ? Effect.void : Deferred.succeed(arrived, undefined).pipe(
            Effect.zipRight(Deferred.await(consumerFree)),
            Effect.zipRight(Effect.sync(() => delivered.push(event.data))),
            Effect.onInterrupt(() => Effect.sync(() => interruptedReports.push(event.data)))
          )
      ))
      yield* Deferred.await(arrived)
      yield* Fiber.interrupt(fiber)
      // The report in flight was interrupted as part of the call's interruption, not left running after it.
      assert.deepStrictEqual(interruptedReports, [{ progress: 1, total: 2, message: "halfway" }])
      yield* Deferred.succeed(consumerFree, undefined)
      // A round trip to the server (which also shows it heard the cancellation) gives a report left running
      // the time to be delivered.
      let reasons = ""
      for (let i = 0; i < 100 && reasons !== `["AbortError: This operation was aborted"]`; i++) {
        reasons = Message.contentText((yield* call(context, "mcp__scripted__cancellations", {})).result.content)
        if (reasons === "[]") yield* Effect.sleep("20 millis")
      }
      assert.strictEqual(reasons, `["AbortError: This operation was aborted"]`)
      assert.deepStrictEqual(delivered, [])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("killing the server process mid-call fails the call at once", () =>
    Effect.gen(function*() {
      const manager = yield* McpClientManager.McpClientManager
      const fiber = yield* Effect.fork(call(context, "mcp__scripted__slow", { ms: 20_000 }))
      yield* Effect.sleep("200 millis")
      const pid = manager.servers()[0].pid!
      process.kill(pid, "SIGKILL")
      const { result } = yield* fiber.await.pipe(Effect.flatten)
      assert.isTrue(result.is_error)
      assert.include(Message.contentText(result.content), `MCP server "scripted" closed the connection`)
    }).pipe(Effect.provide(layer)))
})
