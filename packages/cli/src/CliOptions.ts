/**
 * Options every command shares (`--cwd`, `--settings`, `--permission-mode`), declared once so each
 * command reads them the same way.
 */
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect } from "effect"
import { Permission } from "@toolwright/core"

export const cwd = Options.directory("cwd", { exists: "yes" }).pipe(
  Options.withDescription("The working directory for tools and project files (default: the current directory)"),
  Options.optional
)

export const settings = Options.file("settings", { exists: "yes" }).pipe(
  Options.withDescription("A settings file applied over the user and project settings"),
  Options.optional
)

const modes = Permission.PermissionMode.literals

/** A mode; any other value is refused naming the option (the choice parser's text does not). */
export const permissionMode = Options.text("permission-mode").pipe(
  Options.withDescription(modes.join(" | ")),
  Options.mapEffect((value) =>
    (modes as ReadonlyArray<string>).includes(value)
      ? Effect.succeed(value as Permission.PermissionMode)
      : Effect.fail(
        ValidationError.invalidValue(
          HelpDoc.p(`--permission-mode ${JSON.stringify(value)} is not a permission mode: use one of ${modes.join(", ")}`)
        )
      )
  ),
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
