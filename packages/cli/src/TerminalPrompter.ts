/**
 * The interactive permission prompt of `toolwright run`: shows the call, why it needs permission and the
 * rule "allow always" would add, then reads allow once / allow always / deny from the terminal. Used only
 * when stdin and stderr are terminals; otherwise nobody can answer and asks are denied (never a hang).
 * MCP servers' questions (elicitation) share the same terminal, one question at a time.
 */
import { PermissionPrompter } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { McpElicitation } from "@toolwright/mcp"
import { Context, Effect, Exit, Layer, Mailbox, Option } from "effect"
import type { Scope } from "effect"
import * as readline from "node:readline"
import * as TerminalElicitation from "./TerminalElicitation.js"

export interface Streams {
  readonly input: NodeJS.ReadableStream
  readonly output: NodeJS.WritableStream
}

const summarize = (input: unknown): string => {
  const text = JSON.stringify(input) ?? ""
  return text.length > 300 ? `${text.slice(0, 299)}…` : text
}

/** The prompt shown for a request. */
export const promptText = (request: PermissionPrompter.Request): string => {
  const always = request.suggestions.length > 0
    ? `2) allow always (adds ${request.suggestions.join(", ")} to .toolwright/settings.local.json)`
    : "2) allow always (no rule can cover this call: same as once)"
  return [
    `[${request.tool.name}] permission needed: ${request.message}`,
    `  input: ${summarize(request.input)}`,
    `  1) allow once   ${always}   3) deny`,
    "choice [1/2/3]: "
  ].join("\n")
}

/** The terminal as prompts use it: a question and its answer line, and one prompt at a time. */
export interface Terminal {
  /** Writes the question and reads one line; undefined at end of input. */
  readonly readAnswer: (question: string) => Effect.Effect<string | undefined>
  /** Runs a whole prompt (several questions) without another prompt interleaving. */
  readonly exclusive: <A, E, R>(prompt: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * Lines are read by one reader for the terminal's lifetime (closed with its scope), so typed-ahead
 * answers are kept.
 */
export const makeTerminal = (streams: Streams): Effect.Effect<Terminal, never, Scope.Scope> =>
  Effect.gen(function*() {
    const lines = yield* Mailbox.make<string>()
    let reader: readline.Interface | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => reader?.close()))
    const open = () => {
      if (reader !== undefined) return
      reader = readline.createInterface({ input: streams.input, terminal: false })
      reader.on("line", (line) => lines.unsafeOffer(line))
      reader.on("close", () => lines.unsafeDone(Exit.void))
    }
    const readAnswer = (question: string) =>
      Effect.sync(() => {
        streams.output.write(question)
        open()
      }).pipe(Effect.zipRight(Effect.option(lines.take)), Effect.map(Option.getOrUndefined))
    // One prompt at a time: concurrent calls queue for the terminal.
    const lock = yield* Effect.makeSemaphore(1)
    return { readAnswer, exclusive: lock.withPermits(1) }
  })

/** Reads the answer to one request; end of input or anything unrecognised twice is a deny. */
export const make = (streams: Streams): Effect.Effect<PermissionPrompter.Service, never, Scope.Scope> =>
  Effect.map(makeTerminal(streams), prompterOn)

const prompterOn = ({ exclusive, readAnswer }: Terminal): PermissionPrompter.Service => {
  const denied = (request: PermissionPrompter.Request): Permission.PermissionAnswer => ({
    behavior: "deny",
    message:
      `Permission to use ${request.tool.name} was denied by the user. Do not retry it; ask the user how to proceed.`
  })
  const ask = (request: PermissionPrompter.Request) =>
    Effect.gen(function*() {
      let question = promptText(request)
      for (let attempt = 0; attempt < 2; attempt++) {
        const answer = (yield* readAnswer(question))?.trim().toLowerCase()
        if (answer === undefined) return denied(request)
        if (answer === "1" || answer === "y" || answer === "yes") return { behavior: "allow" } as const
        if (answer === "2" || answer === "a" || answer === "always") {
          return request.suggestions.length > 0
            ? { behavior: "allow", rules: request.suggestions } as const
            : { behavior: "allow" } as const
        }
        if (answer === "3" || answer === "n" || answer === "no") return denied(request)
        question = "please answer 1 (allow once), 2 (allow always) or 3 (deny): "
      }
      return denied(request)
    })
  return { ask: (request) => exclusive(ask(request)) }
}

/** Whether someone at a terminal can answer: stdin and stderr are both TTYs. */
export const isInteractive = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

/**
 * The terminal prompts on stdin/stderr when interactive (permission asks and MCP servers' questions on one
 * terminal), else auto-deny and decline.
 */
export const layerAuto: Layer.Layer<PermissionPrompter.PermissionPrompter | McpElicitation.McpElicitation> = Layer
  .suspend(() =>
    isInteractive()
      ? Layer.scopedContext(
        Effect.map(makeTerminal({ input: process.stdin, output: process.stderr }), (terminal) =>
          Context.make(PermissionPrompter.PermissionPrompter, prompterOn(terminal)).pipe(
            Context.add(McpElicitation.McpElicitation, TerminalElicitation.make(terminal))
          ))
      )
      : Layer.merge(PermissionPrompter.layerAutoDeny, McpElicitation.layerDecline)
  )
