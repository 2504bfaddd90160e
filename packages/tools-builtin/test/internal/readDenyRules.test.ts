import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Permission, ToolUseContext } from "@toolwright/core"
import { Effect } from "effect"
import { GlobTool } from "../../src/glob/GlobTool.js"
import { GrepTool } from "../../src/grep/GrepTool.js"
import { ReadTool } from "../../src/read/ReadTool.js"
import { callTool, tempDir, writeFiles } from "../support/runTool.js"

/** A session whose settings deny reading `secrets/` and `.env` files. */
const denying = (cwd: string) =>
  ToolUseContext.make({
    cwd,
    permissionContext: {
      ...Permission.emptyPermissionContext(),
      deny: [{ rule: "Read(./secrets/**)", source: "test" }, { rule: "Read(.env)", source: "test" }]
    }
  })

const files = {
  "src/app.ts": "token = 1\nnext line\n",
  "secrets/key.txt": "token = hunter2\n",
  ".env": "token=abc\n",
  "sub/.env": "token=def\n"
}

describe("Read deny rules filter Glob and Grep results", () => {
  it.scopedLive("Read's did-you-mean hint for a missing file never names a denied one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, files)
      writeFiles(dir, { "src/app.js": "" })
      const context = denying(dir)
      const hidden = yield* callTool([ReadTool], "Read", { file_path: path.join(dir, ".env.local") }, context)
      assert.strictEqual(
        hidden.text,
        `<tool_use_error>File does not exist. Note: your current working directory is ${dir}.</tool_use_error>`
      )
      const shown = yield* callTool([ReadTool], "Read", { file_path: path.join(dir, "src/app.py") }, context)
      assert.match(shown.text, /Did you mean .*\/src\/app\.(ts|js)\?<\/tool_use_error>$/)
    }))


  it.scopedLive("Glob does not list denied files", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, files)
      const call = yield* callTool([GlobTool], "Glob", { pattern: "**/*" }, denying(dir))
      assert.strictEqual(call.text, "src/app.ts")
    }))

  it.scopedLive("Grep shows no denied file in any mode, and keeps rg's formats for the rest", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, files)
      const context = denying(dir)
      const listed = yield* callTool([GrepTool], "Grep", { pattern: "token" }, context)
      assert.strictEqual(listed.text, "Found 1 file\nsrc/app.ts")
      const counted = yield* callTool([GrepTool], "Grep", { pattern: "token", output_mode: "count" }, context)
      assert.strictEqual(counted.text, "src/app.ts:1\n\nFound 1 total occurrence across 1 file.")
      const content = yield* callTool(
        [GrepTool],
        "Grep",
        { pattern: "token", output_mode: "content", "-A": 1 },
        context
      )
      assert.strictEqual(content.text, "src/app.ts:1:token = 1\nsrc/app.ts-2-next line")
      assert.notInclude(content.text, "hunter2")
      // Without deny rules the same search shows them all: the filter is what hides them.
      const open = yield* callTool([GrepTool], "Grep", { pattern: "token" }, ToolUseContext.make({ cwd: dir }))
      assert.strictEqual(open.text.split("\n")[0], "Found 4 files")
      assert.isTrue(open.text.includes(path.join("secrets", "key.txt")))
      // Without line numbers, matches still end their path with ":" and context lines with "-", even for a
      // line that starts like a number and a dash.
      writeFiles(dir, { "log.txt": "2024-01-01 token\n12-after\n" })
      const plain = yield* callTool(
        [GrepTool],
        "Grep",
        { pattern: "token", output_mode: "content", "-A": 1, "-n": false, glob: "*.txt" },
        context
      )
      assert.strictEqual(plain.text, "log.txt:2024-01-01 token\nlog.txt-12-after")
    }))
})
