/**
 * TaskOutput: the output a background task wrote since the last read, and its status. It can wait for
 * the task to end (`block`, up to `timeout` ms) so a model need not poll.
 */
import { Tool, ToolErrors } from "@toolwright/core"
import type { ToolUseContext } from "@toolwright/core"
import { Effect, Schema } from "effect"
import { loadLimits } from "../bash/BashTool.js"
import * as Prompt from "./prompt.js"
import type { TaskRead } from "./TaskManager.js"
import { TaskManager } from "./TaskManager.js"

export const DEFAULT_WAIT_MS = 30_000
export const MAX_WAIT_MS = 600_000

export const TaskOutputInput = Schema.Struct({
  task_id: Schema.String.annotations({ description: "The task ID to get output from" }),
  block: Schema.optional(Schema.Boolean.annotations({ description: "Whether to wait for completion (default true)" })),
  timeout: Schema.optional(
    Schema.Number.annotations({ description: "Max wait time in ms (default 30000, max 600000)" })
  )
})
export type TaskOutputInput = typeof TaskOutputInput.Type

/** The text the model reads: the task's identity and status, then its new output. */
export const render = (read: TaskRead): string => {
  const { task } = read
  const lines = [
    `<task_id>${task.id}</task_id>`,
    `<command>${task.command}</command>`,
    `<status>${task.status}</status>`
  ]
  if (task.exitCode !== undefined) lines.push(`<exit_code>${task.exitCode}</exit_code>`)
  if (read.timedOut) lines.push("<retrieval_status>timeout: the task is still running</retrieval_status>")
  const output = read.output.replace(/\n$/, "")
  lines.push(output === "" ? "<output>(no new output)</output>" : `<output>\n${output}\n</output>`)
  return lines.join("\n")
}

export const TaskOutputTool = Tool.make({
  name: "TaskOutput",
  description: Prompt.TASK_OUTPUT_DESCRIPTION,
  prompt: Prompt.taskOutputPrompt,
  input: TaskOutputInput,
  source: "builtin",
  aliases: ["BashOutput"],
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  // Waiting is bounded by the call's own `timeout` (at most 600,000 ms): no runtime limit.
  timeoutMs: Infinity,
  validateInput: (input) => {
    const timeout = input.timeout
    const valid = timeout === undefined || (Number.isInteger(timeout) && timeout >= 0 && timeout <= MAX_WAIT_MS)
    if (valid) return Effect.void
    return Effect.fail(
      new ToolErrors.ToolError({
        message: `InputValidationError: TaskOutput failed due to the following issue:\nThe parameter \`timeout\` is ` +
          `invalid: expected an integer number of milliseconds between 0 and ${MAX_WAIT_MS}, got ${timeout}.`
      })
    )
  },
  mapToolResult: (read: TaskRead) => render(read),
  call: (input: TaskOutputInput, context: ToolUseContext.ToolUseContext) =>
    Effect.gen(function*() {
      const tasks = yield* TaskManager
      const { maxOutputChars } = yield* loadLimits
      return yield* tasks.read(context.sessionId, input.task_id, {
        block: input.block ?? true,
        timeoutMs: input.timeout ?? DEFAULT_WAIT_MS,
        maxChars: maxOutputChars
      })
    })
})
