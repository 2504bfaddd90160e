/**
 * `toolwright mcp add` / `mcp remove` run by many processes at once on one `.mcp.json`: each edit is a
 * read-modify-write, so without a lock across processes one edit overwrites another's.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"

const bin = join(import.meta.dirname, "..", "dist", "toolwright.mjs")
let dir = ""

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tw-mcp-concurrent-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const toolwright = (args: ReadonlyArray<string>): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, HOME: dir } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const serverNames = (file: string): Array<string> =>
  Object.keys((JSON.parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, unknown> }).mcpServers).sort()

/** Spawned together, the processes read the file at nearly the same moment: the window a lock must close. */
const COUNT = 16
/** Many processes starting at once on a loaded machine take their time; the locked edits take turns. */
const SLOW = 60_000
const names = Array.from({ length: COUNT }, (_, index) => `srv${String(index).padStart(2, "0")}`)

describe("toolwright mcp add/remove at the same time", () => {
  it("processes adding servers to one .mcp.json at once all land", async () => {
    const project = mkdtempSync(join(dir, "add-"))
    writeFileSync(join(project, ".mcp.json"), `${JSON.stringify({ owner: "kept", mcpServers: {} })}\n`)
    const outcomes = await Promise.all(
      names.map((name) => toolwright(["mcp", "add", name, "--cwd", project, "--", "node", `${name}.js`]))
    )
    for (const [index, outcome] of outcomes.entries()) assert.strictEqual(outcome.code, 0, `${names[index]}: ${outcome.stderr}`)
    assert.deepStrictEqual(serverNames(join(project, ".mcp.json")), names)
    assert.strictEqual(JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8")).owner, "kept")
  }, SLOW)

  it("adds and removes at once, through two projects' symlinks to one shared file, all land", async () => {
    // Two projects sharing one file through links edit the same file: they must take the same lock.
    const shared = mkdtempSync(join(dir, "shared-"))
    const first = join(dir, "first")
    const second = join(dir, "second")
    mkdirSync(first)
    mkdirSync(second)
    const added = names.slice(0, COUNT / 2)
    const removed = added.map((name) => `old-${name}`)
    writeFileSync(
      join(shared, "mcp.json"),
      `${JSON.stringify({ mcpServers: Object.fromEntries(removed.map((name) => [name, { command: "node" }])) })}\n`
    )
    symlinkSync(join(shared, "mcp.json"), join(first, ".mcp.json"))
    symlinkSync(join(shared, "mcp.json"), join(second, ".mcp.json"))
    const outcomes = await Promise.all(
      added.flatMap((name, index) => {
        const project = index % 2 === 0 ? first : second
        return [
          toolwright(["mcp", "add", name, "--cwd", project, "--", "node", `${name}.js`]),
          toolwright(["mcp", "remove", removed[index]!, "--cwd", project])
        ]
      })
    )
    for (const outcome of outcomes) assert.strictEqual(outcome.code, 0, outcome.stderr)
    assert.deepStrictEqual(serverNames(join(shared, "mcp.json")), added)
    assert.deepStrictEqual(serverNames(join(first, ".mcp.json")), added)
  }, SLOW)

  it("a lock left by a toolwright that has exited is taken over", async () => {
    const project = mkdtempSync(join(dir, "left-"))
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
    writeFileSync(join(project, ".mcp.json.lock"), JSON.stringify({ pid: Number(gone.stdout), host: hostname() }))
    const outcome = await toolwright(["mcp", "add", "after", "--cwd", project, "--", "node", "after.js"])
    assert.strictEqual(outcome.code, 0, outcome.stderr)
    assert.deepStrictEqual(serverNames(join(project, ".mcp.json")), ["after"])
    assert.isFalse(existsSync(join(project, ".mcp.json.lock")))
  })

  it("a lock held by a live process is a usage error naming the lock file and what to do; the file is kept", async () => {
    const project = mkdtempSync(join(dir, "held-"))
    const before = `${JSON.stringify({ mcpServers: { kept: { command: "node" } } }, null, 2)}\n`
    writeFileSync(join(project, ".mcp.json"), before)
    // This test's process, alive throughout, stands for another toolwright editing the file.
    const lockFile = join(project, ".mcp.json.lock")
    for (const args of [["add", "late", "--cwd", project, "--", "node", "late.js"], ["remove", "kept", "--cwd", project]]) {
      writeFileSync(lockFile, JSON.stringify({ pid: process.pid, host: hostname() }))
      const outcome = await toolwright(["mcp", ...args])
      assert.strictEqual(outcome.code, 2, args.join(" "))
      assert.strictEqual(
        outcome.stderr,
        `Error: Cannot edit ${join(project, ".mcp.json")}: process ${process.pid} has held its lock file ${lockFile} ` +
          `for over 5s. Wait for the other toolwright command editing it to finish and try again; if none is ` +
          `running, delete ${lockFile}.\n`
      )
    }
    assert.strictEqual(readFileSync(join(project, ".mcp.json"), "utf8"), before)
    assert.isTrue(existsSync(lockFile))
  }, SLOW)
})
