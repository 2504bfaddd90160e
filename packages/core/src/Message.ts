/**
 * The Anthropic Messages API blocks the runtime speaks (tool_use in, tool_result out), and the
 * `RuntimeEvent` union a tool call emits on its way from one to the other.
 */
import { Schema } from "effect"

export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})
export type TextBlock = typeof TextBlock.Type

export const ImageSource = Schema.Struct({
  type: Schema.Literal("base64"),
  media_type: Schema.Literal("image/png", "image/jpeg", "image/gif", "image/webp"),
  data: Schema.String
})
export type ImageSource = typeof ImageSource.Type

export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: ImageSource
})
export type ImageBlock = typeof ImageBlock.Type

/** A reference to a deferred tool, returned by ToolSearch so the model may call it next. */
export const ToolReferenceBlock = Schema.Struct({
  type: Schema.Literal("tool_reference"),
  tool_name: Schema.String
})
export type ToolReferenceBlock = typeof ToolReferenceBlock.Type

export const ToolResultContentBlock = Schema.Union(TextBlock, ImageBlock, ToolReferenceBlock)
export type ToolResultContentBlock = typeof ToolResultContentBlock.Type

/** What a tool_result carries: a plain string or a list of blocks. */
export const ToolResultContent = Schema.Union(Schema.String, Schema.Array(ToolResultContentBlock))
export type ToolResultContent = typeof ToolResultContent.Type

export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown
})
export type ToolUseBlock = typeof ToolUseBlock.Type

export const ToolResultBlockParam = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: ToolResultContent,
  is_error: Schema.optional(Schema.Boolean)
})
export type ToolResultBlockParam = typeof ToolResultBlockParam.Type

export const ContentBlock = Schema.Union(TextBlock, ImageBlock, ToolUseBlock, ToolResultBlockParam)
export type ContentBlock = typeof ContentBlock.Type

export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Array(Schema.Union(TextBlock, ToolUseBlock, Schema.Struct({ type: Schema.String })))
})
export type AssistantMessage = typeof AssistantMessage.Type

/** A tool reported progress while running; `data` is the tool's progress value. */
export const Progress = Schema.TaggedStruct("Progress", {
  toolUseId: Schema.String,
  toolName: Schema.String,
  data: Schema.Unknown,
  elapsedMs: Schema.Number
})
export type Progress = typeof Progress.Type

/** The permission stage needs an answer; the prompter is asked and the call waits for it. */
export const PermissionRequest = Schema.TaggedStruct("PermissionRequest", {
  toolUseId: Schema.String,
  toolName: Schema.String,
  input: Schema.Unknown,
  message: Schema.String,
  suggestions: Schema.Array(Schema.String)
})
export type PermissionRequest = typeof PermissionRequest.Type

/** The one and only result of a call: the block to send back to the model. */
export const ToolResult = Schema.TaggedStruct("ToolResult", {
  toolUseId: Schema.String,
  toolName: Schema.String,
  result: ToolResultBlockParam,
  durationMs: Schema.Number
})
export type ToolResult = typeof ToolResult.Type

/**
 * A hook's `systemMessage` (Claude Code's name): a note for the user about this call, such as a formatter's
 * warning. The model never sees it; `hookEventName` says which hook event gave it.
 */
export const HookMessage = Schema.TaggedStruct("HookMessage", {
  toolUseId: Schema.String,
  toolName: Schema.String,
  hookEventName: Schema.String,
  message: Schema.String
})
export type HookMessage = typeof HookMessage.Type

export const RuntimeEvent = Schema.Union(Progress, PermissionRequest, HookMessage, ToolResult)
export type RuntimeEvent = typeof RuntimeEvent.Type

/** Builds a tool_result block. */
export const toolResult = (toolUseId: string, content: ToolResultContent, isError: boolean): ToolResultBlockParam =>
  isError
    ? { type: "tool_result", tool_use_id: toolUseId, content, is_error: true }
    : { type: "tool_result", tool_use_id: toolUseId, content }

/** The text of a tool_result's content, its blocks' texts joined by newlines (images are skipped). */
export const contentText = (content: ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")
