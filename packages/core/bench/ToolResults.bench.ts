/**
 * Result persistence and tool search at scale. (1) A 100 MB output through `ToolResultStore.toContent`
 * with the file-system layer: time against Node's own `writeFileSync` of the same string, and the peak
 * RSS growth while persisting (goal: under 64 MB, i.e. the output is streamed, never copied whole).
 * (2) ToolSearch keyword and select queries over 1,000 deferred tools, against a naive substring scan.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Tool, ToolRegistry, ToolResultStorage, ToolResultStore, ToolSearch, ToolUseContext } from "../src/index.js"

const gc = (): void => {
  const collect: unknown = Reflect.get(globalThis, "gc")
  if (typeof collect === "function") collect()
}
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const fmt = (n: number) => n.toFixed(2)

// ---- 1. Persisting a 100 MB output

const Emit = Tool.make({
  name: "Emit",
  description: "Returns its output",
  input: Schema.Struct({}),
  maxResultSizeChars: 30_000,
  call: () => Effect.succeed("")
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-bench-results-"))
const runtime = ManagedRuntime.make(ToolResultStorage.layerFileSystem().pipe(Layer.provide(NodeContext.layer)))
try {
  const line = `${"0123456789abcdef".repeat(6)}\n`
  // Array.join builds a flat string, as a tool's collected output would be.
  const output = Array.from({ length: Math.ceil((100 * 1024 * 1024) / line.length) }, () => line).join("")

  const context = ToolUseContext.forCall(
    ToolUseContext.make({ cwd: dir, projectDir: dir, sessionId: "bench" }),
    "toolu_bench"
  )
  gc()
  const rssBefore = process.memoryUsage.rss()
  let peak = rssBefore
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 2)
  const start = performance.now()
  const content = await runtime.runPromise(
    Effect.flatMap(ToolResultStore.ToolResultStore, (store) => store.toContent(Emit, output, context))
  )
  const persistMs = performance.now() - start
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage.rss())
  // The baseline runs second, so the memory it frees cannot hide the persistence's growth.
  const baselineStart = performance.now()
  fs.writeFileSync(path.join(dir, "baseline.txt"), output)
  const baselineMs = performance.now() - baselineStart
  fs.rmSync(path.join(dir, "baseline.txt"))
  const saved = fs.statSync(path.join(dir, "bench", "tool-results", "toolu_bench.txt")).size
  if (saved !== output.length || typeof content !== "string" || !content.startsWith("<persisted-output>")) {
    throw new Error(`persisting failed: ${saved} bytes saved of ${output.length}`)
  }
  console.log(
    `Persist ${mb(output.length)} MB output vs fs.writeFileSync: ${fmt(persistMs)} ms vs ${fmt(baselineMs)} ms (ratio ${
      fmt(persistMs / baselineMs)
    })`
  )
  console.log(`Persist ${mb(output.length)} MB output, peak RSS growth: ${mb(peak - rssBefore)} MB (goal < 64 MB)`)
} finally {
  await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}

// ---- 2. ToolSearch over 1,000 tools

const services = ["github", "slack", "jira", "linear", "notion", "figma", "stripe", "sentry", "gmail", "drive"]
const verbs = ["create", "list", "get", "update", "delete", "search", "archive", "assign", "comment", "export"]
const nouns = ["issue", "message", "page", "file", "user", "project", "event", "invoice", "label", "report"]
const tools = services.flatMap((service) =>
  verbs.flatMap((verb) =>
    nouns.map((noun) =>
      Tool.make({
        name: `mcp__${service}__${verb}_${noun}`,
        description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun} in ${service}. ` +
          `Use it when the user asks to ${verb} ${noun}s; it returns the ${noun} as JSON with its id, ` +
          `title, owner, timestamps and links, and fails with a readable message when access is denied.`,
        source: "mcp",
        input: Schema.Struct({ id: Schema.String }),
        call: () => Effect.succeed("ok")
      })
    )
  )
)
const searchTool = Tool.make({
  name: "ToolSearch",
  description: "Search deferred tools",
  source: "builtin",
  alwaysLoad: true,
  input: Schema.Struct({ query: Schema.String }),
  call: () => Effect.succeed("ok")
})
const pool = ToolRegistry.assembleToolPool([searchTool, ...tools])
const plan = ToolSearch.planToolPool(pool, { mode: "tst" })
if (plan.deferred.size !== 1000) throw new Error(`expected 1,000 deferred tools, got ${plan.deferred.size}`)

const queries = ["slack message", "+github create issue", "invoice stripe export", "archive page", "sentry event"]
const naive = (query: string) => {
  const terms = query.toLowerCase().replace(/\+/g, "").split(/\s+/)
  return pool
    .filter((tool) => plan.deferred.has(tool.name))
    .map((tool) => {
      const text = `${tool.name} ${tool.description}`.toLowerCase()
      return { name: tool.name, score: terms.filter((term) => text.includes(term)).length }
    })
    .filter((item) => item.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, 5)
}

const perQuery = (body: (query: string) => unknown) => {
  for (const query of queries) body(query) // warm-up (builds the per-tool index once)
  const rounds = 40
  const start = performance.now()
  for (let round = 0; round < rounds; round++) for (const query of queries) body(query)
  return (performance.now() - start) / (rounds * queries.length)
}

const keywordMs = perQuery((query) => ToolSearch.searchTools(query, pool, plan.deferred))
const naiveMs = perQuery(naive)
const selectMs = perQuery(() =>
  ToolSearch.searchTools("select:mcp__slack__list_message,mcp__jira__create_issue", pool, plan.deferred)
)
const best = ToolSearch.searchTools("+github create issue", pool, plan.deferred)
if (best[0] !== "mcp__github__create_issue") throw new Error(`unexpected best match ${best[0]}`)
console.log(
  `ToolSearch keyword query over 1,000 tools vs naive substring scan: ${fmt(keywordMs)} ms vs ${fmt(naiveMs)} ms ` +
    `(ratio ${fmt(keywordMs / naiveMs)}, goal < 5 ms per query)`
)
console.log(`ToolSearch select query over 1,000 tools: ${fmt(selectMs)} ms per query (goal < 1 ms)`)
