/**
 * TaskStop: kills a running background task's whole process group. Stopping the session's own task needs
 * no permission of its own: starting it did.
 */
import { Tool } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Effect, Schema } from "effect"
import * as Prompt from "./prompt.js"
import type { TaskInfo } from "./TaskManager.js"
import { TaskManager } from "./TaskManager.js"

export const TaskStopInput = Schema.Struct({
  task_id: Schema.String.annotations({ description: "The ID of the background task to stop" })
})
export type TaskStopInput = typeof TaskStopInput.Type

export const TaskStopTool = Tool.make({
  name: "TaskStop",
  description: Prompt.TASK_STOP_DESCRIPTION,
  prompt: Prompt.taskStopPrompt,
  input: TaskStopInput,
  source: "builtin",
  aliases: ["KillShell"],
  checkPermissions: () => Effect.succeed({ behavior: "allow" as const }),
  userFacingName: () => "Stop Task",
  mapToolResult: (task: TaskInfo) => `Successfully stopped task: ${task.id} (${task.command})`,
  call: (input: TaskStopInput, context: ToolUseContext.ToolUseContext) =>
    Effect.flatMap(TaskManager, (tasks) => tasks.stop(context.sessionId, input.task_id))
})
