/**
 * Settings discovery, `toolwright permissions explain`, refusing to start on invalid settings, and the
 * terminal prompt — over real settings files in temp directories.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { PermissionPrompter, Tool, ToolUseContext } from "@toolwright/core"
import { Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { main } from "../src/main.js"
import * as SettingsLoader from "../src/SettingsLoader.js"
import * as TerminalPrompter from "../src/TerminalPrompter.js"
import { fakeTerminal } from "./fakeTerminal.js"

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tw-cli-perm-")))
const home = path.join(root, "home")
const project = path.join(root, "proj")
const write = (file: string, json: unknown) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, typeof json === "string" ? json : JSON.stringify(json))
}
write(path.join(home, ".toolwright", "settings.json"), {
  permissions: { allow: ["Bash(git *)"], defaultMode: "plan" },
  env: { FROM: "user", LEVEL: "user" }
})
write(path.join(project, ".toolwright", "settings.json"), {
  permissions: { deny: ["Bash(git push *)"], defaultMode: "acceptEdits" },
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh" }] }] },
  env: { LEVEL: "project" },
  enabledPlugins: { kept: true }
})
write(path.join(project, ".toolwright", "settings.local.json"), { permissions: { ask: ["Bash(git commit *)"] } })
write(path.join(root, "extra.json"), { permissions: { allow: ["Read(/docs/**)"], defaultMode: "default" } })

/** Runs the CLI in-process and returns its exit code and what it printed. */
const cli = (...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const err: Array<string> = []
    const console = {
      log: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void out.push(parts.join(" "))),
      error: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void err.push(parts.join(" ")))
    }
    const previous = process.env.HOME
    process.env.HOME = home
    const code = yield* main(["node", "toolwright", ...args]).pipe(
      Effect.withConsole(console as never),
      Effect.ensuring(Effect.sync(() => {
        process.env.HOME = previous
      }))
    )
    return { code, stdout: out.join("\n"), stderr: err.join("\n") }
  })

describe("SettingsLoader", () => {
  it.effect("merges user, project, local and --settings, lowest first; the flag wins over defaultMode", () =>
    Effect.gen(function*() {
      const resolved = yield* SettingsLoader.load({ cwd: project, home, settingsFile: path.join(root, "extra.json") })
      assert.deepStrictEqual(resolved.sources, [
        path.join(home, ".toolwright", "settings.json"),
        path.join(project, ".toolwright", "settings.json"),
        path.join(project, ".toolwright", "settings.local.json"),
        path.join(root, "extra.json")
      ])
      assert.strictEqual(resolved.permissionContext.mode, "default")
      assert.deepStrictEqual(resolved.permissionContext.allow.map((entry) => [entry.rule, entry.root]), [
        ["Bash(git *)", path.join(home, ".toolwright")],
        ["Read(/docs/**)", root]
      ])
      assert.deepStrictEqual(resolved.permissionContext.deny.map((entry) => entry.rule), ["Bash(git push *)"])
      assert.deepStrictEqual(resolved.permissionContext.ask.map((entry) => entry.rule), ["Bash(git commit *)"])
      assert.deepStrictEqual(resolved.env, { FROM: "user", LEVEL: "project" })
      assert.deepStrictEqual(resolved.hooks.map((hook) => hook.command), ["./guard.sh"])
      assert.deepStrictEqual(resolved.merged.enabledPlugins, { kept: true })
      const flagged = yield* SettingsLoader.load({ cwd: project, home, permissionMode: "dontAsk" })
      assert.strictEqual(flagged.permissionContext.mode, "dontAsk")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a missing --settings file or an invalid file is a usage error naming it", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.either(SettingsLoader.load({ cwd: project, home, settingsFile: "nope.json" }))
      assert(Either.isLeft(missing))
      assert.strictEqual(missing.left.message, `Settings file not found: ${path.join(project, "nope.json")}. Check the --settings path.`)
      write(path.join(root, "bad.json"), "{\"permissions\": {\"allow\": [\"Bash(ls\"]}}")
      const bad = yield* Effect.either(SettingsLoader.load({ cwd: project, home, settingsFile: path.join(root, "bad.json") }))
      assert(Either.isLeft(bad))
      assert.strictEqual(
        bad.left.message,
        `Invalid settings in ${path.join(root, "bad.json")} at permissions.allow[0]: "Bash(ls" is missing its closing ")"; expected Tool(specifier). Fix the file; toolwright does not start with settings it cannot read.`
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("disableBypassPermissionsMode forbids bypass mode from any file", () =>
    Effect.gen(function*() {
      write(path.join(root, "nobypass.json"), { permissions: { disableBypassPermissionsMode: "disable" } })
      const refused = yield* Effect.either(SettingsLoader.load({
        cwd: project,
        home,
        settingsFile: path.join(root, "nobypass.json"),
        permissionMode: "bypassPermissions"
      }))
      assert(Either.isLeft(refused))
      assert.include(refused.left.message, "bypassPermissions mode is disabled by permissions.disableBypassPermissionsMode")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("toolwright permissions explain", () => {
  it.live("prints the decision and the rule and file that decided it", () =>
    Effect.gen(function*() {
      const denied = yield* cli("permissions", "explain", "--cwd", project, "Bash", "{\"command\":\"git push origin main\"}")
      assert.strictEqual(denied.code, 0)
      assert.strictEqual(
        denied.stdout,
        [
          "Decision: deny",
          `Decided by: deny rule Bash(git push *) (from ${path.join(project, ".toolwright", "settings.json")})`,
          "Message: Permission to use Bash with command git push origin main has been denied.",
          "Mode: acceptEdits",
          `Settings files: ${path.join(home, ".toolwright", "settings.json")}, ${
            path.join(project, ".toolwright", "settings.json")
          }, ${path.join(project, ".toolwright", "settings.local.json")}`,
          `Not run here: 1 PreToolUse hook(s) would run first and may change this: ./guard.sh (from ${
            path.join(project, ".toolwright", "settings.json")
          })`
        ].join("\n")
      )
      const asked = yield* cli("permissions", "explain", "--cwd", project, "--json", "Bash", "{\"command\":\"git commit -m x\"}")
      const json = JSON.parse(asked.stdout)
      assert.strictEqual(json.decision, "ask")
      assert.strictEqual(json.reason, `ask rule Bash(git commit *) (from ${path.join(project, ".toolwright", "settings.local.json")})`)
    }))

  it.live("explains the tools run would call: the project's MCP servers' and settings' plugins'", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-explain-mcp-"))
      const fixtures = path.join(import.meta.dirname, "..", "..")
      write(path.join(dir, ".mcp.json"), {
        mcpServers: {
          scripted: { command: process.execPath, args: [path.join(fixtures, "mcp", "test", "fixtures", "scripted-server.mjs"), "stdio"] }
        }
      })
      write(path.join(dir, ".toolwright", "settings.json"), {
        plugins: [path.join(fixtures, "cli", "test", "fixtures", "shout-plugin.mjs")],
        permissions: { deny: ["mcp__scripted__slow"], allow: ["Shout"] }
      })
      const mcp = yield* cli("permissions", "explain", "--cwd", dir, "mcp__scripted__slow", "{\"ms\":1}")
      assert.strictEqual(mcp.stderr, "")
      assert.include(
        mcp.stdout,
        `Decision: deny\nDecided by: deny rule mcp__scripted__slow (from ${path.join(dir, ".toolwright", "settings.json")})`
      )
      const plugin = yield* cli("permissions", "explain", "--cwd", dir, "Shout", "{\"text\":\"hi\"}")
      assert.include(plugin.stdout, `Decision: allow\nDecided by: allow rule Shout (from ${path.join(dir, ".toolwright", "settings.json")})`)
    }), 30_000)

  it.live("--allow and --deny are the highest source", () =>
    Effect.gen(function*() {
      const allowed = yield* cli("permissions", "explain", "--cwd", project, "--allow", "Bash(make:*)", "Bash", "{\"command\":\"make all\"}")
      assert.include(allowed.stdout, "Decided by: allow rule Bash(make:*) (from --allow/--deny)")
      const denied = yield* cli("permissions", "explain", "--cwd", project, "--deny", "Bash(git status)", "Bash", "{\"command\":\"git status\"}")
      assert.include(denied.stdout, "Decided by: deny rule Bash(git status) (from --allow/--deny)")
      const bad = yield* cli("permissions", "explain", "--cwd", project, "--deny", "Bash(git", "Bash", "{}")
      assert.strictEqual(bad.code, 2)
      assert.include(bad.stderr, "Invalid settings in the --allow/--deny flags at permissions.deny[0]")
    }))

  it.live("invalid settings: run and explain refuse to start with exit 2 and the file/field message", () =>
    Effect.gen(function*() {
      const bad = path.join(root, "mode.json")
      write(bad, { permissions: { defaultMode: "yolo" } })
      for (const args of [["run", "Bash", "--input", "{}"], ["permissions", "explain", "Bash", "{}"]]) {
        const result = yield* cli(...args.slice(0, args.length - 2), "--cwd", project, "--settings", bad, ...args.slice(-2))
        assert.strictEqual(result.code, 2)
        assert.include(result.stderr, `Invalid settings in ${bad} at permissions.defaultMode: expected one of`)
      }
    }))
})

describe("TerminalPrompter", () => {
  const Probe = Tool.make({ name: "Probe", description: "probe", input: Schema.Struct({}), call: () => Effect.void })
  const request: PermissionPrompter.Request = {
    tool: Probe,
    input: { command: "npm run test" },
    context: ToolUseContext.make({ cwd: root }),
    message: "Bash with command npm run test needs permission: no allow rule covers it.",
    suggestions: ["Bash(npm run test:*)"]
  }
  const answer = (typed: string | undefined) =>
    Effect.gen(function*() {
      const terminal = fakeTerminal()
      const prompter = yield* TerminalPrompter.make(terminal)
      terminal.type(typed)
      const result = yield* prompter.ask(request)
      return { result, shown: terminal.shown() }
    }).pipe(Effect.scoped)

  it.live("shows the suggested rule; allow once, allow always, deny, end of input", () =>
    Effect.gen(function*() {
      const always = yield* answer("2\n")
      assert.deepStrictEqual(always.result, { behavior: "allow", rules: ["Bash(npm run test:*)"] })
      assert.include(always.shown, "2) allow always (adds Bash(npm run test:*) to .toolwright/settings.local.json)")
      assert.deepStrictEqual((yield* answer("1\n")).result, { behavior: "allow" })
      const no = yield* answer("3\n")
      assert.deepStrictEqual(no.result, {
        behavior: "deny",
        message: "Permission to use Probe was denied by the user. Do not retry it; ask the user how to proceed."
      })
      assert.strictEqual((yield* answer(undefined)).result.behavior, "deny")
      assert.strictEqual((yield* answer("maybe\nwhat\n")).result.behavior, "deny")
    }))
})

describe("bypass corpus through the real Bash tool", () => {
  const corpusProject = path.join(root, "corpus")
  write(path.join(corpusProject, ".toolwright", "settings.json"), {
    permissions: { allow: ["Bash(git status)", "Bash(echo *)", "Bash(ls *)", "Bash(timeout *)"], deny: ["Bash(rm *)"] }
  })
  const decide = (command: string) =>
    Effect.map(
      cli("permissions", "explain", "--cwd", corpusProject, "--json", "Bash", JSON.stringify({ command })),
      (result) => {
        assert.strictEqual(result.code, 0, result.stderr)
        return JSON.parse(result.stdout).decision as string
      }
    )

  it.live("plain commands an allow rule names are allowed", () =>
    Effect.gen(function*() {
      for (const command of ["git status", "echo hello world", "ls -la"]) {
        assert.strictEqual(yield* decide(command), "allow", command)
      }
    }))

  it.live("nothing narrower gets through: compound, substitution, quoting, env prefixes, wrappers, redirection", () =>
    Effect.gen(function*() {
      const attacks = [
        "git status && touch pwned",
        "git status; touch pwned",
        "git status | sh",
        "git status || touch pwned",
        "git status\ntouch pwned",
        "git status & touch pwned",
        "echo $(touch pwned)",
        "echo `touch pwned`",
        "echo <(touch pwned)",
        "echo \"$(touch pwned)\"",
        "ech'o' hi; touch pwned",
        "PAGER='sh -c x' git status",
        "timeout 5 touch pwned",
        "echo hi > /etc/passwd-copy",
        "echo hi > ../outside.txt",
        "ls | xargs touch"
      ]
      for (const command of attacks) assert.notStrictEqual(yield* decide(command), "allow", command)
      for (const command of ["rm -rf build", "git status && rm -rf x", "echo $(rm -rf x)", "FOO=1 rm -rf x"]) {
        assert.strictEqual(yield* decide(command), "deny", command)
      }
    }))
})
