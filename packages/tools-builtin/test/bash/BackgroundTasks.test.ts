import * as fs from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { awaitProcesses, call, marker, runtimeLayer, session, survivors, tempDir } from "./support.js"

const started = (text: string) => {
  const match = /^Command running in background with ID: (b\w+)\. Output is being written to: (\S+)\. /.exec(text)
  assert.isNotNull(match, text)
  return { id: match![1]!, file: match![2]! }
}

describe("Bash: background tasks", () => {
  it.scopedLive("run_in_background returns at once; TaskOutput waits and returns the new output and status", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const start = yield* call("Bash", {
        command: "echo first; sleep 0.3; echo second >&2; exit 3",
        run_in_background: true
      }, context)
      const task = started(start.text)
      const output = yield* call("TaskOutput", { task_id: task.id }, context)
      assert.strictEqual(
        output.text,
        `<task_id>${task.id}</task_id>\n<command>echo first; sleep 0.3; echo second >&2; exit 3</command>\n` +
          `<status>failed</status>\n<exit_code>3</exit_code>\n<output>\nfirst\nsecond\n</output>`
      )
      assert.strictEqual(fs.readFileSync(task.file, "utf8"), "first\nsecond\n")
      const again = yield* call("TaskOutput", { task_id: task.id, block: false }, context)
      assert.include(again.text, "<output>(no new output)</output>")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("TaskOutput without blocking, or past its timeout, reports a running task", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const name = marker()
      const command = `echo ready; exec -a ${name} sleep 100`
      const task = started((yield* call("Bash", { command, run_in_background: true }, context)).text)
      yield* awaitProcesses(name, 1)
      const now = yield* call("TaskOutput", { task_id: task.id, block: false }, context)
      assert.include(now.text, "<status>running</status>\n<output>\nready\n</output>")
      const waited = yield* call("TaskOutput", { task_id: task.id, timeout: 200 }, context)
      assert.include(
        waited.text,
        "<status>running</status>\n<retrieval_status>timeout: the task is still running</retrieval_status>"
      )
      const stop = yield* call("TaskStop", { task_id: task.id }, context)
      assert.strictEqual(stop.text, `Successfully stopped task: ${task.id} (${command})`)
      assert.strictEqual(survivors(name), 0)
      const after = yield* call("TaskOutput", { task_id: task.id }, context)
      assert.include(after.text, "<status>killed</status>")
      const twice = yield* call("TaskStop", { task_id: task.id }, context)
      assert.strictEqual(
        twice.text,
        `<tool_use_error>Task ${task.id} is not running (status: killed).</tool_use_error>`
      )
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("TaskOutput after a lot of output shows its end from the start of a line, saying what it skipped", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const task = started((yield* call("Bash", { command: "seq 1 200000", run_in_background: true }, context)).text)
      const output = yield* call("TaskOutput", { task_id: task.id }, context)
      const shown = /<output>\n\[(\d+) earlier bytes not shown; the whole output is in (\S+)\]\n([^\n]*)\n/.exec(output.text)
      assert.isNotNull(shown, output.text.slice(0, 300))
      const whole = fs.readFileSync(task.file, "utf8")
      assert.strictEqual(shown![2], task.file)
      // The skip ends at a line break, and the first line shown is the whole line that follows it.
      const skipped = Number(shown![1])
      assert.strictEqual(whole[skipped - 1], "\n")
      assert.strictEqual(shown![3], whole.slice(skipped, whole.indexOf("\n", skipped)))
      assert.isTrue(output.text.endsWith("200000\n</output>"), output.text.slice(-100))
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("TaskStop kills the whole group: children that ignore SIGTERM and grandchildren", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const name = marker()
      const command = `trap '' TERM; (exec -a ${name} sleep 100) & bash -c "exec -a ${name} sleep 100" & wait`
      const task = started((yield* call("Bash", { command, run_in_background: true }, context)).text)
      yield* awaitProcesses(name, 3)
      yield* call("TaskStop", { task_id: task.id }, context)
      assert.strictEqual(survivors(name), 0)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("unknown ids and other sessions' tasks are not found", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const task = started((yield* call("Bash", { command: "true", run_in_background: true }, context)).text)
      const unknown = yield* call("TaskOutput", { task_id: "bnope" }, context)
      assert.strictEqual(
        unknown.text,
        `<tool_use_error>No task found with ID: bnope. This session's tasks: ${task.id}.</tool_use_error>`
      )
      const other = yield* call("TaskStop", { task_id: task.id }, session(dir))
      assert.strictEqual(
        other.text,
        `<tool_use_error>No task found with ID: ${task.id}. This session has no background tasks.</tool_use_error>`
      )
      const badTimeout = yield* call("TaskOutput", { task_id: task.id, timeout: 700_000 }, context)
      assert.include(badTimeout.text, "between 0 and 600000, got 700000")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("with backgroundOnTimeout, a command that times out goes on as a task instead of dying", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const result = yield* call("Bash", { command: "echo before; sleep 0.6; echo after", timeout: 200 }, context)
      assert.strictEqual(result.result.is_error, undefined)
      const match = /^before\nCommand timed out after 0\.2s and is still running in the background with ID: (b\w+)\. /
        .exec(result.text)
      assert.isNotNull(match, result.text)
      const output = yield* call("TaskOutput", { task_id: match![1]! }, context)
      assert.include(
        output.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<output>\nbefore\nafter\n</output>"
      )
      const name = marker()
      const long = yield* call("Bash", { command: `exec -a ${name} sleep 100`, timeout: 200 }, context)
      const id = /ID: (b\w+)\./.exec(long.text)![1]!
      assert.strictEqual(survivors(name), 1)
      yield* call("TaskStop", { task_id: id }, context)
      assert.strictEqual(survivors(name), 0)
    }).pipe(Effect.provide(runtimeLayer({ backgroundOnTimeout: true }))))

  it.live("closing the runtime kills every task still running and removes the output files", () =>
    Effect.gen(function*() {
      const name = marker()
      const files = yield* Effect.scoped(Effect.gen(function*() {
        const dir = yield* tempDir
        const context = session(dir)
        const out: Array<string> = []
        for (let i = 0; i < 3; i++) {
          const result = yield* call("Bash", {
            command: `(exec -a ${name} sleep 100) & exec -a ${name} sleep 100`,
            run_in_background: true
          }, context)
          out.push(started(result.text).file)
        }
        yield* awaitProcesses(name, 6)
        return out
      }).pipe(Effect.provide(runtimeLayer())))
      assert.strictEqual(survivors(name), 0)
      for (const file of files) assert.isFalse(fs.existsSync(file))
    }))
})

