/**
 * Running several tool calls of one assistant message: `partitionToolCalls` groups consecutive
 * concurrency-safe calls into batches, and `runTools` runs the batches in order, each concurrent batch on
 * at most `maxConcurrency` fibers, passing progress through as it happens and emitting the results in the
 * order of the calls. The service also carries the orchestration settings the streaming executor shares.
 */
import { Config, Context, Effect, Either, Layer, Mailbox, Option, ParseResult, Schema, Stream } from "effect"
import type { RuntimeEvent, ToolUseBlock } from "./Message.js"
import type * as Message from "./Message.js"
import * as SettingsSchema from "./Settings.js"
import type * as Tool from "./Tool.js"
import { ToolRuntime } from "./ToolRuntime.js"
import type { Service as RuntimeService } from "./ToolRuntime.js"
import type { ToolUseContext } from "./ToolUseContext.js"

/** The environment variable bounding how many calls of a concurrent batch run at once. */
export const MAX_CONCURRENCY_ENV = "TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY"
/** The environment variable naming which tools' failures cancel their siblings. */
export const CASCADE_ENV = "TOOLWRIGHT_TOOL_ERROR_CASCADE"
/** The environment variable saying whether a read-only call's failure cancels its siblings too. */
export const CASCADE_READ_ONLY_ENV = "TOOLWRIGHT_TOOL_ERROR_CASCADE_READ_ONLY"

export const DEFAULT_MAX_CONCURRENCY = 10

/**
 * Which failures cancel the siblings still running or queued. `tools`: `"declared"` (the tools that set
 * `cascadeOnError`, Bash among the built-ins), an explicit list of tool names, or `"none"` to disable the
 * cascade. `readOnly`: whether a failing call that is read-only for its input cascades as well; Claude Code
 * exempts them (one failed read says nothing about a sibling), so the default is `false`.
 */
export interface CascadePolicy {
  readonly tools: "declared" | "none" | ReadonlyArray<string>
  readonly readOnly: boolean
}

export const defaultCascadePolicy: CascadePolicy = { tools: "declared", readOnly: false }

/** The cascade policy as written in a settings file (declared with the rest of the settings schema). */
export const CascadeSetting = SettingsSchema.CascadeSetting
export type CascadeSetting = SettingsSchema.CascadeSetting

/** The policy a setting describes, missing fields taken from the default. */
export const cascadePolicyFromSetting = (setting: CascadeSetting): CascadePolicy =>
  typeof setting === "string"
    ? { tools: setting, readOnly: defaultCascadePolicy.readOnly }
    : {
      tools: setting.tools ?? defaultCascadePolicy.tools,
      readOnly: setting.readOnly ?? defaultCascadePolicy.readOnly
    }

export interface Settings {
  /** At most this many calls of one concurrent batch run at once (at least 1). */
  readonly maxConcurrency: number
  readonly cascade: CascadePolicy
}

export const defaultSettings: Settings = { maxConcurrency: DEFAULT_MAX_CONCURRENCY, cascade: defaultCascadePolicy }

/** An orchestration setting in the environment has a value the runtime cannot use. */
export class OrchestrationConfigError extends Schema.TaggedError<OrchestrationConfigError>(
  "@toolwright/core/OrchestrationConfigError"
)("OrchestrationConfigError", {
  variable: Schema.String,
  value: Schema.String,
  message: Schema.String
}) {}

const parseMaxConcurrency = (raw: string): Either.Either<number, OrchestrationConfigError> => {
  const text = raw.trim()
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(value) && value >= 1
    ? Either.right(value)
    : Either.left(
      new OrchestrationConfigError({
        variable: MAX_CONCURRENCY_ENV,
        value: raw,
        message: `${MAX_CONCURRENCY_ENV} must be a whole number of at least 1, but it is ${
          JSON.stringify(raw)
        }. Set it to how many concurrency-safe tool calls may run at once, or unset it to use the default (${DEFAULT_MAX_CONCURRENCY}).`
      })
    )
}

const parseCascadeTools = (raw: string): Either.Either<CascadePolicy["tools"], OrchestrationConfigError> => {
  const text = raw.trim()
  if (text === "none" || text === "declared") return Either.right(text)
  const names = text.split(",").map((name) => name.trim()).filter((name) => name !== "")
  if (names.length > 0 && names.every((name) => /^[A-Za-z0-9_.:-]+$/.test(name))) return Either.right(names)
  return Either.left(
    new OrchestrationConfigError({
      variable: CASCADE_ENV,
      value: raw,
      message: `${CASCADE_ENV} must be "none", "declared" or a comma-separated list of tool names (e.g. "Bash,Edit"), but it is ${
        JSON.stringify(raw)
      }. Unset it to let the tools that declare it (Bash) cancel their siblings when they fail.`
    })
  )
}

const parseCascadeReadOnly = (raw: string): Either.Either<boolean, OrchestrationConfigError> => {
  const text = raw.trim().toLowerCase()
  if (text === "true" || text === "1") return Either.right(true)
  if (text === "false" || text === "0") return Either.right(false)
  return Either.left(
    new OrchestrationConfigError({
      variable: CASCADE_READ_ONLY_ENV,
      value: raw,
      message: `${CASCADE_READ_ONLY_ENV} must be "true" or "false", but it is ${
        JSON.stringify(raw)
      }. Unset it to keep read-only failures from cancelling their siblings (the default).`
    })
  )
}

const readVariable = <A>(
  name: string,
  parse: (raw: string) => Either.Either<A, OrchestrationConfigError>,
  fallback: A
): Effect.Effect<A, OrchestrationConfigError> =>
  Config.option(Config.string(name)).pipe(
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.flatMap(Option.match({ onNone: () => Effect.succeed(fallback), onSome: (raw) => parse(raw) }))
  )

/**
 * The settings from the environment (through effect's `Config`, so a `ConfigProvider` can supply them):
 * an invalid value fails with a message naming the variable and what it accepts, never a silent default.
 */
export const loadSettings: Effect.Effect<Settings, OrchestrationConfigError> = Effect.gen(function*() {
  const maxConcurrency = yield* readVariable(MAX_CONCURRENCY_ENV, parseMaxConcurrency, DEFAULT_MAX_CONCURRENCY)
  const tools = yield* readVariable(CASCADE_ENV, parseCascadeTools, defaultCascadePolicy.tools)
  const readOnly = yield* readVariable(CASCADE_READ_ONLY_ENV, parseCascadeReadOnly, defaultCascadePolicy.readOnly)
  return { maxConcurrency, cascade: { tools, readOnly } }
})

/** A run of consecutive calls: all concurrency-safe (run together), or a single call run alone. */
export interface Batch {
  readonly concurrent: boolean
  readonly toolUses: ReadonlyArray<ToolUseBlock>
}

type Decoder = (u: unknown) => Either.Either<unknown, ParseResult.ParseIssue>
const decoders = new WeakMap<Schema.Schema.AnyNoContext, Decoder>()

/**
 * The call's input decoded with its tool's Schema, as the validation stage decodes it, or `None` when it
 * does not decode. Used to ask the tool about the call before it runs.
 */
export const decodeForScheduling = (tool: Tool.Any, input: unknown): Option.Option<unknown> => {
  let decoder = decoders.get(tool.inputSchema)
  if (decoder === undefined) {
    decoder = ParseResult.decodeUnknownEither(tool.inputSchema, { onExcessProperty: "error" })
    decoders.set(tool.inputSchema, decoder)
  }
  return Either.getRight(decoder(input))
}

/** Asks a tool something about a decoded input; a tool that throws answers `false` (fail closed). */
const ask = (question: () => boolean): boolean => {
  try {
    return question() === true
  } catch {
    return false
  }
}

/**
 * Whether a call may run beside other concurrency-safe calls: its tool is known, its input decodes, and the
 * tool says so for that input. Anything else is unsafe.
 */
export const isConcurrencySafe = (tool: Option.Option<Tool.Any>, input: unknown): boolean => {
  if (Option.isNone(tool)) return false
  const decoded = decodeForScheduling(tool.value, input)
  return Option.isSome(decoded) && ask(() => tool.value.isConcurrencySafe(decoded.value))
}

/** Whether a call is read-only for its input; unknown tools and undecodable inputs are not. */
export const isReadOnly = (tool: Option.Option<Tool.Any>, input: unknown): boolean => {
  if (Option.isNone(tool)) return false
  const decoded = decodeForScheduling(tool.value, input)
  return Option.isSome(decoded) && ask(() => tool.value.isReadOnly(decoded.value))
}

/**
 * Groups calls into batches, in order: consecutive concurrency-safe calls form one batch, any other call
 * is a batch of its own (R, R, W, R, R gives [R, R], [W], [R, R]).
 */
export const partitionToolCalls = (
  toolUses: ReadonlyArray<ToolUseBlock>,
  findTool: (name: string) => Option.Option<Tool.Any>
): ReadonlyArray<Batch> => {
  const batches: Array<{ concurrent: boolean; toolUses: Array<ToolUseBlock> }> = []
  for (const toolUse of toolUses) {
    const safe = isConcurrencySafe(findTool(toolUse.name), toolUse.input)
    const last = batches[batches.length - 1]
    if (safe && last !== undefined && last.concurrent) last.toolUses.push(toolUse)
    else batches.push({ concurrent: safe, toolUses: [toolUse] })
  }
  return batches
}

export interface Service {
  readonly settings: Settings
  /** The pipeline the calls go through. */
  readonly runtime: RuntimeService
  /**
   * Runs the calls batch by batch. Progress and permission requests pass through as they happen; the
   * results come in the order of the calls, whatever order they finish in. Never fails. A failure does not
   * cancel the other calls, and a reader that stops early interrupts what still runs (without results):
   * for error cascades and user aborts that answer every call, use the `StreamingToolExecutor`.
   */
  readonly runTools: (toolUses: ReadonlyArray<ToolUseBlock>, context: ToolUseContext) => Stream.Stream<RuntimeEvent>
  /** The batches `runTools` would run. */
  readonly partition: (toolUses: ReadonlyArray<ToolUseBlock>) => ReadonlyArray<Batch>
}

export class ToolOrchestration
  extends Context.Tag("@toolwright/core/ToolOrchestration")<ToolOrchestration, Service>()
{}

/** The orchestration over the given runtime, with the given settings. */
export const makeWith = (runtime: RuntimeService, settings: Settings): Service => {
  const partition = (toolUses: ReadonlyArray<ToolUseBlock>) => partitionToolCalls(toolUses, runtime.findTool)

  const runBatch = (
    batch: Batch,
    context: ToolUseContext,
    mailbox: Mailbox.Mailbox<RuntimeEvent>
  ): Effect.Effect<void> => {
    const emit = (event: RuntimeEvent) => Effect.sync(() => void mailbox.unsafeOffer(event))
    if (!batch.concurrent || batch.toolUses.length === 1) {
      return Effect.forEach(
        batch.toolUses,
        (toolUse) => Effect.flatMap(runtime.execute(toolUse, context, emit), emit),
        { discard: true }
      )
    }
    // `maxConcurrency` workers take the calls in order (a fiber per worker, not per call: a batch may hold
    // thousands); each result is handed on as soon as every call before it has been.
    return Effect.suspend(() => {
      const toolUses = batch.toolUses
      const results: Array<Message.ToolResult | undefined> = new Array(toolUses.length)
      let next = 0
      let nextOut = 0
      const settle = (index: number, result: Message.ToolResult) =>
        Effect.sync(() => {
          results[index] = result
          while (nextOut < toolUses.length) {
            const ready = results[nextOut]
            if (ready === undefined) break
            mailbox.unsafeOffer(ready)
            results[nextOut++] = undefined
          }
        })
      const worker = Effect.whileLoop({
        while: () => next < toolUses.length,
        body: () => {
          const index = next++
          return Effect.flatMap(runtime.execute(toolUses[index], context, emit), (result) => settle(index, result))
        },
        step: () => {}
      })
      const workers = Math.min(settings.maxConcurrency, toolUses.length)
      return Effect.all(Array.from({ length: workers }, () => worker), { concurrency: "unbounded", discard: true })
    })
  }

  const runTools = (toolUses: ReadonlyArray<ToolUseBlock>, context: ToolUseContext): Stream.Stream<RuntimeEvent> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<RuntimeEvent>()
      yield* Effect.forEach(partition(toolUses), (batch) => runBatch(batch, context, mailbox), { discard: true }).pipe(
        Effect.ensuring(mailbox.end),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    }))

  return { settings, runtime, runTools, partition }
}

/** The orchestration with settings read from the environment; a bad value fails the layer at start-up. */
export const layer: Layer.Layer<ToolOrchestration, OrchestrationConfigError, ToolRuntime> = Layer.effect(
  ToolOrchestration,
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime
    const settings = yield* loadSettings
    return makeWith(runtime, settings)
  })
)

/** The orchestration with explicit settings (missing ones default), ignoring the environment. */
export const layerWith = (settings: Partial<Settings>): Layer.Layer<ToolOrchestration, never, ToolRuntime> =>
  Layer.effect(
    ToolOrchestration,
    Effect.map(ToolRuntime, (runtime) =>
      makeWith(runtime, {
        ...defaultSettings,
        ...settings,
        maxConcurrency: Math.max(1, Math.floor(settings.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY))
      }))
  )

/** `runTools` of the orchestration in the environment. */
export const runTools = (
  toolUses: ReadonlyArray<ToolUseBlock>,
  context: ToolUseContext
): Stream.Stream<RuntimeEvent, never, ToolOrchestration> =>
  Stream.unwrap(Effect.map(ToolOrchestration, (orchestration) => orchestration.runTools(toolUses, context)))
