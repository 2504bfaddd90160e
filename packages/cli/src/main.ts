/**
 * The `toolwright` command tree and its entry point: usage errors exit 2, error results exit 1, an
 * interruption (SIGINT, SIGTERM) 130.
 */
import { Command, ValidationError } from "@effect/cli"
// Subpath imports: the package index also loads undici (HTTP), which no command here needs at start-up.
import * as NodePlatform from "./NodePlatform.js"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit } from "effect"
import * as ExecCommand from "./commands/ExecCommand.js"
import * as PermissionsCommand from "./commands/PermissionsCommand.js"
import * as McpCommand from "./commands/McpCommand.js"
import * as RunCommand from "./commands/RunCommand.js"
import * as ToolsCommand from "./commands/ToolsCommand.js"

export const VERSION = "0.1.0"

export const root = Command.make("toolwright").pipe(
  Command.withDescription("Run LLM tools the way Claude Code does: list them, run them, serve them"),
  Command.withSubcommands([
    ToolsCommand.command,
    RunCommand.command,
    ExecCommand.command,
    McpCommand.command,
    PermissionsCommand.command
  ])
)

const cli = Command.run(root, { name: "toolwright", version: VERSION })

/** Runs the CLI on `argv` (as process.argv) and resolves with the exit code. */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<number> =>
  cli(argv).pipe(
    Effect.provide(NodePlatform.layer),
    Effect.exit,
    Effect.flatMap((exit) => {
      if (Exit.isSuccess(exit)) return Effect.succeed(0)
      const failure = Cause.failureOption(exit.cause)
      if (failure._tag === "Some") {
        const error = failure.value
        if (ValidationError.isValidationError(error)) return Effect.succeed(2)
        if (error._tag === "UsageError") return Effect.as(Console.error(`Error: ${error.message}`), 2)
        if (error._tag === "ErrorOutcome") return Effect.succeed(1)
      }
      if (Cause.isInterruptedOnly(exit.cause)) return Effect.succeed(130)
      return Effect.as(Console.error(Cause.pretty(exit.cause)), 1)
    })
  )

export const runMain = (): void =>
  NodeRuntime.runMain(
    Effect.flatMap(main(process.argv), (code) =>
      Effect.sync(() => {
        process.exitCode = code
      })),
    {
      disableErrorReporting: true,
      disablePrettyLogger: true,
      // SIGINT/SIGTERM interrupt the whole program, `main`'s own exit code included: the runtime's default then
      // exits 0, as if the command had succeeded. An interruption exits 130, as a shell reports Ctrl-C.
      // A normal end keeps the code `main` set (a signal arriving after it must not turn a 1 into a 0).
      teardown: (exit, onExit) =>
        onExit(
          Exit.isSuccess(exit)
            ? typeof process.exitCode === "number" ? process.exitCode : 0
            : Cause.isInterruptedOnly(exit.cause)
            ? 130
            : 1
        )
    }
  )
