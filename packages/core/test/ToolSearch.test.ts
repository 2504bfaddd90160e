import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, Schema } from "effect"
import { Tool, ToolRegistry, ToolSearch } from "../src/index.js"

const make = (
  name: string,
  options: {
    source?: Tool.Source
    description?: string
    searchHint?: string
    shouldDefer?: boolean
    alwaysLoad?: boolean
  } = {}
) =>
  Tool.make({
    name,
    description: options.description ?? `The ${name} tool`,
    source: options.source ?? "builtin",
    ...(options.searchHint === undefined ? {} : { searchHint: options.searchHint }),
    shouldDefer: options.shouldDefer ?? false,
    alwaysLoad: options.alwaysLoad ?? false,
    input: Schema.Struct({ value: Schema.String }),
    call: () => Effect.succeed("ok")
  })

const search = make("ToolSearch", { alwaysLoad: true })
const read = make("Read", { description: "Reads a file from the local filesystem" })
const notebook = make("NotebookEdit", {
  description: "Replaces the contents of a cell",
  searchHint: "jupyter notebook",
  shouldDefer: true
})
const slackRead = make("mcp__slack__read_channel", { source: "mcp", description: "Reads messages of a channel" })
const slackPost = make("mcp__slack__post_message", { source: "mcp", description: "Posts a message to a channel" })
const github = make("mcp__github__create_issue", { source: "mcp", description: "Opens an issue in a repository" })
const pinned = make("mcp__docs__lookup", { source: "mcp", description: "Looks up documentation", alwaysLoad: true })

const pool = ToolRegistry.assembleToolPool([search, read, notebook, slackRead, slackPost, github, pinned])

describe("ToolSearch planning", () => {
  it("tst defers MCP and shouldDefer tools, never alwaysLoad ones or ToolSearch", () => {
    const plan = ToolSearch.planToolPool(pool, { mode: "tst" })
    assert.deepStrictEqual([...plan.deferred].sort(), [
      "NotebookEdit",
      "mcp__github__create_issue",
      "mcp__slack__post_message",
      "mcp__slack__read_channel"
    ])
  })

  it("standard defers nothing, nor does anything without ToolSearch in the pool", () => {
    assert.strictEqual(ToolSearch.planToolPool(pool, { mode: "standard" }).deferred.size, 0)
    const withoutSearch = pool.filter((tool) => tool.name !== "ToolSearch")
    assert.strictEqual(ToolSearch.planToolPool(withoutSearch, { mode: "tst" }).deferred.size, 0)
  })

  it("tst-auto defers once definitions (chars / 4) exceed the share of the context window", () => {
    const chars = [notebook, slackRead, slackPost, github].reduce((sum, t) => sum + ToolSearch.definitionChars(t), 0)
    const tokens = Math.ceil(chars / 4)
    // 10% of a window of exactly tokens * 10: not exceeded.
    const at = ToolSearch.planToolPool(pool, { mode: "tst-auto", contextWindow: tokens * 10 })
    assert.strictEqual(at.deferrableTokens, tokens)
    assert.strictEqual(at.thresholdTokens, tokens)
    assert.strictEqual(at.deferred.size, 0)
    const over = ToolSearch.planToolPool(pool, { mode: "tst-auto", contextWindow: tokens * 10 - 10 })
    assert.strictEqual(over.deferred.size, 4)
    const percent = ToolSearch.planToolPool(pool, { mode: "tst-auto", contextWindow: tokens * 10, autoPercentage: 5 })
    assert.strictEqual(percent.deferred.size, 4)
  })

  it("sends loaded tools and discovered deferred tools, in pool order", () => {
    const plan = ToolSearch.planToolPool(pool, { mode: "tst" })
    const request = ToolSearch.requestTools(pool, plan, new Set(["mcp__slack__post_message"]))
    assert.deepStrictEqual(request.tools.map((tool) => tool.name), [
      "Read",
      "ToolSearch",
      "mcp__docs__lookup",
      "mcp__slack__post_message"
    ])
    assert.deepStrictEqual([...request.deferLoading], ["mcp__slack__post_message"])
    assert.strictEqual(
      ToolSearch.announceDeferredTools(["NotebookEdit", "mcp__github__create_issue"]),
      "<available-deferred-tools>\nNotebookEdit\nmcp__github__create_issue\n</available-deferred-tools>"
    )
  })

  it.effect("reads the mode from settings and the environment", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(ToolSearch.parseSetting("auto:25"), Either.right({ mode: "tst-auto", autoPercentage: 25 }))
      assert.deepStrictEqual(ToolSearch.parseSetting("auto:0"), Either.right({ mode: "tst" }))
      assert.deepStrictEqual(ToolSearch.parseSetting("false"), Either.right({ mode: "standard" }))
      const env = (entries: Record<string, string>) =>
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))
      const settings = yield* ToolSearch.settingsConfig.pipe(
        env({ TOOLWRIGHT_TOOL_SEARCH: "auto:15", TOOLWRIGHT_CONTEXT_WINDOW: "1000000" })
      )
      assert.deepStrictEqual(settings, { mode: "tst-auto", autoPercentage: 15, contextWindow: 1_000_000 })
      assert.deepStrictEqual(yield* ToolSearch.settingsConfig.pipe(env({})), { mode: "tst", contextWindow: 200_000 })
      const error = yield* Effect.flip(ToolSearch.settingsConfig.pipe(env({ TOOLWRIGHT_TOOL_SEARCH: "sometimes" })))
      assert.include(
        String(error),
        `Invalid tool search setting "sometimes": expected tst, tst-auto, standard, true, false, auto or auto:N`
      )
    }))
})

describe("ToolSearch.searchTools", () => {
  const deferred = ToolSearch.planToolPool(pool, { mode: "tst" }).deferred

  it("selects by name, several at once, case-insensitively, loaded tools too", () => {
    assert.deepStrictEqual(ToolSearch.searchTools("select:notebookedit,mcp__slack__post_message", pool, deferred), [
      "NotebookEdit",
      "mcp__slack__post_message"
    ])
    assert.deepStrictEqual(ToolSearch.searchTools("select:Read, Nope", pool, deferred), ["Read"])
    assert.deepStrictEqual(ToolSearch.searchTools("select:Nope", pool, deferred), [])
  })

  it("ranks keywords over name words, search hints and descriptions", () => {
    assert.deepStrictEqual(ToolSearch.searchTools("slack", pool, deferred), [
      "mcp__slack__post_message",
      "mcp__slack__read_channel"
    ])
    assert.deepStrictEqual(ToolSearch.searchTools("jupyter", pool, deferred), ["NotebookEdit"])
    assert.deepStrictEqual(ToolSearch.searchTools("issue repository", pool, deferred), ["mcp__github__create_issue"])
    assert.deepStrictEqual(ToolSearch.searchTools("+slack channel", pool, deferred, 1), ["mcp__slack__read_channel"])
    assert.deepStrictEqual(ToolSearch.searchTools("mcp__slack", pool, deferred), [
      "mcp__slack__post_message",
      "mcp__slack__read_channel"
    ])
    // Loaded tools are not searched by keyword: they are already in the request.
    assert.deepStrictEqual(ToolSearch.searchTools("filesystem", pool, deferred), [])
    assert.deepStrictEqual(ToolSearch.searchTools("message", pool, deferred, 1), ["mcp__slack__post_message"])
  })
})

describe("ToolSearch conversation", () => {
  const referenceResult = (id: string, names: ReadonlyArray<string>): ToolSearch.HistoryEntry => ({
    role: "user",
    content: [{
      type: "tool_result",
      tool_use_id: id,
      content: names.map((name) => ({ type: "tool_reference", tool_name: name }))
    }]
  })

  it("extracts discovered tools, also across a compaction boundary", () => {
    const before = [
      { role: "user" as const, content: "hello" },
      referenceResult("toolu_1", ["mcp__slack__read_channel"]),
      { role: "assistant" as const, content: [{ type: "tool_reference", tool_name: "NotInAUserMessage" }] }
    ]
    const boundary = ToolSearch.compactBoundary(before)
    assert.deepStrictEqual(boundary, { _tag: "CompactBoundary", discoveredTools: ["mcp__slack__read_channel"] })
    const after = [boundary, referenceResult("toolu_2", ["NotebookEdit"])]
    assert.deepStrictEqual([...ToolSearch.extractDiscoveredToolNames(after)], [
      "mcp__slack__read_channel",
      "NotebookEdit"
    ])
    // The history is serializable: it survives a JSON round trip.
    const json = Schema.encodeSync(Schema.parseJson(Schema.Array(ToolSearch.HistoryEntry)))(after)
    const back = Schema.decodeSync(Schema.parseJson(Schema.Array(ToolSearch.HistoryEntry)))(json)
    assert.deepStrictEqual(ToolSearch.extractDiscoveredToolNames(back), ToolSearch.extractDiscoveredToolNames(after))
  })

  it("reports the deferred tools added or removed since the model was last told", () => {
    const deferred = new Set(["mcp__slack__read_channel", "mcp__github__create_issue"])
    const first = ToolSearch.getDeferredToolsDelta(pool, [], deferred)
    assert.deepStrictEqual(
      first,
      Option.some({
        _tag: "DeferredToolsAnnouncement" as const,
        addedNames: ["mcp__github__create_issue", "mcp__slack__read_channel"],
        removedNames: []
      })
    )
    const history: Array<ToolSearch.HistoryEntry> = [Option.getOrThrow(first)]
    assert.isTrue(Option.isNone(ToolSearch.getDeferredToolsDelta(pool, history, deferred)))
    // The github server disconnects; slack's tool stops being deferred but stays loaded: not "removed".
    const smaller = pool.filter((tool) => tool.name !== "mcp__github__create_issue")
    const delta = Option.getOrThrow(ToolSearch.getDeferredToolsDelta(smaller, history, new Set(["NotebookEdit"])))
    assert.deepStrictEqual(delta.addedNames, ["NotebookEdit"])
    assert.deepStrictEqual(delta.removedNames, ["mcp__github__create_issue"])
    assert.strictEqual(
      ToolSearch.announcementText(delta),
      "The following deferred tools are now available via ToolSearch:\n" +
        "<available-deferred-tools>\nNotebookEdit\n</available-deferred-tools>\n\n" +
        "The following deferred tools are no longer available; ToolSearch will not find them:\n" +
        "mcp__github__create_issue"
    )
  })
})

describe("ToolSearch.DeferredTools", () => {
  it.effect("is unavailable until a runtime connects it, with a clear message", () =>
    Effect.gen(function*() {
      const service = yield* ToolSearch.DeferredTools
      const error = yield* Effect.flip(service.current)
      assert.include(error.message, "ToolSearch is not connected to a tool pool in this runtime")
    }))

  it.effect("withDeferredTools points the service at the registry's pool", () =>
    Effect.gen(function*() {
      const service = yield* ToolSearch.DeferredTools
      const snapshot = yield* service.current
      assert.deepStrictEqual(snapshot.pool.map((tool) => tool.name), pool.map((tool) => tool.name))
      assert.strictEqual(snapshot.plan.deferred.size, 4)
      assert.strictEqual(yield* service.current, snapshot)
    }).pipe(
      Effect.provide(
        ToolSearch.withDeferredTools(ToolRegistry.layerTools(pool), { mode: "tst" }).pipe(Layer.orDie)
      )
    ))

  it.effect("an orchestrator points the service at the exact pool of a request", () =>
    Effect.gen(function*() {
      const service = yield* ToolSearch.DeferredTools
      assert.strictEqual(service.settings.mode, "tst")
      const requestPool = pool.filter((tool) => !tool.name.startsWith("mcp__slack"))
      yield* service.setPool(() => requestPool)
      const snapshot = yield* service.current
      assert.deepStrictEqual([...snapshot.plan.deferred].sort(), ["NotebookEdit", "mcp__github__create_issue"])
      assert.deepStrictEqual(ToolSearch.searchTools("slack", snapshot.pool, snapshot.plan.deferred), [])
    }).pipe(Effect.provide(ToolSearch.layerDeferredTools({ mode: "tst" }))))
})
