import * as fs from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import type { Message } from "@toolwright/core"
import { ToolRuntime } from "@toolwright/core"
import { Effect, Fiber } from "effect"
import { BashTool } from "../../src/bash/BashTool.js"
import * as CommandSemantics from "../../src/bash/commandSemantics.js"
import { awaitProcesses, call, marker, runtimeLayer, session, survivors, tempDir } from "./support.js"

/** Runs `effect` with an environment variable set, restoring it afterwards. */
const withEnv = <A, E, R>(name: string, value: string, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const previous = process.env[name]
      process.env[name] = value
      return previous
    }),
    () => effect,
    (previous) =>
      Effect.sync(() => {
        if (previous === undefined) delete process.env[name]
        else process.env[name] = previous
      })
  )

const bash = (input: unknown, context: ReturnType<typeof session>) => call("Bash", input, context)

describe("Bash: running commands", () => {
  it.scopedLive("returns stdout and stderr interleaved in the order they were written", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* bash({ command: "echo one; echo two >&2; echo three" }, session(dir))
      assert.strictEqual(result.result.is_error, undefined)
      assert.strictEqual(result.text, "one\ntwo\nthree")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a non-zero exit is an error that starts with the exit code", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* bash({ command: "echo oops; exit 3" }, session(dir))
      assert.strictEqual(result.result.is_error, true)
      assert.strictEqual(result.text, "<tool_use_error>Exit code 3\noops</tool_use_error>")
      const killed = yield* bash({ command: "kill -9 $$" }, session(dir))
      assert.strictEqual(killed.text, "<tool_use_error>Exit code 137</tool_use_error>")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("bash's messages and $LINENO count the command's own lines, whatever toolwright runs around it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const command = "echo a\nnosuchcmd_zz\necho $LINENO"
      const plain = yield* bash({ command }, session(dir))
      assert.strictEqual(plain.text, "a\ntoolwright: line 2: nosuchcmd_zz: command not found\n3")
      // A cd records the final directory, and a line naming /dev/stderr relays its output: other wrappers.
      const moving = yield* bash({ command: `cd . && ${command} >/dev/stderr` }, session(dir))
      assert.strictEqual(moving.text, "a\ntoolwright: line 2: nosuchcmd_zz: command not found\n3")
      const syntax = yield* bash({ command: "echo ok\nif then" }, session(dir))
      assert.strictEqual(
        syntax.text,
        "<tool_use_error>Exit code 2\nok\ntoolwright: eval: line 2: syntax error near unexpected token `then'\n" +
          "toolwright: eval: line 2: `if then'</tool_use_error>"
      )
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("exit 1 of grep, diff, test and find as the line's last command is an answer, not an error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.writeFileSync(`${dir}/a.txt`, "alpha\n")
      fs.writeFileSync(`${dir}/b.txt`, "beta\n")
      const answers: Array<readonly [string, string]> = [
        ["grep nothing a.txt", "No matches found"],
        ["cat a.txt | grep -c nothing", "0"],
        ["grep nothing a.txt > found.txt", "No matches found"],
        ["diff a.txt b.txt", "1c1\n< alpha\n---\n> beta"],
        ["test -d a.txt", "Condition is false"],
        ["[ -e missing ]", "Condition is false"],
        ["[[ -e missing ]]", "Condition is false"],
        ["timeout 5 grep nothing a.txt", "No matches found"]
      ]
      for (const [command, text] of answers) {
        const result = yield* bash({ command }, session(dir))
        assert.strictEqual(result.result.is_error, undefined, command)
        assert.strictEqual(result.text, text, command)
      }
      // Exit 2 is grep's own error; after && or ; the 1 may be another command's; a negation inverts; and exit 1
      // of anything else is a failure.
      const failures: Array<readonly [string, string]> = [
        ["grep alpha missing.txt", "Exit code 2\ngrep: missing.txt: No such file or directory"],
        ["false && grep alpha a.txt", "Exit code 1"],
        ["grep nothing a.txt; true; grep nothing a.txt", "Exit code 1"],
        ["! grep alpha a.txt", "Exit code 1\nalpha"],
        ["echo a.txt | xargs grep nothing", "Exit code 123"]
      ]
      for (const [command, text] of failures) {
        const result = yield* bash({ command }, session(dir))
        assert.strictEqual(result.text, `<tool_use_error>${text}</tool_use_error>`, command)
      }
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a command that names its own output as a file (/dev/stdout, tee /dev/stderr, /dev/fd/2) writes to it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.mkdirSync(`${dir}/sub`)
      const context = session(dir)
      const cases: Array<readonly [string, string]> = [
        ["echo one > /dev/stdout", "one"],
        ["echo two | tee /dev/stderr", "two\ntwo"],
        ["echo three >/dev/fd/2; echo four", "three\nfour"],
        ["echo five > /proc/self/fd/1", "five"]
      ]
      for (const [command, text] of cases) {
        const result = yield* bash({ command }, context)
        assert.strictEqual(result.text, text, command)
      }
      // The exit code and the shell's directory come through as without the relay.
      const failed = yield* bash({ command: "echo six > /dev/stdout; exit 3" }, context)
      assert.strictEqual(failed.text, "<tool_use_error>Exit code 3\nsix</tool_use_error>")
      assert.strictEqual((yield* bash({ command: "cd sub && echo seven > /dev/stderr" }, context)).text, "seven")
      assert.strictEqual((yield* bash({ command: "pwd" }, context)).text, fs.realpathSync(`${dir}/sub`))
      // A background job holding the output does not hold the call (it is ended, as the group is otherwise):
      // were it waited for, this call would outlast the test's time limit.
      const background = yield* bash({ command: "sleep 600 > /dev/stdout & echo started" }, context)
      assert.strictEqual(background.text, "started")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("no output reads as (Bash completed with no output)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* bash({ command: "true", description: "Do nothing" }, session(dir))
      assert.strictEqual(result.text, "(Bash completed with no output)")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a timeout kills the group and says so with the partial output", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const name = marker()
      const result = yield* bash(
        { command: `echo started; (exec -a ${name} sleep 100) & exec -a ${name} sleep 100`, timeout: 500 },
        session(dir)
      )
      assert.strictEqual(result.result.is_error, true)
      assert.strictEqual(result.text, "<tool_use_error>Command timed out after 0.5s\nstarted</tool_use_error>")
      assert.strictEqual(survivors(name), 0)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a child that ignores SIGTERM gets SIGKILL after the grace period", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const name = marker()
      const result = yield* bash(
        { command: `trap '' TERM; (exec -a ${name} sleep 100) & exec -a ${name} sleep 100`, timeout: 300 },
        session(dir)
      )
      assert.strictEqual(result.text, "<tool_use_error>Command timed out after 0.3s</tool_use_error>")
      assert.strictEqual(survivors(name), 0)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("background leftovers (cmd &) die when the leader exits", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const name = marker()
      const result = yield* bash({ command: `(exec -a ${name} sleep 100) & echo launched` }, session(dir))
      assert.strictEqual(result.text, "launched")
      assert.strictEqual(survivors(name), 0)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("interrupting the call kills children and grandchildren", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const name = marker()
      const command = `echo partial; bash -c "bash -c 'exec -a ${name} sleep 100' & exec -a ${name} sleep 100"`
      const fiber = yield* Effect.fork(bash({ command }, session(dir)))
      // The leader's command line carries the name too: wait for it and both sleeps.
      yield* awaitProcesses(name, 3)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(survivors(name), 0)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("the partial output of an interrupted command is reported before the group dies", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const name = marker()
      const runtime = yield* ToolRuntime.ToolRuntime
      const events: Array<Message.RuntimeEvent> = []
      const fiber = yield* Effect.fork(runtime.execute(
        {
          type: "tool_use",
          id: "toolu_interrupted",
          name: "Bash",
          input: { command: `echo partial; exec -a ${name} sleep 100` }
        },
        session(dir),
        (event) => Effect.sync(() => events.push(event))
      ))
      yield* awaitProcesses(name, 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(survivors(name), 0)
      const last = events[events.length - 1]
      assert(last !== undefined && last._tag === "Progress")
      assert.deepInclude(last.data as object, { type: "bash_progress", output: "partial", interrupted: true })
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("progress streams the new output at most every 100 ms", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* bash({ command: "for i in 1 2 3 4; do echo line$i; sleep 0.25; done" }, session(dir))
      assert.strictEqual(result.text, "line1\nline2\nline3\nline4")
      const progress = result.events.flatMap((event) => (event._tag === "Progress" ? [event.data] : []))
      assert.isAtLeast(progress.length, 2)
      const outputs = progress.map((data) => (data as { output: string }).output).join("")
      assert.isTrue("line1\nline2\nline3\nline4\n".startsWith(outputs))
      const elapsed = progress.map((data) => (data as { elapsedMs: number }).elapsedMs)
      for (let i = 1; i < elapsed.length; i++) assert.isAtLeast(elapsed[i]! - elapsed[i - 1]!, 100)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("long output is cut in the middle with a count, and the full output is saved", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* bash({ command: "seq 1 20000" }, session(dir))
      const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("")
      const match = /^([^]+)\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n([^]+)\n\[Full output saved to (.+)\]$/.exec(
        result.text
      )
      assert.isNotNull(match, result.text.slice(-300))
      const [, head, cut, tail, saved] = match!
      assert.isTrue(full.startsWith(head!))
      assert.isTrue(full.endsWith(`${tail!}\n`))
      assert.strictEqual(Number(cut), full.length - head!.length - tail!.length - 1)
      // The whole result, notes included, fits in BASH_MAX_OUTPUT_LENGTH (Bash's persistence threshold): the
      // pipeline must not persist the cut text again, hiding the note that names the full output's file.
      assert.isAtMost(result.text.length, 30_000)
      assert.isAtLeast(head!.length + tail!.length, 29_000)
      assert.strictEqual(fs.readFileSync(saved!, "utf8"), full)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("1 GB of output streams through in bounded memory", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const before = process.memoryUsage().rss
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss)
      }, 20)
      const result = yield* bash({ command: "yes | head -c 1000000000" }, session(dir)).pipe(
        Effect.ensuring(Effect.sync(() => clearInterval(sampler)))
      )
      assert.strictEqual(result.result.is_error, undefined)
      const cut = /\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n/.exec(result.text)
      assert.isTrue(Number(cut?.[1]) >= 999_970_000 && Number(cut?.[1]) < 999_971_000, cut?.[0])
      assert.isBelow(peak - before, 200 * 1024 * 1024, "RSS grew by more than 200 MB")
      const saved = /\[Full output saved to (\S+) \(the first 1048576 bytes of 1000000000 characters\)\]$/.exec(
        result.text
      )
      assert.isNotNull(saved)
      assert.strictEqual(fs.statSync(saved![1]!).size, 1024 * 1024)
    }).pipe(Effect.provide(runtimeLayer({ maxSpoolBytes: 1024 * 1024 }))))

  it.scopedLive("a timeout outside 1..max is a validation error, not clamped; the env sets the limits", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const tooLong = yield* bash({ command: "echo hi", timeout: 600_001 }, session(dir))
      assert.strictEqual(
        tooLong.text,
        "<tool_use_error>InputValidationError: Bash failed due to the following issue:\n" +
          "The parameter `timeout` is invalid: expected an integer number of milliseconds between 1 and 600000, " +
          "got 600001. Omit it to use the default.</tool_use_error>"
      )
      const zero = yield* bash({ command: "echo hi", timeout: 0 }, session(dir))
      assert.include(zero.text, "between 1 and 600000, got 0")
      const custom = yield* withEnv(
        "BASH_MAX_TIMEOUT_MS",
        "2000",
        bash({ command: "echo hi", timeout: 5_000 }, session(dir))
      )
      assert.include(custom.text, "between 1 and 2000, got 5000")
      const shortDefault = yield* withEnv("BASH_DEFAULT_TIMEOUT_MS", "200", bash({ command: "sleep 5" }, session(dir)))
      assert.strictEqual(shortDefault.text, "<tool_use_error>Command timed out after 0.2s</tool_use_error>")
      const broken = yield* withEnv("BASH_MAX_OUTPUT_LENGTH", "lots", bash({ command: "echo hi" }, session(dir)))
      assert.include(broken.text, "Bash is misconfigured")
      assert.include(broken.text, "BASH_MAX_OUTPUT_LENGTH")
      const huge = yield* withEnv("BASH_MAX_OUTPUT_LENGTH", "5000000", bash({ command: "echo hi" }, session(dir)))
      assert.include(huge.text, "BASH_MAX_OUTPUT_LENGTH must be a positive integer up to 1000000")
    }).pipe(Effect.provide(runtimeLayer())))

  it("cascades on error, is cancelled on interrupt, and bounds its own time", () => {
    assert.isTrue(BashTool.cascadeOnError)
    assert.strictEqual(BashTool.interruptBehavior, "cancel")
    assert.strictEqual(BashTool.maxResultSizeChars, 30_000)
    assert.strictEqual(BashTool.timeoutMs, Infinity)
  })

  it.effect("read-only lines run concurrently, unless they move the shell", () =>
    Effect.gen(function*() {
      yield* CommandSemantics.load
      const input = (command: string) => ({ command })
      assert.isTrue(BashTool.isConcurrencySafe(input("git status && ls")))
      assert.isTrue(BashTool.isReadOnly(input("cd src && ls")))
      assert.isFalse(BashTool.isConcurrencySafe(input("cd src && ls")))
      assert.isFalse(BashTool.isConcurrencySafe(input("npm test")))
    }))
})

