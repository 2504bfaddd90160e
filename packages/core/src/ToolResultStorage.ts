/**
 * Where big tool results go. A result over its tool's threshold is written whole to
 * `{projectDir}/{sessionId}/tool-results/{tool_use_id}.txt|.json` and the model receives a
 * `<persisted-output>` message with the path and a preview; the per-message budget persists the largest
 * fresh results of one assistant message and freezes every decision in a serializable
 * `ContentReplacementState`, so the bytes of the prompt prefix never change from one turn to the next.
 */
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Context, Effect, Layer, Option, Ref, Schema } from "effect"
import type { ToolResultBlockParam, ToolResultContent } from "./Message.js"
import type * as Tool from "./Tool.js"
import type { Service as StoreService } from "./ToolResultStore.js"
import { mapOutput, ToolResultStore } from "./ToolResultStore.js"
import type { ToolUseContext } from "./ToolUseContext.js"

/** A tool's own threshold is capped at this many characters. */
export const DEFAULT_MAX_RESULT_SIZE_CHARS = 50_000
/** All tool_results of one assistant message together stay under this many characters. */
export const MAX_TOOL_RESULTS_PER_MESSAGE_CHARS = 200_000
export const BYTES_PER_TOKEN = 4
export const MAX_TOOL_RESULT_TOKENS = 100_000
/** The threshold of a result nobody gave a threshold for. */
export const MAX_TOOL_RESULT_BYTES = MAX_TOOL_RESULT_TOKENS * BYTES_PER_TOKEN
/** How much of a persisted result the model sees. */
export const PREVIEW_SIZE_BYTES = 2000
export const TOOL_RESULTS_SUBDIR = "tool-results"
export const PERSISTED_OUTPUT_TAG = "<persisted-output>"
export const PERSISTED_OUTPUT_CLOSING_TAG = "</persisted-output>"

/** Per-tool thresholds from settings (`toolResultThresholds: { "Bash": 80000 }`). */
export interface Options {
  readonly toolResultThresholds?: Readonly<Record<string, number>>
}

/** A result written in full; what the `<persisted-output>` message is built from. */
export interface PersistedToolResult {
  readonly filepath: string
  /** Characters of the saved text. */
  readonly originalSize: number
  readonly isJson: boolean
  readonly preview: string
  readonly hasMore: boolean
}

/** A result could not be saved; `reason` says why in words a model and a person understand. */
export class ToolResultPersistError
  extends Schema.TaggedError<ToolResultPersistError>("@toolwright/core/ToolResultPersistError")(
    "ToolResultPersistError",
    { toolUseId: Schema.String, path: Schema.String, reason: Schema.String }
  )
{
  override get message(): string {
    return `Could not save the result of ${this.toolUseId} to ${this.path}: ${this.reason}`
  }
}

export interface Service {
  /** Saves the whole content (idempotent per tool_use id: an existing file is reused). */
  readonly persist: (
    content: ToolResultContent,
    toolUseId: string,
    context: ToolUseContext
  ) => Effect.Effect<PersistedToolResult, ToolResultPersistError>
  /** The saved text at a path `persist` returned. */
  readonly read: (filepath: string) => Effect.Effect<string, ToolResultPersistError>
}

export class ToolResultStorage
  extends Context.Tag("@toolwright/core/ToolResultStorage")<ToolResultStorage, Service>()
{}

/** `1023 bytes`, `2KB`, `106.3KB`, `1.5MB`: one decimal, a trailing `.0` dropped, as Claude Code prints sizes. */
export const formatFileSize = (sizeInBytes: number): string => {
  const trim = (value: number) => value.toFixed(1).replace(/\.0$/, "")
  const kb = sizeInBytes / 1024
  if (kb < 1) return `${sizeInBytes} bytes`
  if (kb < 1024) return `${trim(kb)}KB`
  const mb = kb / 1024
  if (mb < 1024) return `${trim(mb)}MB`
  return `${trim(mb / 1024)}GB`
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * The first `maxChars` of a text, cut at its last newline when that lies past half the budget (a whole
 * line reads better than a cut one), else at the budget.
 */
export const generatePreview = (content: string, maxChars: number): { preview: string; hasMore: boolean } => {
  if (content.length <= maxChars) return { preview: content, hasMore: false }
  const lastNewline = content.lastIndexOf("\n", maxChars - 1)
  let cut = lastNewline > maxChars * 0.5 ? lastNewline : maxChars
  // Never half a surrogate pair: alone, it is not valid Unicode in the request.
  if (cut > 0 && isHighSurrogate(content.charCodeAt(cut - 1))) cut -= 1
  return { preview: content.slice(0, cut), hasMore: true }
}

/** The message the model receives in place of a persisted result. */
export const buildLargeToolResultMessage = (result: PersistedToolResult): string =>
  `${PERSISTED_OUTPUT_TAG}\n` +
  `Output too large (${formatFileSize(result.originalSize)}). Full output saved to: ${result.filepath}\n\n` +
  `Preview (first ${formatFileSize(PREVIEW_SIZE_BYTES)}):\n` +
  result.preview +
  (result.hasMore ? "\n...\n" : "\n") +
  PERSISTED_OUTPUT_CLOSING_TAG

/**
 * The size over which a tool's result is persisted: `Infinity` for tools that bound themselves (Read:
 * persisting would make a Read → file → Read loop), else a positive override from settings, else the
 * tool's own value capped at `DEFAULT_MAX_RESULT_SIZE_CHARS`.
 */
export const persistenceThreshold = (tool: Tool.Any, overrides: Options["toolResultThresholds"] = {}): number => {
  if (!Number.isFinite(tool.maxResultSizeChars)) return tool.maxResultSizeChars
  const override = Object.hasOwn(overrides, tool.name) ? overrides[tool.name] : undefined
  if (typeof override === "number" && Number.isFinite(override) && override > 0) return override
  return Math.min(tool.maxResultSizeChars, DEFAULT_MAX_RESULT_SIZE_CHARS)
}

/**
 * Content with an image or a tool_reference stays inline: neither can go to a text file, and a dropped
 * tool_reference would leave a discovered tool unloaded.
 */
const hasNonText = (content: ToolResultContent): boolean =>
  typeof content !== "string" && content.some((block) => block.type !== "text")

/** Characters the model reads: a string's length, or the texts of the blocks (references weigh nothing). */
export const contentSize = (content: ToolResultContent): number =>
  typeof content === "string"
    ? content.length
    : content.reduce((sum, block) => sum + (block.type === "text" ? block.text.length : 0), 0)

const isPersisted = (content: ToolResultContent): boolean =>
  typeof content === "string" && content.startsWith(PERSISTED_OUTPUT_TAG)

/**
 * Ids and session ids become one safe path segment, so `../` in an id cannot leave the results directory.
 * The mapping is one-to-one (every other UTF-16 unit becomes `%` and four hex digits, and `%` is never kept
 * as is): results are reused by file name, so two ids sharing a name would show one call the other's output.
 * Anthropic's ids (`toolu_…`) are kept as they are.
 */
export const safeSegment = (value: string): string =>
  value === ""
    ? "%"
    : value.replace(/[^A-Za-z0-9_-]/g, (char) => `%${char.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** The text saved for a content: a string as it is, structured content as indented JSON. */
const serialize = (content: ToolResultContent): { text: string; isJson: boolean } =>
  typeof content === "string"
    ? { text: content, isJson: false }
    : { text: JSON.stringify(content, null, 2), isJson: true }

const checkPersistable = (content: ToolResultContent, toolUseId: string, path: string) =>
  typeof content !== "string" && content.some((block) => block.type !== "text")
    ? Effect.fail(
      new ToolResultPersistError({ toolUseId, path, reason: "results with non-text content are never persisted" })
    )
    : Effect.void

const persistedResult = (filepath: string, text: string, isJson: boolean): PersistedToolResult => ({
  filepath,
  originalSize: text.length,
  isJson,
  ...generatePreview(text, PREVIEW_SIZE_BYTES)
})

const errnoText: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "a directory is in the way",
  EEXIST: "a file is in the way",
  ENOENT: "the directory does not exist",
  EMFILE: "too many open files"
}

/** `permission denied (EACCES)`: the system's reason in words, then its code. */
const describePlatformError = (error: PlatformError): string => {
  if (error._tag !== "SystemError") return error.message
  const code = /^(E[A-Z]+)\b/.exec(error.description ?? "")?.[1]
  const words = code !== undefined && code in errnoText ? errnoText[code] : (error.description ?? error.reason)
  return code === undefined ? words : `${words} (${code})`
}

// Strings are written in slices, each encoded on its own, so a huge output is never copied whole.
const WRITE_CHUNK_CHARS = 1 << 16


/**
 * Files under the project directory, written atomically: streamed in slices into a temporary file
 * beside the target, synced, then renamed over it; on any failure the temporary file is removed, so
 * a reader never sees a partial result.
 */
export const makeFileSystem: Effect.Effect<Service, never, FileSystem.FileSystem | Path.Path> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path

  const writeAtomically = (target: string, text: string) => {
    const temporary = `${target}.${crypto.randomUUID()}.tmp`
    const write = Effect.scoped(Effect.gen(function*() {
      const file = yield* fs.open(temporary, { flag: "wx", mode: 0o600 })
      const encoder = new TextEncoder()
      // One buffer for every slice (3 bytes per UTF-16 unit at most): no garbage piles up off the heap.
      const buffer = new Uint8Array(WRITE_CHUNK_CHARS * 3)
      let start = 0
      while (start < text.length) {
        let end = Math.min(start + WRITE_CHUNK_CHARS, text.length)
        // Never split a surrogate pair: each half alone would encode as U+FFFD.
        if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1
        const { written } = encoder.encodeInto(text.slice(start, end), buffer)
        yield* file.writeAll(buffer.subarray(0, written))
        start = end
      }
      yield* file.sync
    }))
    return write.pipe(
      Effect.zipRight(fs.rename(temporary, target)),
      Effect.onError(() => Effect.ignore(fs.remove(temporary)))
    )
  }

  const persist: Service["persist"] = Effect.fn("ToolResultStorage.persist")(
    function*(content, toolUseId, context) {
      const { isJson, text } = serialize(content)
      const directory = path.join(context.projectDir, safeSegment(context.sessionId), TOOL_RESULTS_SUBDIR)
      const filepath = path.join(directory, `${safeSegment(toolUseId)}.${isJson ? "json" : "txt"}`)
      yield* checkPersistable(content, toolUseId, filepath)
      const fail = (error: PlatformError) =>
        new ToolResultPersistError({ toolUseId, path: filepath, reason: describePlatformError(error) })
      // The same id always carries the same content: a file from an earlier turn is reused, not rewritten.
      const exists = yield* fs.exists(filepath).pipe(Effect.orElseSucceed(() => false))
      if (!exists) {
        yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(fail))
        yield* writeAtomically(filepath, text).pipe(Effect.mapError(fail))
      }
      return persistedResult(filepath, text, isJson)
    }
  )

  const read: Service["read"] = (filepath) =>
    fs.readFileString(filepath).pipe(
      Effect.mapError((error) =>
        new ToolResultPersistError({
          toolUseId: path.basename(filepath),
          path: filepath,
          reason: describePlatformError(error)
        })
      )
    )

  return { persist, read }
})

/** Results kept in memory under the same paths the file system would use: for tests and embedders. */
export const makeMemory: Effect.Effect<Service> = Effect.gen(function*() {
  const files = yield* Ref.make(new Map<string, string>())
  const persist: Service["persist"] = Effect.fn("ToolResultStorage.persist")(
    function*(content, toolUseId, context) {
      const { isJson, text } = serialize(content)
      const filepath = `${context.projectDir}/${safeSegment(context.sessionId)}/${TOOL_RESULTS_SUBDIR}/${
        safeSegment(toolUseId)
      }.${isJson ? "json" : "txt"}`
      yield* checkPersistable(content, toolUseId, filepath)
      yield* Ref.update(files, (map) => (map.has(filepath) ? map : new Map(map).set(filepath, text)))
      return persistedResult(filepath, text, isJson)
    }
  )
  const read: Service["read"] = (filepath) =>
    Effect.flatMap(Ref.get(files), (map) =>
      Option.match(Option.fromNullable(map.get(filepath)), {
        onNone: () =>
          Effect.fail(new ToolResultPersistError({ toolUseId: filepath, path: filepath, reason: "no such result" })),
        onSome: Effect.succeed
      }))
  return { persist, read }
})

/**
 * The inline result when saving failed: as much of the output as the threshold allows, cut at a newline,
 * and a note saying it could not be saved, why, and what to do.
 */
export const unsavedResultText = (text: string, limit: number, error: ToolResultPersistError): string => {
  const keep = Math.max(0, Math.min(limit, text.length))
  const { preview } = generatePreview(text, keep)
  return `${preview}\n\n[Output too large (${formatFileSize(text.length)}) and it could not be saved to ` +
    `${error.path}: ${error.reason}. Only the first ${formatFileSize(preview.length)} are shown above. Re-run the command with ` +
    `narrower output (a filter, head/tail, offset/limit) to see the rest.]`
}

const inlineText = (content: ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/**
 * Replaces content over `threshold` by its `<persisted-output>` message; content with images or tool
 * references and results already persisted pass through; a failed save becomes the truncated inline text.
 */
export const maybePersist = (
  storage: Service,
  content: ToolResultContent,
  threshold: number,
  toolUseId: string,
  context: ToolUseContext
): Effect.Effect<ToolResultContent> => {
  if (hasNonText(content) || isPersisted(content) || contentSize(content) <= threshold) return Effect.succeed(content)
  return storage.persist(content, toolUseId, context).pipe(
    Effect.map(buildLargeToolResultMessage),
    Effect.catchAll((error) => Effect.succeed(unsavedResultText(inlineText(content), threshold, error)))
  )
}

/** The result store over a storage: the tool's mapping, the no-output text, then persistence over the threshold. */
export const makeStore = (storage: Service, options: Options = {}): StoreService => ({
  toContent: (tool, output, context) =>
    Effect.suspend(() =>
      maybePersist(
        storage,
        mapOutput(tool, output, context.toolUseId),
        persistenceThreshold(tool, { ...options.toolResultThresholds, ...context.toolResultThresholds }),
        context.toolUseId,
        context
      )
    )
})

const storeLayer = (options: Options) =>
  Layer.effect(ToolResultStore, Effect.map(ToolResultStorage, (storage) => makeStore(storage, options)))

/** The default: results persisted under the project directory on the real file system. */
export const layerFileSystem = (
  options: Options = {}
): Layer.Layer<ToolResultStore | ToolResultStorage, never, FileSystem.FileSystem | Path.Path> =>
  storeLayer(options).pipe(Layer.provideMerge(Layer.effect(ToolResultStorage, makeFileSystem)))

/** Results persisted in memory (read them back with `ToolResultStorage.read`): tests and embedders. */
export const layerMemory = (options: Options = {}): Layer.Layer<ToolResultStore | ToolResultStorage> =>
  storeLayer(options).pipe(Layer.provideMerge(Layer.effect(ToolResultStorage, makeMemory)))

// ---------------------------------------------------------------------------------------------------------
// The per-message budget

/**
 * What was decided about every tool_result seen so far: `seenIds` were sent (their fate is frozen),
 * `replacements` holds the exact text sent instead of a replaced result. Encodes to plain JSON
 * (`seenIds` as an array, `replacements` as `[id, text]` pairs), so a resumed session or a forked
 * sub-agent makes the same decisions.
 */
export const ContentReplacementState = Schema.Struct({
  seenIds: Schema.ReadonlySet(Schema.String),
  replacements: Schema.ReadonlyMap({ key: Schema.String, value: Schema.String })
})
export type ContentReplacementState = typeof ContentReplacementState.Type

export const emptyContentReplacementState = (): ContentReplacementState => ({
  seenIds: new Set(),
  replacements: new Map()
})

const StateJson = Schema.parseJson(ContentReplacementState)
/** The state as a JSON string, for a transcript or a fork. */
export const encodeContentReplacementState = Schema.encode(StateJson)
/** The state from its JSON string; a malformed one fails with a ParseError naming the field. */
export const decodeContentReplacementState = Schema.decode(StateJson)

export interface BudgetOptions {
  /** Defaults to `MAX_TOOL_RESULTS_PER_MESSAGE_CHARS`. */
  readonly limit?: number
  /** Results of these tools are never replaced (they bound themselves). */
  readonly skip?: (result: ToolResultBlockParam) => boolean
}

export interface BudgetOutcome {
  /** The results to send, in their order; replaced ones carry their frozen replacement text. */
  readonly results: ReadonlyArray<ToolResultBlockParam>
  readonly state: ContentReplacementState
  /** The replacements decided by this call, for a transcript. */
  readonly newlyReplaced: ReadonlyArray<{ readonly toolUseId: string; readonly replacement: string }>
}

/**
 * Keeps the tool_results of one assistant message under the budget. Results replaced before get their
 * recorded text again; results sent before stay as they were; among fresh results the largest are
 * persisted first until the message fits. Call it for every message on every turn with the returned
 * state: the same inputs always give the same bytes.
 */
export const applyToolResultBudget = Effect.fn("ToolResultStorage.applyToolResultBudget")(function*(
  results: ReadonlyArray<ToolResultBlockParam>,
  state: ContentReplacementState,
  context: ToolUseContext,
  options: BudgetOptions = {}
) {
  const storage = yield* ToolResultStorage
  const limit = options.limit ?? MAX_TOOL_RESULTS_PER_MESSAGE_CHARS
  const seenIds = new Set(state.seenIds)
  const replacements = new Map(state.replacements)
  const newlyReplaced: Array<{ toolUseId: string; replacement: string }> = []

  const candidates = results.filter((result) => !hasNonText(result.content) && !isPersisted(result.content))
  const fresh = candidates.filter((result) => !replacements.has(result.tool_use_id) && !seenIds.has(result.tool_use_id))
  const frozenSize = candidates
    .filter((result) => seenIds.has(result.tool_use_id) && !replacements.has(result.tool_use_id))
    .reduce((sum, result) => sum + contentSize(result.content), 0)
  const eligible = fresh.filter((result) => !(options.skip?.(result) ?? false))
  let remaining = frozenSize + fresh.reduce((sum, result) => sum + contentSize(result.content), 0)

  const selected = new Set<string>()
  if (remaining > limit) {
    // Stable sort: equal sizes keep the message's order, so the choice is the same after a reload.
    const bySize = [...eligible].sort((a, b) => contentSize(b.content) - contentSize(a.content))
    for (const result of bySize) {
      if (remaining <= limit) break
      selected.add(result.tool_use_id)
      remaining -= contentSize(result.content)
    }
  }

  for (const result of results) {
    if (selected.has(result.tool_use_id)) {
      const replacement = yield* storage.persist(result.content, result.tool_use_id, context).pipe(
        Effect.map(buildLargeToolResultMessage),
        Effect.catchAll((error) =>
          Effect.succeed(unsavedResultText(inlineText(result.content), PREVIEW_SIZE_BYTES, error))
        )
      )
      replacements.set(result.tool_use_id, replacement)
      newlyReplaced.push({ toolUseId: result.tool_use_id, replacement })
    }
    seenIds.add(result.tool_use_id)
  }

  const out = results.map((result) => {
    const replacement = replacements.get(result.tool_use_id)
    return replacement === undefined ? result : { ...result, content: replacement }
  })
  return { results: out, state: { seenIds, replacements }, newlyReplaced } satisfies BudgetOutcome
})
