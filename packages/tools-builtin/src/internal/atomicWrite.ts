/**
 * Atomic file replacement for the writing tools: the new bytes go to a temp file in the target's own
 * directory (so the rename never crosses a filesystem), are fsynced, take the original's mode, and are
 * renamed over the target; then the directory is fsynced so the rename itself survives a crash. A process
 * killed at any moment leaves the old file or the new one, never a truncated mix.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect, Schema } from "effect"

/** Writing the file failed; the target is unchanged and the temp file is gone. */
export class AtomicWriteError extends Schema.TaggedError<AtomicWriteError>(
  "@toolwright/tools-builtin/AtomicWriteError"
)("AtomicWriteError", {
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * A `createOnly` write found a file at the target: someone created it after the caller looked. Nothing was
 * written; the caller must treat the file as one it has not read.
 */
export class AtomicWriteTargetExists extends Schema.TaggedError<AtomicWriteTargetExists>(
  "@toolwright/tools-builtin/AtomicWriteTargetExists"
)("AtomicWriteTargetExists", {
  path: Schema.String
}) {
  override get message(): string {
    return `${this.path} was created by someone else while this call ran; it was left as it is.`
  }
}

export interface WriteOptions {
  /**
   * The caller saw no file at the target: publish the new file with a hard link, which fails instead of
   * replacing a file that appeared since, rather than with a rename, which would clobber it unread.
   */
  readonly createOnly?: boolean
}

/** The `code` of a Node system error (`ENOENT`, `EACCES`…), if the cause has one. */
export const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

/** Codes of file systems that have no hard links (FAT, some network and FUSE file systems). */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"])

/** The message of a failure, whatever was thrown. */
export const describe = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/**
 * The temp file's name: hidden, next to the target, unique per process and call, recognisable as ours. The
 * target's name is shortened so the temp name stays within the 255-byte limit of common filesystems.
 */
export const tempPathFor = (target: string): string => {
  let base = path.basename(target)
  while (Buffer.byteLength(base) > 200) base = base.slice(0, -1)
  return path.join(path.dirname(target), `.${base}.tw-${process.pid}-${randomBytes(6).toString("hex")}.tmp`)
}

/** True for names `tempPathFor` produces, so tests and cleanup can find leftovers. */
export const isTempName = (name: string): boolean => /^\..+\.tw-\d+-[0-9a-f]{12}\.tmp$/.test(name)

const statOrUndefined = (file: string) =>
  Effect.promise(() => fs.stat(file).then((stats) => stats, () => undefined))

/**
 * Replaces `target` with `data` atomically. An existing target keeps its permission bits (and, when the
 * process may, its owner); a new file gets the default mode under the umask. The parent directory must
 * exist. Runs uninterruptibly: once started, the call either replaces the file or leaves it untouched.
 */
export const writeFileAtomic = (
  target: string,
  data: Uint8Array,
  options: WriteOptions = {}
): Effect.Effect<void, AtomicWriteError | AtomicWriteTargetExists> =>
  Effect.gen(function*() {
    const fail = (what: string) => (cause: unknown) =>
      new AtomicWriteError({ path: target, message: `Could not write ${target}: ${what}: ${describe(cause)}` })
    const existing = yield* statOrUndefined(target)
    if (options.createOnly === true && existing !== undefined) {
      return yield* new AtomicWriteTargetExists({ path: target })
    }
    if (existing?.isDirectory()) {
      return yield* new AtomicWriteError({ path: target, message: `Could not write ${target}: it is a directory` })
    }
    // A rename needs only the directory's permission, so it would replace a file its owner made read-only:
    // refuse what an in-place write could not do, and (since root may write anything) files with no write bit.
    if (existing !== undefined) {
      const writable = yield* Effect.promise(() => fs.access(target, fs.constants.W_OK).then(() => true, () => false))
      if (!writable || (existing.mode & 0o222) === 0) {
        const mode = (existing.mode & 0o7777).toString(8).padStart(4, "0")
        return yield* new AtomicWriteError({
          path: target,
          message: `Could not write ${target}: the file is read-only (mode ${mode}). Make it writable first ` +
            "(chmod u+w) if it should change."
        })
      }
    }
    const temp = tempPathFor(target)

    const writeTemp = Effect.acquireUseRelease(
      Effect.tryPromise({ try: () => fs.open(temp, "wx", 0o666), catch: fail("creating a temp file") }),
      (handle) =>
        Effect.gen(function*() {
          yield* Effect.tryPromise({ try: () => handle.writeFile(data), catch: fail("writing the temp file") })
          if (existing !== undefined) {
            yield* Effect.tryPromise({
              try: () => handle.chmod(existing.mode & 0o7777),
              catch: fail("keeping the file's mode")
            })
            // Only root may give a file away; anyone else keeps their own ownership, as an editor would.
            if (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.()) {
              yield* Effect.promise(() => handle.chown(existing.uid, existing.gid).catch(() => undefined))
            }
          }
          yield* Effect.tryPromise({ try: () => handle.sync(), catch: fail("flushing the temp file to disk") })
        }),
      (handle) => Effect.promise(() => handle.close().catch(() => undefined))
    )
    const rename = Effect.tryPromise({ try: () => fs.rename(temp, target), catch: fail("renaming the temp file") })
    // link(2) fails with EEXIST instead of replacing; the temp name is then removed below like any leftover.
    const link = Effect.tryPromise({
      try: () =>
        fs.link(temp, target).then(() => true, (cause: unknown) => {
          if (NO_HARD_LINKS.has(errnoCode(cause) ?? "")) return false
          return Promise.reject(cause)
        }),
      catch: (cause) =>
        errnoCode(cause) === "EEXIST"
          ? new AtomicWriteTargetExists({ path: target })
          : fail("linking the temp file")(cause)
    }).pipe(
      Effect.flatMap((linked) =>
        linked ? Effect.promise(() => fs.rm(temp, { force: true }).catch(() => undefined)) : rename
      )
    )
    const publish = options.createOnly === true ? link : rename

    yield* writeTemp.pipe(
      Effect.zipRight(publish),
      Effect.tapError(() => Effect.promise(() => fs.rm(temp, { force: true }).catch(() => undefined)))
    )
    // Persist the rename itself; some filesystems cannot fsync a directory, and the data is already safe.
    yield* Effect.promise(() =>
      fs.open(path.dirname(target), "r").then(
        (dir) => dir.sync().finally(() => dir.close()).catch(() => undefined),
        () => undefined
      )
    )
  }).pipe(Effect.uninterruptible, Effect.withSpan("atomicWrite.writeFileAtomic"))
