/**
 * Deferred tools and tool search. When tool definitions would take too much of the context window, MCP
 * tools and tools marked `shouldDefer` are announced by name only; the model loads them with the
 * ToolSearch tool, whose result holds `tool_reference` blocks. This module decides what is deferred
 * (modes `tst`, `tst-auto`, `standard`), searches, reads back from the conversation which tools were
 * discovered (also across a compaction) and what the model was last told, and carries the current pool
 * to the ToolSearch tool through the `DeferredTools` service.
 */
import { Config, ConfigError, Context, Effect, Either, Layer, Option, Ref, Schema } from "effect"
import * as Tool from "./Tool.js"
import { ToolRegistry } from "./ToolRegistry.js"

export const TOOL_SEARCH_TOOL_NAME = "ToolSearch"
export const DEFAULT_AUTO_PERCENTAGE = 10
export const DEFAULT_CONTEXT_WINDOW = 200_000
/** Tokens are estimated as characters / 4. */
export const CHARS_PER_TOKEN = 4
export const DEFAULT_MAX_RESULTS = 5

/**
 * `tst` always defers MCP and `shouldDefer` tools; `tst-auto` defers them once their definitions exceed
 * `autoPercentage`% of the context window; `standard` defers nothing.
 */
export type Mode = "tst" | "tst-auto" | "standard"

export interface Settings {
  readonly mode: Mode
  /** For `tst-auto`; defaults to 10. */
  readonly autoPercentage?: number
  /** The model's context window in tokens; defaults to 200,000. */
  readonly contextWindow?: number
}

/** A setting that is not a mode. */
export class ToolSearchSettingError
  extends Schema.TaggedError<ToolSearchSettingError>("@toolwright/core/ToolSearchSettingError")(
    "ToolSearchSettingError",
    { value: Schema.String }
  )
{
  override get message(): string {
    return `Invalid tool search setting "${this.value}": expected tst, tst-auto, standard, true, false, auto or ` +
      `auto:N (N from 0 to 100, the share of the context window deferred tools may take before they are deferred)`
  }
}

/**
 * Reads a setting as users write it: a mode name, `true`/`false`, `auto` or `auto:N` (`auto:0` always
 * defers, `auto:100` never does).
 */
export const parseSetting = (
  value: string
): Either.Either<Pick<Settings, "mode" | "autoPercentage">, ToolSearchSettingError> => {
  const text = value.trim().toLowerCase()
  if (text === "tst" || text === "true" || text === "1" || text === "on") return Either.right({ mode: "tst" })
  if (text === "standard" || text === "false" || text === "0" || text === "off") {
    return Either.right({ mode: "standard" })
  }
  if (text === "tst-auto" || text === "auto") return Either.right({ mode: "tst-auto" })
  const auto = /^auto:(\d{1,3})$/.exec(text)
  if (auto !== null) {
    const percentage = Number(auto[1])
    if (percentage === 0) return Either.right({ mode: "tst" })
    if (percentage === 100) return Either.right({ mode: "standard" })
    if (percentage < 100) return Either.right({ mode: "tst-auto", autoPercentage: percentage })
  }
  return Either.left(new ToolSearchSettingError({ value }))
}


/**
 * Settings from the environment: `TOOLWRIGHT_TOOL_SEARCH` (default `tst`, as Claude Code) and
 * `TOOLWRIGHT_CONTEXT_WINDOW` (tokens, default 200,000).
 */
export const settingsConfig: Config.Config<Settings> = Config.all({
  setting: Config.string("TOOLWRIGHT_TOOL_SEARCH").pipe(Config.withDefault("tst")),
  contextWindow: Config.integer("TOOLWRIGHT_CONTEXT_WINDOW").pipe(Config.withDefault(DEFAULT_CONTEXT_WINDOW))
}).pipe(
  Config.mapOrFail(({ contextWindow, setting }) => {
    const parsed = parseSetting(setting)
    return Either.isLeft(parsed)
      ? Either.left(ConfigError.InvalidData(["TOOLWRIGHT_TOOL_SEARCH"], parsed.left.message))
      : Either.right({ ...parsed.right, contextWindow })
  })
)

/** Whether a tool may be deferred: MCP tools and `shouldDefer` tools, never `alwaysLoad` ones or ToolSearch. */
export const isDeferrable = (tool: Pick<Tool.Any, "alwaysLoad" | "name" | "source" | "shouldDefer">): boolean =>
  !tool.alwaysLoad && tool.name !== TOOL_SEARCH_TOOL_NAME && (tool.source === "mcp" || tool.shouldDefer)

const definitionSizes = new WeakMap<Tool.Any, number>()
/** Characters of a tool's definition as sent to a model. */
export const definitionChars = (tool: Tool.Any): number => {
  let size = definitionSizes.get(tool)
  if (size === undefined) {
    size = JSON.stringify(Tool.definition(tool)).length
    definitionSizes.set(tool, size)
  }
  return size
}

/** What a model request sends for a pool. */
export interface Plan {
  readonly mode: Mode
  /** Names of the tools announced by name only. */
  readonly deferred: ReadonlySet<string>
  /** Estimated tokens of the deferrable tools' definitions, and the `tst-auto` threshold. */
  readonly deferrableTokens: number
  readonly thresholdTokens: number
}

/** Decides which tools of a pool are deferred. Nothing is deferred when ToolSearch is not in the pool. */
export const planToolPool = (pool: ReadonlyArray<Tool.Any>, settings: Settings): Plan => {
  const deferrable = pool.filter(isDeferrable)
  const chars = deferrable.reduce((sum, tool) => sum + definitionChars(tool), 0)
  const deferrableTokens = Math.ceil(chars / CHARS_PER_TOKEN)
  const thresholdTokens = Math.floor(
    ((settings.contextWindow ?? DEFAULT_CONTEXT_WINDOW) * (settings.autoPercentage ?? DEFAULT_AUTO_PERCENTAGE)) / 100
  )
  const searchable = pool.some((tool) => tool.name === TOOL_SEARCH_TOOL_NAME)
  const defer = searchable &&
    (settings.mode === "tst" || (settings.mode === "tst-auto" && deferrableTokens > thresholdTokens))
  return {
    mode: settings.mode,
    deferred: new Set(defer ? deferrable.map((tool) => tool.name) : []),
    deferrableTokens,
    thresholdTokens
  }
}

/**
 * The tools a model request carries, in pool order: every tool not deferred, and the deferred tools the
 * model has discovered, which go with `defer_loading` (render them with `ToolSchemaCache.definitions`).
 */
export const requestTools = (
  pool: ReadonlyArray<Tool.Any>,
  plan: Plan,
  discovered: ReadonlySet<string>
): { readonly tools: ReadonlyArray<Tool.Any>; readonly deferLoading: ReadonlySet<string> } => {
  const deferLoading = new Set<string>()
  const tools = pool.filter((tool) => {
    if (!plan.deferred.has(tool.name)) return true
    if (!discovered.has(tool.name)) return false
    deferLoading.add(tool.name)
    return true
  })
  return { tools, deferLoading }
}

/** How deferred tools are announced: by name only, one per line. */
export const announceDeferredTools = (names: ReadonlyArray<string>): string =>
  `<available-deferred-tools>\n${names.join("\n")}\n</available-deferred-tools>`

// ---------------------------------------------------------------------------------------------------------
// Search

interface IndexEntry {
  readonly name: string
  readonly nameLower: string
  readonly parts: ReadonlyArray<string>
  readonly full: string
  readonly isMcp: boolean
  readonly hint: string
  readonly description: string
  /** The maximal runs of word characters: `\bterm\b` for a word-only term is membership here. */
  readonly hintWords: ReadonlySet<string>
  readonly descriptionWords: ReadonlySet<string>
}

const words = (text: string): ReadonlySet<string> => new Set(text.split(/[^a-z0-9_]+/).filter((word) => word !== ""))

const indexEntries = new WeakMap<Tool.Any, IndexEntry>()

/** `mcp__github__create_issue` → github, create, issue; `NotebookEdit` → notebook, edit. */
const indexOf = (tool: Tool.Any): IndexEntry => {
  const cached = indexEntries.get(tool)
  if (cached !== undefined) return cached
  const isMcp = tool.name.startsWith("mcp__")
  const parts = isMcp
    ? tool.name.slice(5).toLowerCase().split(/_+/).filter((part) => part !== "")
    : tool.name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]/g, " ").toLowerCase().split(/\s+/).filter(
      (part) => part !== ""
    )
  const description = tool.prompt === tool.description ? tool.description : `${tool.description}\n${tool.prompt}`
  const hint = tool.searchHint?.toLowerCase() ?? ""
  const descriptionLower = description.toLowerCase()
  const entry: IndexEntry = {
    name: tool.name,
    nameLower: tool.name.toLowerCase(),
    parts,
    full: parts.join(" "),
    isMcp,
    hint,
    description: descriptionLower,
    hintWords: words(hint),
    descriptionWords: words(descriptionLower)
  }
  indexEntries.set(tool, entry)
  return entry
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const findByName = (tools: ReadonlyArray<Tool.Any>, name: string): Tool.Any | undefined => {
  const lower = name.toLowerCase()
  return tools.find((tool) => indexOf(tool).nameLower === lower)
}

/**
 * Searches the deferred tools. `select:A,B` picks tools by name (a tool already loaded is returned too:
 * selecting it is harmless); otherwise the query is keywords, `+term` marking a required one, scored over
 * the name's words (10, or 12 for an MCP server or tool word; 5/6 for part of a word), the search hint (4)
 * and the description (2). Returns at most `maxResults` names, best first.
 */
export const searchTools = (
  query: string,
  pool: ReadonlyArray<Tool.Any>,
  deferred: ReadonlySet<string>,
  maxResults: number = DEFAULT_MAX_RESULTS
): ReadonlyArray<string> => {
  const deferredTools = pool.filter((tool) => deferred.has(tool.name))
  const select = /^select:(.+)$/is.exec(query.trim())
  if (select !== null) {
    const found: Array<string> = []
    for (const requested of select[1].split(",").map((name) => name.trim()).filter((name) => name !== "")) {
      const tool = findByName(deferredTools, requested) ?? findByName(pool, requested)
      if (tool !== undefined && !found.includes(tool.name)) found.push(tool.name)
    }
    return found
  }

  const queryLower = query.toLowerCase().trim()
  if (queryLower === "") return []
  const exact = findByName(deferredTools, queryLower) ?? findByName(pool, queryLower)
  if (exact !== undefined) return [exact.name]
  if (queryLower.startsWith("mcp__") && queryLower.length > 5) {
    const byPrefix = deferredTools.filter((tool) => indexOf(tool).nameLower.startsWith(queryLower))
    if (byPrefix.length > 0) return byPrefix.slice(0, maxResults).map((tool) => tool.name)
  }

  const terms = queryLower.split(/\s+/).filter((term) => term !== "")
  const required = terms.filter((term) => term.startsWith("+") && term.length > 1).map((term) => term.slice(1))
  const scoring = [...new Set(terms.map((term) => (term.startsWith("+") && term.length > 1 ? term.slice(1) : term)))]
  // A term of word characters only matches as a whole word exactly when it is one of the text's words;
  // other terms (`c++`, `read-file`) fall back to a word-boundary pattern.
  const matchers = new Map(scoring.map((term) => {
    if (/^[a-z0-9_]+$/.test(term)) {
      return [term, {
        hint: (entry: IndexEntry) => entry.hintWords.has(term),
        description: (entry: IndexEntry) => entry.descriptionWords.has(term)
      }]
    }
    const pattern = new RegExp(`\\b${escapeRegExp(term)}\\b`)
    return [term, {
      hint: (entry: IndexEntry) => entry.hint !== "" && pattern.test(entry.hint),
      description: (entry: IndexEntry) => pattern.test(entry.description)
    }]
  }))

  const mentions = (entry: IndexEntry, term: string) => {
    const matcher = matchers.get(term)!
    return entry.parts.some((part) => part.includes(term)) || matcher.description(entry) || matcher.hint(entry)
  }

  const scored: Array<{ name: string; score: number; order: number }> = []
  deferredTools.forEach((tool, order) => {
    const entry = indexOf(tool)
    if (!required.every((term) => mentions(entry, term))) return
    let score = 0
    for (const term of scoring) {
      const matcher = matchers.get(term)!
      if (entry.parts.includes(term)) score += entry.isMcp ? 12 : 10
      else if (entry.parts.some((part) => part.includes(term))) score += entry.isMcp ? 6 : 5
      if (score === 0 && entry.full.includes(term)) score += 3
      if (matcher.hint(entry)) score += 4
      if (matcher.description(entry)) score += 2
    }
    if (score > 0) scored.push({ name: tool.name, score, order })
  })
  return scored
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, maxResults)
    .map((item) => item.name)
}

// ---------------------------------------------------------------------------------------------------------
// The conversation

/** Marks a compaction: the tools discovered before it, whose tool_reference blocks were summarized away. */
export const CompactBoundary = Schema.TaggedStruct("CompactBoundary", {
  discoveredTools: Schema.Array(Schema.String)
})
export type CompactBoundary = typeof CompactBoundary.Type

/** What the model was told about deferred tools at one point of the conversation. */
export const DeferredToolsAnnouncement = Schema.TaggedStruct("DeferredToolsAnnouncement", {
  addedNames: Schema.Array(Schema.String),
  removedNames: Schema.Array(Schema.String)
})
export type DeferredToolsAnnouncement = typeof DeferredToolsAnnouncement.Type

/** A Messages API message (user messages carry the tool_result blocks). */
export const ConversationMessage = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown))
})
export type ConversationMessage = typeof ConversationMessage.Type

/** The entries of a conversation tool search reads; serializable with a transcript. */
export const HistoryEntry = Schema.Union(ConversationMessage, CompactBoundary, DeferredToolsAnnouncement)
export type HistoryEntry = typeof HistoryEntry.Type

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

/**
 * Every tool the model discovered so far: the `tool_reference` blocks inside user messages' tool_results,
 * and the snapshot each compaction boundary carries.
 */
export const extractDiscoveredToolNames = (messages: ReadonlyArray<HistoryEntry>): Set<string> => {
  const discovered = new Set<string>()
  for (const entry of messages) {
    if ("_tag" in entry) {
      if (entry._tag === "CompactBoundary") for (const name of entry.discoveredTools) discovered.add(name)
      continue
    }
    if (entry.role !== "user" || typeof entry.content === "string") continue
    for (const block of entry.content) {
      if (!isRecord(block) || block.type !== "tool_result" || !Array.isArray(block.content)) continue
      for (const item of block.content) {
        if (isRecord(item) && item.type === "tool_reference" && typeof item.tool_name === "string") {
          discovered.add(item.tool_name)
        }
      }
    }
  }
  return discovered
}

/** The boundary to put in place of compacted messages, so what they discovered stays discovered. */
export const compactBoundary = (compacted: ReadonlyArray<HistoryEntry>): CompactBoundary => ({
  _tag: "CompactBoundary",
  discoveredTools: [...extractDiscoveredToolNames(compacted)].sort()
})

/**
 * What changed in the deferred tools since the model was last told (by the announcements in
 * `messages`): tools deferred now but never announced, and announced tools gone from the pool. A tool
 * that stopped being deferred but is still in the pool is not "removed": it is loaded in full. Append
 * the returned announcement to the conversation and show the model `announcementText` of it.
 */
export const getDeferredToolsDelta = (
  pool: ReadonlyArray<Tool.Any>,
  messages: ReadonlyArray<HistoryEntry>,
  deferred: ReadonlySet<string>
): Option.Option<DeferredToolsAnnouncement> => {
  const announced = new Set<string>()
  for (const entry of messages) {
    if (!("_tag" in entry) || entry._tag !== "DeferredToolsAnnouncement") continue
    for (const name of entry.addedNames) announced.add(name)
    for (const name of entry.removedNames) announced.delete(name)
  }
  const inPool = new Set(pool.map((tool) => tool.name))
  const addedNames = pool.filter((tool) => deferred.has(tool.name) && !announced.has(tool.name)).map((t) => t.name)
  const removedNames = [...announced].filter((name) => !deferred.has(name) && !inPool.has(name))
  if (addedNames.length === 0 && removedNames.length === 0) return Option.none()
  return Option.some({
    _tag: "DeferredToolsAnnouncement",
    addedNames: addedNames.sort(),
    removedNames: removedNames.sort()
  })
}

/** The text the model reads for an announcement. */
export const announcementText = (announcement: DeferredToolsAnnouncement): string => {
  const parts: Array<string> = []
  if (announcement.addedNames.length > 0) {
    parts.push(
      `The following deferred tools are now available via ${TOOL_SEARCH_TOOL_NAME}:\n` +
        announceDeferredTools(announcement.addedNames)
    )
  }
  if (announcement.removedNames.length > 0) {
    parts.push(
      `The following deferred tools are no longer available; ${TOOL_SEARCH_TOOL_NAME} will not find them:\n` +
        announcement.removedNames.join("\n")
    )
  }
  return parts.join("\n\n")
}

// ---------------------------------------------------------------------------------------------------------
// The pool the ToolSearch tool searches

/** The ToolSearch tool ran in a runtime that gave it no pool. */
export class ToolSearchUnavailable
  extends Schema.TaggedError<ToolSearchUnavailable>("@toolwright/core/ToolSearchUnavailable")(
    "ToolSearchUnavailable",
    {}
  )
{
  override get message(): string {
    return "ToolSearch is not connected to a tool pool in this runtime, so it cannot search deferred tools. " +
      "Call the tools listed in the request directly; a runtime author wires the pool with " +
      "ToolSearch.withDeferredTools(registryLayer, settings)."
  }
}

export interface Snapshot {
  readonly pool: ReadonlyArray<Tool.Any>
  readonly plan: Plan
}

export interface DeferredToolsService {
  readonly settings: Settings
  /** The current pool and what is deferred in it. */
  readonly current: Effect.Effect<Snapshot, ToolSearchUnavailable>
  /**
   * Where the pool comes from: the registry by default (`withDeferredTools`); an orchestrator points it
   * at the exact pool of each model request (after deny rules and feature flags).
   */
  readonly setPool: (source: () => ReadonlyArray<Tool.Any>) => Effect.Effect<void>
}

const unbound: DeferredToolsService = {
  settings: { mode: "standard" },
  current: Effect.fail(new ToolSearchUnavailable()),
  setPool: () => Effect.void
}

/**
 * The pool the ToolSearch tool searches. A reference with a default (an unconnected pool whose search
 * fails with a clear message), so tools needing it add nothing to a plugin's requirements.
 */
export class DeferredTools extends Context.Reference<DeferredTools>()("@toolwright/core/ToolSearch/DeferredTools", {
  defaultValue: (): DeferredToolsService => unbound
}) {}

/** A session's deferred tools under `settings`; the pool is set with `setPool`. */
export const makeDeferredTools = (settings: Settings): Effect.Effect<DeferredToolsService> =>
  Effect.gen(function*() {
    const source = yield* Ref.make<Option.Option<() => ReadonlyArray<Tool.Any>>>(Option.none())
    let last: Snapshot | undefined
    const current = Effect.flatMap(Ref.get(source), (pool) => {
      if (Option.isNone(pool)) return Effect.fail(new ToolSearchUnavailable())
      const tools = pool.value()
      // The plan is recomputed only when the pool changed.
      if (last === undefined || last.pool !== tools) last = { pool: tools, plan: planToolPool(tools, settings) }
      return Effect.succeed(last)
    })
    return { settings, current, setPool: (pool) => Ref.set(source, Option.some(pool)) }
  })

export const layerDeferredTools = (settings: Settings): Layer.Layer<DeferredTools> =>
  Layer.effect(DeferredTools, makeDeferredTools(settings))

/**
 * A registry whose tools can search its own pool: the deferred-tools service is built first, given to
 * the registry (so the ToolSearch tool sees it), then pointed at the registry's pool.
 * `ToolSearch.withDeferredTools(ToolRegistry.layer([Builtin.plugin, ...]), { mode: "tst-auto" })`.
 */
export const withDeferredTools = <E, R>(
  registry: Layer.Layer<ToolRegistry, E, R>,
  settings: Settings
): Layer.Layer<ToolRegistry | DeferredTools, E, R> =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const tools = yield* ToolRegistry
      const deferred = yield* DeferredTools
      yield* deferred.setPool(() => tools.pool())
    })
  ).pipe(Layer.provideMerge(registry), Layer.provideMerge(layerDeferredTools(settings)))
