import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Tool, ToolProgress, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { McpClientManager, McpServer } from "../src/index.js"

let interrupted = 0
const started = Effect.runSync(Deferred.make<void>())

const greet = Tool.make({
  name: "Greet",
  description: "Greets someone",
  input: Schema.Struct({ name: Schema.String }),
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: ({ name }) => Effect.succeed(`Hello, ${name}!`)
})

const write = Tool.make({
  name: "Scribble",
  description: "Pretends to write a file",
  input: Schema.Struct({ text: Schema.String }),
  call: ({ text }) => Effect.succeed(`wrote ${text.length} characters`)
})

const count = Tool.make({
  name: "Count",
  description: "Counts to n, reporting each number",
  input: Schema.Struct({ n: Schema.Number }),
  isReadOnly: () => true,
  call: ({ n }) =>
    Effect.gen(function*() {
      for (let i = 1; i <= n; i++) yield* ToolProgress.report({ progress: i, total: n, message: `counted ${i}` })
      return `counted to ${n}`
    })
})

const tail = Tool.make({
  name: "Tail",
  description: "Reports output chunks as Bash does",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () =>
    Effect.gen(function*() {
      yield* ToolProgress.report({ type: "bash_progress", output: "compiling\n  step 1 of 2  \n\n", totalChars: 26, elapsedMs: 5 })
      yield* ToolProgress.report({ type: "bash_progress", output: "\n", totalChars: 27, elapsedMs: 9 })
      yield* ToolProgress.report({ type: "bash_progress", output: `${"x".repeat(300)}\n`, totalChars: 328, elapsedMs: 12 })
      return "done"
    })
})

const hang = Tool.make({
  name: "Hang",
  description: "Never finishes unless interrupted",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () =>
    Deferred.succeed(started, undefined).pipe(
      Effect.zipRight(Effect.never),
      // Stopping takes a while, as stopping a process does: whoever waits for the call must wait for this.
      Effect.onInterrupt(() =>
        Effect.sleep("50 millis").pipe(Effect.zipRight(Effect.sync(() => {
          interrupted++
        })))
      )
    )
})

const runtimeLayer = ToolRuntime.layer.pipe(
  Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, McpServer.prompterLayer)),
  Layer.provide(ToolRegistry.layerTools([greet, write, count, tail, hang])),
  Layer.provideMerge(McpServer.bridgeLayer)
)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-serve-"))
const context = ToolUseContext.make({ cwd: dir, projectDir: path.join(dir, "project") })

/** Our server and an SDK client linked in memory; `elicit` answers permission asks when given. */
type Answer = { action: "accept" | "decline"; content?: { decision: string } }
const connect = (elicit?: (message: string, signal: AbortSignal) => Answer | Promise<Answer>) =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const bridge = yield* McpServer.McpServeBridge
    const server = McpServer.makeServer(runtime, bridge, context, yield* Effect.runtime<never>(), {
      name: "toolwright",
      version: "test"
    })
    const client = new Client({ name: "test", version: "1" }, {
      capabilities: elicit === undefined ? {} : { elicitation: { form: {} } }
    })
    if (elicit !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicit(request.params.message, extra.signal))
    }
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    yield* Effect.promise(() => server.connect(serverSide))
    yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () =>
      Effect.promise(() => client.close()))
    return client
  })

describe("McpServer", () => {
  it.scopedLive("lists the pool with JSON Schemas and annotations, and calls through the pipeline", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["Count", "Greet", "Hang", "Scribble", "Tail"])
      const greetListing = tools.find((tool) => tool.name === "Greet")!
      assert.deepStrictEqual(greetListing.inputSchema, {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" } },
        additionalProperties: false
      })
      assert.deepStrictEqual(greetListing.annotations, { readOnlyHint: true, destructiveHint: false, openWorldHint: false })
      // A tool that writes says nothing of what it may destroy (Write, Edit and Bash do not): MCP's default, true,
      // not "only additive updates", which a client may take as leave to skip its confirmation.
      assert.deepStrictEqual(
        tools.find((tool) => tool.name === "Scribble")!.annotations,
        { readOnlyHint: false, destructiveHint: true, openWorldHint: false }
      )

      const result = yield* Effect.promise(() => client.callTool({ name: "Greet", arguments: { name: "Ada" } }))
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "Hello, Ada!" }] })
      const invalid = yield* Effect.promise(() => client.callTool({ name: "Greet", arguments: { name: 3 } }))
      assert.deepStrictEqual(invalid, {
        content: [{
          type: "text",
          text: "<tool_use_error>InputValidationError: Greet failed due to the following issue:\n" +
            "The parameter `name` type is expected as `string` but provided as `number`</tool_use_error>"
        }],
        isError: true
      })
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("an ask goes to the client's user through elicitation", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const allowing = yield* connect((message) => {
        asked.push(message)
        return { action: "accept", content: { decision: "allow" } }
      })
      const allowed = yield* Effect.promise(() => allowing.callTool({ name: "Scribble", arguments: { text: "abc" } }))
      assert.deepStrictEqual(allowed, { content: [{ type: "text", text: "wrote 3 characters" }] })
      assert.strictEqual(asked.length, 1)
      assert.match(asked[0], /^toolwright: allow Scribble\? /)

      const denying = yield* connect(() => ({ action: "decline" }))
      const denied = yield* Effect.promise(() => denying.callTool({ name: "Scribble", arguments: { text: "abc" } }))
      assert.deepStrictEqual(denied, {
        content: [{
          type: "text",
          text: "The user of the MCP client denied permission to use Scribble (the request was declined)."
        }],
        isError: true
      })
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("cancelling a call withdraws its pending permission question from the client", () =>
    Effect.gen(function*() {
      const asked = yield* Deferred.make<void>()
      const withdrawn = yield* Deferred.make<void>()
      let questions = 0
      const client = yield* connect((_message, signal) =>
        // The SDK ignores notifications/cancelled for request id 0 (`if (!requestId) return`), so the
        // first question is answered and the second one, id 1, is the one withdrawn.
        questions++ === 0 ? { action: "accept", content: { decision: "allow" } } : new Promise<Answer>((resolve) => {
          Deferred.unsafeDone(asked, Effect.void)
          signal.addEventListener("abort", () => {
            Deferred.unsafeDone(withdrawn, Effect.void)
            resolve({ action: "decline" })
          })
        })
      )
      yield* Effect.promise(() => client.callTool({ name: "Scribble", arguments: { text: "first" } }))
      const controller = new AbortController()
      const pending = client.callTool({ name: "Scribble", arguments: { text: "abc" } }, undefined, {
        signal: controller.signal
      }).then(() => "finished", () => "rejected")
      yield* Deferred.await(asked)
      controller.abort()
      assert.strictEqual(yield* Effect.promise(() => pending), "rejected")
      // Without the withdrawal the client's dialog stays open for the elicitation's 10-minute timeout.
      yield* Deferred.await(withdrawn)
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("without elicitation an ask is denied at once with how to allow it", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      const result = yield* Effect.promise(() => client.callTool({ name: "Scribble", arguments: { text: "abc" } }))
      assert.isTrue(result.isError)
      const text = (result.content as Array<{ text: string }>)[0].text
      assert.match(text, /^Permission to use Scribble was not granted: /)
      assert.include(text, "so toolwright mcp serve cannot ask; start it with --permission-mode to decide up front.")
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("progress notifications reach the client, and notifications/cancelled interrupts the call", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      const seen: Array<unknown> = []
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "Count", arguments: { n: 3 } }, undefined, { onprogress: (p) => seen.push(p) })
      )
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "counted to 3" }] })
      assert.deepStrictEqual(seen, [
        { progress: 1, total: 3, message: "counted 1" },
        { progress: 2, total: 3, message: "counted 2" },
        { progress: 3, total: 3, message: "counted 3" }
      ])

      const controller = new AbortController()
      const pending = client.callTool({ name: "Hang", arguments: {} }, undefined, { signal: controller.signal })
        .then(() => "finished", () => "rejected")
      yield* Deferred.await(started)
      controller.abort()
      assert.strictEqual(yield* Effect.promise(() => pending), "rejected")
      for (let i = 0; i < 100 && interrupted === 0; i++) yield* Effect.sleep("10 millis")
      assert.strictEqual(interrupted, 1)
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("output progress (Bash's) reaches the client as its last line, not as JSON", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      const seen: Array<unknown> = []
      yield* Effect.promise(() =>
        client.callTool({ name: "Tail", arguments: {} }, undefined, { onprogress: (p) => seen.push(p) })
      )
      assert.deepStrictEqual(seen, [
        { progress: 1, message: "step 1 of 2" },
        { progress: 2 },
        { progress: 3, message: `${"x".repeat(199)}…` }
      ])
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("a client going away interrupts its calls in flight (no orphaned work or processes)", () =>
    Effect.gen(function*() {
      const bridge = yield* McpServer.McpServeBridge
      const before = interrupted
      const client = yield* connect()
      const pending = client.callTool({ name: "Hang", arguments: {} }).then(() => "finished", () => "rejected")
      while (bridge.calls.size === 0) yield* Effect.sleep("5 millis")
      yield* Effect.promise(() => client.close())
      assert.strictEqual(yield* Effect.promise(() => pending), "rejected")
      for (let i = 0; i < 100 && interrupted === before; i++) yield* Effect.sleep("10 millis")
      assert.strictEqual(interrupted, before + 1)
      assert.strictEqual(bridge.calls.size, 0)
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("refuses to bind anything but loopback: there is no authentication, and Host is forgeable", () =>
    Effect.gen(function*() {
      const error = yield* McpServer.serveHttp({ context, port: 0, host: "0.0.0.0" }).pipe(Effect.flip)
      assert.strictEqual(
        error.message,
        `refusing to serve on 0.0.0.0: toolwright mcp serve has no authentication and runs tools for whoever ` +
          `connects, so it only binds a loopback address (127.0.0.1, ::1 or localhost)`
      )
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("binds an IPv6 loopback written as in a URL ([::1]) and serves it", () =>
    Effect.gen(function*() {
      const port = yield* Deferred.make<number>()
      const serving = yield* McpServer.serveHttp({
        context,
        port: 0,
        host: "[::1]",
        onListening: (p) => Deferred.unsafeDone(port, Effect.succeed(p))
      }).pipe(Effect.forkScoped)
      // A failure to listen fails the test at once instead of leaving it waiting for the port.
      const listening = yield* Effect.raceFirst(Deferred.await(port), Fiber.join(serving))
      const client = new Client({ name: "ipv6", version: "1" })
      const url = new URL(`http://[::1]:${listening}/mcp`)
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(new StreamableHTTPClientTransport(url))),
        () => Effect.promise(() => client.close())
      )
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.include(tools.map((tool) => tool.name), "Greet")
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("stopping the HTTP server interrupts the calls in flight and waits for them", () =>
    Effect.gen(function*() {
      const bridge = yield* McpServer.McpServeBridge
      const before = interrupted
      const port = yield* Deferred.make<number>()
      const serving = yield* McpServer.serveHttp({ context, port: 0, onListening: (p) => Deferred.unsafeDone(port, Effect.succeed(p)) })
        .pipe(Effect.fork)
      const client = new Client({ name: "http-stop", version: "1" })
      const url = new URL(`http://127.0.0.1:${yield* Deferred.await(port)}/mcp`)
      yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(url)))
      const pending = client.callTool({ name: "Hang", arguments: {} }).then(() => "finished", () => "rejected")
      while (bridge.calls.size === 0) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(serving)
      // The server's release has run: the call's finalizer ran before it returned.
      assert.strictEqual(interrupted, before + 1)
      yield* Effect.promise(() => client.close())
      assert.strictEqual(yield* Effect.promise(() => pending), "rejected")
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("streamable HTTP on 127.0.0.1 with Host and Origin checks", () =>
    Effect.gen(function*() {
      const port = yield* Deferred.make<number>()
      yield* McpServer.serveHttp({ context, port: 0, onListening: (p) => Deferred.unsafeDone(port, Effect.succeed(p)) })
        .pipe(Effect.forkScoped)
      const listening = yield* Deferred.await(port)
      const client = new Client({ name: "http-test", version: "1" })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${listening}/mcp`)))),
        () => Effect.promise(() => client.close())
      )
      const result = yield* Effect.promise(() => client.callTool({ name: "Greet", arguments: { name: "web" } }))
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "Hello, web!" }] })

      const status = (headers: Record<string, string>) =>
        Effect.async<number>((resume) => {
          const request = http.request({ host: "127.0.0.1", port: listening, path: "/mcp", method: "POST", headers }, (res) => {
            res.resume()
            resume(Effect.succeed(res.statusCode ?? 0))
          })
          request.end("{}")
        })
      assert.strictEqual(yield* status({ host: "evil.example:80", "content-type": "application/json" }), 403)
      assert.strictEqual(
        yield* status({ host: `127.0.0.1:${listening}`, origin: "http://evil.example", "content-type": "application/json" }),
        403
      )
      // A sandboxed iframe or a file: page sends `Origin: null`; it is a browser all the same.
      assert.strictEqual(
        yield* status({ host: `127.0.0.1:${listening}`, origin: "null", "content-type": "application/json" }),
        403
      )
      assert.notStrictEqual(
        yield* status({ host: `127.0.0.1:${listening}`, origin: `http://localhost:${listening}`, "content-type": "application/json" }),
        403
      )
      assert.strictEqual(yield* status({ host: `localhost:${listening}`, "mcp-session-id": "stale" }), 404)
      // Bound to loopback only: another interface of this machine is refused.
      const external = Object.values(os.networkInterfaces()).flat()
        .find((address) => address !== undefined && address.family === "IPv4" && !address.internal)
      if (external !== undefined) {
        const refused = yield* Effect.async<boolean>((resume) => {
          const socket = net.connect({ host: external.address, port: listening })
          socket.once("connect", () => {
            socket.destroy()
            resume(Effect.succeed(false))
          })
          socket.once("error", () => resume(Effect.succeed(true)))
        })
        assert.isTrue(refused, `serveHttp must not listen on ${external.address}`)
      }
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("an HTTP session left without a DELETE is closed once idle; an open event stream keeps it", () =>
    Effect.gen(function*() {
      const port = yield* Deferred.make<number>()
      yield* McpServer.serveHttp({
        context,
        port: 0,
        sessionIdleMs: 300,
        onListening: (p) => Deferred.unsafeDone(port, Effect.succeed(p))
      }).pipe(Effect.forkScoped)
      const listening = yield* Deferred.await(port)
      /** A request to /mcp: its status and session header once the head arrives; `keep` leaves it open. */
      const request = (method: string, session: string | undefined, body?: unknown, keep = false) =>
        Effect.async<{ readonly status: number; readonly session: string | undefined; readonly close: () => void }>(
          (resume) => {
            const req = http.request({
              host: "127.0.0.1",
              port: listening,
              path: "/mcp",
              method,
              headers: {
                "content-type": "application/json",
                accept: method === "GET" ? "text/event-stream" : "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
                ...(session === undefined ? {} : { "mcp-session-id": session })
              }
            }, (res) => {
              if (!keep) res.resume()
              const id = res.headers["mcp-session-id"]
              resume(Effect.succeed({
                status: res.statusCode ?? 0,
                session: typeof id === "string" ? id : undefined,
                close: () => req.destroy()
              }))
            })
            req.end(body === undefined ? undefined : JSON.stringify(body))
          }
        )
      const open = (id: number) =>
        Effect.gen(function*() {
          const init = yield* request("POST", undefined, {
            jsonrpc: "2.0",
            id,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
          })
          assert.strictEqual(init.status, 200)
          yield* request("POST", init.session, { jsonrpc: "2.0", method: "notifications/initialized" })
          return init.session!
        })
      const list = (session: string) => request("POST", session, { jsonrpc: "2.0", id: 9, method: "tools/list" })

      const abandoned = yield* open(1)
      const watched = yield* open(2)
      const stream = yield* request("GET", watched, undefined, true)
      assert.strictEqual(stream.status, 200)
      yield* Effect.sleep("800 millis")
      assert.strictEqual((yield* list(abandoned)).status, 404)
      assert.strictEqual((yield* list(watched)).status, 200)
      stream.close()
      yield* Effect.sleep("800 millis")
      assert.strictEqual((yield* list(watched)).status, 404)
    }).pipe(Effect.provide(runtimeLayer)))

  it.scopedLive("an in-process (sdk) server is consumed by McpClientManager like any other", () =>
    Effect.gen(function*() {
      const runtime = yield* ToolRuntime.ToolRuntime
      const bridge = yield* McpServer.McpServeBridge
      const effectRuntime = yield* Effect.runtime<never>()
      const manager = yield* McpClientManager.make({
        servers: { servers: [], errors: [] },
        cwd: dir,
        sdkServers: [{
          name: "inproc",
          transport: () => {
            const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
            void McpServer.makeServer(runtime, bridge, context, effectRuntime, { name: "inproc", version: "1" })
              .connect(serverSide)
            return clientSide
          }
        }]
      })
      const [status] = manager.servers()
      assert.strictEqual(status.type, "sdk")
      assert.strictEqual(status.state, "connected")
      const greetTool = manager.tools().find((tool) => tool.name === "mcp__inproc__Greet")!
      assert.isTrue(greetTool.isReadOnly({}))
      const output = yield* greetTool.call({ name: "loop" }, context).pipe(
        Effect.provideService(ToolProgress.ToolProgress, { report: () => Effect.void })
      )
      assert.strictEqual(output, "Hello, loop!")
    }).pipe(Effect.provide(runtimeLayer)))
})
