import { NodeContext } from "@effect/platform-node"
import { FileSystem } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck, Layer, Schema } from "effect"
import { execFileSync } from "node:child_process"
import type { Message } from "../src/index.js"
import { Tool, ToolRegistry, ToolResultStorage, ToolResultStore, ToolRuntime, ToolUseContext } from "../src/index.js"

const Emit = (name: string, maxResultSizeChars: number) =>
  Tool.make({
    name,
    description: "Returns the text it is given",
    input: Schema.Struct({ text: Schema.String }),
    maxResultSizeChars,
    isReadOnly: () => true,
    call: ({ text }) => Effect.succeed(text)
  })

const Bash = Emit("Bash", 30_000)
const Read = Emit("Read", Infinity)
const Blocks = Tool.make({
  name: "Blocks",
  description: "Returns text blocks",
  input: Schema.Struct({}),
  call: () => Effect.succeed(["alpha ".repeat(10_000), "beta ".repeat(10_000)]),
  mapToolResult: (texts: ReadonlyArray<string>) => texts.map((text) => ({ type: "text" as const, text }))
})
const Picture = Tool.make({
  name: "Picture",
  description: "Returns an image and a long caption",
  input: Schema.Struct({}),
  call: () => Effect.succeed("x".repeat(100_000)),
  mapToolResult: (caption: string) => [
    {
      type: "image" as const,
      source: { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgo=" }
    },
    { type: "text" as const, text: caption }
  ]
})

const Referencing = Tool.make({
  name: "Referencing",
  description: "Returns a long text and a tool reference",
  input: Schema.Struct({}),
  call: () => Effect.succeed("n".repeat(60_000)),
  mapToolResult: (text: string) => [
    { type: "text" as const, text },
    { type: "tool_reference" as const, tool_name: "mcp__slack__read_channel" }
  ]
})

/** 108,851 characters in lines of 100 (99 characters and a newline), the last one shorter. */
const lines = (count: number, width = 99) =>
  Array.from({ length: count }, (_, i) => String(i).padStart(width, "-")).join("\n")

const withTempDir = <A, E, R>(body: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "toolwright-results-" })
    return yield* body(dir)
  }))

const contextIn = (projectDir: string, toolUseId = "toolu_01") =>
  ToolUseContext.forCall(ToolUseContext.make({ cwd: projectDir, projectDir, sessionId: "session-1" }), toolUseId)

const toContent = (tool: Tool.Any, output: unknown, context: ToolUseContext.ToolUseContext) =>
  Effect.flatMap(ToolResultStore.ToolResultStore, (store) => store.toContent(tool, output, context))

const fileSystemStore = (options: ToolResultStorage.Options = {}) =>
  ToolResultStorage.layerFileSystem(options).pipe(Layer.provideMerge(NodeContext.layer))

describe("ToolResultStorage formatting", () => {
  it("formats sizes as Claude Code does", () => {
    assert.strictEqual(ToolResultStorage.formatFileSize(1023), "1023 bytes")
    assert.strictEqual(ToolResultStorage.formatFileSize(2000), "2KB")
    assert.strictEqual(ToolResultStorage.formatFileSize(108_851), "106.3KB")
    assert.strictEqual(ToolResultStorage.formatFileSize(1_572_864), "1.5MB")
    assert.strictEqual(ToolResultStorage.formatFileSize(3 * 1024 ** 3), "3GB")
  })

  it("cuts the preview at the last newline past half the budget, else at the budget", () => {
    const late = `${"a".repeat(1500)}\n${"b".repeat(1000)}`
    assert.deepStrictEqual(ToolResultStorage.generatePreview(late, 2000), { preview: "a".repeat(1500), hasMore: true })
    const early = `${"a".repeat(500)}\n${"b".repeat(3000)}`
    assert.deepStrictEqual(ToolResultStorage.generatePreview(early, 2000), {
      preview: `${"a".repeat(500)}\n${"b".repeat(1499)}`,
      hasMore: true
    })
    assert.deepStrictEqual(ToolResultStorage.generatePreview("short\n", 2000), { preview: "short\n", hasMore: false })
    // A cut inside a surrogate pair would send half an emoji, which is not valid Unicode: the pair goes whole.
    const emoji = `${"a".repeat(1999)}\u{1f600}${"b".repeat(3000)}`
    assert.deepStrictEqual(ToolResultStorage.generatePreview(emoji, 2000), { preview: "a".repeat(1999), hasMore: true })
  })

  it("computes thresholds: Infinity never persists, overrides win, else min(tool, 50,000)", () => {
    assert.strictEqual(ToolResultStorage.persistenceThreshold(Read, { Read: 10 }), Infinity)
    assert.strictEqual(ToolResultStorage.persistenceThreshold(Bash), 30_000)
    assert.strictEqual(ToolResultStorage.persistenceThreshold(Bash, { Bash: 80_000 }), 80_000)
    assert.strictEqual(ToolResultStorage.persistenceThreshold(Bash, { Bash: -1 }), 30_000)
    assert.strictEqual(ToolResultStorage.persistenceThreshold(Emit("Big", 1_000_000)), 50_000)
  })
})

describe("ToolResultStorage.layerFileSystem", () => {
  it.live("persists a result over the threshold and shows the exact preview message", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const output = lines(1089)
        assert.strictEqual(output.length, 108_899)
        const content = yield* toContent(Bash, output, contextIn(dir))
        const path = `${dir}/session-1/tool-results/toolu_01.txt`
        // 2,000 characters hold 20 full lines; the preview stops before the 20th newline.
        const preview = output.slice(0, 1999)
        assert.strictEqual(
          content,
          `<persisted-output>\nOutput too large (106.3KB). Full output saved to: ${path}\n\n` +
            `Preview (first 2KB):\n${preview}\n...\n</persisted-output>`
        )
        const fs = yield* FileSystem.FileSystem
        assert.strictEqual(yield* fs.readFileString(path), output)
        assert.deepStrictEqual(yield* fs.readDirectory(`${dir}/session-1/tool-results`), ["toolu_01.txt"])
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("keeps results under the threshold, overrides, Infinity tools and images inline", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const small = "y".repeat(30_000)
        assert.strictEqual(yield* toContent(Bash, small, contextIn(dir)), small)
        const big = "z".repeat(70_000)
        assert.strictEqual(yield* toContent(Bash, big, contextIn(dir, "toolu_over")), big)
        assert.strictEqual(yield* toContent(Read, "r".repeat(500_000), contextIn(dir)), "r".repeat(500_000))
        const picture = yield* toContent(Picture, "", contextIn(dir))
        assert(Array.isArray(picture) && picture[0].type === "image")
        // A tool_reference cannot be saved to a file and must reach the API: the content passes as it is.
        assert.deepStrictEqual(yield* toContent(Referencing, "n".repeat(60_000), contextIn(dir, "toolu_ref")), [
          { type: "text", text: "n".repeat(60_000) },
          { type: "tool_reference", tool_name: "mcp__slack__read_channel" }
        ])
        const fs = yield* FileSystem.FileSystem
        assert.isFalse(yield* fs.exists(`${dir}/session-1`))
      })
    ).pipe(Effect.provide(fileSystemStore({ toolResultThresholds: { Bash: 80_000 } }))))

  it.live("says when a tool completed with no output", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* toContent(Bash, "  \n", contextIn(dir)), "(Bash completed with no output)")
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("persists structured content as JSON", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const texts = ["alpha ".repeat(10_000), "beta ".repeat(10_000)]
        const content = yield* toContent(Blocks, texts, contextIn(dir, "toolu_json"))
        const path = `${dir}/session-1/tool-results/toolu_json.json`
        assert(typeof content === "string")
        assert.isTrue(content.startsWith(`<persisted-output>\nOutput too large (`))
        assert.include(content, `Full output saved to: ${path}\n\nPreview (first 2KB):\n[\n  {\n    "type": "text",`)
        const fs = yield* FileSystem.FileSystem
        const saved: unknown = JSON.parse(yield* fs.readFileString(path))
        assert.deepStrictEqual(saved, [
          { type: "text", text: "alpha ".repeat(10_000) },
          { type: "text", text: "beta ".repeat(10_000) }
        ])
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("writes UTF-8 exactly, also when a chunk boundary falls inside a surrogate pair", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        // The first write slice is 65,536 UTF-16 units: put the high half of an emoji as its last unit.
        const output = `${"a".repeat(65_535)}😀 é ${"b".repeat(70_000)}😀`
        const content = yield* toContent(Bash, output, contextIn(dir, "toolu_utf8"))
        assert.include(content, "Output too large (132.4KB)")
        const path = `${dir}/session-1/tool-results/toolu_utf8.txt`
        const storage = yield* ToolResultStorage.ToolResultStorage
        assert.strictEqual(yield* storage.read(path), output)
        const fs = yield* FileSystem.FileSystem
        assert.strictEqual((yield* fs.stat(path)).size, BigInt(new TextEncoder().encode(output).length))
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("keeps a hostile tool_use id inside the results directory", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const content = yield* toContent(Bash, "q".repeat(40_000), contextIn(dir, "../../../escape"))
        const escaped = "%002e%002e%002f".repeat(3)
        assert.include(content, `Full output saved to: ${dir}/session-1/tool-results/${escaped}escape.txt`)
        const fs = yield* FileSystem.FileSystem
        assert.isFalse(yield* fs.exists(`${dir}/escape.txt`))
        assert.deepStrictEqual(yield* fs.readDirectory(dir), ["session-1"])
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("gives distinct tool_use ids distinct files, also ids that differ only in unsafe characters", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        // Ids from other clients (OpenAI, MCP peers, exec users) are not Anthropic's `toolu_[A-Za-z0-9]+`.
        const ids = ["call.1", "call_1", "call/1", "call%1"]
        const outputs = ids.map((id) => `${id}\n${"r".repeat(40_000)}`)
        const storage = yield* ToolResultStorage.ToolResultStorage
        const paths = new Set<string>()
        for (const [i, id] of ids.entries()) {
          const content = yield* toContent(Bash, outputs[i], contextIn(dir, id))
          assert(typeof content === "string")
          const path = /Full output saved to: (.*)\n/.exec(content)?.[1]
          assert(path !== undefined, content)
          assert.isTrue(path.startsWith(`${dir}/session-1/tool-results/`), path)
          paths.add(path)
          // The file holds this call's output, not an earlier call's that sanitized to the same name.
          assert.strictEqual(yield* storage.read(path), outputs[i])
        }
        assert.strictEqual(paths.size, ids.length)
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("falls back to a truncated inline result when the directory is read-only", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const results = `${dir}/session-1/tool-results`
        yield* fs.makeDirectory(results, { recursive: true })
        yield* fs.chmod(results, 0o555)
        // root ignores permission bits; the immutable attribute stops root too.
        const asRoot = process.getuid?.() === 0
        if (asRoot) execFileSync("chattr", ["+i", results])
        const restore = Effect.sync(() => {
          if (asRoot) execFileSync("chattr", ["-i", results])
        }).pipe(Effect.zipRight(Effect.ignore(fs.chmod(results, 0o755))))
        const output = lines(400)
        const content = yield* toContent(Bash, output, contextIn(dir)).pipe(Effect.ensuring(restore))
        assert(typeof content === "string")
        const kept = output.slice(0, 29_999)
        assert.isTrue(content.startsWith(`${kept}\n\n[Output too large (39.1KB) and it could not be saved to `))
        const reason = asRoot ? "operation not permitted (EPERM)" : "permission denied (EACCES)"
        assert.include(content, `${results}/toolu_01.txt: ${reason}. Only the first`)
        assert.isTrue(
          content.endsWith(
            "Only the first 29.3KB are shown above. Re-run the command with narrower output (a filter, head/tail, " +
              "offset/limit) to see the rest.]"
          )
        )
        assert.deepStrictEqual(yield* fs.readDirectory(results), [])
      })
    ).pipe(Effect.provide(fileSystemStore())))

  it.live("runs as the serialization stage of the pipeline", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const runtime = yield* ToolRuntime.ToolRuntime
        const output = lines(500)
        const event = yield* runtime.execute(
          { type: "tool_use", id: "toolu_pipe", name: "Bash", input: { text: output } },
          contextIn(dir),
          () => Effect.void
        )
        assert.isUndefined(event.result.is_error)
        assert.include(
          event.result.content,
          `Output too large (48.8KB). Full output saved to: ${dir}/session-1/tool-results/toolu_pipe.txt`
        )
        // The same storage serves the per-message budget.
        const budget = yield* ToolResultStorage.applyToolResultBudget(
          [{ type: "tool_result", tool_use_id: "toolu_big", content: output.repeat(5) }],
          ToolResultStorage.emptyContentReplacementState(),
          contextIn(dir)
        )
        assert.deepStrictEqual(budget.newlyReplaced.map((r) => r.toolUseId), ["toolu_big"])
        const fs = yield* FileSystem.FileSystem
        assert.strictEqual(yield* fs.readFileString(`${dir}/session-1/tool-results/toolu_big.txt`), output.repeat(5))
      })
    ).pipe(
      Effect.provide(
        ToolRuntime.layerDefaultFileSystem().pipe(
          Layer.provide(ToolRegistry.layerTools([Bash])),
          Layer.provideMerge(NodeContext.layer)
        )
      )
    ))
})

const result = (id: string, size: number): Message.ToolResultBlockParam => ({
  type: "tool_result",
  tool_use_id: id,
  content: `${id}:`.padEnd(size, "x")
})

describe("ToolResultStorage budget", () => {
  const memory = ToolResultStorage.layerMemory()
  const budget = (
    results: ReadonlyArray<Message.ToolResultBlockParam>,
    state: ToolResultStorage.ContentReplacementState
  ) => ToolResultStorage.applyToolResultBudget(results, state, contextIn("/projects/p"))

  it.effect("persists the largest fresh results first until the message fits", () =>
    Effect.gen(function*() {
      const message = [result("a", 90_000), result("b", 120_000), result("c", 60_000)]
      const outcome = yield* budget(message, ToolResultStorage.emptyContentReplacementState())
      assert.deepStrictEqual(outcome.newlyReplaced.map((r) => r.toolUseId), ["b"])
      assert.strictEqual(outcome.results[0], message[0])
      assert.strictEqual(outcome.results[2], message[2])
      const replaced = outcome.results[1].content
      assert(typeof replaced === "string")
      assert.isTrue(
        replaced.startsWith(
          "<persisted-output>\nOutput too large (117.2KB). Full output saved to: " +
            "/projects/p/session-1/tool-results/b.txt\n\nPreview (first 2KB):\nb:xxx"
        )
      )
      assert.deepStrictEqual([...outcome.state.seenIds], ["a", "b", "c"])
      const storage = yield* ToolResultStorage.ToolResultStorage
      assert.strictEqual(yield* storage.read("/projects/p/session-1/tool-results/b.txt"), message[1].content)
    }).pipe(Effect.provide(memory)))

  it.effect("freezes decisions across turns and across a save and load of the state", () =>
    Effect.gen(function*() {
      const first = [result("a", 150_000), result("b", 100_000)]
      const turn1 = yield* budget(first, ToolResultStorage.emptyContentReplacementState())
      assert.deepStrictEqual(turn1.newlyReplaced.map((r) => r.toolUseId), ["a"])

      const saved = yield* ToolResultStorage.encodeContentReplacementState(turn1.state)
      const loaded = yield* ToolResultStorage.decodeContentReplacementState(saved)

      // The same message on a later turn, after a reload: byte-identical, nothing new decided.
      const again = yield* budget(first, loaded)
      assert.deepStrictEqual(again.results, turn1.results)
      assert.deepStrictEqual(again.newlyReplaced, [])

      // A second message: "b" was sent inline, so it stays inline even though this message is fuller;
      // the fresh results pay for it, largest first.
      const second = [result("b", 100_000), result("d", 80_000), result("e", 60_000)]
      const turn2 = yield* budget(second, again.state)
      assert.deepStrictEqual(turn2.newlyReplaced.map((r) => r.toolUseId), ["d"])
      assert.strictEqual(turn2.results[0], second[0])
      assert.strictEqual(turn2.results[2], second[2])
    }).pipe(Effect.provide(memory)))

  it.effect("leaves a message under the budget untouched and decodes state errors clearly", () =>
    Effect.gen(function*() {
      const message = [result("a", 100_000), result("b", 99_000)]
      const outcome = yield* budget(message, ToolResultStorage.emptyContentReplacementState())
      assert.deepStrictEqual(outcome.results, message)
      const bad = yield* Effect.flip(ToolResultStorage.decodeContentReplacementState(`{"seenIds":[1]}`))
      assert.include(bad.message, "seenIds")
    }).pipe(Effect.provide(memory)))

  it.effect.prop(
    "fits every message, persists the largest first, and decides the same after a reload",
    [FastCheck.array(FastCheck.array(FastCheck.integer({ min: 1, max: 160_000 }), { minLength: 1, maxLength: 5 }), {
      minLength: 1,
      maxLength: 4
    })],
    ([sizes]) =>
      Effect.gen(function*() {
        const messages = sizes.map((message, m) => message.map((size, r) => result(`m${m}r${r}`, size)))
        let state = ToolResultStorage.emptyContentReplacementState()
        const sent: Array<ReadonlyArray<Message.ToolResultBlockParam>> = []
        for (const message of messages) {
          const outcome = yield* budget(message, state)
          state = outcome.state
          sent.push(outcome.results)
          const replaced = new Set(outcome.newlyReplaced.map((r) => r.toolUseId))
          const inline = message.filter((r) => !replaced.has(r.tool_use_id)).map((r) => String(r.content).length)
          const persisted = message.filter((r) => replaced.has(r.tool_use_id)).map((r) => String(r.content).length)
          assert.isAtMost(inline.reduce((a, b) => a + b, 0), ToolResultStorage.MAX_TOOL_RESULTS_PER_MESSAGE_CHARS)
          if (persisted.length > 0) assert.isAtLeast(Math.min(...persisted), Math.max(0, ...inline))
        }
        const reloaded = yield* ToolResultStorage.decodeContentReplacementState(
          yield* ToolResultStorage.encodeContentReplacementState(state)
        )
        for (const [i, message] of messages.entries()) {
          const again = yield* budget(message, reloaded)
          assert.deepStrictEqual(again.results, sent[i])
          assert.deepStrictEqual(again.newlyReplaced, [])
        }
      }).pipe(Effect.provide(memory)),
    { fastCheck: { numRuns: 40 } }
  )
})
