/**
 * `toolwright exec` over a real pipe: the round trip of a no-op call (Read of a tiny file) from writing the
 * tool_use line to reading its tool_result line, against the floor of any JSON-lines peer (a Node process
 * that parses each line and answers one), and the cold start to the `ready` line against a bare Node start.
 * Builds the CLI first. Goal for the round trip: under Claude Code's `mcp serve` Read (2.9 ms).
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"

const cliDir = join(import.meta.dirname, "..")
const built = spawnSync(process.execPath, ["build.mjs"], { cwd: cliDir, encoding: "utf8" })
if (built.status !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
const bin = join(cliDir, "dist", "toolwright.mjs")
const dir = mkdtempSync(join(tmpdir(), "tw-exec-bench-"))
const file = join(dir, "tiny.txt")
writeFileSync(file, "hello\n")

const ECHO = `
const rl = require("node:readline").createInterface({ input: process.stdin })
process.stdout.write(JSON.stringify({ type: "ready" }) + "\\n")
rl.on("line", (line) => {
  const use = JSON.parse(line)
  process.stdout.write(JSON.stringify({ type: "tool_result", tool_use_id: use.id, content: "1\\thello", is_error: false, duration_ms: 0 }) + "\\n")
})
`

interface Peer {
  readonly startupMs: number
  readonly roundTrip: (id: string) => Promise<number>
  readonly close: () => Promise<void>
}

/** Starts a JSON-lines peer and measures each round trip from write to the matching result line. */
const startPeer = (args: ReadonlyArray<string>): Promise<Peer> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] })
    const waiting = new Map<string, (at: number) => void>()
    const exited = new Promise<void>((done) => child.on("exit", () => done()))
    child.on("error", reject)
    createInterface({ input: child.stdout }).on("line", (line) => {
      const at = performance.now()
      const message = JSON.parse(line) as { type: string; tool_use_id?: string }
      if (message.type === "ready") {
        resolve({
          startupMs: at - started,
          roundTrip: (id) =>
            new Promise((done) => {
              const sent = performance.now()
              waiting.set(id, (received) => done(received - sent))
              child.stdin.write(
                `${JSON.stringify({ type: "tool_use", id, name: "Read", input: { file_path: file } })}\n`
              )
            }),
          close: () => {
            child.stdin.end()
            return exited
          }
        })
      } else if (message.type === "tool_result" && message.tool_use_id !== undefined) {
        waiting.get(message.tool_use_id)?.(at)
        waiting.delete(message.tool_use_id)
      }
    })
  })

const ROUNDS = 300
const measure = async (peer: Peer, label: string) => {
  for (let i = 0; i < 30; i++) await peer.roundTrip(`${label}-warm-${i}`)
  const times: Array<number> = []
  for (let i = 0; i < ROUNDS; i++) times.push(await peer.roundTrip(`${label}-${i}`))
  times.sort((a, b) => a - b)
  return { median: times[Math.floor(times.length / 2)], p90: times[Math.floor(times.length * 0.9)] }
}

try {
  const echo = await startPeer(["-e", ECHO])
  const floor = await measure(echo, "echo")
  await echo.close()
  const exec = await startPeer([bin, "exec", "--cwd", dir])
  const trip = await measure(exec, "exec")
  await exec.close()
  const fmt = (n: number) => n.toFixed(2)
  console.log(
    `toolwright exec round trip, Read of a tiny file: ${fmt(trip.median)} ms median (p90 ${fmt(trip.p90)} ms) vs a Node JSON-lines echo ${
      fmt(floor.median)
    } ms (ratio ${fmt(trip.median / floor.median)}; goal < 2.9 ms, Claude Code's mcp serve Read)`
  )
  console.log(
    `toolwright exec cold start to the ready line: ${fmt(exec.startupMs)} ms vs a bare Node process ${fmt(echo.startupMs)} ms (ratio ${
      fmt(exec.startupMs / echo.startupMs)
    })`
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
