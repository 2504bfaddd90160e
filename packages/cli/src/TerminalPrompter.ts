/**
 * The interactive permission prompt of `toolwright run`: shows the call, why it needs permission and the
 * rule "allow always" would add, then reads allow once / allow always / deny from the terminal. Used only
 * when stdin and stderr are terminals; otherwise nobody can answer and asks are denied (never a hang).
 */
import { PermissionPrompter } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { Effect, Exit, Layer, Mailbox, Option } from "effect"
import type { Scope } from "effect"
import * as readline from "node:readline"

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

/**
 * Reads the answer to one request; end of input or anything unrecognised twice is a deny. Lines are read
 * by one reader for the prompter's lifetime (closed with its scope), so typed-ahead answers are kept.
 */
export const make = (streams: Streams): Effect.Effect<PermissionPrompter.Service, never, Scope.Scope> =>
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
    return { ask: (request) => lock.withPermits(1)(ask(request)) } satisfies PermissionPrompter.Service
  })

/** Whether someone at a terminal can answer: stdin and stderr are both TTYs. */
export const isInteractive = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

/** The terminal prompt on stdin/stderr when interactive, else auto-deny. */
export const layerAuto: Layer.Layer<PermissionPrompter.PermissionPrompter> = Layer.suspend(() =>
  isInteractive()
    ? Layer.scoped(PermissionPrompter.PermissionPrompter, make({ input: process.stdin, output: process.stderr }))
    : PermissionPrompter.layerAutoDeny
)
