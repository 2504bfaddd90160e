import { assert, describe, it } from "@effect/vitest"
import { applyReplacement, findMatches, matchQuoteStyle } from "../../src/edit/matching.js"

describe("findMatches", () => {
  it("prefers the exact match and reports every occurrence", () => {
    assert.deepStrictEqual(findMatches("ab ab ab", "ab"), { kind: "exact", ranges: [[0, 2], [3, 5], [6, 8]] })
    assert.deepStrictEqual(findMatches("aaaa", "aa"), { kind: "exact", ranges: [[0, 2], [2, 4]] })
  })

  it("maps line-ending-normalised matches back to the original text, CRs included", () => {
    const text = "x\r\ny\r\nz"
    // A match starting at a line break starts at its CR; one ending after a break ends after its LF.
    assert.deepStrictEqual(findMatches(text, "\ny\n"), { kind: "lineEndings", ranges: [[1, 6]] })
    assert.deepStrictEqual(findMatches(text, "y\nz"), { kind: "lineEndings", ranges: [[3, 7]] })
    assert.deepStrictEqual(findMatches(text, "x\n"), { kind: "lineEndings", ranges: [[0, 3]] })
    assert.strictEqual(text.slice(1, 6), "\r\ny\r\n")
  })

  it("normalises quotes only when nothing else matched, and never whitespace", () => {
    assert.deepStrictEqual(findMatches("say \u201chi\u201d\r\nnow", "say \"hi\"\nnow"), {
      kind: "quotes",
      ranges: [[0, 13]]
    })
    assert.strictEqual(findMatches("a  b", "a b"), undefined)
    assert.strictEqual(findMatches("a\tb", "a    b"), undefined)
    assert.strictEqual(findMatches("abc", "ABC"), undefined)
  })
})

describe("matchQuoteStyle", () => {
  it("curls opening and closing quotes and keeps apostrophes closing", () => {
    assert.strictEqual(
      matchQuoteStyle("\u201ca\u201d \u2018b\u2019", "\"x\" don't 'y'"),
      "\u201cx\u201d don\u2019t \u2018y\u2019"
    )
  })
})

describe("applyReplacement", () => {
  it("replaces ranges and locates the first replacement in the new text", () => {
    assert.deepStrictEqual(applyReplacement("a-b-a", [[0, 1], [4, 5]], "XY"), {
      text: "XY-b-XY",
      firstStart: 0,
      firstEnd: 2
    })
  })
})
