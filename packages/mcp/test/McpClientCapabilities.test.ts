import { assert, describe, it } from "@effect/vitest"
import { Message, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Deferred, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpClientManager, McpConfig, McpElicitation, McpToolRegistry } from "../src/index.js"

const scripted = path.join(import.meta.dirname, "fixtures/scripted-server.mjs")

/** A runtime over the scripted stdio server, with `elicitation` (if any) answering its questions. */
const runtimeWith = (elicitation: Layer.Layer<McpElicitation.McpElicitation> | undefined) =>
  Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-caps-"))
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-caps-other-"))
    const manager = McpClientManager.layer({
      servers: McpConfig.parseServers({ s: { command: process.execPath, args: [scripted, "stdio"] } }, "test", {}),
      cwd: dir,
      logDir: path.join(dir, "logs")
    })
    const layer = ToolRuntime.layerDefault.pipe(
      Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
      Layer.provideMerge(elicitation === undefined ? manager : manager.pipe(Layer.provide(elicitation)))
    )
    const context = ToolUseContext.make({
      cwd: dir,
      projectDir: path.join(dir, "project"),
      permissionContext: { mode: "bypassPermissions", allow: [], deny: [], ask: [], additionalDirectories: [] }
    })
    const built = yield* Layer.build(layer)
    const call = (name: string) =>
      Effect.gen(function*() {
        const runtime = yield* ToolRuntime.ToolRuntime
        const result = yield* runtime.execute({ type: "tool_use", id: "toolu_c", name, input: {} }, context, () => Effect.void)
        return Message.contentText(result.result.content)
      }).pipe(Effect.provide(built))
    const manager_ = yield* Effect.provide(McpClientManager.McpClientManager, built)
    return { call, dir, other, manager: manager_ }
  })

describe("McpClientManager client capabilities", () => {
  it.scopedLive("elicitation: the handler's answer reaches the server, with the schema's defaults filled in", () =>
    Effect.gen(function*() {
      const asked: Array<McpElicitation.Request> = []
      const { call } = yield* runtimeWith(McpElicitation.layerCallback((request) =>
        Effect.sync(() => {
          asked.push(request)
          return { action: "accept", content: { name: "sprocket", note: "asap" } }
        })
      ))
      assert.strictEqual(yield* call("mcp__s__ask"), `{"action":"accept","content":{"name":"sprocket","note":"asap","count":3,"urgent":false}}`)
      assert.strictEqual(asked.length, 1)
      assert.strictEqual(asked[0].server, "s")
      assert.strictEqual(asked[0].message, "Which widget?")
      assert.deepStrictEqual(Object.keys(asked[0].requestedSchema.properties), ["name", "count", "urgent", "note"])
    }))

  it.scopedLive("elicitation: an accept without content gets every default", () =>
    Effect.gen(function*() {
      const { call } = yield* runtimeWith(McpElicitation.layerCallback(() => Effect.succeed({ action: "accept" })))
      assert.strictEqual(yield* call("mcp__s__ask"), `{"action":"accept","content":{"name":"gear","count":3,"urgent":false}}`)
    }))

  it.scopedLive("elicitation: without a handler every request is declined at once", () =>
    Effect.gen(function*() {
      const { call } = yield* runtimeWith(undefined)
      assert.strictEqual(yield* call("mcp__s__ask"), `{"action":"decline"}`)
    }))

  it.scopedLive("elicitation: a question still open when the connection closes is interrupted", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const { call, manager } = yield* runtimeWith(McpElicitation.layerCallback(() =>
        Deferred.succeed(started, undefined).pipe(
          Effect.zipRight(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
        )
      ))
      const pending = yield* Effect.fork(call("mcp__s__ask"))
      yield* Deferred.await(started)
      yield* manager.reconnect("s")
      yield* Deferred.await(interrupted).pipe(Effect.timeout("10 seconds"))
      const text = yield* pending.await.pipe(Effect.flatten)
      assert.strictEqual(
        text,
        `<tool_use_error>MCP server "s" closed the connection while mcp__s__ask was running. Its stderr ended with:\n` +
          `scripted server ready on stdio</tool_use_error>`
      )
    }))

  it.scopedLive("sampling: a server that asks anyway is told toolwright has no model, and its tool fails saying so", () =>
    Effect.gen(function*() {
      const { call } = yield* runtimeWith(undefined)
      assert.strictEqual(
        yield* call("mcp__s__sample"),
        "<tool_use_error>MCP error -32601: toolwright does not support MCP sampling (sampling/createMessage): it has " +
          "no model to sample from, so a tool that needs one cannot run here</tool_use_error>"
      )
    }))

  it.scopedLive("roots: the working directory as a file:// URI, and setRoots replaces it", () =>
    Effect.gen(function*() {
      const { call, dir, manager, other } = yield* runtimeWith(undefined)
      assert.strictEqual(
        yield* call("mcp__s__roots"),
        JSON.stringify([{ uri: `file://${dir}`, name: path.basename(dir) }])
      )
      yield* manager.setRoots([dir, other])
      assert.strictEqual(
        yield* call("mcp__s__roots"),
        JSON.stringify([{ uri: `file://${dir}`, name: path.basename(dir) }, { uri: `file://${other}`, name: path.basename(other) }])
      )
    }))
})
