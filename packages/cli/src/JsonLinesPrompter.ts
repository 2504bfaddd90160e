/**
 * A permission prompter for a peer speaking JSON lines (`toolwright exec`): the pipeline's
 * `permission_request` event goes out on stdout, and the call waits here for the matching
 * `permission_response` line. When the peer cannot answer any more (stdin closed, the session aborted),
 * waiting asks are denied and later ones are denied at once: a call never waits for an answer that
 * cannot come. The exec loop registers each ask as its `permission_request` line goes out, so an answer that
 * comes back before the call reaches this prompter (a PermissionRequest hook runs in between) is kept.
 */
import { PermissionPrompter } from "@toolwright/core"
import type { Permission } from "@toolwright/core"
import { Context, Deferred, Effect, FiberId, Layer } from "effect"

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
  /** A `permission_request` for this call is going out: its answer is kept from now on, even if it comes early. */
  readonly expect: (toolUseId: string, toolName: string) => Effect.Effect<void>
  /** The call has its result: an answer for it is no longer wanted. */
  readonly forget: (toolUseId: string) => Effect.Effect<void>
  /** Hands an answer to the call asking for it; `false` when no call asks under that id or it has its answer. */
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

  // Entries stay until their call has read the answer (or has its result): an answer may come before the ask.
  const entryFor = (toolUseId: string, toolName: string): Waiting => {
    const existing = waiting.get(toolUseId)
    if (existing !== undefined) return existing
    const created = { toolName, answer: Deferred.unsafeMake<Permission.PermissionAnswer>(FiberId.none) }
    waiting.set(toolUseId, created)
    return created
  }

  // Answers the asks still open; those already answered keep their answer.
  const denyAll = (reason: string) =>
    Effect.forEach(
      [...waiting.entries()],
      ([toolUseId, entry]) =>
        Deferred.succeed(entry.answer, {
          behavior: "deny",
          message: unansweredMessage(entry.toolName, toolUseId, reason)
        }),
      { discard: true }
    )

  const prompter: PermissionPrompter.Service = {
    ask: (request) =>
      Effect.suspend(() => {
        const toolUseId = request.context.toolUseId
        const entry = entryFor(toolUseId, request.tool.name)
        const denyIfClosed = closedReason === undefined ? Effect.void : Deferred.succeed(entry.answer, {
          behavior: "deny",
          message: unansweredMessage(request.tool.name, toolUseId, closedReason)
        })
        return denyIfClosed.pipe(
          Effect.zipRight(Deferred.await(entry.answer)),
          Effect.ensuring(Effect.sync(() => {
            if (waiting.get(toolUseId) === entry) waiting.delete(toolUseId)
          }))
        )
      })
  }

  const service: Service = {
    expect: (toolUseId, toolName) => Effect.sync(() => void entryFor(toolUseId, toolName)),
    forget: (toolUseId) => Effect.sync(() => void waiting.delete(toolUseId)),
    answer: (response) =>
      Effect.suspend(() => {
        const entry = waiting.get(response.toolUseId)
        return entry === undefined ? Effect.succeed(false) : Deferred.succeed(entry.answer, toAnswer(response))
      }),
    denyPending: denyAll,
    close: (reason) =>
      Effect.suspend(() => {
        closedReason ??= reason
        return denyAll(reason)
      }),
    waiting: Effect.suspend(() =>
      Effect.filter([...waiting.entries()], ([, entry]) => Effect.map(Deferred.isDone(entry.answer), (done) => !done))
    ).pipe(Effect.map((entries) => entries.map(([toolUseId]) => toolUseId)))
  }
  return { prompter, service }
})

/** Provides both the `PermissionPrompter` stage and the handle the exec loop answers through. */
export const layer: Layer.Layer<JsonLinesPrompter | PermissionPrompter.PermissionPrompter> = Layer.effectContext(
  Effect.map(make, ({ prompter, service }) =>
    Context.make(JsonLinesPrompter, service).pipe(Context.add(PermissionPrompter.PermissionPrompter, prompter)))
)
