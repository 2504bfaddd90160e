// Bash commands start from a small helper process (fork of a bare Node instead of the agent's heap). The
// command must not notice: same output, exit codes and process groups; and when the helper is gone, commands
// start from this process again. This file runs alone in its worker: the helper is per process.
import { assert, describe, it } from "@effect/vitest"
import { vi } from "vitest"
import * as os from "node:os"
import * as path from "node:path"
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

/** A fresh copy of the Spawner module: its helper state is per module instance. */
const freshSpawner = async () => {
  vi.resetModules()
  return await import("../../src/bash/Spawner.js")
}

const readAll = (stdout: NodeJS.ReadableStream & { resume(): unknown }) =>
  new Promise<string>((resolve) => {
    let text = ""
    stdout.on("data", (chunk: Buffer) => (text += chunk.toString()))
    stdout.on("close", () => resolve(text))
    stdout.resume()
  })

describe("Bash's spawner helper, edge cases", () => {
  it("does not use a state directory others can write to (they could replace its socket)", async () => {
    const Spawner = await freshSpawner()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-spawner-"))
    try {
      fs.chmodSync(dir, 0o777)
      const started = await Spawner.start({ file: "bash", args: ["-c", "echo hi"], cwd: dir, env: process.env, stateDir: dir })
      assert.isUndefined(started)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a helper that dies once it started a command never gets it started a second time", async () => {
    const Spawner = await freshSpawner()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-spawner-"))
    fs.chmodSync(dir, 0o700)
    try {
      const runs = path.join(dir, "runs")
      const started = await Spawner.start({
        file: "bash",
        args: ["-c", `echo x >> ${runs}; kill -9 $PPID`],
        cwd: dir,
        env: process.env,
        stateDir: dir
      })
      // The helper acknowledged the command before starting it: the caller must not spawn it again (undefined).
      assert.isDefined(started)
      if (started?._tag === "Started") await started.exited
      else {
        assert.strictEqual(
          started?.message,
          "the process that starts Bash commands went away while starting this one, so it may or may not have run: " +
            "check before running it again"
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
      assert.strictEqual(fs.readFileSync(runs, "utf8"), "x\n")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("survives several starts on a helper that died unnoticed (each fails over, none crashes)", async () => {
    const Spawner = await freshSpawner()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-spawner-"))
    fs.chmodSync(dir, 0o700)
    const unhandled: Array<unknown> = []
    const onError = (error: unknown) => unhandled.push(error)
    process.on("uncaughtException", onError)
    try {
      const options = { file: "bash", args: ["-c", "echo $PPID"], cwd: dir, env: process.env, stateDir: dir }
      const first = await Spawner.start(options)
      assert.strictEqual(first?._tag, "Started")
      if (first?._tag !== "Started") return
      const helper = Number((await readAll(first.stdout)).trim())
      await first.exited
      process.kill(helper, "SIGKILL")
      // Dead (a zombie) before this process's event loop hears of it: two starts in the same tick.
      while (!gone(helper)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
      const [a, b] = await Promise.all([Spawner.start(options), Spawner.start(options)])
      assert.isUndefined(a)
      assert.isUndefined(b)
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.deepStrictEqual(unhandled, [])
    } finally {
      process.off("uncaughtException", onError)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
