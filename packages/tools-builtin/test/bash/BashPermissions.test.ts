import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Permission, ToolUseContext } from "@toolwright/core"
import { Effect } from "effect"
import { call, runtimeLayer, session, tempDir } from "./support.js"

/** A session in default mode with the given allow/deny rules (no one answers prompts: asking denies). */
const ruled = (cwd: string, rules: { allow?: Array<string>; deny?: Array<string> }) =>
  ToolUseContext.make({
    cwd,
    projectDir: path.join(cwd, ".project"),
    permissionContext: {
      ...Permission.emptyPermissionContext("default"),
      allow: (rules.allow ?? []).map((rule) => ({ rule, source: "test" })),
      deny: (rules.deny ?? []).map((rule) => ({ rule, source: "test" }))
    }
  })

const allowed = (text: string) => !text.includes("permission") && !text.includes("denied")

describe("Bash under permission rules", () => {
  it.scopedLive("an allow rule for one command does not let a compound line through", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "victim"), "x")
      const context = ruled(dir, { allow: ["Bash(echo:*)"] })
      const ok = yield* call("Bash", { command: "echo fine" }, context)
      assert.strictEqual(ok.text, "fine")
      const bypasses = [
        "echo a && rm victim",
        "echo a; rm victim",
        "echo $(rm victim)",
        "echo `rm victim`",
        "echo a | bash -c 'rm victim'",
        "echo a > ../outside-victim",
        "FOO=1 echo a && \\rm victim",
        "echo a && command rm victim",
        "echo a && eval 'rm victim'",
        "echo a && timeout 5 rm victim",
        "echo a\nrm victim"
      ]
      for (const command of bypasses) {
        const result = yield* call("Bash", { command }, context)
        assert.strictEqual(result.result.is_error, true, command)
        assert.isFalse(allowed(result.text), `${command}: ${result.text}`)
        assert.strictEqual(fs.readFileSync(path.join(dir, "victim"), "utf8"), "x", command)
        assert.isFalse(fs.existsSync(path.join(dir, "..", "outside-victim")), command)
      }
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a deny rule catches the command behind wrappers, env prefixes and compound lines", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "victim"), "x")
      const context = ruled(dir, { allow: ["Bash(*)"], deny: ["Bash(rm:*)"] })
      const commands = [
        "ls && rm victim",
        "timeout 5 nice rm victim",
        "X=1 rm victim",
        "xargs rm < /dev/null",
        "/bin/rm victim",
        "sudo -n rm victim",
        "r\\\nm victim"
      ]
      for (const command of commands) {
        const result = yield* call("Bash", { command }, context)
        assert.strictEqual(result.result.is_error, true, command)
        assert.strictEqual(fs.readFileSync(path.join(dir, "victim"), "utf8"), "x", command)
      }
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("read-only commands run without a rule; writes and unknown commands ask", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "a.txt"), "hello\n")
      const context = ruled(dir, {})
      assert.strictEqual((yield* call("Bash", { command: "cat a.txt | wc -l" }, context)).text, "1")
      const write = yield* call("Bash", { command: "echo x > b.txt" }, context)
      assert.strictEqual(write.result.is_error, true)
      assert.isFalse(fs.existsSync(path.join(dir, "b.txt")))
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("a redirection is an edit of its target: the command's allow rule does not cover it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "app.ts"), "original\n")
      const onlyEcho = ruled(dir, { allow: ["Bash(echo:*)"] })
      assert.strictEqual((yield* call("Bash", { command: "echo hi" }, onlyEcho)).text, "hi")
      const write = yield* call("Bash", { command: "echo x > app.ts" }, onlyEcho)
      assert.strictEqual(write.result.is_error, true)
      assert.strictEqual(fs.readFileSync(path.join(dir, "app.ts"), "utf8"), "original\n")
      const withEdit = ruled(dir, { allow: ["Bash(echo:*)", "Edit(./**)"] })
      assert.strictEqual((yield* call("Bash", { command: "echo x > app.ts" }, withEdit)).text, "(Bash completed with no output)")
      assert.strictEqual(fs.readFileSync(path.join(dir, "app.ts"), "utf8"), "x\n")
      const denied = ruled(dir, { allow: ["Bash(echo:*)", "Edit(./**)"], deny: ["Edit(./app.ts)"] })
      assert.strictEqual((yield* call("Bash", { command: "echo y > app.ts" }, denied)).result.is_error, true)
      assert.strictEqual(fs.readFileSync(path.join(dir, "app.ts"), "utf8"), "x\n")
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("after a cd, a relative redirection asks: rules resolved it against the session's cwd", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      fs.mkdirSync(path.join(dir, "sub"))
      const context = ruled(dir, { allow: ["Bash(cd:*)", "Bash(echo:*)", "Edit(./**)"] })
      assert.strictEqual((yield* call("Bash", { command: "cd sub" }, context)).text, "(Bash completed with no output)")
      const result = yield* call("Bash", { command: "echo x > note.txt" }, context)
      assert.strictEqual(result.result.is_error, true)
      const sub = path.join(dir, "sub")
      assert.include(result.text, `the shell is in ${sub}, so note.txt means ${path.join(sub, "note.txt")}`)
    }).pipe(Effect.provide(runtimeLayer())))

  it.scopedLive("bypass mode runs what it is given", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* call("Bash", { command: "echo $(echo nested)" }, session(dir))
      assert.strictEqual(result.text, "nested")
    }).pipe(Effect.provide(runtimeLayer())))
})
