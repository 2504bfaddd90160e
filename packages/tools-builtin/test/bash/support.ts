/**
 * Test support for the Bash and task tools: a runtime whose registry holds them with their services,
 * sessions in real temp directories (bypass mode, so the permission stage lets commands run), and a
 * survivor count read from `ps`, the way a user would check that nothing was left behind.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Message } from "@toolwright/core"
import { Permission, ToolPlugin, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer, Schedule, Stream } from "effect"
import { BashTool } from "../../src/bash/BashTool.js"
import * as BashServices from "../../src/bash/BashServices.js"
import { TaskOutputTool } from "../../src/tasks/TaskOutputTool.js"
import { TaskStopTool } from "../../src/tasks/TaskStopTool.js"

/** A fresh real directory (symlinks resolved), removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-bash-")))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

export const testPlugin = (options: BashServices.Options = {}) =>
  ToolPlugin.make({
    name: "bash-test",
    version: "0.0.0",
    tools: [BashTool, TaskOutputTool, TaskStopTool],
    layer: BashServices.layer({ killGraceMs: 300, ...options })
  })

/** The default pipeline over the Bash tool; the registry (and its services) live as long as the scope. */
export const runtimeLayer = (options: BashServices.Options = {}) =>
  ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layer([testPlugin(options)])))

/** A session rooted at `cwd`, whose persisted files go under `cwd/.project`. */
export const session = (cwd: string, additionalDirectories: ReadonlyArray<string> = []) =>
  ToolUseContext.make({
    cwd,
    projectDir: path.join(cwd, ".project"),
    permissionContext: { ...Permission.emptyPermissionContext("bypassPermissions"), additionalDirectories }
  })

export interface Call {
  readonly events: ReadonlyArray<Message.RuntimeEvent>
  readonly result: Message.ToolResultBlockParam
  readonly text: string
}

let counter = 0

/** One tool_use through the runtime in the environment (provide `runtimeLayer`). */
export const call = (name: string, input: unknown, context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const id = `toolu_${++counter}`
    const events = Array.from(
      yield* Stream.runCollect(runtime.runToolUse({ type: "tool_use", id, name, input }, context))
    )
    const last = events[events.length - 1]
    if (last === undefined || last._tag !== "ToolResult") return yield* Effect.die("the call ended without a result")
    return { events, result: last.result, text: contentText(last.result.content) } satisfies Call
  })

const contentText = (content: Message.ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/** A name to give test processes (`exec -a NAME sleep 100`) so `ps` can find exactly them. */
export const marker = () => `tw-test-${crypto.randomUUID().slice(0, 8)}`

/** Processes (not zombies) whose command line contains `name`. */
export const survivors = (name: string): number =>
  ChildProcess.execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(name) && !line.trimStart().startsWith("Z")).length

/** Waits (polling `ps`) until at least `count` processes named `name` run. */
export const awaitProcesses = (name: string, count: number) =>
  Effect.sync(() => survivors(name) >= count).pipe(
    Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("20 millis") })
  )
