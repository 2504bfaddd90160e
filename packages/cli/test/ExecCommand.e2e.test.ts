/**
 * `toolwright exec` end to end: the bundled CLI as a child process, JSON lines on its real stdin and
 * stdout, real built-in tools on real files, and real signals.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll } from "vitest"

const cliDir = join(import.meta.dirname, "..")
const bin = join(cliDir, "dist", "toolwright.mjs")
let dir = ""

beforeAll(() => {
  // The project's globalSetup builds the bundle once for every CLI test; build here only when it is missing.
  if (!existsSync(bin)) {
    const built = spawnSync(process.execPath, ["build.mjs"], { cwd: cliDir, encoding: "utf8" })
    if (built.status !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
  }
  dir = mkdtempSync(join(tmpdir(), "tw-exec-"))
  writeFileSync(join(dir, "tiny.txt"), "hello\nworld\n")
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Line = Record<string, unknown>

/** The CLI with its output lines parsed as they come; `next` waits for a line matching a predicate. */
const startExec = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [bin, "exec", ...args], {
        stdio: ["pipe", "pipe", "pipe"]
      })
      const lines: Array<Line> = []
      const raw: Array<string> = []
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      createInterface({ input: child.stdout }).on("line", (line) => {
        raw.push(line)
        lines.push(JSON.parse(line) as Line)
      })
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      const send = (value: unknown) => Effect.sync(() => void child.stdin.write(`${JSON.stringify(value)}\n`))
      const next = (predicate: (line: Line) => boolean) =>
        Effect.gen(function*() {
          for (let i = 0; i < 1500; i++) {
            const found = lines.find(predicate)
            if (found) return found
            if (child.exitCode !== null || child.signalCode !== null) break
            yield* Effect.sleep("10 millis")
          }
          return assert.fail(`no such line from exec; stdout: ${raw.join("\n")}; stderr: ${stderr}`)
        })
      const exit = Effect.promise(() => exited)
      return { child, lines, raw, send, next, exit, stderr: () => stderr }
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )

describe("toolwright exec (the built CLI)", () => {
  it.scopedLive("ready first, a Read, a permission round trip for Bash, EOF exits 0 with only JSON on stdout", () =>
    Effect.gen(function*() {
      const exec = yield* startExec(["--cwd", dir, "--session-id", "sess-e2e"])
      const ready = yield* exec.next((line) => line.type === "ready")
      assert.deepStrictEqual(ready, { type: "ready", session_id: "sess-e2e", cwd: dir, permission_mode: "default" })
      yield* exec.send({ type: "tool_use", id: "r1", name: "Read", input: { file_path: join(dir, "tiny.txt") } })
      const read = yield* exec.next((line) => line.type === "tool_result" && line.tool_use_id === "r1")
      assert.deepStrictEqual({ ...read, duration_ms: typeof read.duration_ms }, {
        type: "tool_result",
        tool_use_id: "r1",
        content: "1\thello\n2\tworld",
        is_error: false,
        duration_ms: "number"
      })
      yield* exec.send({ type: "tool_use", id: "b1", name: "Bash", input: { command: "echo from-bash > out.txt && cat out.txt" } })
      const request = yield* exec.next((line) => line.type === "permission_request" && line.tool_use_id === "b1")
      assert.strictEqual(request.tool_name, "Bash")
      yield* exec.send({ type: "permission_response", tool_use_id: "b1", behavior: "allow" })
      const bash = yield* exec.next((line) => line.type === "tool_result" && line.tool_use_id === "b1")
      assert.strictEqual(bash.is_error, false)
      assert.strictEqual(bash.content, "from-bash")
      yield* Effect.sync(() => exec.child.stdin.write("not json\n"))
      const error = yield* exec.next((line) => line.type === "error")
      assert.strictEqual(error.line, 4)
      yield* Effect.sync(() => exec.child.stdin.end())
      assert.strictEqual(yield* exec.exit, 0)
      assert.deepStrictEqual(exec.lines.map((line) => line.type), [
        "ready",
        "tool_result",
        "permission_request",
        "tool_result",
        "error"
      ])
    }))

  it.scopedLive("a hook's systemMessage is a hook_message line for the peer, before the call's result", () =>
    Effect.gen(function*() {
      const project = mkdtempSync(join(tmpdir(), "tw-exec-hook-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(project, { recursive: true, force: true })))
      mkdirSync(join(project, ".toolwright"))
      writeFileSync(
        join(project, ".toolwright", "settings.json"),
        JSON.stringify({
          hooks: {
            PostToolUse: [{
              matcher: "Read",
              hooks: [{ type: "command", command: `echo '{"systemMessage":"read noted"}'` }]
            }]
          }
        })
      )
      writeFileSync(join(project, "a.txt"), "a\n")
      const exec = yield* startExec(["--cwd", project])
      yield* exec.send({ type: "tool_use", id: "h1", name: "Read", input: { file_path: "a.txt" } })
      yield* exec.next((line) => line.type === "tool_result" && line.tool_use_id === "h1")
      const lines = exec.lines.filter((line) => line.tool_use_id === "h1").map((line) => line.type === "tool_result" ? line.type : line)
      assert.deepStrictEqual(lines, [
        { type: "hook_message", tool_use_id: "h1", tool_name: "Read", hook_event_name: "PostToolUse", message: "read noted" },
        "tool_result"
      ])
    }))

  it("an invalid concurrency setting is a start-up error (exit 2, nothing on stdout), not a silent default", () => {
    const run = spawnSync(process.execPath, [bin, "exec", "--cwd", dir], {
      input: "",
      encoding: "utf8",
      env: { ...process.env, TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY: "lots" }
    })
    assert.strictEqual(run.status, 2)
    assert.strictEqual(run.stdout, "")
    assert.include(
      run.stderr,
      "Error: TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY must be a whole number of at least 1, but it is \"lots\"."
    )
  })

  it.scopedLive("a peer that closes stdout ends the session: exec exits and the running call's process dies", () =>
    Effect.gen(function*() {
      const exec = yield* startExec(["--cwd", dir, "--permission-mode", "bypassPermissions"])
      yield* exec.next((line) => line.type === "ready")
      const marker = join(dir, "started-epipe")
      // A sleep no other test runs, to find it among the machine's processes.
      const command = `touch ${marker} && sleep 31.17`
      yield* exec.send({ type: "tool_use", id: "s1", name: "Bash", input: { command } })
      for (let i = 0; i < 500 && !existsSync(marker); i++) yield* Effect.sleep("10 millis")
      assert.isTrue(existsSync(marker), `the Bash call started; stderr: ${exec.stderr()}`)
      yield* Effect.sync(() => exec.child.stdout.destroy())
      // The next line exec writes (the error for this one) meets the closed pipe.
      yield* Effect.sync(() => exec.child.stdin.write("not json\n"))
      yield* exec.exit
      const sleeping = () =>
        readdirSync("/proc").filter((entry) => {
          try {
            return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("31.17")
          } catch {
            return false
          }
        })
      for (let i = 0; i < 200 && sleeping().length > 0; i++) yield* Effect.sleep("10 millis")
      assert.deepStrictEqual(sleeping(), [])
    }))

  it("TOOLWRIGHT_TOOL_TIMEOUT_MS is read by run as by exec: an invalid value is a start-up error for both", () => {
    for (const args of [["exec", "--cwd", dir], ["run", "Read", "--cwd", dir, "--input", "{\"file_path\":\"tiny.txt\"}"]]) {
      const run = spawnSync(process.execPath, [bin, ...args], {
        input: "",
        encoding: "utf8",
        env: { ...process.env, TOOLWRIGHT_TOOL_TIMEOUT_MS: "soon" }
      })
      assert.strictEqual(run.status, 2, `${args[0]}: ${run.stdout}${run.stderr}`)
      assert.include(
        run.stderr,
        "Error: TOOLWRIGHT_TOOL_TIMEOUT_MS must be a whole number of milliseconds above 0, but it is \"soon\". Unset it to let calls run without a default limit."
      )
    }
  })

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.scopedLive(`${signal} interrupts a running call, flushes its result and the queued one's, and exits`, () =>
      Effect.gen(function*() {
        const exec = yield* startExec(["--cwd", dir])
        yield* exec.next((line) => line.type === "ready")
        const marker = join(dir, `started-${signal}`)
        yield* exec.send({
          role: "assistant",
          content: [
            { type: "tool_use", id: "s1", name: "Bash", input: { command: `touch ${marker} && sleep 30` } },
            { type: "tool_use", id: "s2", name: "Read", input: { file_path: join(dir, "tiny.txt") } }
          ]
        })
        yield* exec.next((line) => line.type === "permission_request" && line.tool_use_id === "s1")
        yield* exec.send({ type: "permission_response", tool_use_id: "s1", behavior: "allow" })
        for (let i = 0; i < 500 && !existsSync(marker); i++) yield* Effect.sleep("10 millis")
        assert.isTrue(existsSync(marker), `the Bash call started; stdout: ${exec.raw.join("\n")}`)
        yield* Effect.sync(() => exec.child.kill(signal))
        yield* exec.exit
        const results = exec.lines.filter((line) => line.type === "tool_result")
        assert.deepStrictEqual(results.map((r) => [r.tool_use_id, r.is_error]), [["s1", true], ["s2", true]])
        // The call is named as Claude Code names it: the first 40 characters of the path, then an ellipsis.
        const file = join(dir, "tiny.txt")
        const shown = file.length > 40 ? `${file.slice(0, 40)}\u2026` : file
        assert.strictEqual(
          results[1].content,
          `<tool_use_error>Interrupted by user: Read(${shown}) was not run. Wait for the user to tell you how to proceed.</tool_use_error>`
        )
        // Whether Bash itself reports the interruption or the executor does, the model reads that it was stopped.
        assert.match(String(results[0].content), /interrupted|Interrupted/)
      }))
  }
})

describe("toolwright exec: MCP servers' questions (elicitation) go to the peer", () => {
  const scripted = join(cliDir, "..", "mcp", "test", "fixtures", "scripted-server.mjs")
  let project = ""
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), "tw-exec-elicit-"))
    writeFileSync(
      join(project, ".mcp.json"),
      JSON.stringify({ mcpServers: { scripted: { command: process.execPath, args: [scripted, "stdio"] } } })
    )
  })
  afterAll(() => rmSync(project, { recursive: true, force: true }))

  /** exec in the project, the scripted server's `ask` tool called as `id`, and its question read. */
  const asking = (exec: Effect.Effect.Success<ReturnType<typeof startExec>>, id: string, requestId: string) =>
    Effect.gen(function*() {
      yield* exec.send({ type: "tool_use", id, name: "mcp__scripted__ask", input: {} })
      return yield* exec.next((line) => line.type === "elicitation_request" && line.id === requestId)
    })
  const resultOf = (exec: Effect.Effect.Success<ReturnType<typeof startExec>>, id: string) =>
    Effect.map(exec.next((line) => line.type === "tool_result" && line.tool_use_id === id), (line) => [
      line.content,
      line.is_error
    ])

  it.scopedLive("a bad answer is an error line and the question stays; accept reaches the server, defaults filled in; decline", () =>
    Effect.gen(function*() {
      const exec = yield* startExec(["--cwd", project, "--permission-mode", "bypassPermissions"])
      yield* exec.next((line) => line.type === "ready")
      const request = yield* asking(exec, "q1", "elicitation-1")
      const { requested_schema: schema, ...rest } = request
      assert.deepStrictEqual(rest, { type: "elicitation_request", id: "elicitation-1", server: "scripted", message: "Which widget?" })
      // The server's requestedSchema as it sent it (scripted-server.mjs, tool `ask`).
      assert.deepNestedInclude(schema, {
        type: "object",
        required: ["name"],
        "properties.name": { type: "string", title: "Name", default: "gear" },
        "properties.note": { type: "string" }
      })
      yield* exec.send({ type: "elicitation_response", id: "elicitation-1", action: "accept", content: { count: "many" } })
      yield* exec.send({ type: "elicitation_response", id: "elicitation-9", action: "decline" })
      yield* exec.send({ type: "elicitation_response", id: "elicitation-1", action: "yes" })
      yield* exec.send({ type: "elicitation_response", action: "accept" })
      yield* exec.next((line) => line.type === "error" && line.line === 5)
      assert.deepStrictEqual(exec.lines.filter((line) => line.type === "error").map((line) => line.message), [
        "Line 2: the elicitation_response for \"elicitation-1\" was not used: its content does not match the requested " +
        "schema (data/count must be integer); \"elicitation-1\" still waits: send a corrected elicitation_response.",
        "Line 3: no elicitation_request is waiting for id \"elicitation-9\".",
        "Line 4: the elicitation_response's `action` must be \"accept\", \"decline\" or \"cancel\", not \"yes\".",
        "Line 5: the elicitation_response has no string `id` (the id of the elicitation_request it answers)."
      ])
      // `name` is required but has a default: the SDK fills it in, as it fills `urgent`.
      yield* exec.send({ type: "elicitation_response", id: "elicitation-1", action: "accept", content: { count: 5 } })
      assert.deepStrictEqual(yield* resultOf(exec, "q1"), [
        `{"action":"accept","content":{"count":5,"name":"gear","urgent":false}}`,
        false
      ])
      yield* asking(exec, "q2", "elicitation-2")
      yield* exec.send({ type: "elicitation_response", id: "elicitation-2", action: "decline" })
      assert.deepStrictEqual(yield* resultOf(exec, "q2"), [`{"action":"decline"}`, false])
      yield* Effect.sync(() => exec.child.stdin.end())
      assert.strictEqual(yield* exec.exit, 0)
      assert.deepStrictEqual(exec.lines.map((line) => line.type), [
        "ready",
        "elicitation_request",
        "error",
        "error",
        "error",
        "error",
        "tool_result",
        "elicitation_request",
        "tool_result"
      ])
    }))

  it.scopedLive("stdin closed while the server waits for an answer: the question is cancelled, the call ends, exit 0", () =>
    Effect.gen(function*() {
      const exec = yield* startExec(["--cwd", project, "--permission-mode", "bypassPermissions"])
      yield* exec.next((line) => line.type === "ready")
      yield* asking(exec, "q1", "elicitation-1")
      yield* Effect.sync(() => exec.child.stdin.end())
      assert.deepStrictEqual(yield* resultOf(exec, "q1"), [`{"action":"cancel"}`, false])
      assert.strictEqual(yield* exec.exit, 0)
    }))

  it.scopedLive("an abort cancels the waiting question; a late answer for it is dropped quietly; the next one is asked", () =>
    Effect.gen(function*() {
      const exec = yield* startExec(["--cwd", project, "--permission-mode", "bypassPermissions"])
      yield* exec.next((line) => line.type === "ready")
      yield* asking(exec, "q1", "elicitation-1")
      yield* exec.send({ type: "abort" })
      const [, aborted] = yield* resultOf(exec, "q1")
      assert.strictEqual(aborted, true)
      yield* exec.send({ type: "elicitation_response", id: "elicitation-1", action: "accept", content: { count: 1 } })
      yield* asking(exec, "q2", "elicitation-2")
      yield* exec.send({ type: "elicitation_response", id: "elicitation-2", action: "accept" })
      assert.deepStrictEqual(yield* resultOf(exec, "q2"), [
        `{"action":"accept","content":{"name":"gear","count":3,"urgent":false}}`,
        false
      ])
      yield* Effect.sync(() => exec.child.stdin.end())
      assert.strictEqual(yield* exec.exit, 0)
      assert.deepStrictEqual(exec.lines.filter((line) => line.type === "error"), [])
    }))
})
