/**
 * How a command ends other than with success: a usage error (exit 2) or an error result (exit 1).
 * Commands fail with these; `main` prints the message and sets the exit code.
 */
import { Data } from "effect"

/** The user asked for something malformed (bad JSON, unknown tool, missing file): exit 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** The command ran but its outcome is an error (a tool_result with is_error): exit 1, already printed. */
export class ErrorOutcome extends Data.TaggedError("ErrorOutcome")<{ readonly code: 1 }> {}
