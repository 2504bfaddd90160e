/**
 * How failures become text: the error types tools and stages fail with, `formatError` (what the model
 * reads), `classifyToolError` (a short label for logs and telemetry) and the `<tool_use_error>` wrapper.
 */
import { Cause, Predicate, Schema } from "effect"

/** A tool's own failure. `message` is what the model reads: say what happened and what to do next. */
export class ToolError extends Schema.TaggedError<ToolError>("@toolwright/core/ToolError")("ToolError", {
  message: Schema.String
}) {}

/** The input did not decode against the tool's schema, or its `validateInput` refused it. */
export class InputValidationError extends Schema.TaggedError<InputValidationError>(
  "@toolwright/core/InputValidationError"
)("InputValidationError", {
  toolName: Schema.String,
  issues: Schema.Array(Schema.String),
  message: Schema.String
}) {}

const MAX_ERROR_CHARS = 10_000
const KEEP_CHARS = 5_000

/** Cuts a long text to its first and last 5,000 characters, saying how much was dropped in between. */
export const truncateMiddle = (text: string): string => {
  if (text.length <= MAX_ERROR_CHARS) return text
  const dropped = text.length - 2 * KEEP_CHARS
  return `${text.slice(0, KEEP_CHARS)}\n\n... [${dropped} characters truncated] ...\n\n${text.slice(-KEEP_CHARS)}`
}

const messageOf = (error: unknown): string => {
  if (typeof error === "string") return error
  if (Predicate.hasProperty(error, "message") && typeof error.message === "string" && error.message !== "") {
    return error.message
  }
  if (Predicate.hasProperty(error, "_tag") && typeof error._tag === "string") return error._tag
  if (error instanceof Error) return error.name
  try {
    return String(error)
  } catch {
    return "Unknown error"
  }
}

/** The text a model reads for a failure: its message, middle-truncated past 10,000 characters. */
export const formatError = (error: unknown): string => truncateMiddle(messageOf(error))

/** The text for a whole Cause: the first failure, else the first defect, else the interruption. */
export const formatCause = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") return formatError(failure.value)
  const defect = Cause.dieOption(cause)
  if (defect._tag === "Some") return formatError(defect.value)
  return "Interrupted"
}

const clip = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, max))

/**
 * A short, stable label for an error, for logs and telemetry: a tagged error's tag, an errno code
 * (`ENOENT`), an Error's class name, else `Error` — at most 60 characters; `detail` is the message,
 * at most 200.
 */
export const classifyToolError = (error: unknown): { readonly kind: string; readonly detail: string } => {
  let kind = "Error"
  if (Predicate.hasProperty(error, "_tag") && typeof error._tag === "string") kind = error._tag
  else if (Predicate.hasProperty(error, "code") && typeof error.code === "string") kind = error.code
  else if (error instanceof Error && error.name !== "") kind = error.name
  return { kind: clip(kind, 60), detail: clip(messageOf(error), 200) }
}

/** Wraps an error text the way models know it from Claude Code. */
export const wrapToolUseError = (message: string): string => `<tool_use_error>${message}</tool_use_error>`

/** The text for a call to a tool nobody registered. */
export const noSuchTool = (name: string): string => `Error: No such tool available: ${name}`
