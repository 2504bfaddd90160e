// `toolwright run` and `toolwright tools` end to end: the bundled binary on real files.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const bin = join(import.meta.dirname, "..", "dist", "toolwright.mjs")

const toolwright = (
  args: ReadonlyArray<string>,
  options: { cwd?: string; input?: string; home?: string; env?: Record<string, string> } = {}
) => {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "tw-home-"))
  try {
    const result = spawnSync(process.execPath, [bin, ...args], {
      cwd: options.cwd ?? process.cwd(),
      input: options.input ?? "",
      encoding: "utf8",
      env: { ...process.env, HOME: home, CI: "1", ...options.env }
    })
    return { code: result.status, stdout: result.stdout, stderr: result.stderr, pid: result.pid }
  } finally {
    if (options.home === undefined) rmSync(home, { recursive: true, force: true })
  }
}

const withDir = (body: (dir: string) => void) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tw-run-")))
  try {
    body(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("toolwright run", () => {
  it("runs Read through the pipeline and prints the result; --json prints the tool_result block", () =>
    withDir((dir) => {
      writeFileSync(join(dir, "notes.txt"), "alpha\nbeta\n")
      const text = toolwright(["run", "Read", "--cwd", dir, "--input", JSON.stringify({ file_path: "notes.txt" })])
      assert.strictEqual(text.code, 0)
      assert.strictEqual(text.stdout, "1\talpha\n2\tbeta\n")
      const json = toolwright(["run", "Read", "--json", "--cwd", dir, "--input", JSON.stringify({ file_path: "notes.txt" })])
      assert.strictEqual(json.code, 0)
      const block = JSON.parse(json.stdout)
      assert.strictEqual(block.type, "tool_result")
      assert.strictEqual(block.content, "1\talpha\n2\tbeta")
      assert.isUndefined(block.is_error)
    }))

  it("reads the input from stdin with --input -", () =>
    withDir((dir) => {
      writeFileSync(join(dir, "a.txt"), "from stdin\n")
      const result = toolwright(["run", "Read", "--cwd", dir, "--input", "-"], { input: `{"file_path":"a.txt"}` })
      assert.strictEqual(result.code, 0)
      assert.strictEqual(result.stdout, "1\tfrom stdin\n")
    }))

  it("exits 1 when the result is an error, with the text a model reads", () =>
    withDir((dir) => {
      const result = toolwright(["run", "Read", "--json", "--cwd", dir, "--input", `{"file_path":"missing.txt"}`])
      assert.strictEqual(result.code, 1)
      assert.deepStrictEqual(JSON.parse(result.stdout), {
        type: "tool_result",
        tool_use_id: JSON.parse(result.stdout).tool_use_id,
        content: `<tool_use_error>File does not exist. Note: your current working directory is ${dir}.</tool_use_error>`,
        is_error: true
      })
    }))

  it("reads a number or boolean sent as a string as Claude Code does (\"offset\": \"2\")", () =>
    withDir((dir) => {
      writeFileSync(join(dir, "notes.txt"), "alpha\nbeta\ngamma\n")
      const result = toolwright(["run", "Read", "--cwd", dir, "--input", `{"file_path":"notes.txt","offset":"2","limit":"1"}`])
      assert.strictEqual(result.code, 0, result.stdout)
      assert.strictEqual(result.stdout, "2\tbeta\n")
    }))

  it("exits 1 on invalid input, listing every problem", () =>
    withDir((dir) => {
      const result = toolwright(["run", "Read", "--cwd", dir, "--input", `{"limit":"x","bogus":1}`])
      assert.strictEqual(result.code, 1)
      assert.strictEqual(
        result.stdout,
        "<tool_use_error>InputValidationError: Read failed due to the following issues:\n" +
          "The required parameter `file_path` is missing\n" +
          "The parameter `limit` type is expected as `number` but provided as `string`\n" +
          "An unexpected parameter `bogus` was provided</tool_use_error>\n"
      )
    }))

  it("exits 2 on usage errors: bad JSON, an unknown tool, a missing argument", () =>
    withDir((dir) => {
      const badJson = toolwright(["run", "Read", "--cwd", dir, "--input", "{bad"])
      assert.strictEqual(badJson.code, 2)
      assert.match(badJson.stderr, /^Error: --input is not valid JSON: .*Pass the tool's input as a JSON object/)
      assert.strictEqual(badJson.stdout, "")
      const unknown = toolwright(["run", "Nope", "--cwd", dir])
      assert.strictEqual(unknown.code, 2)
      assert.strictEqual(
        unknown.stderr,
        "Error: No such tool: Nope. Run `toolwright tools list` to see the available tools.\n"
      )
      assert.strictEqual(toolwright(["run"]).code, 2)
      assert.strictEqual(toolwright(["frobnicate"]).code, 2)
      const badMode = toolwright(["run", "Read", "--cwd", dir, "--input", "{}", "--permission-mode", "yolo"])
      assert.strictEqual(badMode.code, 2)
      assert.include(
        badMode.stderr,
        `--permission-mode "yolo" is not a permission mode: use one of default, acceptEdits, plan, dontAsk, bypassPermissions`
      )
    }))

  it("asks for a writing tool and, with nobody to answer, denies without hanging", () =>
    withDir((dir) => {
      const result = toolwright(["run", "Write", "--cwd", dir, "--input", JSON.stringify({ file_path: "x.txt", content: "x" })])
      assert.strictEqual(result.code, 1)
      assert.match(result.stdout, /^Permission to use Write was not granted: /)
      assert.match(result.stdout, /No one can answer a permission prompt here/)
      assert.strictEqual(result.stderr, "", "the result says it all; nothing was asked")
    }))

  it("says nothing of an ask a PermissionRequest hook answered", () =>
    withDir((dir) => {
      const hook = join(dir, "allow.sh")
      writeFileSync(hook, `#!/bin/sh\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'\n`, {
        mode: 0o755
      })
      mkdirSync(join(dir, ".toolwright"))
      writeFileSync(
        join(dir, ".toolwright", "settings.json"),
        JSON.stringify({ hooks: { PermissionRequest: [{ matcher: "Write", hooks: [{ type: "command", command: hook }] }] } })
      )
      const result = toolwright(["run", "Write", "--cwd", dir, "--input", JSON.stringify({ file_path: "x.txt", content: "x" })])
      assert.strictEqual(result.code, 0, result.stdout)
      assert.strictEqual(readFileSync(join(dir, "x.txt"), "utf8"), "x")
      assert.strictEqual(result.stderr, "")
    }))
})

describe("toolwright run: PostToolUse hooks", () => {
  it("get Claude Code's tool_response: Read's file, Bash's stdout, Write's filePath; a systemMessage goes to stderr", () =>
    withDir((dir) => {
      const seen = join(dir, "seen.json")
      mkdirSync(join(dir, ".toolwright"))
      writeFileSync(
        join(dir, ".toolwright", "settings.json"),
        JSON.stringify({
          permissions: { allow: ["Bash", "Write"] },
          hooks: {
            PostToolUse: [{
              matcher: "Read|Bash|Write",
              hooks: [{ type: "command", command: `cat > ${seen}; echo '{"systemMessage":"seen by the hook"}'` }]
            }]
          }
        })
      )
      writeFileSync(join(dir, "notes.txt"), "alpha\n\tbeta\n")
      const responseOf = (tool: string, input: unknown) => {
        const result = toolwright(["run", tool, "--cwd", dir, "--input", JSON.stringify(input)])
        assert.strictEqual(result.code, 0, result.stderr)
        // The hook's systemMessage is for the user: stderr, not the result on stdout.
        assert.strictEqual(result.stderr, "[PostToolUse hook] seen by the hook\n")
        assert.notInclude(result.stdout, "seen by the hook")
        return JSON.parse(readFileSync(seen, "utf8")).tool_response
      }
      assert.deepStrictEqual(responseOf("Read", { file_path: "notes.txt" }), {
        type: "text",
        file: { filePath: join(dir, "notes.txt"), content: "alpha\n\tbeta", numLines: 2, startLine: 1, totalLines: 2 }
      })
      assert.deepStrictEqual(responseOf("Bash", { command: "echo out; echo err >&2" }), {
        stdout: "out\nerr",
        stderr: "",
        interrupted: false,
        isImage: false
      })
      assert.deepStrictEqual(responseOf("Write", { file_path: join(dir, "new.txt"), content: "x\n" }), {
        type: "create",
        filePath: join(dir, "new.txt")
      })
    }))
})

describe("toolwright run: big results", () => {
  it("persists a result over the tool's threshold from settings and gives the model a preview", () =>
    withDir((dir) => {
      const home = join(dir, "home")
      mkdirSync(join(dir, ".toolwright"), { recursive: true })
      writeFileSync(join(dir, ".toolwright", "settings.json"), JSON.stringify({ toolResultThresholds: { Bash: 1000 } }))
      const result = toolwright(
        ["run", "Bash", "--json", "--cwd", dir, "--permission-mode", "bypassPermissions", "--input", `{"command":"seq 1 2000"}`],
        { home }
      )
      assert.strictEqual(result.code, 0, result.stderr)
      const content: string = JSON.parse(result.stdout).content
      const saved = /^<persisted-output>\nOutput too large \(8\.7KB\)\. Full output saved to: (\S+)\n\nPreview \(first 2KB\):\n1\n2\n/.exec(content)
      assert.isNotNull(saved, content)
      const file = saved![1]
      assert.isTrue(file.startsWith(join(home, ".toolwright", "projects") + "/"), file)
      assert.isTrue(file.endsWith(".txt"))
      assert.strictEqual(readFileSync(file, "utf8").split("\n").length, 2000)
      assert.isTrue(content.endsWith("\n...\n</persisted-output>"))
    }))

  it("Bash output cut at BASH_MAX_OUTPUT_LENGTH stays inline: the model reads head, tail and the full output's file", () =>
    withDir((dir) => {
      const home = join(dir, "home")
      const result = toolwright(
        ["run", "Bash", "--json", "--cwd", dir, "--permission-mode", "bypassPermissions", "--input", `{"command":"seq 1 200000"}`],
        { home }
      )
      assert.strictEqual(result.code, 0, result.stderr)
      const content: string = JSON.parse(result.stdout).content
      assert.isFalse(content.startsWith("<persisted-output>"), content.slice(0, 300))
      assert.isAtMost(content.length, 30_000)
      assert.isTrue(content.startsWith("1\n2\n3\n"))
      assert.match(content, /\n\n\.\.\. \[\d+ characters truncated\] \.\.\.\n\n/)
      const saved = /\n199999\n200000\n\[Full output saved to (\S+)\]$/.exec(content)
      assert.isNotNull(saved, content.slice(-300))
      const full = readFileSync(saved![1]!, "utf8")
      assert.strictEqual(full, Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join(""))
    }))

  it("refuses to start on an invalid threshold, naming the file and the field", () =>
    withDir((dir) => {
      mkdirSync(join(dir, ".toolwright"), { recursive: true })
      writeFileSync(join(dir, ".toolwright", "settings.json"), JSON.stringify({ toolResultThresholds: { Bash: -5 } }))
      const result = toolwright(["run", "Read", "--cwd", dir, "--input", `{"file_path":"x"}`])
      assert.strictEqual(result.code, 2)
      assert.include(result.stderr, join(dir, ".toolwright", "settings.json"))
      assert.include(result.stderr, "toolResultThresholds")
    }))
})

const hasSandboxTools = ["bwrap", "socat"].every((tool) => spawnSync("which", [tool]).status === 0)

describe("toolwright run: Bash's spawner helper", () => {
  it("starts the command from the helper, which does not outlive the CLI", () =>
    withDir((dir) => {
      const result = toolwright(["run", "Bash", "--cwd", dir, "--permission-mode", "bypassPermissions", "--input", `{"command":"echo $PPID"}`])
      assert.strictEqual(result.code, 0, result.stderr)
      const helper = Number(result.stdout.trim())
      assert.isTrue(Number.isInteger(helper) && helper > 1, result.stdout)
      assert.notStrictEqual(helper, result.pid, "the command's parent is the helper, not the CLI")
      // Its IPC channel closed with the CLI: it exits by itself (at once; allow a busy machine 5 s).
      const alive = () => {
        try {
          const stat = readFileSync(`/proc/${helper}/stat`, "latin1")
          return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))
        } catch {
          return false
        }
      }
      const deadline = Date.now() + 5_000
      while (alive() && Date.now() < deadline) spawnSync("sleep", ["0.05"])
      assert.isFalse(alive(), `the helper ${helper} is still running`)
    }))
})

describe("toolwright run: settings sandbox", () => {
  it("refuses to start on an invalid sandbox entry, naming the file and the field", () =>
    withDir((dir) => {
      mkdirSync(join(dir, ".toolwright"), { recursive: true })
      writeFileSync(join(dir, ".toolwright", "settings.json"), JSON.stringify({ sandbox: { enabled: "yes" } }))
      const result = toolwright(["run", "Bash", "--cwd", dir, "--input", `{"command":"echo hi"}`])
      assert.strictEqual(result.code, 2)
      assert.strictEqual(
        result.stderr,
        `Error: Invalid settings in ${join(dir, ".toolwright", "settings.json")}: at sandbox.enabled: ` +
          `Expected boolean, actual "yes". See the sandbox settings in the README.\n`
      )
    }))

  it.skipIf(!hasSandboxTools)("runs Bash in the sandbox: writes outside the project fail, inside succeed", () =>
    withDir((dir) => {
      const project = join(dir, "project")
      mkdirSync(join(project, ".toolwright"), { recursive: true })
      writeFileSync(join(project, ".toolwright", "settings.json"), JSON.stringify({ sandbox: { enabled: true } }))
      const outside = join(dir, "outside.txt")
      const result = toolwright([
        "run",
        "Bash",
        "--cwd",
        project,
        "--permission-mode",
        "bypassPermissions",
        "--input",
        JSON.stringify({ command: `echo x > ${outside}; echo inside > ok.txt; cat ok.txt` })
      ])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(result.stdout, "Read-only file system")
      assert.include(result.stdout, "inside")
      assert.isFalse(existsSync(outside))
      assert.strictEqual(readFileSync(join(project, "ok.txt"), "utf8"), "inside\n")
    }))
})

describe("toolwright run and the project's MCP servers", () => {
  it("a built-in tool runs without starting them; an MCP tool or ToolSearch starts them", () =>
    withDir((dir) => {
      // A server that notes each start, then never answers: waiting for it would cost a whole MCP_TIMEOUT.
      writeFileSync(join(dir, "server.mjs"), `import { appendFileSync } from "node:fs"\nappendFileSync("starts", "x")\nsetInterval(() => {}, 1000)\n`)
      writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { mute: { command: process.execPath, args: ["server.mjs"] } } }))
      writeFileSync(join(dir, "notes.txt"), "alpha\n")
      const read = toolwright(["run", "Read", "--cwd", dir, "--input", `{"file_path":"notes.txt"}`])
      assert.strictEqual(read.code, 0, read.stderr)
      assert.strictEqual(read.stdout, "1\talpha\n")
      assert.strictEqual(read.stderr, "")
      assert.isFalse(existsSync(join(dir, "starts")))

      const env = { MCP_TIMEOUT: "500" }
      const mcp = toolwright(["run", "mcp__mute__anything", "--cwd", dir], { env })
      assert.strictEqual(mcp.code, 2)
      assert.include(mcp.stderr, `warning: MCP server "mute" failed: did not answer within 500 ms (MCP_TIMEOUT)`)
      const search = toolwright(["run", "ToolSearch", "--cwd", dir, "--input", `{"query":"select:Read"}`], { env })
      assert.strictEqual(search.code, 0, search.stderr)
      const resources = toolwright(["run", "ListMcpResourcesTool", "--cwd", dir], { env })
      assert.include(resources.stderr, `warning: MCP server "mute" failed`)
      assert.strictEqual(readFileSync(join(dir, "starts"), "utf8"), "xxx")
    }))
})

describe("toolwright run: settings' env reaches the MCP servers", () => {
  it("as in Claude Code: ${VAR} in .mcp.json, the servers' environment and MCP_TIMEOUT", () =>
    withDir((dir) => {
      const scripted = join(import.meta.dirname, "..", "..", "mcp", "test", "fixtures", "scripted-server.mjs")
      writeFileSync(join(dir, "mute.mjs"), "setInterval(() => {}, 1000)\n")
      writeFileSync(join(dir, ".mcp.json"), JSON.stringify({
        mcpServers: {
          s: { command: process.execPath, args: [scripted, "${QA_MODE}"] },
          mute: { command: process.execPath, args: ["mute.mjs"] }
        }
      }))
      mkdirSync(join(dir, ".toolwright"))
      writeFileSync(join(dir, ".toolwright", "settings.json"), JSON.stringify({
        env: { QA_MODE: "stdio", MCP_TIMEOUT: "700" },
        permissions: { allow: ["mcp__s"] }
      }))
      const result = toolwright(["run", "mcp__s__slow", "--cwd", dir, "--input", `{"ms":10}`])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "slept 10 ms\n")
      assert.include(result.stderr, `warning: MCP server "mute" failed: did not answer within 700 ms (MCP_TIMEOUT)\n`)
    }))
})

describe("toolwright run interrupted", () => {
  it.live("SIGINT during an MCP call exits 130, not 0 as if the call had succeeded", () =>
    Effect.gen(function*() {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), "tw-run-")))
      const scripted = join(import.meta.dirname, "..", "..", "mcp", "test", "fixtures", "scripted-server.mjs")
      writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { s: { command: process.execPath, args: [scripted] } } }))
      const child = spawn(process.execPath, [bin, "run", "mcp__s__progress-then-wait", "--cwd", dir, "--allow", "mcp__s"], {
        env: { ...process.env, HOME: dir, CI: "1" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += String(chunk)))
      const code = yield* Effect.async<number | null>((resume) => {
        // Its progress report says the call is under way on the server. One SIGINT only: a second one, sent on
        // whatever toolwright prints while it stops, would find Node's default handler and kill it by signal.
        let sent = false
        child.stderr.on("data", () => {
          if (!sent && stderr.includes("halfway")) {
            sent = true
            child.kill("SIGINT")
          }
        })
        child.on("exit", (status) => resume(Effect.succeed(status)))
      })
      assert.strictEqual(code, 130, stderr)
    }))
})

describe("toolwright run progress", () => {
  it("an MCP tool's progress is its message and count on stderr, one line each", () =>
    withDir((dir) => {
      const scripted = join(import.meta.dirname, "..", "..", "mcp", "test", "fixtures", "scripted-server.mjs")
      writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { s: { command: process.execPath, args: [scripted] } } }))
      const result = toolwright(["run", "mcp__s__slow", "--cwd", dir, "--input", `{"ms":100}`, "--allow", "mcp__s"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "slept 100 ms\n")
      assert.strictEqual(result.stderr, "[mcp__s__slow] waited 50 ms (50/100)\n[mcp__s__slow] waited 100 ms (100/100)\n")
    }))
})

describe("toolwright run ToolSearch", () => {
  it("is wired to the CLI's pool: select returns tool_reference blocks for the named tools", () =>
    withDir((dir) => {
      const result = toolwright(["run", "ToolSearch", "--json", "--cwd", dir, "--input", `{"query":"select:Read,Grep"}`])
      assert.strictEqual(result.code, 0, result.stdout)
      assert.deepStrictEqual(JSON.parse(result.stdout).content, [
        { type: "tool_reference", tool_name: "Read" },
        { type: "tool_reference", tool_name: "Grep" }
      ])
    }))
})

describe("toolwright tools", () => {
  it("lists the built-in tools with their traits", () => {
    const result = toolwright(["tools", "list", "--json"])
    assert.strictEqual(result.code, 0)
    const rows: Array<{ name: string; readOnly: boolean; source: string }> = JSON.parse(result.stdout)
    const byName = new Map(rows.map((row) => [row.name, row]))
    for (const name of ["Read", "Glob", "Grep", "Write", "Edit", "Bash"]) assert.isTrue(byName.has(name), name)
    assert.strictEqual(byName.get("Read")?.readOnly, true)
    assert.strictEqual(byName.get("Write")?.readOnly, false)
    assert.strictEqual(byName.get("Read")?.source, "builtin")
    const names = rows.filter((row) => row.source === "builtin").map((row) => row.name)
    assert.deepStrictEqual(names, [...names].sort())
  })

  it("prints the JSON Schema a model is sent", () => {
    const result = toolwright(["tools", "schema", "Read"])
    assert.strictEqual(result.code, 0)
    const schema = JSON.parse(result.stdout)
    assert.strictEqual(schema.type, "object")
    assert.deepStrictEqual(schema.required, ["file_path"])
    assert.strictEqual(schema.properties.file_path.type, "string")
    assert.strictEqual(schema.additionalProperties, false)
    assert.strictEqual(toolwright(["tools", "schema", "Nope"]).code, 2)
  })
})
