/**
 * Options every command shares (`--cwd`, `--settings`, `--permission-mode`), declared once so each
 * command reads them the same way.
 */
import { Options } from "@effect/cli"
import { Permission } from "@toolwright/core"

export const cwd = Options.directory("cwd", { exists: "yes" }).pipe(
  Options.withDescription("The working directory for tools and project files (default: the current directory)"),
  Options.optional
)

export const settings = Options.file("settings", { exists: "yes" }).pipe(
  Options.withDescription("A settings file applied over the user and project settings"),
  Options.optional
)

export const permissionMode = Options.choice("permission-mode", Permission.PermissionMode.literals).pipe(
  Options.withDescription("default | acceptEdits | plan | dontAsk | bypassPermissions"),
  Options.optional
)

export const allow = Options.text("allow").pipe(
  Options.withDescription("A permission rule to allow, as in settings (repeatable): --allow 'Bash(npm test)'"),
  Options.repeated
)

export const deny = Options.text("deny").pipe(
  Options.withDescription("A permission rule to deny, as in settings (repeatable): --deny 'Bash(rm *)'"),
  Options.repeated
)

export const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of text"))

/** The options that shape a session (where, which settings, which rules): every command that runs tools. */
export const session = { cwd, settings, permissionMode, allow, deny }
