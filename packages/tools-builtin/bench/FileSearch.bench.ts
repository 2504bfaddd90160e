/**
 * Grep, Glob and Read on a generated tree of 50,000 files, each against its baseline measured in the same
 * run: Grep vs spawning rg directly with the same arguments (goal ratio <= 1.15), Glob vs `rg --files`
 * with the same flags (goal <= 1.3), Read of a 2,000-line file vs reading the file's bytes. Calls go
 * through the whole pipeline (`ToolRuntime.execute`). Runs are interleaved (tool, baseline, tool, …) so
 * load from other processes hits both alike; medians are reported. The tree is removed at the end.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Message, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import picomatch from "picomatch"
import { GlobTool } from "../src/glob/GlobTool.js"
import { buildArgs, GrepTool } from "../src/grep/GrepTool.js"
import { commonArgs, rgPath as findRg } from "../src/internal/ripgrep.js"
import { ReadTool } from "../src/read/ReadTool.js"

const DIRS = 500
const FILES_PER_DIR = 100

// tmpfs when there is one: creating 50,000 files on a busy disk can take longer than the whole bench may.
const base = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir()
const root = fs.realpathSync(fs.mkdtempSync(path.join(base, "toolwright-bench-")))

/** 500 directories of 100 files (ts, js, md), a .gitignore hiding one directory, 1% of files with `needle`. */
const generate = () => {
  fs.writeFileSync(path.join(root, ".gitignore"), "ignored/\n*.log\n")
  const body = Array.from({ length: 30 }, (_, i) => `export const value${i} = compute(${i}) // line ${i}`).join("\n")
  for (let d = 0; d < DIRS; d++) {
    const dir = path.join(root, d === 0 ? "ignored" : `pkg${d % 20}`, `mod${d}`)
    fs.mkdirSync(dir, { recursive: true })
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const ext = f % 3 === 0 ? "ts" : f % 3 === 1 ? "js" : "md"
      const needle = (d * FILES_PER_DIR + f) % 100 === 7 ? "\nconst needle = true\n" : "\n"
      fs.writeFileSync(path.join(dir, `file${f}.${ext}`), body + needle)
    }
  }
  fs.writeFileSync(
    path.join(root, "long.ts"),
    Array.from({ length: 2000 }, (_, i) => `  const line${i} = "${"x".repeat(20)}"`).join("\n")
  )
}

const runtime = ManagedRuntime.make(
  ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools([GlobTool, GrepTool, ReadTool])))
)
const context = ToolUseContext.make({ cwd: root })

let progressEvents = 0
const callTool = (name: string, input: unknown) =>
  runtime.runPromise(
    Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
      rt.execute({ type: "tool_use", id: "toolu_bench", name, input }, context, (event) =>
        Effect.sync(() => {
          if (event._tag === "Progress") progressEvents++
        })))
  ).then((event) => {
    if (event.result.is_error === true) throw new Error(`${name} failed: ${Message.contentText(event.result.content)}`)
    return event
  })

const rgPath = await findRg()

/** rg run directly, its whole stdout read, as a program using rg would. */
const rgDirect = (args: ReadonlyArray<string>) =>
  new Promise<number>((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
    let bytes = 0
    child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length))
    child.on("error", reject)
    child.on("close", () => resolve(bytes))
  })

/**
 * The floor for a newest-first Glob: `rg --files`, the pattern matched, and the mtime of every match read
 * (the ordering needs all of them; plain `rg --files` reads none, so it is no like-for-like baseline).
 */
// Synchronous stats: the fastest way to read 16,700 mtimes from one thread, so the floor is a strict one.
const rgFilesAndStat = (args: ReadonlyArray<string>, pattern: string) => {
  const isMatch = picomatch(pattern, { dot: true })
  return new Promise<Array<string>>((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
    let out = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => (out += chunk))
    child.on("error", reject)
    child.on("close", () => resolve(out.split("\n").filter((line) => line !== "" && isMatch(line))))
  }).then((matches) => matches.map((file) => fs.statSync(path.join(root, file)).mtimeMs))
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const compare = async (
  label: string,
  tool: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  runs: number,
  goal: number | undefined
) => {
  await tool()
  await baseline()
  const toolTimes: Array<number> = []
  const baseTimes: Array<number> = []
  for (let i = 0; i < runs; i++) {
    let start = performance.now()
    await tool()
    toolTimes.push(performance.now() - start)
    start = performance.now()
    await baseline()
    baseTimes.push(performance.now() - start)
  }
  const t = median(toolTimes)
  const b = median(baseTimes)
  console.log(
    `${label}: ${t.toFixed(1)} ms vs ${b.toFixed(1)} ms (ratio ${(t / b).toFixed(2)}${
      goal === undefined ? "" : `, goal <= ${goal}`
    })`
  )
}

try {
  const started = performance.now()
  generate()
  console.log(`generated ${DIRS * FILES_PER_DIR} files in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const grep = async (label: string, input: Parameters<typeof buildArgs>[0], runs: number, goal?: number) =>
    compare(label, () => callTool("Grep", input), () => rgDirect(buildArgs(input, undefined)), runs, goal)
  await grep("Grep files_with_matches vs rg", { pattern: "needle" }, 5, 1.15)
  await grep("Grep content (all 500 lines) vs rg", {
    pattern: "needle",
    output_mode: "content",
    head_limit: 0
  }, 5, 1.15)
  await grep("Grep count vs rg", { pattern: "needle", output_mode: "count", head_limit: 0 }, 5, 1.15)
  // One match per file: rg has 50,000 lines to print; the tool stops it after 101.
  await grep("Grep content head_limit 100 (rg stopped) vs rg printing all", {
    pattern: "value29 ",
    output_mode: "content",
    head_limit: 100
  }, 3)

  const filesArgs = ["--files", ...commonArgs]
  progressEvents = 0
  const glob = async (pattern: string) =>
    compare(`Glob ${pattern} vs rg --files`, () => callTool("Glob", { pattern }), () => rgDirect(filesArgs), 5, 1.3)
  await glob("**/*.ts")
  await glob("**/file7.md")
  await compare(
    "Glob **/*.ts vs rg --files + the mtime of every match (the floor of newest-first)",
    () => callTool("Glob", { pattern: "**/*.ts" }),
    () => rgFilesAndStat(filesArgs, "**/*.ts"),
    5,
    1.3
  )
  console.log(`Glob progress events over those ${2 * 6} calls: ${progressEvents} (at most one per 100 ms each)`)

  const longFile = path.join(root, "long.ts")
  await compare(
    "Read of a 2,000-line file vs fs.readFile",
    () => callTool("Read", { file_path: longFile }),
    () => fs.promises.readFile(longFile),
    50,
    undefined
  )
} finally {
  await runtime.dispose()
  fs.rmSync(root, { recursive: true, force: true })
}
