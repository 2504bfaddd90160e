import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Permission } from "../src/index.js"
import {
  PermissionPolicy,
  PermissionPrompter,
  Tool,
  ToolRegistry,
  ToolRuntime,
  ToolUseContext
} from "../src/index.js"

/** A shell-like tool whose rule subjects are the `;`-free pieces the test says, like the Bash tool's. */
const FakeBash = Tool.make({
  name: "Bash",
  description: "Runs a command (fake)",
  input: Schema.Struct({
    command: Schema.String,
    pieces: Schema.optional(Schema.Array(Schema.String)),
    writes: Schema.optional(Schema.Array(Schema.String)),
    opaque: Schema.optional(Schema.Boolean),
    readOnly: Schema.optional(Schema.Boolean)
  }),
  isReadOnly: (input) => input.readOnly === true,
  ruleSubjects: (input) => ({
    specifiers: input.pieces ?? [input.command],
    paths: (input.writes ?? []).map((p) => ({ path: p, access: "write" as const })),
    ...(input.opaque === true ? { opaque: "the command was not analysed" } : {})
  }),
  call: ({ command }) => Effect.succeed(`ran ${command}`)
})

const FileRead = Tool.make({
  name: "Read",
  description: "Reads (fake)",
  input: Schema.Struct({ file_path: Schema.String }),
  isReadOnly: () => true,
  getPath: (input, context) => path.resolve(context.cwd, input.file_path),
  call: ({ file_path }) => Effect.succeed(`read ${file_path}`)
})

const FileWrite = Tool.make({
  name: "Write",
  description: "Writes (fake)",
  input: Schema.Struct({ file_path: Schema.String }),
  getPath: (input, context) => path.resolve(context.cwd, input.file_path),
  call: ({ file_path }) => Effect.succeed(`wrote ${file_path}`)
})

const Grep = Tool.make({
  name: "Grep",
  description: "Searches (fake)",
  input: Schema.Struct({ path: Schema.String }),
  isReadOnly: () => true,
  getPath: (input, context) => path.resolve(context.cwd, input.path),
  call: () => Effect.succeed("found")
})

const WebFetch = Tool.make({
  name: "WebFetch",
  description: "Fetches (fake)",
  input: Schema.Struct({ url: Schema.String }),
  isReadOnly: () => true,
  ruleSubjects: (input) => ({ specifiers: [`domain:${new URL(input.url).hostname}`], paths: [] }),
  call: () => Effect.succeed("fetched")
})

const Agent = Tool.make({
  name: "Agent",
  aliases: ["Task"],
  description: "Sub-agent (fake)",
  input: Schema.Struct({ subagent_type: Schema.String }),
  ruleSubjects: (input) => ({ specifiers: [input.subagent_type], paths: [] }),
  call: () => Effect.succeed("done")
})

const Mcp = Tool.make({
  name: "mcp__github__create_issue",
  description: "MCP (fake)",
  input: Schema.Struct({}),
  source: "mcp",
  call: () => Effect.succeed("created")
})

// The server says its tool only reads (annotations.readOnlyHint): a hint from a server, not a promise.
const McpReader = Tool.make({
  name: "mcp__github__list_issues",
  description: "MCP read-only (fake)",
  input: Schema.Struct({}),
  source: "mcp",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: () => Effect.succeed("issues")
})

const tools = [FakeBash, FileRead, FileWrite, Grep, WebFetch, Agent, Mcp, McpReader]

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tw-perm-")))
const cwd = path.join(tmp, "proj")
fs.mkdirSync(path.join(cwd, "src"), { recursive: true })
fs.mkdirSync(path.join(cwd, "secrets"), { recursive: true })
fs.writeFileSync(path.join(cwd, "secrets", "key"), "k")
fs.writeFileSync(path.join(tmp, "outside.txt"), "o")
fs.symlinkSync(path.join(tmp, "outside.txt"), path.join(cwd, "src", "escape.txt"))
fs.symlinkSync(path.join(cwd, "secrets", "key"), path.join(cwd, "src", "innocent.txt"))

const rules = (list: ReadonlyArray<string>) => list.map((rule) => ({ rule, source: "test.json", root: cwd }))

interface Setup {
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  readonly ask?: ReadonlyArray<string>
  readonly mode?: Permission.PermissionMode
  readonly additionalDirectories?: ReadonlyArray<string>
  readonly denyInsteadOfPrompting?: boolean
  readonly blockReadsOutsideWorkingDirectories?: boolean
  readonly blockWritesOutsideWorkingDirectories?: boolean
}

const contextFor = (setup: Setup) =>
  ToolUseContext.make({
    cwd,
    permissionContext: {
      mode: setup.mode ?? "default",
      allow: rules(setup.allow ?? []),
      deny: rules(setup.deny ?? []),
      ask: rules(setup.ask ?? []),
      additionalDirectories: setup.additionalDirectories ?? [],
      homeDir: "/home/tester",
      ...(setup.denyInsteadOfPrompting === true ? { denyInsteadOfPrompting: true } : {}),
      ...(setup.blockReadsOutsideWorkingDirectories === true ? { blockReadsOutsideWorkingDirectories: true } : {}),
      ...(setup.blockWritesOutsideWorkingDirectories === true ? { blockWritesOutsideWorkingDirectories: true } : {})
    }
  })

const decide = (setup: Setup, toolName: string, input: unknown, hook = {}) =>
  Effect.gen(function*() {
    const policy = yield* PermissionPolicy.PermissionPolicy
    const tool = tools.find((t) => t.name === toolName)!
    return yield* policy.decide(tool, input, contextFor(setup), hook)
  }).pipe(Effect.provide(PermissionPolicy.layer), Effect.provide(NodeContext.layer))

const behavior = (setup: Setup, toolName: string, input: unknown, hook = {}) =>
  Effect.map(decide(setup, toolName, input, hook), (decision) => decision.behavior)

describe("PermissionPolicy.layer: order and modes", () => {
  it.effect("deny beats allow and ask, from any source", () =>
    Effect.gen(function*() {
      const decision = yield* decide(
        { allow: ["Bash(rm *)"], ask: ["Bash(rm *)"], deny: ["Bash(rm -rf *)"] },
        "Bash",
        { command: "rm -rf build" }
      )
      assert.strictEqual(decision.behavior, "deny")
      assert(decision.behavior === "deny")
      assert.strictEqual(decision.message, "Permission to use Bash with command rm -rf build has been denied.")
      assert.strictEqual(decision.reason, "deny rule Bash(rm -rf *) (from test.json)")
    }))

  it.effect("ask rules ask even in bypass mode and beat a more specific allow", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* behavior({ ask: ["Bash(git push *)"], mode: "bypassPermissions" }, "Bash", { command: "git push origin" }),
        "ask"
      )
      assert.strictEqual(
        yield* behavior({ ask: ["Bash(git *)"], allow: ["Bash(git push)"] }, "Bash", { command: "git push" }),
        "ask"
      )
    }))

  it.effect("a hook's allow skips the prompt but not deny or ask rules", () =>
    Effect.gen(function*() {
      const allow = { permissionDecision: "allow" as const }
      assert.strictEqual(yield* behavior({}, "Bash", { command: "make" }, allow), "allow")
      assert.strictEqual(yield* behavior({ deny: ["Bash(make *)"] }, "Bash", { command: "make" }, allow), "deny")
      assert.strictEqual(yield* behavior({ ask: ["Bash(make)"] }, "Bash", { command: "make" }, allow), "ask")
      const denied = yield* decide({ allow: ["Bash"] }, "Bash", { command: "make" }, {
        permissionDecision: "deny",
        reason: "no builds on Fridays"
      })
      assert(denied.behavior === "deny")
      assert.strictEqual(denied.message, "no builds on Fridays")
    }))

  it.effect("modes", () =>
    Effect.gen(function*() {
      const write = { file_path: "src/a.ts" }
      assert.strictEqual(yield* behavior({}, "Write", write), "ask")
      assert.strictEqual(yield* behavior({ mode: "acceptEdits" }, "Write", write), "allow")
      assert.strictEqual(yield* behavior({ mode: "acceptEdits" }, "Write", { file_path: "../elsewhere.txt" }), "ask")
      assert.strictEqual(yield* behavior({ mode: "plan" }, "Write", write), "deny")
      assert.strictEqual(yield* behavior({ mode: "plan" }, "Read", { file_path: "src/a.ts" }), "allow")
      assert.strictEqual(yield* behavior({ mode: "dontAsk" }, "Write", write), "deny")
      assert.strictEqual(yield* behavior({ mode: "dontAsk", allow: ["Edit(./src/**)"] }, "Write", write), "allow")
      assert.strictEqual(yield* behavior({ mode: "bypassPermissions" }, "Write", { file_path: "/etc/x" }), "allow")
      const dontAsk = yield* decide({ mode: "dontAsk" }, "Bash", { command: "make" })
      assert(dontAsk.behavior === "deny")
      assert.strictEqual(
        dontAsk.message,
        "Permission to use Bash with command make has been denied: Bash with command make needs permission: no allow rule covers it. (mode dontAsk denies whatever would ask)"
      )
    }))

  it.effect("protected paths ask whatever the allow rules; in bypass mode, as in Claude Code, only its folders do", () =>
    Effect.gen(function*() {
      for (const file of [".git/config", ".toolwright/settings.json", ".claude/settings.json", "/home/tester/.bashrc"]) {
        assert.strictEqual(yield* behavior({ mode: "acceptEdits", allow: ["Edit"] }, "Write", { file_path: file }), "ask")
      }
      for (const file of [".git/hooks/pre-commit", ".toolwright/settings.json", ".claude/settings.json", ".vscode/tasks.json", ".idea/x.xml"]) {
        assert.strictEqual(yield* behavior({ mode: "bypassPermissions" }, "Write", { file_path: file }), "ask", file)
      }
      for (const file of ["/home/tester/.bashrc", ".claude/commands/review.md", ".claude/agents/a.md", ".claude/skills/s/SKILL.md"]) {
        assert.strictEqual(yield* behavior({ mode: "bypassPermissions" }, "Write", { file_path: file }), "allow", file)
      }
      assert.strictEqual(yield* behavior({}, "Read", { file_path: ".git/config" }), "allow")
    }))

  it.effect("working directories: cwd plus additionalDirectories; outside asks", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({}, "Read", { file_path: "src/a.ts" }), "allow")
      assert.strictEqual(yield* behavior({}, "Read", { file_path: "/etc/hostname" }), "ask")
      assert.strictEqual(yield* behavior({ additionalDirectories: ["/etc"] }, "Read", { file_path: "/etc/hostname" }), "allow")
      assert.strictEqual(yield* behavior({ allow: ["Read(//etc/**)"] }, "Read", { file_path: "/etc/hostname" }), "allow")
      const outside = yield* decide({}, "Read", { file_path: "/etc/hostname" })
      assert(outside.behavior === "ask")
      assert.strictEqual(
        outside.message,
        `Read on /etc/hostname needs permission: /etc/hostname is outside the working directories (${cwd}).`
      )
      assert.deepStrictEqual(outside.suggestions, ["Read(//etc/**)"])
    }))
})

describe("PermissionPolicy.layer: Read/Edit rules", () => {
  it.effect("a deny on Read also blocks Edit/Write of the path, and applies to every reading tool", () =>
    Effect.gen(function*() {
      const setup = { deny: ["Read(./secrets/**)"], mode: "acceptEdits" as const }
      assert.strictEqual(yield* behavior(setup, "Read", { file_path: "secrets/key" }), "deny")
      assert.strictEqual(yield* behavior(setup, "Write", { file_path: "secrets/key" }), "deny")
      assert.strictEqual(yield* behavior(setup, "Grep", { path: "secrets" }), "allow")
      assert.strictEqual(yield* behavior({ deny: ["Read(./secrets)"] }, "Grep", { path: "secrets" }), "deny")
      const denied = yield* decide(setup, "Read", { file_path: "secrets/key" })
      assert(denied.behavior === "deny")
      assert.strictEqual(denied.message, `Permission to use Read on ${cwd}/secrets/key has been denied.`)
    }))

  it("readDenied lets tools that read many files drop the denied ones", () => {
    const denied = PermissionPolicy.readDenied(contextFor({ deny: ["Read(./secrets/**)", "Read(*.pem)", "Edit(./src/**)"] }))
    assert.isTrue(denied(`${cwd}/secrets/key`))
    assert.isTrue(denied("src/../secrets/key"))
    assert.isTrue(denied(`${cwd}/deep/cert.pem`))
    assert.isFalse(denied(`${cwd}/src/a.ts`))
    assert.isTrue(PermissionPolicy.readDenied(contextFor({ deny: ["Read"] }))("/anything"))
  })

  it.effect("Edit rules govern every file-writing tool", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({ allow: ["Edit(./src/**)"] }, "Write", { file_path: "src/a.ts" }), "allow")
      assert.strictEqual(yield* behavior({ allow: ["Edit(./src/**)"] }, "Write", { file_path: "lib/a.ts" }), "ask")
      assert.strictEqual(yield* behavior({ deny: ["Edit(*.lock)"], mode: "acceptEdits" }, "Write", { file_path: "x/y.lock" }), "deny")
      assert.strictEqual(yield* behavior({ deny: ["Edit"] }, "Bash", { command: "echo", writes: ["out.txt"] }), "deny")
    }))

  it.effect("`..` escapes are resolved before matching", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({ deny: ["Read(./secrets/**)"] }, "Read", { file_path: "src/../secrets/key" }), "deny")
      assert.strictEqual(
        yield* behavior({ allow: ["Edit(./src/**)"] }, "Write", { file_path: "src/../../outside.txt" }),
        "ask"
      )
    }))

  it.effect("symlinks: allow must match link and target, deny matches either", () =>
    Effect.gen(function*() {
      // src/escape.txt -> ../outside.txt (outside the project)
      assert.strictEqual(yield* behavior({ allow: ["Edit(./src/**)"] }, "Write", { file_path: "src/escape.txt" }), "ask")
      assert.strictEqual(yield* behavior({}, "Read", { file_path: "src/escape.txt" }), "ask")
      // src/innocent.txt -> secrets/key
      assert.strictEqual(yield* behavior({ deny: ["Read(./secrets/**)"] }, "Read", { file_path: "src/innocent.txt" }), "deny")
      assert.strictEqual(yield* behavior({ deny: ["Read(./src/innocent.txt)"] }, "Read", { file_path: "secrets/key" }), "allow")
      assert.strictEqual(yield* behavior({ deny: ["Read(./src/**)"] }, "Read", { file_path: "src/innocent.txt" }), "deny")
    }))
})

describe("PermissionPolicy.layer: other rule kinds", () => {
  it.effect("WebFetch domains", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({ deny: ["WebFetch(domain:*.evil.com)"] }, "WebFetch", { url: "https://a.EVIL.com/x" }), "deny")
      assert.strictEqual(yield* behavior({ deny: ["WebFetch(domain:*.evil.com)"] }, "WebFetch", { url: "https://evil.com/x" }), "ask")
      assert.strictEqual(yield* behavior({ ask: ["WebFetch(domain:example.com)"] }, "WebFetch", { url: "https://example.com/" }), "ask")
      // Read-only, yet a fetch asks until a rule allows its domain.
      assert.strictEqual(yield* behavior({}, "WebFetch", { url: "https://example.com/" }), "ask")
      assert.strictEqual(yield* behavior({ allow: ["WebFetch(domain:*.example.com)"] }, "WebFetch", { url: "https://a.example.com/" }), "allow")
      const asked = yield* decide({}, "WebFetch", { url: "https://docs.example.com/x" })
      assert(asked.behavior === "ask")
      assert.deepStrictEqual(asked.suggestions, ["WebFetch(domain:docs.example.com)"])
    }))

  it.effect("permissions.denyInsteadOfPrompting: whatever would ask is denied at once, in any mode", () =>
    Effect.gen(function*() {
      const asked = yield* decide({ denyInsteadOfPrompting: true }, "Bash", { command: "npm publish" })
      assert.deepStrictEqual(asked.behavior === "deny" ? asked.message : asked.behavior,
        "Permission to use Bash with command npm publish has been denied: Bash with command npm publish needs " +
          "permission: no allow rule covers it. (permissions.denyInsteadOfPrompting denies whatever would ask)")
      assert.strictEqual(
        yield* behavior({ denyInsteadOfPrompting: true, allow: ["Bash(npm publish)"] }, "Bash", { command: "npm publish" }),
        "allow"
      )
      assert.strictEqual(
        yield* behavior({ denyInsteadOfPrompting: true, mode: "acceptEdits" }, "Write", { file_path: "src/a.ts" }),
        "allow"
      )
    }))

  it.effect("permissions.block{Reads,Writes}OutsideWorkingDirectories: the file tools refuse outside paths in every mode", () =>
    Effect.gen(function*() {
      const outside = path.join(tmp, "outside.txt")
      const write = yield* decide(
        { blockWritesOutsideWorkingDirectories: true, mode: "bypassPermissions" },
        "Write",
        { file_path: outside }
      )
      assert.deepStrictEqual(write.behavior === "deny" ? write.message : write.behavior,
        `Write on ${outside} was refused: ${outside} is outside the working directories (${cwd}), and ` +
          "permissions.blockWritesOutsideWorkingDirectories is on. Work inside them, or add the directory to " +
          "permissions.additionalDirectories.")
      // Through a symlink inside the project, by an allow rule, by a hook's allow: still refused.
      const blockWrites = { blockWritesOutsideWorkingDirectories: true, allow: ["Edit(//**)"] }
      assert.strictEqual(yield* behavior(blockWrites, "Write", { file_path: "src/escape.txt" }), "deny")
      assert.strictEqual(
        yield* behavior(blockWrites, "Write", { file_path: outside }, { permissionDecision: "allow" }),
        "deny"
      )
      assert.strictEqual(yield* behavior(blockWrites, "Write", { file_path: "src/new.ts" }), "allow")
      // Reads stay as they were unless reads are blocked too; shell commands are not covered.
      assert.strictEqual(yield* behavior({ ...blockWrites, allow: ["Read(//**)"] }, "Read", { file_path: outside }), "allow")
      assert.strictEqual(
        yield* behavior({ blockReadsOutsideWorkingDirectories: true, mode: "bypassPermissions" }, "Grep", { path: tmp }),
        "deny"
      )
      assert.strictEqual(
        yield* behavior({ blockWritesOutsideWorkingDirectories: true, mode: "bypassPermissions" }, "Bash", {
          command: "cp a /tmp/x",
          writes: [outside]
        }),
        "allow"
      )
    }))

  it.effect("MCP server and tool rules, and blanket denies leave the pool", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({}, "mcp__github__create_issue", {}), "ask")
      assert.strictEqual(yield* behavior({ allow: ["mcp__github"] }, "mcp__github__create_issue", {}), "allow")
      assert.strictEqual(yield* behavior({ allow: ["mcp__github__*"] }, "mcp__github__create_issue", {}), "allow")
      assert.strictEqual(yield* behavior({ allow: ["mcp__github__create_issue"] }, "mcp__github__create_issue", {}), "allow")
      assert.strictEqual(yield* behavior({ allow: ["mcp__github__other"] }, "mcp__github__create_issue", {}), "ask")
      // A server's readOnlyHint does not allow its tool: the MCP spec calls annotations untrusted hints, and
      // Claude Code asks for every MCP tool without a rule. Plan mode still lets it run (it only reads).
      const reader = yield* decide({}, "mcp__github__list_issues", {})
      assert.deepStrictEqual(reader.behavior === "ask" ? reader.message : reader.behavior,
        "mcp__github__list_issues needs permission: no allow rule covers it.")
      assert.strictEqual(yield* behavior({ allow: ["mcp__github"] }, "mcp__github__list_issues", {}), "allow")
      assert.strictEqual(yield* behavior({ mode: "plan" }, "mcp__github__list_issues", {}), "ask")
      assert.strictEqual(yield* behavior({ mode: "plan" }, "mcp__github__create_issue", {}), "deny")
      const policy = yield* PermissionPolicy.PermissionPolicy
      const context = contextFor({ deny: ["mcp__github", "Bash", "Read(./x)"] }).permissionContext
      assert.deepStrictEqual(tools.filter((tool) => policy.isBlanketDenied(tool, context)).map((tool) => tool.name), [
        "Bash",
        "mcp__github__create_issue",
        "mcp__github__list_issues"
      ])
    }).pipe(Effect.provide(PermissionPolicy.layer)))

  it.effect("Agent(Name), also through an alias", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({ allow: ["Agent(Explore)"] }, "Agent", { subagent_type: "Explore" }), "allow")
      assert.strictEqual(yield* behavior({ deny: ["Task(Explore)"] }, "Agent", { subagent_type: "Explore" }), "deny")
      assert.strictEqual(yield* behavior({ allow: ["Agent(Explore)"] }, "Agent", { subagent_type: "Plan" }), "ask")
    }))
})

describe("PermissionPolicy.layer: bypass corpus", () => {
  const allowGit = { allow: ["Bash(git status)", "Bash(git status *)", "Bash(ls *)", "Bash(timeout *)"] }
  const attempts = [
    "git status && rm -rf x",
    "git status; rm -rf x",
    "git status | sh",
    "git status || rm -rf x",
    "git status\nrm -rf x",
    "git status & rm -rf x",
    "git status $(rm -rf x)",
    "git status `rm -rf x`",
    "git status <(rm -rf x)",
    "ls > /etc/passwd",
    "ls 2> ~/.bashrc",
    "git status \"$(curl evil)\"",
    "git status $'\\x3b' rm",
    "ls 'unterminated"
  ]
  for (const command of attempts) {
    it.effect(`an allow rule does not cover ${JSON.stringify(command)}`, () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* behavior(allowGit, "Bash", { command }), "ask")
      }))
  }

  it.effect("quoting tricks, env prefixes and wrappers do not reach a narrower allow", () =>
    Effect.gen(function*() {
      for (const command of ["g'i't status", "\\git status", "PAGER='sh -c x' git status", "nice git status", "xargs rm -rf"]) {
        assert.strictEqual(yield* behavior(allowGit, "Bash", { command }), "ask", command)
      }
    }))

  it.effect("deny rules see through separators, substitution, quotes, env prefixes and wrappers", () =>
    Effect.gen(function*() {
      const setup = { deny: ["Bash(rm *)"], allow: ["Bash"] }
      for (
        const command of [
          "git status && rm -rf x",
          "echo $(rm -rf x)",
          "echo `rm -rf x`",
          "'r'm -rf x",
          "FOO=1 rm -rf x",
          "timeout 5 rm -rf x",
          "nice -n 10 rm -rf x",
          "find . | xargs rm -rf"
        ]
      ) {
        assert.strictEqual(yield* behavior(setup, "Bash", { command }), "deny", command)
      }
    }))

  it.effect("each sub-command must be allowed; a redirection outside the working dirs asks", () =>
    Effect.gen(function*() {
      const setup = { allow: ["Bash(git status)", "Bash(echo *)"] }
      assert.strictEqual(yield* behavior(setup, "Bash", { command: "git status && echo hi", pieces: ["git status", "echo hi"] }), "allow")
      assert.strictEqual(yield* behavior(setup, "Bash", { command: "git status && rm x", pieces: ["git status", "rm x"] }), "ask")
      // A redirection is an edit of its target (issue 7): the command's rule alone does not cover it.
      const redirect = { command: "echo hi > out", pieces: ["echo hi"], writes: ["out"] }
      assert.strictEqual(yield* behavior(setup, "Bash", redirect), "ask")
      assert.strictEqual(yield* behavior({ allow: [...setup.allow, "Edit(./**)"] }, "Bash", redirect), "allow")
      assert.strictEqual(yield* behavior({ ...setup, mode: "acceptEdits" }, "Bash", redirect), "allow")
      assert.strictEqual(
        yield* behavior(setup, "Bash", { command: "echo hi > /tmp/x", pieces: ["echo hi"], writes: ["/tmp/x"] }),
        "ask"
      )
      // acceptEdits takes Bash's file commands as edits, as Claude Code does: inside the working directories only.
      const files = { command: "mkdir d && touch d/x", pieces: ["mkdir d", "touch d/x"], writes: ["d", "d/x"] }
      assert.strictEqual(yield* behavior({ mode: "acceptEdits" }, "Bash", files), "allow")
      assert.strictEqual(yield* behavior({}, "Bash", files), "ask")
      assert.strictEqual(yield* behavior({ mode: "acceptEdits", deny: ["Edit(./d/x)"] }, "Bash", files), "deny")
      for (
        const other of [
          { command: "rm x && curl y", pieces: ["rm x", "curl y"], writes: ["x"] },
          { command: "sudo rm x", pieces: ["sudo rm x", "rm x"], writes: ["x"] },
          { command: "rm ../x", pieces: ["rm ../x"], writes: ["../x"] },
          { command: "rm .git/config", pieces: ["rm .git/config"], writes: [".git/config"] },
          { command: "rm $X", pieces: ["rm $X"], opaque: true }
        ]
      ) {
        assert.strictEqual(yield* behavior({ mode: "acceptEdits" }, "Bash", other), "ask", other.command)
      }
      const asked = yield* decide({}, "Bash", { command: "npm run test && rm x", pieces: ["npm run test -- --watch", "rm x"] })
      assert(asked.behavior === "ask")
      assert.deepStrictEqual(asked.suggestions, ["Bash(npm run test:*)", "Bash(rm x)"])
      // "Allow always" never writes a rule settings would then refuse to load (":*" not at the end).
      const odd = yield* decide({}, "Bash", { command: "a:*b && rm x", pieces: ["a:*b", "rm x"] })
      assert(odd.behavior === "ask")
      assert.deepStrictEqual(odd.suggestions, ["Bash(rm x)"])
    }))

  it.effect("opaque input asks, even in bypass mode when scoped deny rules exist", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* behavior({ allow: ["Bash(git *)"] }, "Bash", { command: "git status", opaque: true }), "ask")
      assert.strictEqual(yield* behavior({ allow: ["Bash"] }, "Bash", { command: "git status", opaque: true }), "allow")
      assert.strictEqual(
        yield* behavior({ deny: ["Bash(curl *)"], mode: "bypassPermissions" }, "Bash", { command: "x", opaque: true }),
        "ask"
      )
      assert.strictEqual(yield* behavior({ mode: "bypassPermissions" }, "Bash", { command: "x", opaque: true }), "allow")
      assert.strictEqual(yield* behavior({}, "Bash", { command: "ls", opaque: true, readOnly: true }), "ask")
    }))
})

describe("PermissionPolicy.layer in the pipeline", () => {
  it.scopedLive("allow always remembers the rule for the session", () =>
    Effect.gen(function*() {
      let asked = 0
      const prompter = PermissionPrompter.layerCallback(() =>
        Effect.sync(() => {
          asked++
          return { behavior: "allow" as const, rules: ["Bash(make:*)"] }
        })
      )
      const runtime = ToolRuntime.layer.pipe(
        Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, prompter)),
        Layer.provide(ToolRegistry.layerTools(tools))
      )
      const context = contextFor({})
      const run = (command: string) =>
        Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
          rt.runToolUse({ type: "tool_use", id: "t", name: "Bash", input: { command } }, context).pipe(Stream.runCollect))
      const events = yield* run("make all").pipe(Effect.provide(runtime))
      assert.deepStrictEqual(Array.from(events).map((event) => event._tag), ["PermissionRequest", "ToolResult"])
      const layerBuilt = yield* Layer.build(runtime)
      const again = (command: string) => Effect.provide(run(command), layerBuilt)
      yield* again("make all")
      yield* again("make test")
      assert.strictEqual(asked, 2)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("allow always is written to .toolwright/settings.local.json by the persistent layer", () =>
    Effect.gen(function*() {
      const project = fs.mkdtempSync(path.join(os.tmpdir(), "tw-always-"))
      fs.mkdirSync(path.join(project, ".toolwright"))
      fs.writeFileSync(path.join(project, ".toolwright", "settings.local.json"), JSON.stringify({ env: { A: "1" } }))
      const prompter = PermissionPrompter.layerCallback(() =>
        Effect.succeed({ behavior: "allow" as const, rules: ["Bash(make:*)"] })
      )
      const runtime = ToolRuntime.layer.pipe(
        Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, PermissionPolicy.layerPersistent, prompter)),
        Layer.provide(ToolRegistry.layerTools(tools)),
        Layer.provide(NodeContext.layer)
      )
      const context = ToolUseContext.make({ cwd: project })
      yield* Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
        rt.runToolUse({ type: "tool_use", id: "t", name: "Bash", input: { command: "make all" } }, context).pipe(
          Stream.runDrain
        )).pipe(Effect.provide(runtime))
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(project, ".toolwright", "settings.local.json"), "utf8")), {
        env: { A: "1" },
        permissions: { allow: ["Bash(make:*)"] }
      })
    }))

  it.effect("a blanket deny removes the tool from the runtime's pool", () =>
    Effect.gen(function*() {
      const runtime = yield* ToolRuntime.ToolRuntime
      const pool = runtime.pool(contextFor({ deny: ["Bash", "mcp__github", "Read(./secrets/**)"] }))
      assert.deepStrictEqual(pool.map((tool) => tool.name), ["Agent", "Grep", "Read", "WebFetch", "Write"])
    }).pipe(Effect.provide(ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools(tools))))))

  it.effect("the default runtime denies with the rule's text", () =>
    Effect.gen(function*() {
      const runtime = ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools(tools)))
      const events = yield* Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
        rt.runToolUse(
          { type: "tool_use", id: "t1", name: "Bash", input: { command: "rm -rf build" } },
          contextFor({ deny: ["Bash(rm *)"] })
        ).pipe(Stream.runCollect)).pipe(Effect.provide(runtime))
      const [event] = Array.from(events)
      assert(event._tag === "ToolResult")
      assert.deepStrictEqual(event.result, {
        type: "tool_result",
        tool_use_id: "t1",
        content: "Permission to use Bash with command rm -rf build has been denied.",
        is_error: true
      })
    }))
})
