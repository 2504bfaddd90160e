import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck } from "effect"
import { PermissionRule } from "../src/index.js"

const parseOk = (raw: string) => {
  const parsed = PermissionRule.parse(raw)
  assert(Either.isRight(parsed), `expected ${raw} to parse`)
  return parsed.right
}
const parseError = (raw: string) => {
  const parsed = PermissionRule.parse(raw)
  assert(Either.isLeft(parsed), `expected ${raw} to be rejected`)
  return parsed.left
}

describe("PermissionRule.parse", () => {
  it("reads Tool and Tool(specifier)", () => {
    assert.deepStrictEqual(parseOk("Bash"), { raw: "Bash", toolName: "Bash", content: undefined })
    assert.deepStrictEqual(parseOk("Bash(npm run test:*)"), {
      raw: "Bash(npm run test:*)",
      toolName: "Bash",
      content: "npm run test:*"
    })
    assert.strictEqual(parseOk("Bash(*)").content, undefined)
    assert.strictEqual(parseOk("Bash()").content, undefined)
    assert.strictEqual(parseOk("Bash(echo \\(hi\\))").content, "echo (hi)")
    assert.strictEqual(parseOk("mcp__github__create_issue").toolName, "mcp__github__create_issue")
    assert.strictEqual(parseOk("mcp__github__*").toolName, "mcp__github__*")
    assert.strictEqual(parseOk("WebFetch(domain:*.example.com)").content, "domain:*.example.com")
    assert.strictEqual(parseOk("Agent(Explore)").content, "Explore")
  })

  it("rejects malformed rules with what is expected", () => {
    assert.include(parseError(""), "cannot be empty")
    assert.include(parseError("Bash(ls"), "missing its closing \")\"")
    assert.include(parseError("Bash(ls) now"), "text after")
    assert.include(parseError("WebFetch(https://example.com)"), "WebFetch rules take domain:HOST")
    assert.include(parseError("mcp__srv__tool(x)"), "MCP rules take no specifier")
    assert.include(parseError("Not a tool"), "is not a tool name")
  })
})

describe("PermissionRule.check (what Claude Code's settings validation rejects)", () => {
  it("a built-in tool name in the wrong case, a Bash :* not at the end, :* in a path rule", () => {
    assert.strictEqual(
      PermissionRule.check(parseOk("bash(curl:*)")),
      "\"bash(curl:*)\": tool names are case-sensitive, and this one names no tool; did you mean \"Bash(curl:*)\"?"
    )
    assert.include(PermissionRule.check(parseOk("read")), "did you mean \"Read\"?")
    assert.include(PermissionRule.check(parseOk("WEBFETCH(domain:x.com)")), "did you mean \"WebFetch(domain:x.com)\"?")
    assert.strictEqual(
      PermissionRule.check(parseOk("Bash(git reset:* --hard)")),
      "\"Bash(git reset:* --hard)\": \":*\" must be at the end, for a prefix (e.g. Bash(git reset:*)); use * for a wildcard in the middle (e.g. Bash(git reset * --hard))"
    )
    assert.include(PermissionRule.check(parseOk("Read(./src/:*)")), "\":*\" is only for Bash prefix rules")
    for (const rule of ["Bash(npm run test:*)", "Bash(git*:*)", "Read(./src/**)", "mcp__github", "jira_search", "search", "WebFetch(domain:x.com)"]) {
      assert.isUndefined(PermissionRule.check(parseOk(rule)), rule)
    }
  })
})

// Claude Code's permission docs: wildcard table.
const bashTable: ReadonlyArray<readonly [string, string, boolean]> = [
  ["npm run build", "npm run build", true],
  ["npm run build", "npm run build --prod", false],
  ["npm run test *", "npm run test", true],
  ["npm run test *", "npm run test --watch", true],
  ["npm run test *", "npm run testx", false],
  ["npm run test:*", "npm run test", true],
  ["npm run test:*", "npm run test -- --watch", true],
  ["npm run test:*", "npm run testing", false],
  ["ls *", "ls -la", true],
  ["ls *", "ls", true],
  ["ls *", "lsof", false],
  ["ls*", "lsof", true],
  ["ls*", "ls -la", true],
  ["* install", "npm install", true],
  ["* install", "pnpm install", true],
  ["* install", "npm install lodash", false],
  ["git * main", "git checkout main", true],
  ["git * main", "git merge main", true],
  ["git * main", "git checkout develop", false],
  ["git commit *", "git commit -m \"a b c\"", true],
  ["echo \\*", "echo *", true],
  ["echo \\*", "echo hi", false]
]

describe("PermissionRule.compileSpecifier (Bash wildcard table)", () => {
  for (const [rule, command, expected] of bashTable) {
    it(`Bash(${rule}) ${expected ? "matches" : "does not match"} ${command}`, () => {
      const pattern = PermissionRule.compileSpecifier(rule)
      assert.strictEqual(command.startsWith(pattern.prefix) && pattern.test(command), expected)
    })
  }
})

describe("PermissionRule.isUnsafeSpecifier", () => {
  const unsafe = [
    "git status && rm -rf x",
    "git status; rm -rf x",
    "git status | sh",
    "git status || rm x",
    "git status\nrm -rf x",
    "git status & rm -rf x",
    "echo $(rm -rf x)",
    "echo `rm -rf x`",
    "diff <(cat /etc/passwd) x",
    "echo hi > /etc/passwd",
    "cat < /etc/shadow",
    "echo \"$(id)\"",
    "echo $'\\''",
    "echo 'unterminated"
  ]
  for (const command of unsafe) it(`unsafe: ${JSON.stringify(command)}`, () => assert.isTrue(PermissionRule.isUnsafeSpecifier(command)))
  const safe = ["git status", "echo 'a;b|c'", "grep \"a|b\" file", "echo a\\;b", "npm run test -- --watch"]
  for (const command of safe) it(`safe: ${JSON.stringify(command)}`, () => assert.isFalse(PermissionRule.isUnsafeSpecifier(command)))
})

describe("PermissionRule.denyVariants", () => {
  it("exposes each piece, unquoted and without prefixes", () => {
    const variants = PermissionRule.denyVariants("git status && FOO=1 timeout 5 'r'm -rf x")
    assert.include(variants, "git status")
    assert.include(variants, "rm -rf x")
    assert.include(PermissionRule.denyVariants("echo $(rm -rf /)"), "rm -rf /")
    assert.include(PermissionRule.denyVariants("nice -n 10 xargs rm -rf"), "rm -rf")
  })
})

// Claude Code's docs: WebFetch(domain:…).
describe("PermissionRule.matchesDomain", () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ["example.com", "example.com", true],
    ["example.com", "EXAMPLE.com", true],
    ["example.com", "docs.example.com", false],
    ["*.example.com", "docs.example.com", true],
    ["*.example.com", "a.b.example.com", true],
    ["*.example.com", "example.com", false],
    ["*.example.com", "evilexample.com", false],
    ["*", "anything.org", true]
  ]
  for (const [pattern, host, expected] of table) {
    it(`domain:${pattern} vs ${host}`, () => assert.strictEqual(PermissionRule.matchesDomain(pattern, host), expected))
  }
})

// Claude Code's docs: Read/Edit path forms, gitignore semantics.
describe("PermissionRule.compilePath", () => {
  const roots = { cwd: "/work/proj", home: "/home/alice", settingsRoot: "/work/proj" }
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ["//etc/secrets/**", "/etc/secrets/key", true],
    ["//etc/secrets/**", "/etc/other", false],
    ["~/Documents/*.pdf", "/home/alice/Documents/a.pdf", true],
    ["~/Documents/*.pdf", "/home/alice/Documents/sub/a.pdf", false],
    ["/src/**/*.ts", "/work/proj/src/a/b.ts", true],
    ["/src/**/*.ts", "/work/proj/src/b.ts", true],
    ["/src/**/*.ts", "/work/other/src/b.ts", false],
    ["./.env", "/work/proj/.env", true],
    ["./.env", "/work/proj/sub/.env", false],
    ["*.env", "/work/proj/sub/prod.env", true],
    ["*.env", "/elsewhere/prod.env", false],
    ["src/**", "/work/proj/src/deep/file.ts", true],
    ["src/**", "/work/proj/lib/src/file.ts", false],
    ["secrets", "/work/proj/a/secrets/key", true],
    ["./secrets/", "/work/proj/secrets/key", true],
    ["src/*.ts", "/work/proj/src/a/b.ts", false],
    ["file?.txt", "/work/proj/file1.txt", true],
    ["[ab].txt", "/work/proj/c.txt", false],
    ["../docs/**", "/work/docs/a.md", true],
    ["./../docs/**", "/work/proj/docs/a.md", false],
    ["../docs/**", "/work/proj/docs/a.md", false]
  ]
  for (const [content, path, expected] of table) {
    it(`${content} vs ${path}`, () =>
      assert.strictEqual(PermissionRule.matchesPath(PermissionRule.compilePath(content, roots), path), expected))
  }

  it("treats ~/ rules as any depth when the home is unknown", () => {
    const pattern = PermissionRule.compilePath("~/.ssh/**", { cwd: "/w" })
    assert.isTrue(PermissionRule.matchesPath(pattern, "/somewhere/.ssh/id_rsa"))
  })
})

describe("PermissionRule.namesTool", () => {
  const mcp = { name: "mcp__github__create_issue", aliases: [] }
  it("MCP server, server wildcard and exact tool", () => {
    assert.isTrue(PermissionRule.namesTool("mcp__github", mcp))
    assert.isTrue(PermissionRule.namesTool("mcp__github__*", mcp))
    assert.isTrue(PermissionRule.namesTool("mcp__github__create_issue", mcp))
    assert.isFalse(PermissionRule.namesTool("mcp__github__delete_repo", mcp))
    assert.isFalse(PermissionRule.namesTool("mcp__git", mcp))
  })
  it("aliases", () => {
    assert.isTrue(PermissionRule.namesTool("Task", { name: "Agent", aliases: ["Task"] }))
  })
})

describe("PermissionRule properties", () => {
  it.prop("parse never throws, and what parses formats back to a rule that parses the same", [FastCheck.string()], ([raw]) => {
    const parsed = PermissionRule.parse(raw)
    if (Either.isRight(parsed)) {
      const again = PermissionRule.parse(PermissionRule.format(parsed.right.toolName, parsed.right.content))
      assert(Either.isRight(again))
      assert.strictEqual(again.right.content, parsed.right.content)
    }
  })

  it.prop(
    "a command joined to another by any separator or substitution is unsafe",
    [
      FastCheck.stringMatching(/^[a-z][a-z0-9 -]{0,20}$/),
      FastCheck.constantFrom("&&", ";", "|", "||", "\n", "&", "$(", "`", "<(", ">", "<"),
      FastCheck.stringMatching(/^[a-z][a-z0-9 -]{0,20}$/)
    ],
    ([head, separator, tail]) => {
      assert.isTrue(PermissionRule.isUnsafeSpecifier(`${head}${separator}${tail}`))
    }
  )

  it.prop("a rule without wildcards matches exactly its own text", [FastCheck.stringMatching(/^[a-z][a-z0-9 .-]{0,30}$/)], ([text]) => {
    const pattern = PermissionRule.compileSpecifier(text)
    assert.isTrue(pattern.test(text))
    assert.isFalse(pattern.test(`${text}x`))
  })
})
