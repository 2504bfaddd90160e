/**
 * An exclusive lock across processes around a read-modify-write of a file (`.mcp.json` by `mcp add` and
 * `mcp remove`), so that edits made at the same time all land. The lock is a file created next to the
 * edited one with O_EXCL, holding its owner's pid; a lock whose owner is gone is taken over.
 */
import { Clock, Data, Duration, Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"

/** The lock could not be taken: another process holds it, or its file cannot be created. */
export class FileLockError extends Data.TaggedError("FileLockError")<{
  readonly lockFile: string
  readonly message: string
}> {}

/** What a lock file holds: who took it, to tell a crashed owner's lock from a live one. */
interface Owner {
  readonly pid: number
  readonly host: string
}

/**
 * A lock older than this is stale whoever holds it: a holder keeps it for the few milliseconds of one
 * read-modify-write, and its pid may have been reused since, or its owner be on another host sharing the file.
 */
const STALE_AFTER_MS = 30_000

/** The lock file for `file`: next to the file a symlink names, so links to one file share one lock. */
export const lockFileFor = (file: string): string => {
  try {
    return `${fs.realpathSync(file)}.lock`
  } catch {
    return `${file}.lock`
  }
}

const errorCode = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return errorCode(error) === "EPERM"
  }
}

const readOwner = (lockFile: string): Owner | undefined => {
  try {
    const owner: unknown = JSON.parse(fs.readFileSync(lockFile, "utf8"))
    return typeof owner === "object" && owner !== null && "pid" in owner && typeof owner.pid === "number" &&
        "host" in owner && typeof owner.host === "string"
      ? { pid: owner.pid, host: owner.host }
      : undefined
  } catch {
    // Gone, or just created and not written yet.
    return undefined
  }
}

type Attempt =
  | { readonly _tag: "Taken"; readonly ino: number }
  | {
    readonly _tag: "Busy"
    /** Which lock file is in the way, to tell one owner holding it long from owners taking turns. */
    readonly holder: string | undefined
    readonly owner: Owner | undefined
    readonly retryNow: boolean
  }
  | { readonly _tag: "Failed"; readonly error: unknown }

/** Tells lock files apart: inode numbers are reused at once by the next one, so its owner and time count too. */
const identity = (stat: fs.Stats, owner: Owner | undefined): string => `${stat.ino}:${stat.mtimeMs}:${owner?.pid}`

/** One try at creating the lock file; a stale one found in the way is removed for the next try. */
const attempt = (lockFile: string): Attempt => {
  try {
    const fd = fs.openSync(lockFile, "wx", 0o644)
    try {
      fs.writeFileSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname() }))
      return { _tag: "Taken", ino: fs.fstatSync(fd).ino }
    } catch (error) {
      fs.rmSync(lockFile, { force: true })
      return { _tag: "Failed", error }
    } finally {
      fs.closeSync(fd)
    }
  } catch (error) {
    if (errorCode(error) !== "EEXIST") return { _tag: "Failed", error }
  }
  let stat: fs.Stats
  try {
    stat = fs.statSync(lockFile)
  } catch {
    // Released in the meantime.
    return { _tag: "Busy", holder: undefined, owner: undefined, retryNow: true }
  }
  const owner = readOwner(lockFile)
  const holder = identity(stat, owner)
  const ownerGone = owner !== undefined && owner.host === os.hostname() && !isAlive(owner.pid)
  if (ownerGone || Date.now() - stat.mtimeMs > STALE_AFTER_MS) {
    return { _tag: "Busy", holder, owner, retryNow: breakStale(lockFile, holder) }
  }
  return { _tag: "Busy", holder, owner, retryNow: false }
}

/**
 * Removes a stale lock file. It is renamed aside first and checked to be the one judged stale: another
 * waiter may have broken it and taken a fresh lock in between, which is then put back. False when the lock
 * file cannot be moved (no write access to its folder): waiting is all there is to do.
 */
const breakStale = (lockFile: string, stale: string): boolean => {
  const aside = `${lockFile}.${process.pid}.stale`
  try {
    fs.renameSync(lockFile, aside)
  } catch (error) {
    return errorCode(error) === "ENOENT"
  }
  try {
    if (identity(fs.statSync(aside), readOwner(aside)) !== stale) fs.linkSync(aside, lockFile)
  } catch {
    // A third process locked in between: its lock stands.
  }
  fs.rmSync(aside, { force: true })
  return true
}

/** Removes the lock file if it is still the one this process created (not taken over as stale). */
const release = (lockFile: string, ino: number): void => {
  try {
    if (fs.statSync(lockFile).ino === ino && readOwner(lockFile)?.pid === process.pid) fs.unlinkSync(lockFile)
  } catch {
    // Already gone: nothing to release.
  }
}

/**
 * Runs `use` while holding the lock on `file`, waiting while other processes take their turns; one that
 * holds it for more than `timeout` (5 seconds by default) fails the wait. The lock is released however
 * `use` ends, interruption included.
 */
export const withLock = <A, E, R>(
  file: string,
  use: Effect.Effect<A, E, R>,
  options?: { readonly timeout?: Duration.DurationInput }
): Effect.Effect<A, E | FileLockError, R> => {
  const lockFile = lockFileFor(file)
  const timeout = Duration.toMillis(options?.timeout ?? Duration.seconds(5))
  const acquire = Effect.gen(function*() {
    // The wait is bounded per holder, not in all: many processes editing at once each hold the lock briefly,
    // and on a busy machine their turns together may well take longer than any one of them should.
    let holder: string | undefined
    let deadline = 0
    let tries = 0
    while (true) {
      const result = attempt(lockFile)
      if (result._tag === "Taken") return result.ino
      if (result._tag === "Failed") {
        return yield* new FileLockError({
          lockFile,
          message: `Cannot edit ${file}: cannot create its lock file ${lockFile} (${
            result.error instanceof Error ? result.error.message : String(result.error)
          }).`
        })
      }
      if (result.retryNow) continue
      const now = yield* Clock.currentTimeMillis
      if (result.holder !== holder) {
        holder = result.holder
        deadline = now + timeout
      } else if (now >= deadline) {
        const owner = result.owner === undefined ? "another process" : `process ${result.owner.pid}`
        return yield* new FileLockError({
          lockFile,
          message: `Cannot edit ${file}: ${owner} has held its lock file ${lockFile} for over ${
            Duration.format(Duration.millis(timeout))
          }. Wait for the other toolwright command editing it to finish and try again; if none is running, ` +
            `delete ${lockFile}.`
        })
      }
      // Backing off, so that many waiters do not take the CPU from the holder, and jittered, so that they do
      // not retry in step.
      const backoff = Math.min(200, 10 * 2 ** Math.min(tries++, 5))
      yield* Effect.interruptible(Effect.sleep(Duration.millis(backoff / 2 + Math.random() * backoff / 2)))
    }
  })
  return Effect.acquireUseRelease(acquire, () => use, (ino) => Effect.sync(() => release(lockFile, ino)))
}
