/**
 * MCP measures, each against a baseline taken in the same run:
 * - round trip of a Read call through `toolwright mcp serve` over stdio vs the SDK's bare echo server;
 * - cold start, spawn → `tools/list` answered, of `toolwright mcp serve` vs the bare echo server;
 * - the client's wrapping overhead: an MCP tool called through toolwright's whole pipeline (validation, hooks,
 *   permissions, result store) vs `client.callTool`, the tool wrapper alone (the tool's `call`, no stages), and
 *   the floor any Effect-typed caller pays: the same raw `callTool` run as an Effect (`runPromise` of
 *   `Effect.promise`), nothing of toolwright's in it.
 * Run: `npx tsx packages/mcp/bench/Mcp.bench.ts` (builds the CLI bundle when it is missing).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ToolProgress, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpClientManager, McpConfig, McpToolRegistry } from "../src/index.js"

const here = import.meta.dirname
const root = path.join(here, "../../..")
const cliDir = path.join(root, "packages/cli")
const bundle = path.join(cliDir, "dist/toolwright.mjs")
const echoServer = path.join(here, "echo-server.mjs")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "tw-mcp-bench-"))
const file = path.join(work, "sample.txt")
fs.writeFileSync(file, Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the sample file`).join("\n"))

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
const ms = (value: number) => `${value.toFixed(value < 10 ? 3 : 1)} ms`

const connect = async (command: string, args: ReadonlyArray<string>) => {
  const client = new Client({ name: "bench", version: "1" })
  await client.connect(new StdioClientTransport({ command, args: [...args], stderr: "ignore", cwd: work }))
  return client
}

const roundTrips = async (client: Client, name: string, args: Record<string, unknown>, count: number) => {
  for (let i = 0; i < 50; i++) await client.callTool({ name, arguments: args })
  const times: Array<number> = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const result = await client.callTool({ name, arguments: args })
    times.push(performance.now() - start)
    if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`)
  }
  return median(times)
}

const coldStart = async (command: string, args: ReadonlyArray<string>, runs: number) => {
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    const client = await connect(command, args)
    await client.listTools()
    times.push(performance.now() - start)
    await client.close()
  }
  return median(times)
}

const main = async () => {
  if (!fs.existsSync(bundle)) {
    const built = spawnSync(process.execPath, ["build.mjs"], { cwd: cliDir, encoding: "utf8" })
    if (built.status !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
  }
  const serveArgs = [bundle, "mcp", "serve", "--cwd", work]

  // 1. Round trips over stdio.
  const echo = await connect(process.execPath, [echoServer])
  const toolwright = await connect(process.execPath, serveArgs)
  const echoMs = await roundTrips(echo, "echo", { message: "hi" }, 500)
  const readMs = await roundTrips(toolwright, "Read", { file_path: file }, 500)
  await toolwright.close()
  console.log(
    `mcp serve Read round trip vs SDK echo floor: ${ms(readMs)} vs ${ms(echoMs)} (ratio ${(readMs / echoMs).toFixed(2)}, goal <= 1.0 ms)`
  )

  // 2. Cold start: spawn until tools/list is answered.
  const echoCold = await coldStart(process.execPath, [echoServer], 5)
  const serveCold = await coldStart(process.execPath, serveArgs, 5)
  console.log(
    `mcp serve cold start to tools/list vs SDK echo server: ${ms(serveCold)} vs ${ms(echoCold)} (ratio ${
      (serveCold / echoCold).toFixed(2)
    }, goal <= 150 ms)`
  )

  // 3. Wrapping overhead of the client: the same echo server, raw SDK call vs through toolwright's pipeline.
  const layer = ToolRuntime.layerDefault.pipe(
    Layer.provideMerge(McpToolRegistry.layer.pipe(Layer.provide(ToolRegistry.layerTools([])))),
    Layer.provideMerge(McpClientManager.layer({
      // One server process per measured path: a call that wakes a server another path has just used costs
      // differently from one whose server sat idle, so no path shares one.
      servers: McpConfig.parseServers({
        echo: { command: process.execPath, args: [echoServer] },
        echo2: { command: process.execPath, args: [echoServer] }
      }, "bench"),
      cwd: work,
      logDir: path.join(work, "logs")
    }))
  )
  const runtime = ManagedRuntime.make(layer)
  // As a user would run it: MCP tools need an allow rule (the policy matches it on every call).
  const context = ToolUseContext.make({
    cwd: work,
    projectDir: path.join(work, "project"),
    permissionContext: {
      mode: "default",
      allow: [{ rule: "mcp__echo", source: "bench", root: work }],
      deny: [],
      ask: [],
      additionalDirectories: []
    }
  })
  const wrappedCall = Effect.flatMap(ToolRuntime.ToolRuntime, (pipeline) =>
    pipeline.execute(
      { type: "tool_use", id: "toolu_bench", name: "mcp__echo__echo", input: { message: "hi" } },
      context,
      () => Effect.void
    ))
  // The Effect runtime's own share, with its own server like every measured path.
  const effectFloorClient = await connect(process.execPath, [echoServer])
  const effectFloorCall = Effect.promise(() => effectFloorClient.callTool({ name: "echo", arguments: { message: "hi" } }))
  const tool = (await runtime.runPromise(McpClientManager.McpClientManager)).tools().find((candidate) =>
    candidate.name === "mcp__echo2__echo"
  )!
  const callContext = ToolUseContext.forCall(context, "toolu_bench")
  const toolCall = Effect.suspend(() => tool.call({ message: "hi" }, callContext)).pipe(
    Effect.provideService(ToolProgress.ToolProgress, { report: () => Effect.void })
  )
  const rawTimes: Array<number> = []
  const wrappedTimes: Array<number> = []
  const toolTimes: Array<number> = []
  const floorTimes: Array<number> = []
  for (let i = 0; i < 50; i++) {
    await echo.callTool({ name: "echo", arguments: { message: "hi" } })
    await runtime.runPromise(wrappedCall)
    await runtime.runPromise(toolCall)
    await runtime.runPromise(effectFloorCall)
  }
  const measured: ReadonlyArray<readonly [Array<number>, () => Promise<unknown>]> = [
    [rawTimes, () => echo.callTool({ name: "echo", arguments: { message: "hi" } })],
    [wrappedTimes, () =>
      runtime.runPromise(wrappedCall).then((result) => {
        if (result.result.is_error === true) throw new Error(`wrapped echo failed: ${JSON.stringify(result.result)}`)
      })],
    [toolTimes, () => runtime.runPromise(toolCall)],
    [floorTimes, () => runtime.runPromise(effectFloorCall)]
  ]
  // Interleaved so all four see the same machine load, and in turns so none always comes first.
  for (let i = 0; i < 600; i++) {
    for (let k = 0; k < measured.length; k++) {
      const [times, run] = measured[(i + k) % measured.length]
      const start = performance.now()
      await run()
      times.push(performance.now() - start)
    }
  }
  const raw = median(rawTimes)
  const wrapped = median(wrappedTimes)
  const wrapper = median(toolTimes)
  const floor = median(floorTimes)
  console.log(
    `MCP tool call through toolwright's pipeline vs raw SDK callTool: ${ms(wrapped)} vs ${ms(raw)} (ratio ${
      (wrapped / raw).toFixed(2)
    }, goal <= 1.2)`
  )
  console.log(
    `MCP tool wrapper alone (the tool's call, no pipeline stages) vs raw SDK callTool: ${ms(wrapper)} vs ${ms(raw)} (ratio ${
      (wrapper / raw).toFixed(2)
    })`
  )
  console.log(
    `Effect floor (raw SDK callTool run as an Effect, nothing of toolwright's) vs raw SDK callTool: ${ms(floor)} vs ${
      ms(raw)
    } (ratio ${(floor / raw).toFixed(2)}: the share of the 1.2 goal any Effect-typed caller spends before the pipeline)`
  )
  await effectFloorClient.close()
  await runtime.dispose()
  await echo.close()
}

main().finally(() => fs.rmSync(work, { recursive: true, force: true })).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
