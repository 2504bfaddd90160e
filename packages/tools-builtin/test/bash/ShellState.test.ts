import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, runtimeLayer, session, tempDir } from "./support.js"

const bash = (command: string, context: ReturnType<typeof session>) => call("Bash", { command }, context)

describe("Bash: the session's shell state", () => {
  it.scopedLive("a cd applies to the next call of the same session only", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.mkdirSync(path.join(dir, "sub"))
      const context = session(dir)
      assert.strictEqual((yield* bash("cd sub", context)).text, "(Bash completed with no output)")
      assert.strictEqual((yield* bash("pwd", context)).text, path.join(dir, "sub"))
      const other = session(dir)
      assert.strictEqual((yield* bash("pwd", other)).text, dir)
      // A failing command still moves the shell.
      yield* bash("cd .. && false", context)
      assert.strictEqual((yield* bash("pwd", context)).text, dir)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("leaving the working directories resets the cwd and says so", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const result = yield* bash("cd / && echo moved", context)
      assert.strictEqual(result.text, `moved\nShell cwd was reset to ${dir}`)
      assert.strictEqual((yield* bash("pwd", context)).text, dir)
      const quiet = yield* bash("cd /", context)
      assert.strictEqual(quiet.text, `Shell cwd was reset to ${dir}`)
      const failed = yield* bash("cd /; exit 4", context)
      assert.strictEqual(failed.text, `<tool_use_error>Exit code 4\nShell cwd was reset to ${dir}</tool_use_error>`)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("an additional directory is a working directory; a symlink out of the project is not", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const extra = yield* tempDir
      fs.symlinkSync("/", path.join(dir, "root-link"))
      const context = session(dir, [extra])
      yield* bash(`cd ${extra}`, context)
      assert.strictEqual((yield* bash("pwd", context)).text, extra)
      const link = yield* bash(`cd ${dir}/root-link`, context)
      assert.strictEqual(link.text, `Shell cwd was reset to ${dir}`)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a cwd removed since is forgotten: the next call starts in the session's cwd", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.mkdirSync(path.join(dir, "gone"))
      const context = session(dir)
      yield* bash("cd gone", context)
      fs.rmdirSync(path.join(dir, "gone"))
      assert.strictEqual((yield* bash("pwd", context)).text, dir)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("settings env reaches every command and wins over the process's", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* bash("echo $TW_SETTING:$HOME", session(dir))
      assert.strictEqual(result.text, "from-settings:/settings-home")
    }).pipe(Effect.provide(runtimeLayer({ env: { TW_SETTING: "from-settings", HOME: "/settings-home" } }))))
})
