/**
 * `toolwright run NAME`: one call through the whole pipeline. Progress goes to stderr, the result to
 * stdout (`--json`: the tool_result block). Exit 0 on success, 1 when the result is an error, 2 on
 * usage errors.
 */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { ToolRuntime } from "@toolwright/core"
import { McpResourceTools } from "@toolwright/mcp"
import { Console, Effect, Option, Stream } from "effect"
import * as CliOptions from "../CliOptions.js"
import { ErrorOutcome, UsageError } from "../CliError.js"
import { makeSession, runtimeLayerFor } from "../CliRuntime.js"
import { contentToText, progressLine } from "../Render.js"

const input = Options.text("input").pipe(
  Options.withDescription("The tool's input as JSON, or - to read it from stdin"),
  Options.optional
)
const inputFile = Options.file("input-file").pipe(
  Options.withDescription("A file holding the input as JSON, or - for stdin"),
  Options.optional
)

const readStdin = Effect.async<string>((resume) => {
  const chunks: Array<Buffer> = []
  process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
  process.stdin.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
  process.stdin.on("error", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
})

/** The input's JSON text from whichever source was given; `{}` when none was. */
const inputText = (options: { input: Option.Option<string>; inputFile: Option.Option<string> }) =>
  Effect.gen(function*() {
    if (Option.isSome(options.input) && Option.isSome(options.inputFile)) {
      return yield* new UsageError({ message: "Give the input once: either --input or --input-file, not both." })
    }
    if (Option.isSome(options.input)) return options.input.value === "-" ? yield* readStdin : options.input.value
    if (Option.isSome(options.inputFile)) {
      if (options.inputFile.value === "-") return yield* readStdin
      const fs = yield* FileSystem.FileSystem
      return yield* fs.readFileString(options.inputFile.value).pipe(
        Effect.mapError((error) => new UsageError({ message: `Cannot read --input-file: ${error.message}` }))
      )
    }
    return "{}"
  })

export const parseInput = (text: string, source: string): Effect.Effect<unknown, UsageError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      new UsageError({
        message: `${source} is not valid JSON: ${error instanceof Error ? error.message : String(error)}. ` +
          `Pass the tool's input as a JSON object, e.g. --input '{"file_path":"README.md"}'.`
      })
  })

export const command = Command.make(
  "run",
  {
    name: Args.text({ name: "NAME" }),
    input,
    inputFile,
    json: CliOptions.json,
    ...CliOptions.session
  },
  (options) =>
    Effect.gen(function*() {
      const text = yield* inputText(options)
      const toolInput = yield* parseInput(text, Option.isSome(options.inputFile) ? "--input-file" : "--input")
      const session = yield* makeSession(options)
      const runtime = yield* ToolRuntime.ToolRuntime
      if (Option.isNone(runtime.findTool(options.name))) {
        return yield* new UsageError({
          message: `No such tool: ${options.name}. Run \`toolwright tools list\` to see the available tools.`
        })
      }
      const toolUse = { type: "tool_use" as const, id: `toolu_cli_${Date.now().toString(36)}`, name: options.name, input: toolInput }
      let isError = false
      yield* runtime.runToolUse(toolUse, session.context).pipe(
        Stream.runForEach((event) => {
          switch (event._tag) {
            case "Progress": {
              const line = progressLine(event)
              return line === undefined ? Effect.void : Console.error(line)
            }
            case "PermissionRequest":
              // Not announced here: a PermissionRequest hook may answer it, the terminal prompt shows it when
              // someone is asked, and when nobody can answer the result says why and how to allow it.
              return Effect.void
            case "HookMessage":
              return Console.error(`[${event.hookEventName} hook] ${event.message}`)
            case "ToolResult":
              isError = event.result.is_error === true
              return options.json
                ? Console.log(JSON.stringify(event.result))
                : Console.log(contentToText(event.result.content))
          }
        })
      )
      if (isError) return yield* new ErrorOutcome({ code: 1 })
    }).pipe(Effect.provide(runtimeLayerFor({
      ...options,
      // Only an MCP tool, the resource tools or ToolSearch (which searches the whole pool) needs the servers:
      // a built-in or a plugin's tool does not wait up to MCP_TIMEOUT for an unrelated server to start.
      mcp: options.name.startsWith("mcp__") ||
        ["ToolSearch", McpResourceTools.LIST_TOOL_NAME, McpResourceTools.READ_TOOL_NAME].includes(options.name)
    })))
).pipe(Command.withDescription("Run one tool call through the full pipeline and print its result"))
