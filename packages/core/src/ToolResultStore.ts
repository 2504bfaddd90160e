/**
 * The serialization stage: maps a tool's output to tool_result content. Empty output becomes
 * `(NAME completed with no output)`, since an empty result can end the model's turn.
 */
import { Context, Effect, Layer } from "effect"
import type { ToolResultContent } from "./Message.js"
import type * as Tool from "./Tool.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Service {
  /** The content the model receives for a successful call. */
  readonly toContent: (
    tool: Tool.Any,
    output: unknown,
    context: ToolUseContext
  ) => Effect.Effect<ToolResultContent>
}

export class ToolResultStore extends Context.Tag("@toolwright/core/ToolResultStore")<ToolResultStore, Service>() {}

export const emptyResultText = (toolName: string): string => `(${toolName} completed with no output)`

const isEmpty = (content: ToolResultContent): boolean =>
  typeof content === "string"
    ? content.trim() === ""
    : content.length === 0 || content.every((block) => block.type === "text" && block.text.trim() === "")

/** The tool's own mapping, with empty output replaced by the no-output text. */
export const mapOutput = (tool: Tool.Any, output: unknown, toolUseId: string): ToolResultContent => {
  const content = tool.mapToolResult(output, toolUseId)
  return isEmpty(content) ? emptyResultText(tool.name) : content
}

/** Maps output to content and keeps it inline, whatever its size. */
export const layerInline: Layer.Layer<ToolResultStore> = Layer.succeed(ToolResultStore, {
  // Mapped as the stage is called: the pipeline reads an `Effect.succeed` without a fiber step. A throwing
  // `mapToolResult` dies, as it would inside `Effect.sync`.
  toContent: (tool, output, context) => {
    try {
      return Effect.succeed(mapOutput(tool, output, context.toolUseId))
    } catch (defect) {
      return Effect.die(defect)
    }
  }
})
