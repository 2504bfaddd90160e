import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ToolProgress } from "@toolwright/core"
import { Effect, Fiber, TestClock } from "effect"
import { reportProgress, run } from "../../src/internal/ripgrep.js"
import { tempDir, writeFiles } from "../support/runTool.js"

describe("ripgrep progress", () => {
  it.scoped("reports the count at most every 100 ms, and only when it moved", () =>
    Effect.gen(function*() {
      const reports: Array<unknown> = []
      let count = 0
      yield* reportProgress(() => count, "100 millis", "filesScanned").pipe(
        Effect.provideService(ToolProgress.ToolProgress, { report: (data) => Effect.sync(() => reports.push(data)) })
      )
      count = 40
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(reports, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(reports, [{ filesScanned: 40 }])
      count = 41
      count = 90
      yield* TestClock.adjust("100 millis")
      yield* TestClock.adjust("100 millis")
      assert.deepStrictEqual(reports, [{ filesScanned: 40 }, { filesScanned: 90 }])
    }))

  it.effect("stops with its scope", () =>
    Effect.gen(function*() {
      const reports: Array<unknown> = []
      let count = 0
      const fiber = yield* Effect.scoped(
        reportProgress(() => count, "100 millis", "filesWithMatches").pipe(
          Effect.provideService(ToolProgress.ToolProgress, { report: (data) => Effect.sync(() => reports.push(data)) })
        )
      ).pipe(Effect.fork)
      yield* Fiber.join(fiber)
      count = 5
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(reports, [])
    }))
})

describe("ripgrep run", () => {
  it.scopedLive("stops rg once the kept lines reach maxChars, and says so", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "hit\n".repeat(100_000) })
      const capped = yield* run(["--no-config", "-N", "-e", "hit", "a.txt"], { cwd: dir, maxChars: 30 }).pipe(
        Effect.provide(ToolProgress.layerNoop),
        Effect.scoped
      )
      assert.deepStrictEqual(capped.lines, Array.from({ length: 10 }, () => "hit"))
      assert.isTrue(capped.stoppedEarly)
      assert.isTrue(capped.overChars)
      const whole = yield* run(["--no-config", "-c", "-e", "hit", path.join(dir, "a.txt")], { cwd: dir, maxChars: 30 })
        .pipe(Effect.provide(ToolProgress.layerNoop), Effect.scoped)
      assert.deepStrictEqual(whole.lines, ["100000"])
      assert.isFalse(whole.overChars)
      assert.strictEqual(whole.exitCode, 0)
    }))

  it.scopedLive("an exception in a callback ends the call with an error (not an uncaught one) and kills rg", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFiles(dir, { "a.txt": "hit\n" })
      const error = yield* run(["--no-config", "-e", "hit", "a.txt"], {
        cwd: dir,
        accept: () => {
          throw new Error("boom")
        }
      }).pipe(Effect.provide(ToolProgress.layerNoop), Effect.scoped, Effect.flip)
      assert.strictEqual(error.message, "Could not process ripgrep's output: boom")
    }))
})
