// The README's test command: type-check every package, run every vitest project and the MCP conformance
// suite, and close with one plain line of counts ("N passed, N failed, N skipped") that CI reads.
// Arguments go to vitest (and skip the conformance run): `pnpm test packages/core`.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const bin = (name) => join(import.meta.dirname, "..", "node_modules", ".bin", name)
const run = (command, args, env = process.env) => spawnSync(command, args, { stdio: "inherit", env }).status ?? 1

const typecheck = run(bin("tsc"), ["-b", "tsconfig.json"])
if (typecheck !== 0) {
  console.log("Type check failed: fix the errors above (pnpm check).")
}

// Tests make their temporary files under TMPDIR, which points into one directory per run, removed at the
// end: a test that fails before its own clean-up (or a process it started) leaves nothing behind in /tmp.
const reportDir = mkdtempSync(join(tmpdir(), "toolwright-test-"))
const report = join(reportDir, "report.json")
const testTmp = join(reportDir, "tmp")
mkdirSync(testTmp)
const vitest = run(bin("vitest"), [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...process.argv.slice(2)
], { ...process.env, TMPDIR: testTmp })

let passed = 0
let failed = 0
let skipped = 0
if (existsSync(report)) {
  const result = JSON.parse(readFileSync(report, "utf8"))
  passed = result.numPassedTests
  failed = result.numFailedTests + (result.numFailedTestSuites > 0 && result.numFailedTests === 0 ? 1 : 0)
  skipped = result.numPendingTests + result.numTodoTests
}
rmSync(reportDir, { recursive: true, force: true })
if (typecheck !== 0) failed += 1

// The MCP conformance suite against our client (it fetches a Node 22 runner from the npm registry once):
// each scenario counts, gated by packages/mcp/conformance/baseline.yml.
if (process.argv.length <= 2) {
  const conformance = spawnSync(process.execPath, [join(import.meta.dirname, "..", "packages/mcp/conformance/run.mjs")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  })
  process.stdout.write(conformance.stdout ?? "")
  const counts = /conformance: (\d+) as expected \(\d+ of them known failures\), (\d+) unexpected/.exec(conformance.stdout ?? "")
  if (counts !== null) {
    passed += Number(counts[1])
    failed += Number(counts[2])
  }
  if (conformance.status !== 0 && (counts === null || Number(counts[2]) === 0)) {
    console.log("The MCP conformance run failed before it could report: see above.")
    failed += 1
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(typecheck !== 0 || vitest !== 0 || failed > 0 ? 1 : 0)
