/**
 * `toolwright exec`: drives the runtime from another program over JSON lines. In on stdin: `tool_use`
 * blocks, assistant messages (their tool_use blocks form one batch), `permission_response`,
 * `elicitation_response` and `abort`. Out on stdout, one JSON object per line and nothing else: `ready`
 * (first, with the session id), `progress`, `permission_request`, `elicitation_request` (an MCP server's
 * question), `tool_result` (with `duration_ms`) and `error` (a bad input line, by number). Logs go to stderr. EOF finishes what runs, then exits 0; SIGINT/SIGTERM interrupt like an
 * abort, flush every result, then exit. An error cascade stays within one assistant message; lone tool_use
 * lines streamed while a call of theirs still runs count as one message.
 */
import { Command, Options } from "@effect/cli"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { McpElicitation } from "@toolwright/mcp"
import { Message, PermissionPrompter, StreamingToolExecutor, ToolOrchestration } from "@toolwright/core"
import type { Settings, ToolUseContext } from "@toolwright/core"
import { Effect, Fiber, Layer, Option, ParseResult, Schema, Stream } from "effect"
import { UsageError } from "../CliError.js"
import * as CliOptions from "../CliOptions.js"
import { makeSession, runtimeLayerWith } from "../CliRuntime.js"
import * as JsonLinesElicitation from "../JsonLinesElicitation.js"
import * as JsonLinesPrompter from "../JsonLinesPrompter.js"

/** Where exec reads its lines and writes its output; the command wires stdin/stdout, tests their own. */
export interface Io {
  readonly lines: Stream.Stream<string>
  /** Writes one line of output (the JSON text, without the newline). */
  readonly write: (line: string) => Effect.Effect<void>
}

/** JSON text for a line of output; values JSON cannot hold (a BigInt in progress data) become strings. */
export const encodeLine = (value: Record<string, unknown>): string => {
  try {
    return JSON.stringify(value)
  } catch {
    return JSON.stringify(value, (_key, inner: unknown) => (typeof inner === "bigint" ? inner.toString() : inner))
  }
}

/** The output line for a runtime event. */
export const eventLine = (event: Message.RuntimeEvent): Record<string, unknown> => {
  switch (event._tag) {
    case "Progress":
      return {
        type: "progress",
        tool_use_id: event.toolUseId,
        tool_name: event.toolName,
        data: event.data,
        elapsed_ms: event.elapsedMs
      }
    case "PermissionRequest":
      return {
        type: "permission_request",
        tool_use_id: event.toolUseId,
        tool_name: event.toolName,
        input: event.input,
        message: event.message,
        suggestions: event.suggestions
      }
    case "HookMessage":
      return {
        type: "hook_message",
        tool_use_id: event.toolUseId,
        tool_name: event.toolName,
        hook_event_name: event.hookEventName,
        message: event.message
      }
    case "ToolResult":
      return {
        type: "tool_result",
        tool_use_id: event.result.tool_use_id,
        content: event.result.content,
        is_error: event.result.is_error === true,
        duration_ms: event.durationMs
      }
  }
}

const EXPECTED =
  "expected a tool_use block, an assistant message ({\"role\":\"assistant\",\"content\":[...]}), a permission_response, an elicitation_response or {\"type\":\"abort\"}"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** What one input line asks for, or why it cannot be used. */
type Parsed =
  | {
    readonly _tag: "Calls"
    /** An assistant message starts a new message; a lone tool_use line joins the one being streamed. */
    readonly message: boolean
    readonly toolUses: ReadonlyArray<Message.ToolUseBlock>
    readonly problems: ReadonlyArray<string>
  }
  | { readonly _tag: "Answer"; readonly response: JsonLinesPrompter.PermissionResponse }
  | { readonly _tag: "ElicitationAnswer"; readonly response: JsonLinesElicitation.ElicitationResponse }
  | { readonly _tag: "Abort" }
  | { readonly _tag: "Invalid"; readonly problem: string }
  | { readonly _tag: "Blank" }

/** A tool_use block as sent, or what is wrong with it (`where` names it in the message). */
const toolUseOf = (block: Record<string, unknown>, where: string): Message.ToolUseBlock | string => {
  if (typeof block.id !== "string" || block.id === "") {
    return `${where} has no string \`id\` (every call needs one, to match its result)`
  }
  if (typeof block.name !== "string" || block.name === "") return `${where} (id ${block.id}) has no string \`name\``
  return { type: "tool_use", id: block.id, name: block.name, input: "input" in block ? block.input : {} }
}

export const parseLine = (text: string): Parsed => {
  if (text.trim() === "") return { _tag: "Blank" }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return {
      _tag: "Invalid",
      problem: `it is not valid JSON (${
        error instanceof Error ? error.message : String(error)
      }); send one JSON object per line`
    }
  }
  if (!isRecord(value)) return { _tag: "Invalid", problem: `it is not a JSON object; ${EXPECTED}` }
  if (value.role === "assistant") {
    if (!Array.isArray(value.content)) {
      return { _tag: "Invalid", problem: "the assistant message has no `content` array of blocks" }
    }
    const toolUses: Array<Message.ToolUseBlock> = []
    const problems: Array<string> = []
    value.content.forEach((block: unknown, index) => {
      if (!isRecord(block) || block.type !== "tool_use") return
      const parsed = toolUseOf(block, `the tool_use in content[${index}]`)
      if (typeof parsed === "string") problems.push(`${parsed}; it was skipped`)
      else toolUses.push(parsed)
    })
    return { _tag: "Calls", message: true, toolUses, problems }
  }
  switch (value.type) {
    case "tool_use": {
      const parsed = toolUseOf(value, "the tool_use")
      return typeof parsed === "string"
        ? { _tag: "Invalid", problem: parsed }
        : { _tag: "Calls", message: false, toolUses: [parsed], problems: [] }
    }
    case "permission_response": {
      if (typeof value.tool_use_id !== "string" || value.tool_use_id === "") {
        return { _tag: "Invalid", problem: "the permission_response has no string `tool_use_id`" }
      }
      if (value.behavior !== "allow" && value.behavior !== "deny") {
        return {
          _tag: "Invalid",
          problem: `the permission_response's \`behavior\` must be "allow" or "deny", not ${
            JSON.stringify(value.behavior)
          }`
        }
      }
      if (value.rule !== undefined && typeof value.rule !== "string") {
        return {
          _tag: "Invalid",
          problem: "the permission_response's `rule` must be a string such as \"Bash(npm test:*)\""
        }
      }
      if (value.message !== undefined && typeof value.message !== "string") {
        return { _tag: "Invalid", problem: "the permission_response's `message` must be a string" }
      }
      return {
        _tag: "Answer",
        response: {
          toolUseId: value.tool_use_id,
          behavior: value.behavior,
          ...(typeof value.rule === "string" ? { rule: value.rule } : {}),
          ...(typeof value.message === "string" ? { message: value.message } : {}),
          ...(value.updated_input !== undefined ? { updatedInput: value.updated_input } : {})
        }
      }
    }
    case "elicitation_response": {
      if (typeof value.id !== "string" || value.id === "") {
        return {
          _tag: "Invalid",
          problem: "the elicitation_response has no string `id` (the id of the elicitation_request it answers)"
        }
      }
      if (value.action !== "accept" && value.action !== "decline" && value.action !== "cancel") {
        return {
          _tag: "Invalid",
          problem: `the elicitation_response's \`action\` must be "accept", "decline" or "cancel", not ${
            JSON.stringify(value.action)
          }`
        }
      }
      if (value.content !== undefined && !isRecord(value.content)) {
        return {
          _tag: "Invalid",
          problem: "the elicitation_response's `content` must be an object of the requested fields, e.g. {\"name\":\"gear\"}"
        }
      }
      return {
        _tag: "ElicitationAnswer",
        response: {
          id: value.id,
          action: value.action,
          ...(value.action === "accept" && value.content !== undefined ? { content: value.content } : {})
        }
      }
    }
    case "abort":
      return { _tag: "Abort" }
    case undefined:
      return { _tag: "Invalid", problem: `it has no \`type\`; ${EXPECTED}` }
    default:
      return { _tag: "Invalid", problem: `its type ${JSON.stringify(value.type)} is unknown; ${EXPECTED}` }
  }
}

/**
 * The exec loop over a session: reads lines until EOF, then lets every call finish and every result out.
 * Interrupted (SIGINT/SIGTERM), it aborts as the user would and still flushes every result.
 */
export const run = (
  context: ToolUseContext.ToolUseContext,
  io: Io,
  options: { readonly cascade?: ToolOrchestration.CascadePolicy } = {}
): Effect.Effect<
  void,
  never,
  ToolOrchestration.ToolOrchestration | JsonLinesPrompter.JsonLinesPrompter | JsonLinesElicitation.JsonLinesElicitation
> =>
  Effect.scoped(Effect.gen(function*() {
    const prompter = yield* JsonLinesPrompter.JsonLinesPrompter
    const elicitation = yield* JsonLinesElicitation.JsonLinesElicitation
    // One executor for the session. As in Claude Code, a cascade reaches only the calls of the failing call's
    // assistant message: an assistant message line is one message, and lone tool_use lines join the message
    // being streamed while a call of it still waits for its result (once all are out, the model has moved on);
    // an abort ends the turn, so the next lone line starts a new message too.
    const executor = yield* StreamingToolExecutor.make(context, options)
    const streamedOpen = new Set<string>()
    const seen = new Set<string>()
    const error = (line: number, problem: string) =>
      io.write(encodeLine({ type: "error", line, message: `Line ${line}: ${problem}.` }))

    yield* io.write(encodeLine({
      type: "ready",
      session_id: context.sessionId,
      cwd: context.cwd,
      permission_mode: context.permissionContext.mode
    }))
    // An ask is registered before its line goes out, so the peer's answer finds it however fast it comes.
    const track = (event: Message.RuntimeEvent): Effect.Effect<void> =>
      event._tag === "PermissionRequest"
        ? prompter.expect(event.toolUseId, event.toolName)
        : event._tag === "ToolResult"
        ? Effect.zipRight(Effect.sync(() => streamedOpen.delete(event.toolUseId)), prompter.forget(event.toolUseId))
        : Effect.void
    const writer = yield* executor.events.pipe(
      Stream.runForEach((event) => Effect.zipRight(track(event), io.write(encodeLine(eventLine(event))))),
      // In the scope, not under this fiber: an interrupted loop must still flush every result through it.
      Effect.forkScoped
    )
    // MCP servers' questions may come at any time, also before the first call (a server eliciting on connect).
    yield* elicitation.requests.pipe(
      Stream.runForEach((request) => io.write(encodeLine(request))),
      Effect.forkScoped
    )

    const handle = (line: number, text: string): Effect.Effect<void> => {
      const parsed = parseLine(text)
      switch (parsed._tag) {
        case "Blank":
          return Effect.void
        case "Invalid":
          return error(line, parsed.problem)
        case "Abort":
          streamedOpen.clear()
          return Effect.zipRight(
            Effect.zipRight(prompter.denyPending("the session was aborted"), elicitation.cancelPending),
            executor.abort
          )
        case "Answer":
          return Effect.flatMap(prompter.answer(parsed.response), (answered) =>
            answered
              ? Effect.void
              : error(
                line,
                `no permission_request is waiting for tool_use_id ${JSON.stringify(parsed.response.toolUseId)}`
              ))
        case "ElicitationAnswer":
          // An answer for a request the server withdrew (or the abort cancelled) comes too late, not wrong.
          return Effect.flatMap(
            elicitation.answer(parsed.response),
            (outcome) => outcome._tag === "Rejected" ? error(line, outcome.problem) : Effect.void
          )
        case "Calls":
          return Effect.gen(function*() {
            for (const problem of parsed.problems) yield* error(line, problem)
            const fresh: Array<Message.ToolUseBlock> = []
            for (const toolUse of parsed.toolUses) {
              if (seen.has(toolUse.id)) {
                yield* error(
                  line,
                  `tool_use id ${JSON.stringify(toolUse.id)} was already used in this session; give every call its own id`
                )
              } else {
                seen.add(toolUse.id)
                fresh.push(toolUse)
              }
            }
            const joins = !parsed.message && streamedOpen.size > 0
            if (parsed.message) streamedOpen.clear()
            // Tracked before they are added: a call cancelled at once has its result out straight away.
            else for (const toolUse of fresh) streamedOpen.add(toolUse.id)
            yield* joins ? executor.addTools(fresh) : executor.addMessage(fresh)
          })
      }
    }

    let lineNumber = 0
    yield* Effect.gen(function*() {
      yield* io.lines.pipe(Stream.runForEach((text) => handle(++lineNumber, text)))
      // EOF: nobody is left to answer permission requests or MCP servers' questions, so they are denied or
      // cancelled; what runs finishes.
      yield* prompter.close("stdin was closed")
      yield* elicitation.close
      yield* executor.end
      yield* Fiber.join(writer)
    }).pipe(
      // SIGINT/SIGTERM, whether still reading or already draining: abort as the user would, flush it all.
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          yield* prompter.close("the session was interrupted")
          yield* elicitation.close
          yield* executor.abort
          yield* executor.end
          yield* Fiber.join(writer)
        })
      )
    )
  }))

/** The settings key holding the error-cascade policy: `"none"`, `"declared"` or `{ tools, readOnly }`. */
export const CASCADE_SETTING = "toolErrorCascade"

/**
 * The cascade policy from the merged settings, if a file sets one (it wins over the environment); an invalid
 * value is a usage error naming the key, the files and what it accepts.
 */
export const cascadeFromSettings = (
  settings: Settings.Resolved
): Effect.Effect<ToolOrchestration.CascadePolicy | undefined, UsageError> => {
  const value = settings.merged[CASCADE_SETTING]
  if (value === undefined) return Effect.succeed(undefined)
  return Schema.decodeUnknown(ToolOrchestration.CascadeSetting)(value).pipe(
    Effect.map(ToolOrchestration.cascadePolicyFromSetting),
    Effect.mapError((error) =>
      new UsageError({
        message: `Invalid settings (${settings.sources.join(", ")}): ${CASCADE_SETTING} must be "none", "declared" or ` +
          `{"tools": "declared" | "none" | ["Bash", ...], "readOnly": true | false}, but it is ${
            JSON.stringify(value)
          }.\n${ParseResult.TreeFormatter.formatErrorSync(error)}`
      })
    )
  )
}

const sessionId = Options.text("session-id").pipe(
  Options.withDescription("The session's id (default: a new one), printed in the first line {\"type\":\"ready\",...}"),
  Options.optional
)

/**
 * Writes a line to `stream`, waiting while its buffer is full: a peer that stops reading holds the writer
 * (and the executor bounds what waits behind it) instead of Node buffering output without end. A stream that
 * errs or closes ends the wait, and later lines are dropped: nobody is left to read them.
 */
export const writeLineTo = (stream: NodeJS.WritableStream) => (line: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (isGone(stream) || stream.write(`${line}\n`)) return resume(Effect.void)
    const done = () => {
      stop()
      resume(Effect.void)
    }
    const stop = () => {
      stream.off("drain", done)
      stream.off("error", done)
      stream.off("close", done)
    }
    stream.once("drain", done)
    stream.once("error", done)
    stream.once("close", done)
    return Effect.sync(stop)
  })

const isGone = (stream: NodeJS.WritableStream): boolean =>
  "destroyed" in stream && stream.destroyed === true

const stdio: Io = {
  lines: NodeStream.stdin.pipe(Stream.decodeText(), Stream.splitLines),
  write: writeLineTo(process.stdout)
}

export const command = Command.make(
  "exec",
  {
    cwd: CliOptions.cwd,
    settings: CliOptions.settings,
    permissionMode: CliOptions.permissionMode,
    sessionId
  },
  (options) =>
    Effect.gen(function*() {
      // A peer that closes its end of stdout cannot read results any more: that ends the session like a
      // SIGTERM (running calls aborted, their processes killed) instead of crashing on EPIPE.
      yield* Effect.sync(() => process.stdout.once("error", () => process.kill(process.pid, "SIGTERM")))
      const session = yield* makeSession(options, Option.getOrUndefined(options.sessionId))
      const { prompter, service } = yield* JsonLinesPrompter.make
      const questions = yield* JsonLinesElicitation.make
      const layer = ToolOrchestration.layer.pipe(
        Layer.provide(
          runtimeLayerWith(Layer.succeed(PermissionPrompter.PermissionPrompter, prompter), options).pipe(
            // The MCP servers' questions go to the peer too (McpClientManager reads McpElicitation).
            Layer.provide(Layer.succeed(McpElicitation.McpElicitation, questions.elicitation))
          )
        ),
        Layer.merge(Layer.succeed(JsonLinesPrompter.JsonLinesPrompter, service)),
        Layer.merge(Layer.succeed(JsonLinesElicitation.JsonLinesElicitation, questions.service))
      )
      const cascade = yield* cascadeFromSettings(session.settings)
      yield* run(session.context, stdio, cascade === undefined ? {} : { cascade }).pipe(
        Effect.provide(layer),
        Effect.catchTags({
          OrchestrationConfigError: (e) => new UsageError({ message: e.message })
        })
      )
    })
).pipe(
  Command.withDescription(
    "Run tool calls from JSON lines on stdin (tool_use blocks, assistant messages, permission_response, elicitation_response, abort) and print events as JSON lines"
  )
)
