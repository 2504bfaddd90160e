/**
 * Finds and loads the settings of a CLI session, lowest to highest: `~/.toolwright/settings.json`,
 * `<cwd>/.toolwright/settings.json`, `<cwd>/.toolwright/settings.local.json`, `--settings FILE`, then the
 * flags (`--allow`, `--deny`, `--permission-mode`). A missing file is skipped; an unreadable or invalid one
 * stops the CLI with a usage error naming the file and the field, rather than running with a policy the
 * user did not write.
 */
import { FileSystem } from "@effect/platform"
import type { Permission } from "@toolwright/core"
import { Settings } from "@toolwright/core"
import { Effect, Either } from "effect"
import * as path from "node:path"
import { UsageError } from "./CliError.js"

export interface LoadOptions {
  readonly cwd: string
  readonly home: string
  readonly settingsFile?: string | undefined
  readonly permissionMode?: Permission.PermissionMode | undefined
  /** `--allow` / `--deny` rules from the command line. */
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}

/** One place settings may come from, and the directory its `/path` rules are relative to. */
export interface Candidate {
  readonly file: string
  readonly root: string
  /** `--settings FILE` must exist; the discovered files are optional. */
  readonly required: boolean
}

/** The files a session reads, lowest first. */
export const candidates = (options: LoadOptions): ReadonlyArray<Candidate> =>
  dropShadowed([
  {
    file: path.join(options.home, ".toolwright", "settings.json"),
    root: path.join(options.home, ".toolwright"),
    required: false
  },
  { file: path.join(options.cwd, ".toolwright", "settings.json"), root: options.cwd, required: false },
  { file: path.join(options.cwd, ".toolwright", "settings.local.json"), root: options.cwd, required: false },
  ...(options.settingsFile === undefined ? [] : [(() => {
    const file = path.resolve(options.cwd, options.settingsFile)
    return { file, root: path.dirname(file), required: true }
  })()])
])

/**
 * A file named twice (the project is the home directory, or `--settings` names a project file) is read
 * once, as its highest source: read twice, its rules would be listed twice and its hooks run twice.
 */
const dropShadowed = (list: ReadonlyArray<Candidate>): ReadonlyArray<Candidate> =>
  list.filter((candidate, index) => !list.slice(index + 1).some((later) => later.file === candidate.file))

/** Reads and validates every settings file of the session and merges them with the flags. */
export const load = (options: LoadOptions): Effect.Effect<Settings.Resolved, UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const sources: Array<Settings.Source> = []
    for (const candidate of candidates(options)) {
      const exists = yield* fs.exists(candidate.file).pipe(Effect.orElseSucceed(() => false))
      if (!exists) {
        if (candidate.required) {
          return yield* new UsageError({
            message: `Settings file not found: ${candidate.file}. Check the --settings path.`
          })
        }
        continue
      }
      const text = yield* fs.readFileString(candidate.file).pipe(
        Effect.mapError((error) =>
          new UsageError({
            message: `Cannot read settings file ${candidate.file}: ${error.message}. Fix its permissions or remove it.`
          })
        )
      )
      const decoded = Settings.decodeText(candidate.file, text)
      if (Either.isLeft(decoded)) {
        return yield* new UsageError({
          message: `${decoded.left.message}. Fix the file; toolwright does not start with settings it cannot read.`
        })
      }
      sources.push({ name: candidate.file, settings: decoded.right, root: candidate.root })
    }
    const allow = options.allow ?? []
    const deny = options.deny ?? []
    if (allow.length > 0 || deny.length > 0) {
      const decoded = Settings.decode("the --allow/--deny flags", { permissions: { allow, deny } })
      if (Either.isLeft(decoded)) return yield* new UsageError({ message: decoded.left.message })
      sources.push({ name: "--allow/--deny", settings: decoded.right, root: options.cwd })
    }
    const resolved = Settings.merge(sources, {
      cwd: options.cwd,
      homeDir: options.home,
      ...(options.permissionMode !== undefined ? { mode: options.permissionMode } : {})
    })
    // Claude Code's switch to forbid bypass mode, from any file: honoured, never silently downgraded.
    const forbidding = sources.find((source) =>
      source.settings.permissions?.disableBypassPermissionsMode === "disable"
    )
    if (resolved.permissionContext.mode === "bypassPermissions" && forbidding !== undefined) {
      return yield* new UsageError({
        message: "bypassPermissions mode is disabled by permissions.disableBypassPermissionsMode in " +
          `${forbidding.name}. Choose another --permission-mode or defaultMode.`
      })
    }
    return resolved
  })
