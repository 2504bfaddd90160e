// What Bash takes from the session's context: settings `env` (on the context since settings are per
// session) and the ids that name its spool file, which must not lead the file out of the project dir.
import { assert, describe, it } from "@effect/vitest"
import { ToolRuntime } from "@toolwright/core"
import { Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { runtimeLayer, session, tempDir } from "./support.js"

const run = (id: string, command: string, context: ReturnType<typeof session>) =>
  Effect.flatMap(ToolRuntime.ToolRuntime, (runtime) =>
    Stream.runCollect(runtime.runToolUse({ type: "tool_use", id, name: "Bash", input: { command } }, context))).pipe(
      Effect.map((events) => {
        const last = Array.from(events).at(-1)
        return last?._tag === "ToolResult" && typeof last.result.content === "string" ? last.result.content : ""
      })
    )

describe("Bash and the session context", () => {
  it.scoped("settings env on the context reaches the command and wins over the process's", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = { ...session(dir), env: { GREETING: "hello from settings", HOME: "/settings/home" } }
      const text = yield* run("toolu_env", "echo \"$GREETING\"; echo \"$HOME\"", context)
      assert.strictEqual(text, "hello from settings\n/settings/home")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scoped("a hostile tool_use id cannot move the spool file out of the project directory", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const outside = path.join(dir, "escaped")
      const context = session(dir)
      const hostile = `x/../../../escaped`
      const text = yield* run(hostile, "head -c 40000 /dev/zero | tr '\\0' 'a'", context)
      const saved = /\[Full output saved to (.+?)[\] ]/.exec(text)
      assert.isNotNull(saved)
      const file = saved![1]
      assert.isTrue(file.startsWith(path.join(context.projectDir, context.sessionId, "tool-results") + path.sep), file)
      assert.isTrue(fs.existsSync(file))
      assert.isFalse(fs.existsSync(`${outside}.txt`))
      assert.isFalse(fs.readdirSync(dir).some((name) => name.startsWith("escaped")))
    }).pipe(Effect.provide(runtimeLayer())))
})
