import { assert, describe, it } from "@effect/vitest"
import { snippetAround } from "../../src/edit/snippet.js"

describe("snippetAround", () => {
  it("numbers the edited lines with context, without their CRs", () => {
    const text = "a\r\nb\r\nc\r\n"
    assert.strictEqual(snippetAround(text, 3, 4), "1\ta\n2\tb\n3\tc\n4\t")
  })

  it("cuts a long line at 2,000 characters, never inside a surrogate pair", () => {
    const line = `${"x".repeat(1999)}\u{1f600}tail`
    assert.strictEqual(snippetAround(line, 0, 1), `1\t${"x".repeat(1999)}`)
    assert.strictEqual(snippetAround("y".repeat(2500), 0, 1), `1\t${"y".repeat(2000)}`)
  })
})
