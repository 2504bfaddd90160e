import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { dated, displayPath, sortNewestFirst } from "../../src/internal/fileList.js"
import { age, tempDir, writeFiles } from "../support/runTool.js"

describe("fileList", () => {
  it.scopedLive("dated never throws (it runs in rg's stdout handler): unstatable files get mtime 0", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "" })
      assert.strictEqual(dated(path.join(dir, "a.txt")).mtime, fs.statSync(path.join(dir, "a.txt")).mtimeMs)
      assert.deepStrictEqual(dated(path.join(dir, "gone.txt")), { file: path.join(dir, "gone.txt"), mtime: 0 })
      // Node refuses this path outright (ERR_INVALID_ARG_VALUE), as it would an EACCES stat.
      assert.deepStrictEqual(dated("a\0b"), { file: "a\0b", mtime: 0 })
    }))

  it.scopedLive("newest first, ties by path; paths relative inside the cwd only", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "old.txt": "", "b.txt": "", "a.txt": "" })
      age(path.join(dir, "old.txt"), 100)
      age(path.join(dir, "a.txt"), 10)
      age(path.join(dir, "b.txt"), 10)
      const sorted = sortNewestFirst(["old.txt", "b.txt", "a.txt"].map((name) => dated(path.join(dir, name))))
      assert.deepStrictEqual(sorted.map((file) => displayPath(dir, file)), ["a.txt", "b.txt", "old.txt"])
      assert.strictEqual(displayPath(dir, "/elsewhere/x"), "/elsewhere/x")
      assert.strictEqual(displayPath(dir, path.join(dir, "..", "sibling")), path.join(dir, "..", "sibling"))
    }))
})
