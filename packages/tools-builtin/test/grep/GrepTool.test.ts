import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Tool, ToolProgress } from "@toolwright/core"
import { Effect, Fiber, Schedule } from "effect"
import type { GrepInput } from "../../src/grep/GrepTool.js"
import { GrepTool } from "../../src/grep/GrepTool.js"
import { rgPath as findRg } from "../../src/internal/ripgrep.js"
import { age, callTool, contextFor, tempDir, writeFiles } from "../support/runTool.js"

const grep = (input: unknown, cwd: string, additionalDirectories: ReadonlyArray<string> = []) =>
  callTool([GrepTool], "Grep", input, contextFor(cwd, additionalDirectories))

const rgPath = await findRg()

/** Live rg processes started in `dir` (their cwd), read from /proc. */
const rgProcessesIn = (dir: string): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const argv0 = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]
      return argv0 === rgPath && fs.readlinkSync(`/proc/${pid}/cwd`) === dir ? [Number(pid)] : []
    } catch {
      return []
    }
  })

/** SIGKILL is sent at once, but the kernel ends the process a moment later: poll briefly. */
const waitForNoRg = (dir: string) =>
  Effect.sync(() => rgProcessesIn(dir).length).pipe(
    Effect.repeat({ schedule: Schedule.spaced("10 millis").pipe(Schedule.upTo("2 seconds")), until: (n) => n === 0 })
  )

describe("Grep", () => {
  it.scopedLive("files_with_matches (default): Found N files, newest first, relative paths", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.ts": "const needle = 1\n", "src/b.ts": "needle()\n", "c.ts": "nothing\n" })
      age(path.join(dir, "a.ts"), 100)
      const call = yield* grep({ pattern: "needle" }, dir)
      assert.strictEqual(call.result.is_error, undefined)
      assert.strictEqual(call.text, "Found 2 files\nsrc/b.ts\na.ts")
      const none = yield* grep({ pattern: "absent" }, dir)
      assert.strictEqual(none.text, "No files found")
    }))

  it.scopedLive("content mode: path:line:text with line numbers by default, context lines, -n false", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "one\ntwo needle\nthree\nfour\nfive needle\n" })
      const lines = yield* grep({ pattern: "needle", output_mode: "content" }, dir)
      assert.strictEqual(lines.text, "a.txt:2:two needle\na.txt:5:five needle")
      const around = yield* grep({ pattern: "two", output_mode: "content", "-C": 1 }, dir)
      assert.strictEqual(around.text, "a.txt-1-one\na.txt:2:two needle\na.txt-3-three")
      const after = yield* grep({ pattern: "two", output_mode: "content", "-A": 1, "-n": false }, dir)
      assert.strictEqual(after.text, "a.txt:two needle\na.txt-three")
      const before = yield* grep({ pattern: "five", output_mode: "content", "-B": 2 }, dir)
      assert.strictEqual(before.text, "a.txt-3-three\na.txt-4-four\na.txt:5:five needle")
      // context is -C's long name, and either wins over -A/-B.
      const context = yield* grep({ pattern: "two", output_mode: "content", context: 1, "-A": 3 }, dir)
      assert.strictEqual(context.text, "a.txt-1-one\na.txt:2:two needle\na.txt-3-three")
      // Context flags do nothing outside content mode.
      const files = yield* grep({ pattern: "two", "-C": 2 }, dir)
      assert.strictEqual(files.text, "Found 1 file\na.txt")
      const none = yield* grep({ pattern: "absent", output_mode: "content" }, dir)
      assert.strictEqual(none.text, "No matches found")
    }))

  it.scopedLive("count mode ends with the totals", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "x\nx\n", "b.txt": "x\n" })
      const call = yield* grep({ pattern: "x", output_mode: "count" }, dir)
      const [counts, summary] = call.text.split("\n\n")
      assert.deepStrictEqual(counts.split("\n").sort(), ["a.txt:2", "b.txt:1"])
      assert.strictEqual(summary, "Found 3 total occurrences across 2 files.")
      const one = yield* grep({ pattern: "x", output_mode: "count", path: "b.txt" }, dir)
      assert.strictEqual(one.text, "b.txt:1\n\nFound 1 total occurrence across 1 file.")
    }))

  it.scopedLive("-i, glob (with braces and commas), type, multiline and a pattern starting with a dash", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        "a.ts": "Hello\n",
        "b.tsx": "hello\n",
        "c.py": "hello\n",
        "d.md": "-flag\nstruct {\n  field\n}\n"
      })
      const insensitive = yield* grep({ pattern: "HELLO", "-i": true, glob: "*.{ts,tsx}" }, dir)
      assert.deepStrictEqual(insensitive.text.split("\n").slice(1).sort(), ["a.ts", "b.tsx"])
      const commas = yield* grep({ pattern: "hello", glob: "*.py,*.tsx" }, dir)
      assert.deepStrictEqual(commas.text.split("\n").slice(1).sort(), ["b.tsx", "c.py"])
      const typed = yield* grep({ pattern: "hello", type: "py" }, dir)
      assert.strictEqual(typed.text, "Found 1 file\nc.py")
      const dash = yield* grep({ pattern: "-flag", output_mode: "content" }, dir)
      assert.strictEqual(dash.text, "d.md:1:-flag")
      const multi = yield* grep({ pattern: "struct \\{.*?field", multiline: true, output_mode: "content" }, dir)
      assert.strictEqual(multi.text, "d.md:2:struct {\nd.md:3:  field")
    }))

  it.scopedLive("head_limit and offset paginate and say so; 0 means unlimited", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": Array.from({ length: 10 }, (_, i) => `match ${i + 1}`).join("\n") })
      const limited = yield* grep({ pattern: "match", output_mode: "content", head_limit: 2, offset: 3 }, dir)
      assert.strictEqual(
        limited.text,
        "a.txt:4:match 4\na.txt:5:match 5\n\n[Showing results with pagination = limit: 2, offset: 3]"
      )
      const all = yield* grep({ pattern: "match", output_mode: "content", head_limit: 0 }, dir)
      assert.strictEqual(all.text.split("\n").length, 10)
      writeFiles(dir, { "b.txt": "match", "c.txt": "match" })
      age(path.join(dir, "a.txt"), 300)
      age(path.join(dir, "b.txt"), 200)
      const files = yield* grep({ pattern: "match", head_limit: 1, offset: 1 }, dir)
      assert.strictEqual(files.text, "Found 1 file limit: 1, offset: 1\nb.txt")
    }))

  it.scopedLive("respects .gitignore, searches hidden files, never VCS internals", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        ".gitignore": "build/\n",
        "build/out.js": "token",
        ".config/settings.json": "token",
        ".git/HEAD": "token",
        "src/main.js": "token"
      })
      const call = yield* grep({ pattern: "token" }, dir)
      assert.deepStrictEqual(call.text.split("\n").slice(1).sort(), [".config/settings.json", "src/main.js"])
    }))

  it.scopedLive("nothing to search (an empty tree, only a symlink out of it) is no match, not an error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const outside = yield* tempDir
      writeFiles(outside, { "secret.txt": "secret" })
      fs.mkdirSync(path.join(dir, "empty"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "link.txt"))
      const empty = yield* grep({ pattern: "x", path: "empty" }, dir)
      assert.strictEqual(empty.result.is_error, undefined)
      assert.strictEqual(empty.text, "No files found")
      // rg does not follow symlinks: a link cannot smuggle another directory's content into a search.
      const linked = yield* grep({ pattern: "secret", output_mode: "content" }, dir)
      assert.strictEqual(linked.text, "No matches found")
    }))

  it.scopedLive("a pattern or type rg rejects is rg's own error, not an empty result", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "x" })
      const regex = yield* grep({ pattern: "(" }, dir)
      assert.strictEqual(regex.result.is_error, true)
      assert.strictEqual(
        regex.text,
        "<tool_use_error>rg: regex parse error:\n    (?:()\n    ^\nerror: unclosed group</tool_use_error>"
      )
      const type = yield* grep({ pattern: "x", type: "tsx" }, dir)
      assert.strictEqual(type.text, "<tool_use_error>rg: unrecognized file type: tsx</tool_use_error>")
    }))

  it.scopedLive("a NUL character in pattern, path, glob or type is a clear error, not a failed rg start", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      for (const key of ["pattern", "path", "glob", "type"]) {
        const call = yield* grep({ pattern: "x", [key]: "a\u0000b" }, dir)
        assert.strictEqual(call.text, `<tool_use_error>${key} must not contain a NUL character.</tool_use_error>`)
      }
    }))

  it.scopedLive("a missing path names the cwd; paths outside the cwd are absolute", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const other = yield* tempDir
      writeFiles(other, { "far.txt": "x" })
      const missing = yield* grep({ pattern: "x", path: "nope" }, dir)
      assert.strictEqual(
        missing.text,
        `<tool_use_error>Path does not exist: nope. Note: your current working directory is ${dir}.</tool_use_error>`
      )
      const outside = yield* grep({ pattern: "x", path: other, output_mode: "content" }, dir, [other])
      assert.strictEqual(outside.text, `${other}/far.txt:1:x`)
      const denied = yield* grep({ pattern: "x", path: other }, dir)
      assert.strictEqual(denied.result.is_error, true)
      assert.include(denied.text, `${other} is outside the working directories`)
      assert.strictEqual(GrepTool.getPath({ pattern: "x", path: other }, contextFor(dir)), other)
    }))

  it.scopedLive("stops rg once head_limit lines arrived: nothing is left running", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "big.txt": "hit\n".repeat(300_000) })
      const call = yield* grep({ pattern: "hit", output_mode: "content", head_limit: 3 }, dir)
      assert.strictEqual(
        call.text,
        "big.txt:1:hit\nbig.txt:2:hit\nbig.txt:3:hit\n\n[Showing results with pagination = limit: 3]"
      )
      yield* waitForNoRg(dir)
      assert.deepStrictEqual(rgProcessesIn(dir), [])
    }))

  it.scopedLive("interrupting a call kills its rg", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // rg blocks reading a FIFO nobody writes to: a search that only interruption can end.
      execFileSync("mkfifo", [path.join(dir, "pipe")])
      const fiber = yield* GrepTool.call({ pattern: "x", path: "pipe" }, contextFor(dir)).pipe(
        Effect.provide(ToolProgress.layerNoop),
        Effect.fork
      )
      yield* Effect.sync(() => rgProcessesIn(dir).length).pipe(
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (n) => n > 0 })
      )
      yield* Fiber.interrupt(fiber)
      yield* waitForNoRg(dir)
      assert.deepStrictEqual(rgProcessesIn(dir), [])
    }))

  it.scopedLive("reports progress (files with matches) while rg runs", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // rg searches a FIFO named as its path until every writer closed it: 200 KB of matches (more than rg's
      // read and output buffers, so its output flows), then a writer kept open, so rg runs until interrupted.
      const fifo = path.join(dir, "pipe")
      execFileSync("mkfifo", [fifo])
      // O_RDWR does not wait for a reader; writes go through libuv's pool, so the event loop keeps reading rg.
      const writer = yield* Effect.acquireRelease(
        Effect.promise(() => fs.promises.open(fifo, "r+")),
        (handle) => Effect.promise(() => handle.close())
      )
      const reports: Array<unknown> = []
      const input: GrepInput = { pattern: "x", path: "pipe", output_mode: "content", head_limit: 0 }
      const fiber = yield* GrepTool.call(input, contextFor(dir)).pipe(
        Effect.provideService(ToolProgress.ToolProgress, { report: (data) => Effect.sync(() => reports.push(data)) }),
        Effect.fork
      )
      yield* Effect.promise(() => writer.write("x\n".repeat(100_000)))
      yield* Effect.sync(() => reports.length).pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis").pipe(Schedule.upTo("10 seconds")), until: (n) => n > 0 })
      )
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(reports[0], { filesWithMatches: 1 })
      yield* waitForNoRg(dir)
    }))

  it("schema: Claude Code's parameter names; read-only and concurrency-safe", () => {
    assert.deepStrictEqual(Object.keys(Object(Tool.inputJsonSchema(GrepTool).properties)), [
      "pattern",
      "path",
      "glob",
      "output_mode",
      "-B",
      "-A",
      "-C",
      "context",
      "-n",
      "-i",
      "type",
      "head_limit",
      "offset",
      "multiline"
    ])
    assert.isTrue(GrepTool.isReadOnly({ pattern: "x" }))
    assert.isTrue(GrepTool.isConcurrencySafe({ pattern: "x" }))
  })
})
