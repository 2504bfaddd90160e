/**
 * A permission prompter for a peer speaking JSON lines (`toolwright exec`): the pipeline's
 * `permission_request` event goes out on stdout, and the call waits here for the matching
 * `permission_response` line. When the peer cannot answer any more (stdin closed, the session aborted),
 * waiting asks are denied and later ones are denied at once: a call never waits for an answer that
 * cannot come.
 */
import { PermissionPrompter } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { Context, Deferred, Effect, Layer } from "effect"

/** Claude Code's texts for a denied call, so models read what they already know. */
export const REJECT_MESSAGE =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
export const REJECT_MESSAGE_WITH_REASON_PREFIX =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"

/** A peer's answer to a `permission_request`. */
export interface PermissionResponse {
  readonly toolUseId: string
  readonly behavior: "allow" | "deny"
  /** With `allow`: a rule to remember ("allow always"), e.g. `Bash(npm test:*)`. */
  readonly rule?: string
  /** With `deny`: what the user said, passed on to the model. */
  readonly message?: string
  /** With `allow`: the input to run instead (validated again). */
  readonly updatedInput?: unknown
}

export interface Service {
  /** Hands an answer to the call waiting for it; `false` when no call waits under that id. */
  readonly answer: (response: PermissionResponse) => Effect.Effect<boolean>
  /** Denies every waiting ask with `reason` (the session was aborted); later asks still wait. */
  readonly denyPending: (reason: string) => Effect.Effect<void>
  /** The peer is gone: waiting asks and every later ask are denied with `reason`. */
  readonly close: (reason: string) => Effect.Effect<void>
  /** The ids of the calls waiting for an answer. */
  readonly waiting: Effect.Effect<ReadonlyArray<string>>
}

export class JsonLinesPrompter extends Context.Tag("@toolwright/cli/JsonLinesPrompter")<JsonLinesPrompter, Service>() {}

/** The denial for an ask the peer can no longer answer. */
export const unansweredMessage = (toolName: string, toolUseId: string, reason: string): string =>
  `Permission to use ${toolName} was not granted: ${reason} before a permission_response for ${toolUseId} arrived, so it was denied.`

const toAnswer = (response: PermissionResponse): Permission.PermissionAnswer =>
  response.behavior === "allow"
    ? {
      behavior: "allow",
      ...(response.rule !== undefined ? { rules: [response.rule] } : {}),
      ...(response.updatedInput !== undefined ? { updatedInput: response.updatedInput } : {})
    }
    : {
      behavior: "deny",
      message: response.message !== undefined && response.message.trim() !== ""
        ? REJECT_MESSAGE_WITH_REASON_PREFIX + response.message
        : REJECT_MESSAGE
    }

interface Waiting {
  readonly toolName: string
  readonly answer: Deferred.Deferred<Permission.PermissionAnswer>
}

export const make = Effect.sync(() => {
  const waiting = new Map<string, Waiting>()
  let closedReason: string | undefined

  const denyAll = (reason: string) =>
    Effect.forEach(
      [...waiting.entries()],
      ([toolUseId, entry]) =>
        Deferred.succeed(entry.answer, {
          behavior: "deny",
          message: unansweredMessage(entry.toolName, toolUseId, reason)
        }),
      { discard: true }
    ).pipe(Effect.zipRight(Effect.sync(() => waiting.clear())))

  const prompter: PermissionPrompter.Service = {
    ask: (request) =>
      Effect.suspend(() => {
        const toolUseId = request.context.toolUseId
        if (closedReason !== undefined) {
          return Effect.succeed<Permission.PermissionAnswer>({
            behavior: "deny",
            message: unansweredMessage(request.tool.name, toolUseId, closedReason)
          })
        }
        return Effect.flatMap(Deferred.make<Permission.PermissionAnswer>(), (answer) => {
          waiting.set(toolUseId, { toolName: request.tool.name, answer })
          return Deferred.await(answer).pipe(Effect.ensuring(Effect.sync(() => {
            if (waiting.get(toolUseId)?.answer === answer) waiting.delete(toolUseId)
          })))
        })
      })
  }

  const service: Service = {
    answer: (response) =>
      Effect.suspend(() => {
        const entry = waiting.get(response.toolUseId)
        if (entry === undefined) return Effect.succeed(false)
        waiting.delete(response.toolUseId)
        return Effect.as(Deferred.succeed(entry.answer, toAnswer(response)), true)
      }),
    denyPending: denyAll,
    close: (reason) =>
      Effect.suspend(() => {
        closedReason ??= reason
        return denyAll(reason)
      }),
    waiting: Effect.sync(() => [...waiting.keys()])
  }
  return { prompter, service }
})

/** Provides both the `PermissionPrompter` stage and the handle the exec loop answers through. */
export const layer: Layer.Layer<JsonLinesPrompter | PermissionPrompter.PermissionPrompter> = Layer.effectContext(
  Effect.map(make, ({ prompter, service }) =>
    Context.make(JsonLinesPrompter, service).pipe(Context.add(PermissionPrompter.PermissionPrompter, prompter)))
)
