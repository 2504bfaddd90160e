/**
 * Test support for the Read/Glob/Grep tests: real temp directories, and one call through the whole
 * runtime pipeline (validation, permission, execution, serialization) as a model would make it.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Message } from "@toolwright/core"
import { Permission, Tool, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer, Stream } from "effect"

/** A fresh real directory (symlinks resolved, as tools report real paths), removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-fs-")))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** Writes files (relative path → content) under `dir`, creating parent directories. */
export const writeFiles = (dir: string, files: Record<string, string | Uint8Array>): void => {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
}

/** Sets a file's mtime to `secondsAgo` before now, so newest-first orders are deterministic. */
export const age = (file: string, secondsAgo: number): void => {
  const when = new Date(Date.now() - secondsAgo * 1000)
  fs.utimesSync(file, when, when)
}

export interface Call {
  readonly events: ReadonlyArray<Message.RuntimeEvent>
  readonly result: Message.ToolResultBlockParam
  /** The result's text (text blocks joined). */
  readonly text: string
}

/** Runs one tool_use through the default pipeline with the given tools registered. */
export const callTool = (
  tools: ReadonlyArray<Tool.Any>,
  name: string,
  input: unknown,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<Call> =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const events = Array.from(
      yield* Stream.runCollect(runtime.runToolUse({ type: "tool_use", id: "toolu_test", name, input }, context))
    )
    const last = events[events.length - 1]
    if (last === undefined || last._tag !== "ToolResult") return yield* Effect.die("the call ended without a result")
    const content = last.result.content
    const text = typeof content === "string"
      ? content
      : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")
    return { events, result: last.result, text }
  }).pipe(Effect.provide(ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools(tools)))))

/** A session in `cwd`; `additionalDirectories` are working directories too (reads there need no prompt). */
export const contextFor = (
  cwd: string,
  additionalDirectories: ReadonlyArray<string> = []
): ToolUseContext.ToolUseContext =>
  ToolUseContext.make({ cwd, permissionContext: { ...Permission.emptyPermissionContext(), additionalDirectories } })
