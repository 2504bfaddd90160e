/**
 * FileLock on real files and real processes: who may take a lock, when a left-over one is taken over, and
 * that it is released however the locked work ends.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import * as FileLock from "../src/FileLock.js"

const project = () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tw-file-lock-")))
  const file = join(dir, ".mcp.json")
  writeFileSync(file, "{}\n")
  return { dir, file, lockFile: `${file}.lock` }
}

/** The pid of a process that has exited. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
  return Number(child.stdout)
}

/** Writes a lock held by a live process: this test's own stands for another toolwright editing the file. */
const holdLive = (lockFile: string): string => {
  const held = JSON.stringify({ pid: process.pid, host: hostname() })
  writeFileSync(lockFile, held)
  return held
}

describe("FileLock.withLock", () => {
  it.live("holds a lock file next to the file while the work runs, and removes it after", () =>
    Effect.gen(function*() {
      const { file, lockFile } = project()
      const seen = yield* FileLock.withLock(file, Effect.sync(() => JSON.parse(readFileSync(lockFile, "utf8"))))
      assert.deepStrictEqual(seen, { pid: process.pid, host: hostname() })
      assert.isFalse(existsSync(lockFile))
    }))

  it.live("a symlinked file is locked next to the file it names, so links to one file share one lock", () =>
    Effect.gen(function*() {
      const { dir, file } = project()
      const link = join(dir, "link.json")
      symlinkSync(file, link)
      assert.strictEqual(FileLock.lockFileFor(link), `${file}.lock`)
      assert.strictEqual(FileLock.lockFileFor(join(dir, "missing.json")), join(dir, "missing.json.lock"))
    }))

  it.live("a lock held by a live process is waited for, then the wait fails naming the lock file and what to do", () =>
    Effect.gen(function*() {
      const { file, lockFile } = project()
      const held = holdLive(lockFile)
      const exit = yield* Effect.exit(FileLock.withLock(file, Effect.succeed("edited"), { timeout: "200 millis" }))
      assert.deepStrictEqual(
        exit,
        Exit.fail(
          new FileLock.FileLockError({
            lockFile,
            message: `Cannot edit ${file}: process ${process.pid} has held its lock file ${lockFile} for over 200ms. ` +
              `Wait for the other toolwright command editing it to finish and try again; if none is running, ` +
              `delete ${lockFile}.`
          })
        )
      )
      // Another's lock is left alone.
      assert.strictEqual(readFileSync(lockFile, "utf8"), held)
    }))

  it.live("a lock left by a process that has exited is taken over", () =>
    Effect.gen(function*() {
      const { file, lockFile } = project()
      writeFileSync(lockFile, JSON.stringify({ pid: deadPid(), host: hostname() }))
      assert.strictEqual(yield* FileLock.withLock(file, Effect.succeed("edited"), { timeout: "200 millis" }), "edited")
      assert.isFalse(existsSync(lockFile))
    }))

  it.live("a lock older than 30 seconds is taken over whoever holds it (a reused pid, another host)", () =>
    Effect.gen(function*() {
      const { file, lockFile } = project()
      writeFileSync(lockFile, JSON.stringify({ pid: process.pid, host: "elsewhere" }))
      const old = new Date(Date.now() - 60_000)
      utimesSync(lockFile, old, old)
      assert.strictEqual(yield* FileLock.withLock(file, Effect.succeed("edited"), { timeout: "200 millis" }), "edited")
      assert.isFalse(existsSync(lockFile))
    }))

  it.live("the lock is released when the work fails and when it is interrupted", () =>
    Effect.gen(function*() {
      const { file, lockFile } = project()
      const failed = yield* Effect.exit(FileLock.withLock(file, Effect.fail("broken")))
      assert.deepStrictEqual(failed, Exit.fail("broken"))
      assert.isFalse(existsSync(lockFile))
      const fiber = yield* Effect.fork(FileLock.withLock(file, Effect.never))
      while (!existsSync(lockFile)) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      assert.isFalse(existsSync(lockFile))
    }))

  it.live("a waiter interrupted while it waits leaves the holder's lock in place", () =>
    Effect.gen(function*() {
      const { file, lockFile } = project()
      const held = holdLive(lockFile)
      const fiber = yield* Effect.fork(FileLock.withLock(file, Effect.succeed("edited"), { timeout: "1 minute" }))
      yield* Effect.sleep("100 millis")
      assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(fiber)))
      assert.strictEqual(readFileSync(lockFile, "utf8"), held)
    }))

  it.live("a lock file that cannot be created is an error naming it", () =>
    Effect.gen(function*() {
      const { dir } = project()
      const file = join(dir, "no-such-folder", ".mcp.json")
      const lockFile = `${file}.lock`
      const exit = yield* Effect.exit(FileLock.withLock(file, Effect.succeed("edited")))
      assert.deepStrictEqual(
        exit,
        Exit.fail(
          new FileLock.FileLockError({
            lockFile,
            message: `Cannot edit ${file}: cannot create its lock file ${lockFile} (ENOENT: no such file or ` +
              `directory, open '${lockFile}').`
          })
        )
      )
    }))
})
