import { assert, describe, it } from "@effect/vitest"
import { Cause } from "effect"
import { ToolErrors } from "../src/index.js"

describe("ToolErrors", () => {
  it("formatError keeps short messages whole", () => {
    assert.strictEqual(ToolErrors.formatError(new Error("disk full")), "disk full")
    assert.strictEqual(ToolErrors.formatError("plain text"), "plain text")
    assert.strictEqual(ToolErrors.formatError(new ToolErrors.ToolError({ message: "it broke" })), "it broke")
  })

  it("formatError keeps the first and last 5,000 characters of a long message", () => {
    const message = "a".repeat(5_000) + "b".repeat(2_000) + "c".repeat(5_000)
    assert.strictEqual(
      ToolErrors.formatError(new Error(message)),
      `${"a".repeat(5_000)}\n\n... [2000 characters truncated] ...\n\n${"c".repeat(5_000)}`
    )
    assert.strictEqual(ToolErrors.formatError("x".repeat(10_000)), "x".repeat(10_000))
  })

  it("classifyToolError labels tagged errors, errno codes and Error classes", () => {
    assert.deepStrictEqual(ToolErrors.classifyToolError(new ToolErrors.ToolError({ message: "m" })), {
      kind: "ToolError",
      detail: "m"
    })
    const errno = Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" })
    assert.strictEqual(ToolErrors.classifyToolError(errno).kind, "ENOENT")
    assert.strictEqual(ToolErrors.classifyToolError(new TypeError("bad")).kind, "TypeError")
    assert.strictEqual(ToolErrors.classifyToolError(42).kind, "Error")
    const long = ToolErrors.classifyToolError({ _tag: "T".repeat(100), message: "m".repeat(500) })
    assert.strictEqual(long.kind.length, 60)
    assert.strictEqual(long.detail.length, 200)
  })

  it("wraps error texts and names unknown tools", () => {
    assert.strictEqual(ToolErrors.wrapToolUseError("x"), "<tool_use_error>x</tool_use_error>")
    assert.strictEqual(ToolErrors.noSuchTool("Foo"), "Error: No such tool available: Foo")
  })

  it("formatCause prefers the failure, then the defect", () => {
    assert.strictEqual(ToolErrors.formatCause(Cause.fail(new Error("failed"))), "failed")
    assert.strictEqual(ToolErrors.formatCause(Cause.die(new Error("died"))), "died")
    assert.strictEqual(ToolErrors.formatCause(Cause.interrupt(Cause.empty as never)), "Interrupted")
  })
})
