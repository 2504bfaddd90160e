import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as Sandbox from "../../src/bash/Sandbox.js"
import { call, runtimeLayer, session, tempDir } from "./support.js"

const has = (command: string) => ChildProcess.spawnSync("which", [command]).status === 0
const missing = ["bwrap", "socat", "curl"].filter((command) => !has(command))
const reason = `needs ${missing.join(", ")} (apt-get install bubblewrap socat curl)`
if (missing.length > 0) console.warn(`Sandbox tests skipped: ${reason}`)

/** A directory made before the runtime, so the sandbox settings can name it. */
const fixed = fs.realpathSync(fs.mkdtempSync(path.join("/tmp", "toolwright-sandbox-")))
const secret = path.join(fixed, "secret.txt")
const writable = path.join(fixed, "writable")
fs.mkdirSync(writable)
fs.writeFileSync(secret, "top secret\n")
afterAll(() => fs.rmSync(fixed, { recursive: true, force: true }))

const sandboxed = runtimeLayer({
  sandbox: {
    enabled: true,
    filesystem: { allowWrite: [writable], denyRead: [secret] },
    network: { allowedDomains: ["allowed.invalid"] }
  }
})

const title = `Bash in the sandbox (${missing.length > 0 ? `skipped: ${reason}` : "bwrap"})`

describe.skipIf(missing.length > 0)(title, () => {
  it.scopedLive("writes go only to the cwd and allowWrite; a refused write says why", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const command = `echo a > inside.txt && echo b > ${writable}/x && cat inside.txt`
      const ok = yield* call("Bash", { command }, session(dir))
      assert.strictEqual(ok.text, "a")
      assert.strictEqual(fs.readFileSync(path.join(writable, "x"), "utf8"), "b\n")
      const outside = path.join(fixed, "outside.txt")
      const refused = yield* call("Bash", { command: `echo c > ${outside}` }, session(dir))
      assert.strictEqual(refused.result.is_error, true)
      assert.include(refused.text, "Exit code 1")
      assert.include(refused.text, `${outside}: Read-only file system`)
      assert.include(refused.text, "[sandbox] This command ran in a sandbox")
      assert.isFalse(fs.existsSync(outside))
    }).pipe(Effect.provide(sandboxed)))

  it.scopedLive("a command starts once the relays to the sandbox's proxies listen, so it can go online at once", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // The relays (socat on :3128 and :1080) are started just before the command; both must be up by then.
      for (let i = 0; i < 5; i++) {
        const listening = yield* call(
          "Bash",
          { command: "grep -c ' 00000000:0C38 00000000:0000 0A\\| 00000000:0438 00000000:0000 0A' /proc/net/tcp" },
          session(dir)
        )
        assert.strictEqual(listening.text, "2")
      }
    }).pipe(Effect.provide(sandboxed)))

  it.scopedLive("denyRead hides a file; the network reaches only allowed domains", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const read = yield* call("Bash", { command: `cat ${secret}` }, session(dir))
      assert.strictEqual(read.result.is_error, true, read.text)
      assert.notInclude(read.text, "top secret")
      const net = yield* call("Bash", { command: "curl -fsS -m 3 http://blocked.invalid/" }, session(dir))
      assert.strictEqual(net.result.is_error, true, net.text)
      assert.include(net.text, "403")
      assert.include(net.text, "may reach only allowed.invalid")
    }).pipe(Effect.provide(sandboxed)))

  it.scopedLive("background tasks run in the sandbox too", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const context = session(dir)
      const start = yield* call("Bash", { command: `echo d > ${fixed}/bg.txt`, run_in_background: true }, context)
      const id = /ID: (b\w+)\./.exec(start.text)![1]!
      const output = yield* call("TaskOutput", { task_id: id }, context)
      assert.include(output.text, "<status>failed</status>")
      assert.include(output.text, "Read-only file system")
      assert.isFalse(fs.existsSync(path.join(fixed, "bg.txt")))
    }).pipe(Effect.provide(sandboxed)))
})

describe("Bash with the sandbox enabled but unable to start", () => {
  it("settings sandbox decode from Claude Code's shape; a wrong type is an error naming the field", () => {
    const decode = Schema.decodeUnknownEither(Sandbox.SettingsSchema)
    const ok = decode({ enabled: true, network: { allowedDomains: ["github.com"] }, excludedCommands: ["docker"] })
    assert.deepStrictEqual(Either.getOrThrow(ok), { enabled: true, network: { allowedDomains: ["github.com"] } })
    const bad = decode({ enabled: "yes" })
    assert.isTrue(Either.isLeft(bad))
    assert.include(String(Either.isLeft(bad) ? bad.left.message : ""), "enabled")
  })


  it.scopedLive("refuses to run, naming what is missing and how to install it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* call("Bash", { command: "echo should-not-run" }, session(dir))
      assert.strictEqual(result.result.is_error, true)
      assert.include(
        result.text,
        "Bash is set to run commands in a sandbox (settings sandbox.enabled), but the sandbox cannot start: "
      )
      assert.include(result.text, "apt-get install bubblewrap socat")
      assert.notInclude(result.text, "should-not-run\n")
    }).pipe(Effect.provide(runtimeLayer({ sandbox: { enabled: true, ripgrepCommand: "/nonexistent/rg" } }))))

  it.scopedLive("runs unsandboxed when the user allowed it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const result = yield* call("Bash", { command: "echo ran" }, session(dir))
      assert.strictEqual(result.text, "ran")
    }).pipe(
      Effect.provide(
        runtimeLayer({ sandbox: { enabled: true, ripgrepCommand: "/nonexistent/rg", allowUnsandboxed: true } })
      )
    ))
})
