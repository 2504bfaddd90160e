import { NodeContext } from "@effect/platform-node"
import { FileSystem } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PermissionPolicy, Settings } from "../src/index.js"

const errorOf = (json: unknown, file = "/p/.toolwright/settings.json") => {
  const decoded = Settings.decode(file, json)
  assert(Either.isLeft(decoded), "expected an error")
  return decoded.left.message
}

describe("Settings.decode", () => {
  it("accepts a Claude Code settings file and keeps unknown keys", () => {
    const json = {
      $schema: "https://json.schemastore.org/claude-code-settings.json",
      model: "opus",
      statusLine: { type: "command", command: "x" },
      permissions: {
        allow: ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        deny: ["WebFetch(domain:evil.com)", "mcp__github"],
        ask: ["Bash(git push *)"],
        defaultMode: "acceptEdits",
        additionalDirectories: ["../docs"],
        disableBypassPermissionsMode: "disable"
      },
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh", timeout: 30 }] }],
        Stop: [{ hooks: [{ type: "prompt", prompt: "done?" }] }]
      },
      env: { NODE_ENV: "test" }
    }
    const decoded = Settings.decode("f.json", json)
    assert(Either.isRight(decoded))
    assert.deepStrictEqual(JSON.parse(JSON.stringify(decoded.right)), json)
  })

  it("names the file, the field and what is expected", () => {
    assert.strictEqual(
      errorOf({ permissions: { defaultMode: "yolo" } }),
      "Invalid settings in /p/.toolwright/settings.json at permissions.defaultMode: expected one of \"default\", \"acceptEdits\", \"plan\", \"dontAsk\", \"bypassPermissions\"; got \"yolo\""
    )
    assert.strictEqual(
      errorOf({ permissions: { allow: ["Read", "Bash(ls"] } }),
      "Invalid settings in /p/.toolwright/settings.json at permissions.allow[1]: \"Bash(ls\" is missing its closing \")\"; expected Tool(specifier)"
    )
    assert.strictEqual(
      errorOf({ permissions: { deny: "Bash" } }),
      "Invalid settings in /p/.toolwright/settings.json at permissions.deny: expected an array of rule strings, e.g. [\"Bash(npm test)\", \"Read(./src/**)\"]"
    )
    assert.strictEqual(
      errorOf({ env: { PORT: 8080 } }),
      "Invalid settings in /p/.toolwright/settings.json at env.PORT: Expected string, actual 8080"
    )
    assert.include(errorOf({ hooks: { PreToolUse: [{ matcher: "(", hooks: [] }] } }), "at hooks.PreToolUse[0].matcher: not a valid regular expression")
    assert.include(
      errorOf({ hooks: { PreToolUse: [{ hooks: [{ type: "prompt", prompt: "x" }] }] } }),
      "at hooks.PreToolUse[0].hooks[0].type: toolwright runs only \"command\" hooks for PreToolUse"
    )
    assert.include(errorOf({ hooks: { PostToolUse: [{ hooks: [{ type: "command", timeout: -1, command: "x" }] }] } }), "timeout")
    assert.include(
      errorOf({ hooks: { PostToolUse: [{ hooks: [{ type: "command", command: "x", async: "yes" }] }] } }),
      "at hooks.PostToolUse[0].hooks[0].async: expected true or false"
    )
    assert.include(errorOf([]), "expected a JSON object at the top level")
    assert.strictEqual(
      errorOf({ toolResultThresholds: { Bash: 0 } }),
      "Invalid settings in /p/.toolwright/settings.json at toolResultThresholds.Bash: Expected a positive number, actual 0"
    )
    assert.strictEqual(
      errorOf({ toolErrorCascade: "sometimes" }),
      "Invalid settings in /p/.toolwright/settings.json at toolErrorCascade: Expected \"none\", actual \"sometimes\""
    )
    assert.strictEqual(
      errorOf({ permissions: null }),
      "Invalid settings in /p/.toolwright/settings.json at permissions: expected an object with the lists allow, ask and deny, e.g. {\"deny\": [\"Bash(curl:*)\"]}"
    )
    assert.strictEqual(
      errorOf({ hooks: { PreToolUse: { matcher: "Bash" } } }),
      "Invalid settings in /p/.toolwright/settings.json at hooks.PreToolUse: expected an array of matcher groups, e.g. [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\"}]}]"
    )
    assert.strictEqual(
      errorOf({ permissions: { deny: ["Read(./.env)", "bash(curl:*)"] } }),
      "Invalid settings in /p/.toolwright/settings.json at permissions.deny[1]: \"bash(curl:*)\": tool names are case-sensitive, and this one names no tool; did you mean \"Bash(curl:*)\"?"
    )
    assert.include(errorOf({ permissions: { deny: ["Bash(git reset:* --hard)"] } }), "at permissions.deny[0]: \"Bash(git reset:* --hard)\": \":*\" must be at the end")
    assert.include(
      errorOf({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "x", if: "Bash(git" }] }] } }),
      "at hooks.PreToolUse[0].hooks[0].if: \"Bash(git\" is missing its closing \")\""
    )
    const bad = Settings.decodeText("/p/s.json", "{ \"permissions\": ")
    assert(Either.isLeft(bad))
    assert.include(bad.left.message, "Invalid settings in /p/s.json: not valid JSON (")
  })
})

describe("Settings.decode: misspelt keys are errors, not silently ignored", () => {
  it("a deny list, a permissions section or a hook event spelt otherwise names the key meant", () => {
    assert.strictEqual(
      errorOf({ permissions: { Deny: ["Bash(curl:*)"] } }),
      "Invalid settings in /p/.toolwright/settings.json at permissions.Deny: unknown key; did you mean \"deny\"? Keys are case-sensitive, and the rules under this one would be ignored. Rename it to \"deny\""
    )
    assert.include(errorOf({ permissions: { denied: ["Bash(curl:*)"] } }), "at permissions.denied: unknown key; did you mean \"deny\"?")
    assert.include(errorOf({ permissions: { allowed: [] } }), "did you mean \"allow\"?")
    assert.include(errorOf({ permissions: { default_mode: "plan" } }), "did you mean \"defaultMode\"?")
    assert.include(errorOf({ permission: { deny: ["Bash(curl:*)"] } }), "at permission: unknown key; did you mean \"permissions\"?")
    assert.include(errorOf({ Hooks: {} }), "did you mean \"hooks\"?")
    const hooks = [{ matcher: "Bash", hooks: [{ type: "command", command: "exit 2" }] }]
    assert.strictEqual(
      errorOf({ hooks: { pretooluse: hooks } }),
      "Invalid settings in /p/.toolwright/settings.json at hooks.pretooluse: unknown key; did you mean \"PreToolUse\"? Keys are case-sensitive, and the hooks under this one would be ignored. Rename it to \"PreToolUse\""
    )
    assert.include(errorOf({ hooks: { PreToolUsed: hooks } }), "did you mean \"PreToolUse\"?")
    assert.include(errorOf({ hooks: { PostToolUseFaliure: hooks } }), "did you mean \"PostToolUseFailure\"?")
    // Claude Code's other events and keys stay accepted, so its files paste as they are.
    for (const event of ["Stop", "SessionStart", "UserPromptSubmit", "PreCompact", "Notification", "SubagentStop"]) {
      assert(Either.isRight(Settings.decode("f.json", { hooks: { [event]: [{ hooks: [{ type: "command", command: "x" }] }] } })))
    }
    assert(Either.isRight(Settings.decode("f.json", { permissions: { disableBypassPermissionsMode: "disable" }, envx: 1 })))
  })
})

describe("Settings.merge", () => {
  it("merges lowest to highest: rules accumulate with their source, mode and env take the highest", () => {
    const user = { name: "/home/u/.toolwright/settings.json", root: "/home/u/.toolwright", settings: {
      permissions: { allow: ["Bash(git *)"], defaultMode: "plan" as const },
      env: { A: "1", B: "1" },
      model: "a"
    } }
    const project = { name: "/p/.toolwright/settings.json", root: "/p", settings: {
      permissions: { deny: ["Bash(git push *)"], defaultMode: "acceptEdits" as const, additionalDirectories: ["../docs", "~/notes"] },
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "a.sh" }] }],
        PostToolUse: [{ hooks: [{ type: "command", command: "log.sh", async: true }] }]
      },
      env: { B: "2" }
    } }
    const merged = Settings.merge([user, project], { cwd: "/p", homeDir: "/home/u" })
    assert.deepStrictEqual(merged.permissionContext, {
      mode: "acceptEdits",
      allow: [{ rule: "Bash(git *)", source: user.name, root: user.root }],
      deny: [{ rule: "Bash(git push *)", source: project.name, root: "/p" }],
      ask: [],
      additionalDirectories: ["/docs", "/home/u/notes"],
      homeDir: "/home/u"
    })
    assert.deepStrictEqual(merged.env, { A: "1", B: "2" })
    assert.deepStrictEqual(merged.hooks, [
      { event: "PreToolUse", matcher: "Bash", command: "a.sh", timeout: 600, source: project.name },
      { event: "PostToolUse", matcher: undefined, command: "log.sh", timeout: 600, async: true, source: project.name }
    ])
    assert.strictEqual(merged.merged.model, "a")
    assert.strictEqual(Settings.merge([user, project], { cwd: "/p", mode: "default" }).permissionContext.mode, "default")
  })

  it("Claude Code's guarding switches: a layer that turns one on cannot be turned off by a later one", () => {
    const user = { name: "/home/u/.toolwright/settings.json", root: "/home/u/.toolwright", settings: {
      permissions: { blockWritesOutsideWorkingDirectories: true, denyInsteadOfPrompting: true }
    } }
    const project = { name: "/p/.toolwright/settings.json", root: "/p", settings: {
      permissions: { blockWritesOutsideWorkingDirectories: false, blockReadsOutsideWorkingDirectories: true }
    } }
    const context = Settings.merge([user, project], { cwd: "/p" }).permissionContext
    assert.strictEqual(context.blockWritesOutsideWorkingDirectories, true)
    assert.strictEqual(context.blockReadsOutsideWorkingDirectories, true)
    assert.strictEqual(context.denyInsteadOfPrompting, true)
    assert.strictEqual(
      errorOf({ permissions: { denyInsteadOfPrompting: "yes" } }),
      "Invalid settings in /p/.toolwright/settings.json at permissions.denyInsteadOfPrompting: expected true or false"
    )
  })
})

describe("allow always: persisted to settings.local.json", () => {
  it.effect("adds rules without losing anything else, atomically", () =>
    Effect.gen(function*() {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "tw-settings-"))
      fs.mkdirSync(path.join(cwd, ".toolwright"))
      const file = path.join(cwd, ".toolwright", "settings.local.json")
      fs.writeFileSync(file, JSON.stringify({ model: "x", permissions: { allow: ["Read"], deny: ["Bash(rm *)"] }, hooks: {} }))
      const fileSystem = yield* FileSystem.FileSystem
      yield* PermissionPolicy.persistAllowRules(fileSystem, cwd, ["Bash(npm run test:*)", "Read"])
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")), {
        model: "x",
        permissions: { allow: ["Read", "Bash(npm run test:*)"], deny: ["Bash(rm *)"] },
        hooks: {}
      })
      assert.deepStrictEqual(fs.readdirSync(path.join(cwd, ".toolwright")), ["settings.local.json"])
      const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "tw-settings-"))
      yield* PermissionPolicy.persistAllowRules(fileSystem, fresh, ["WebFetch(domain:example.com)"])
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(fresh, ".toolwright", "settings.local.json"), "utf8")), {
        permissions: { allow: ["WebFetch(domain:example.com)"] }
      })
      fs.writeFileSync(file, "{ broken")
      const error = yield* Effect.flip(PermissionPolicy.persistAllowRules(fileSystem, cwd, ["Read"]))
      assert.include(error.message, "not valid JSON, so the remembered rules were not written")
      assert.strictEqual(fs.readFileSync(file, "utf8"), "{ broken")
    }).pipe(Effect.provide(NodeContext.layer)))
})
