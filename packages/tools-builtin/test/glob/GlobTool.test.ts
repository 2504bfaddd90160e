import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { GlobTool } from "../../src/glob/GlobTool.js"
import { age, callTool, contextFor, tempDir, writeFiles } from "../support/runTool.js"

const glob = (input: unknown, cwd: string, additionalDirectories: ReadonlyArray<string> = []) =>
  callTool([GlobTool], "Glob", input, contextFor(cwd, additionalDirectories))

describe("Glob", () => {
  it.scopedLive("lists matches newest first, relative to the cwd, honouring nested .gitignore files", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        ".gitignore": "dist/\n",
        "src/a.ts": "",
        "src/b.ts": "",
        "src/deep/c.ts": "",
        "src/deep/.gitignore": "generated.ts\n",
        "src/deep/generated.ts": "",
        "dist/out.ts": "",
        "notes.md": ""
      })
      age(path.join(dir, "src/a.ts"), 300)
      age(path.join(dir, "src/b.ts"), 100)
      age(path.join(dir, "src/deep/c.ts"), 200)
      const call = yield* glob({ pattern: "**/*.ts" }, dir)
      assert.strictEqual(call.result.is_error, undefined)
      assert.strictEqual(call.text, "src/b.ts\nsrc/deep/c.ts\nsrc/a.ts")
    }))

  it.scopedLive("shows hidden files but not VCS internals; a slashless pattern matches names at any depth", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, {
        ".github/workflows/ci.yml": "",
        ".git/config.yml": "",
        "app.yml": ""
      })
      age(path.join(dir, "app.yml"), 100)
      const call = yield* glob({ pattern: "*.yml" }, dir)
      assert.strictEqual(call.text, ".github/workflows/ci.yml\napp.yml")
    }))

  it.scopedLive("symlinks are not followed: a link cannot bring another directory's files into the list", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const outside = yield* tempDir
      writeFiles(outside, { "secret.txt": "" })
      writeFiles(dir, { "mine.txt": "" })
      fs.symlinkSync(outside, path.join(dir, "linkdir"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "link.txt"))
      const call = yield* glob({ pattern: "**/*.txt" }, dir)
      assert.strictEqual(call.text, "mine.txt")
    }))

  it.scopedLive("at most 100 files, then a line saying the list was truncated", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`f${i}.txt`, ""])))
      // f129 is the newest, f0 the oldest: the list is the 100 newest, whatever order rg walks them in.
      for (let i = 0; i < 130; i++) age(path.join(dir, `f${i}.txt`), 1000 - i)
      const call = yield* glob({ pattern: "*.txt" }, dir)
      assert.strictEqual(
        call.text,
        [
          ...Array.from({ length: 100 }, (_, i) => `f${129 - i}.txt`),
          "(Results are truncated. Consider using a more specific path or pattern.)"
        ].join("\n")
      )
    }))

  it.scopedLive("No files found", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "" })
      const call = yield* glob({ pattern: "**/*.rs" }, dir)
      assert.strictEqual(call.result.is_error, undefined)
      assert.strictEqual(call.text, "No files found")
      const missingBase = yield* glob({ pattern: "nope/**/*.rs" }, dir)
      assert.strictEqual(missingBase.text, "No files found")
    }))

  it.scopedLive("a plain path finds its file even where .gitignore hides it from the walk (.env, dist/x.js)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const outside = yield* tempDir
      writeFiles(outside, { "secret.txt": "" })
      writeFiles(dir, { ".gitignore": ".env\ndist/\n", ".env": "A=1\n", "dist/out.js": "", "sub/.keep": "" })
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "link.txt"))
      assert.strictEqual((yield* glob({ pattern: ".env" }, dir)).text, ".env")
      assert.strictEqual((yield* glob({ pattern: "dist/out.js" }, dir)).text, "dist/out.js")
      assert.strictEqual((yield* glob({ pattern: "out.js", path: "dist" }, dir)).text, "dist/out.js")
      // Still files only, and a link is no more followed than in the walk.
      assert.strictEqual((yield* glob({ pattern: "sub" }, dir)).text, "No files found")
      assert.strictEqual((yield* glob({ pattern: "link.txt" }, dir)).text, "No files found")
      assert.strictEqual((yield* glob({ pattern: "dist/missing.js" }, dir)).text, "No files found")
    }))

  it.scopedLive("an empty pattern is a clear error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const call = yield* glob({ pattern: "" }, dir)
      assert.strictEqual(
        call.text,
        "<tool_use_error>pattern must not be empty; use \"**/*\" to list every file.</tool_use_error>"
      )
    }))

  it.scopedLive("a pattern picomatch cannot compile, or a NUL in pattern or path, is a clear error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const long = yield* glob({ pattern: "a*".repeat(40_000) }, dir)
      assert.strictEqual(
        long.text,
        "<tool_use_error>Invalid glob pattern: Input length: 80000, exceeds maximum allowed length: 65536</tool_use_error>"
      )
      const nulPattern = yield* glob({ pattern: "a\u0000b/*" }, dir)
      assert.strictEqual(nulPattern.text, "<tool_use_error>pattern must not contain a NUL character.</tool_use_error>")
      const nulPath = yield* glob({ pattern: "*", path: "a\u0000b" }, dir)
      assert.strictEqual(nulPath.text, "<tool_use_error>path must not contain a NUL character.</tool_use_error>")
    }))

  it.scopedLive("a missing path names the cwd; a file is not a directory", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "file.txt": "" })
      const missing = yield* glob({ pattern: "*", path: "nowhere" }, dir)
      assert.strictEqual(missing.result.is_error, true)
      assert.strictEqual(
        missing.text,
        `<tool_use_error>Directory does not exist: ${
          path.join(dir, "nowhere")
        }. Note: your current working directory is ${dir}.</tool_use_error>`
      )
      const file = yield* glob({ pattern: "*", path: "file.txt" }, dir)
      assert.strictEqual(file.text, `<tool_use_error>Path is not a directory: ${path.join(dir, "file.txt")}</tool_use_error>`)
    }))

  it.scopedLive("path and absolute patterns: outside the cwd, paths are absolute", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const other = yield* tempDir
      writeFiles(dir, { "in/x.ts": "" })
      writeFiles(other, { "lib/y.js": "", "lib/sub/z.js": "" })
      age(path.join(other, "lib/sub/z.js"), 100)
      const inPath = yield* glob({ pattern: "*.ts", path: "in" }, dir)
      assert.strictEqual(inPath.text, "in/x.ts")
      const absolute = yield* glob({ pattern: `${other}/lib/**/*.js` }, dir, [other])
      assert.strictEqual(absolute.text, `${other}/lib/y.js\n${other}/lib/sub/z.js`)
      // Outside the working directories the Read rules apply: nobody can answer here, so it is denied.
      const denied = yield* glob({ pattern: `${other}/lib/**/*.js` }, dir)
      assert.strictEqual(denied.result.is_error, true)
      assert.include(denied.text, `${other}/lib is outside the working directories`)
      const literal = yield* glob({ pattern: "in/x.ts" }, dir)
      assert.strictEqual(literal.text, "in/x.ts")
    }))

  it.scopedLive("getPath is the directory really walked, symlinks resolved, so rules see it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const other = yield* tempDir
      fs.symlinkSync(other, path.join(dir, "link"))
      const context = contextFor(dir)
      assert.strictEqual(GlobTool.getPath({ pattern: "**/*" }, context), dir)
      assert.strictEqual(GlobTool.getPath({ pattern: "**/*", path: "link" }, context), other)
      assert.strictEqual(GlobTool.getPath({ pattern: "link/**/*.ts" }, context), other)
      assert.strictEqual(GlobTool.getPath({ pattern: "/etc/*.conf" }, context), "/etc")
      assert.deepStrictEqual(GlobTool.ruleSubjects({ pattern: "*", path: "link" }, context).paths, [
        { path: other, access: "read" }
      ])
      assert.isTrue(GlobTool.isReadOnly({ pattern: "*" }))
      assert.isTrue(GlobTool.isConcurrencySafe({ pattern: "*" }))
    }))
})
