import { assert, describe, it } from "@effect/vitest"
import { Message, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { McpToolRegistry } from "@toolwright/mcp"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { mcpLayer } from "../src/CliRuntime.js"

const scripted = path.join(import.meta.dirname, "..", "..", "mcp", "test", "fixtures", "scripted-server.mjs")

describe("the CLI's MCP servers", () => {
  it.scopedLive("roots/list gives the project and the settings' additionalDirectories as file:// URIs", () =>
    Effect.gen(function*() {
      const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tw-cli-roots-")))
      const project = path.join(root, "proj")
      fs.mkdirSync(path.join(project, ".toolwright"), { recursive: true })
      fs.mkdirSync(path.join(root, "shared"))
      fs.writeFileSync(
        path.join(project, ".mcp.json"),
        JSON.stringify({ mcpServers: { s: { command: process.execPath, args: [scripted, "stdio"] } } })
      )
      fs.writeFileSync(
        path.join(project, ".toolwright", "settings.json"),
        JSON.stringify({ permissions: { additionalDirectories: ["../shared"] } })
      )
      const built = yield* Layer.build(
        ToolRuntime.layerDefault.pipe(
          Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
          Layer.provideMerge(mcpLayer({ cwd: Option.some(project) }, false))
        )
      )
      const runtime = yield* Effect.provide(ToolRuntime.ToolRuntime, built)
      const result = yield* runtime.execute(
        { type: "tool_use", id: "toolu_roots", name: "mcp__s__roots", input: {} },
        ToolUseContext.make({
          cwd: project,
          permissionContext: { mode: "bypassPermissions", allow: [], deny: [], ask: [], additionalDirectories: [] }
        }),
        () => Effect.void
      )
      assert.strictEqual(
        Message.contentText(result.result.content),
        JSON.stringify([
          { uri: `file://${project}`, name: "proj" },
          { uri: `file://${path.join(root, "shared")}`, name: "shared" }
        ])
      )
    }))
})
