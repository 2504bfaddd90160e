// Bash commands start from a small helper process (fork of a bare Node instead of the agent's heap). The
// command must not notice: same output, exit codes and process groups; and when the helper is gone, commands
// start from this process again. This file runs alone in its worker: the helper is per process.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { call, session, tempDir, runtimeLayer } from "./support.js"

const bash = (command: string, dir: string) => call("Bash", { command }, session(dir))

/** The parent pid of `pid`, from /proc. */
const parentOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
}

const gone = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))
  } catch {
    return true
  }
}

describe("Bash's spawner helper", () => {
  it.scopedLive("starts commands as this process would, unless turned off; a dead helper falls back", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // Through the helper: the command's parent is a Node process this one started.
      const first = yield* bash("echo $PPID", dir)
      const helper = Number(first.text)
      assert.notStrictEqual(helper, process.pid)
      assert.strictEqual(parentOf(helper), process.pid)
      assert.strictEqual(
        (yield* bash("echo out; echo err >&2; exit 4", dir)).text,
        "<tool_use_error>Exit code 4\nout\nerr</tool_use_error>"
      )
      // Its own process group, as before: the group id is the command's pid.
      assert.strictEqual((yield* bash(`[ "$(ps -o pgid= -p $$ | tr -d ' ')" = "$$" ] && echo own group`, dir)).text, "own group")

      // TOOLWRIGHT_BASH_SPAWNER=0: spawned here.
      process.env.TOOLWRIGHT_BASH_SPAWNER = "0"
      const direct = yield* bash("echo $PPID", dir).pipe(
        Effect.ensuring(Effect.sync(() => delete process.env.TOOLWRIGHT_BASH_SPAWNER))
      )
      assert.strictEqual(Number(direct.text), process.pid)
      assert.strictEqual(Number((yield* bash("echo $PPID", dir)).text), helper)

      // The helper killed: the next commands start here, with the same results.
      process.kill(helper, "SIGKILL")
      for (let i = 0; i < 200 && !gone(helper); i++) yield* Effect.sleep("10 millis")
      assert.isTrue(gone(helper))
      const after = yield* bash("echo $PPID; echo done", dir)
      assert.strictEqual(after.text, `${process.pid}\ndone`)
    }).pipe(Effect.provide(runtimeLayer())))
})
