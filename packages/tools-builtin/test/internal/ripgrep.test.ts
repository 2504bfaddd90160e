import { assert, describe, it } from "@effect/vitest"
import { ToolProgress } from "@toolwright/core"
import { Effect, Fiber, TestClock } from "effect"
import { reportProgress } from "../../src/internal/ripgrep.js"

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
