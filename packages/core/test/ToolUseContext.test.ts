import { assert, describe, it } from "@effect/vitest"
import * as os from "node:os"
import { ToolUseContext } from "../src/index.js"

describe("ToolUseContext.make", () => {
  it("puts a session's files under ~/.toolwright/projects/<cwd with separators replaced>", () => {
    assert.strictEqual(
      ToolUseContext.make({ cwd: "/work/my.app" }).projectDir,
      `${os.homedir()}/.toolwright/projects/-work-my-app`
    )
    assert.strictEqual(
      ToolUseContext.make({ cwd: "/work/app", homeDir: "/home/ada" }).projectDir,
      "/home/ada/.toolwright/projects/-work-app"
    )
    assert.strictEqual(ToolUseContext.make({ cwd: "/work/app", projectDir: "/data/p" }).projectDir, "/data/p")
  })

  it("gives each session its own id and read-file state; a call's context carries its id", () => {
    const a = ToolUseContext.make({ cwd: "/w" })
    const b = ToolUseContext.make({ cwd: "/w" })
    assert.notStrictEqual(a.sessionId, b.sessionId)
    assert.notStrictEqual(a.readFileState, b.readFileState)
    const call = ToolUseContext.forCall(a, "toolu_1")
    assert.strictEqual(call.toolUseId, "toolu_1")
    assert.strictEqual(call.readFileState, a.readFileState)
    assert.strictEqual(a.toolUseId, "")
  })
})
