/**
 * `toolwright mcp serve` cold start (spawn until `tools/list` is answered, as an MCP client sees it) against
 * floors measured in the same run, so the part that is toolwright's own can be told from the part any Node
 * MCP server pays on this machine:
 * - a bare Node process answering initialize and tools/list by hand (no SDK, no bundle): Node's own start;
 * - the MCP SDK's echo server (packages/mcp/bench/echo-server.mjs) bundled and started by toolwright's own
 *   launcher with its V8 code cache: the floor of a server built on the SDK, started the way toolwright is;
 * - the same echo server as the SDK ships it (ES modules from node_modules).
 * Each is started once first (the launcher writes its code cache then), then the four take turns.
 * Run: `pnpm bench ColdStart` (after `pnpm build`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const cliDir = join(import.meta.dirname, "..")
const built = spawnSync(process.execPath, ["build.mjs"], { cwd: cliDir, encoding: "utf8" })
if (built.status !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
const bin = join(cliDir, "dist", "toolwright.mjs")
const echoSource = join(cliDir, "..", "mcp", "bench", "echo-server.mjs")
const dir = mkdtempSync(join(tmpdir(), "tw-cold-bench-"))
const work = join(dir, "work")
const cache = join(dir, "cache")
mkdirSync(work)

// The SDK echo server as one CommonJS bundle behind toolwright's launcher (which runs ./toolwright.cjs).
const echoDir = join(dir, "echo")
await esbuild.build({
  entryPoints: [echoSource],
  outfile: join(echoDir, "toolwright.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  keepNames: true,
  logLevel: "warning"
})
copyFileSync(join(cliDir, "src", "launcher.mjs"), join(echoDir, "toolwright.mjs"))

const bare = join(dir, "bare.cjs")
writeFileSync(
  bare,
  `const rl = require("node:readline").createInterface({ input: process.stdin })
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n")
rl.on("line", (line) => {
  const request = JSON.parse(line)
  if (request.method === "initialize") {
    send({ id: request.id, result: { protocolVersion: request.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "bare", version: "1" } } })
  } else if (request.method === "tools/list") {
    send({ id: request.id, result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } })
  } else if (request.id !== undefined) {
    send({ id: request.id, error: { code: -32601, message: "Method not found" } })
  }
})
`
)

const startups: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["toolwright mcp serve (bundle + code cache)", [bin, "mcp", "serve", "--cwd", work]],
  ["SDK echo server, bundled, same launcher and code cache", [join(echoDir, "toolwright.mjs")]],
  ["SDK echo server as shipped (ES modules)", [echoSource]],
  ["bare Node JSON-RPC answerer (no SDK)", [bare]]
]

const coldStart = async (args: ReadonlyArray<string>) => {
  const start = performance.now()
  const client = new Client({ name: "bench", version: "1" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...args],
      cwd: work,
      stderr: "ignore",
      env: { ...process.env, TOOLWRIGHT_CACHE_DIR: cache } as Record<string, string>
    })
  )
  const listed = await client.listTools()
  const elapsed = performance.now() - start
  await client.close()
  if (listed.tools.length === 0) throw new Error(`${args.join(" ")} listed no tools`)
  return elapsed
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

try {
  // First starts write the code caches; a start that saves one is not a cold start the user sees twice.
  for (const [, args] of startups) {
    await coldStart(args)
    await new Promise((resolve) => setTimeout(resolve, 1_700))
  }
  const times = startups.map((): Array<number> => [])
  for (let round = 0; round < 9; round++) {
    for (let k = 0; k < startups.length; k++) {
      const index = (round + k) % startups.length
      times[index].push(await coldStart(startups[index][1]))
    }
  }
  const [toolwright, ...floors] = times.map(median)
  console.log(`cold start, spawn → tools/list answered (median of 9, goal <= 150 ms): ${toolwright.toFixed(1)} ms`)
  floors.forEach((floor, index) => {
    console.log(
      `  vs ${startups[index + 1][0]}: ${floor.toFixed(1)} ms (toolwright ${(toolwright / floor).toFixed(2)}x, +${
        (toolwright - floor).toFixed(1)
      } ms)`
    )
  })
} finally {
  rmSync(dir, { recursive: true, force: true })
}
