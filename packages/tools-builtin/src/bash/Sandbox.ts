/**
 * The optional sandbox for Bash (settings `sandbox.enabled`): each command runs under
 * `@anthropic-ai/sandbox-runtime` (bubblewrap for the filesystem, a filtering proxy reached through socat for
 * the network), writes allowed only in the session's cwd and `filesystem.allowWrite`, reads refused under
 * `filesystem.denyRead`, network only to `network.allowedDomains`. When it is enabled but cannot work (bwrap,
 * socat or ripgrep missing), commands are refused with what to install, unless the user allowed running
 * them unsandboxed. Off by default: then it wraps nothing.
 */
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime"
import { Context, Data, Effect, Layer, Schema } from "effect"
import { ToolPlugin } from "@toolwright/core"
import { rgPath } from "../internal/ripgrep.js"
import { shellStateDir } from "./ShellProcess.js"

/**
 * Settings `sandbox`, in Claude Code's shape, for a settings loader to decode (keys it does not know are
 * left alone). `allowUnsandboxed` runs commands without the sandbox when it cannot start.
 */
export const SettingsSchema = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  network: Schema.optional(Schema.Struct({ allowedDomains: Schema.optional(Schema.Array(Schema.String)) })),
  filesystem: Schema.optional(Schema.Struct({
    allowWrite: Schema.optional(Schema.Array(Schema.String)),
    denyRead: Schema.optional(Schema.Array(Schema.String))
  })),
  allowUnsandboxed: Schema.optional(Schema.Boolean)
})

export interface Settings extends Schema.Schema.Type<typeof SettingsSchema> {
  /** The ripgrep the sandbox uses to find protected files (default: the one `@vscode/ripgrep` ships). */
  readonly ripgrepCommand?: string
}

/** The sandbox is enabled but cannot run: the command is refused, with what to do. */
export class SandboxUnavailable extends Data.TaggedError("SandboxUnavailable")<{ readonly message: string }> {}

export interface Service {
  readonly enabled: boolean
  /**
   * The command line that runs `script` (a bash command line) inside the sandbox, with `cwd` writable;
   * `script` itself when the sandbox is off (or unavailable and the user allowed running unsandboxed).
   */
  readonly wrap: (script: string, cwd: string) => Effect.Effect<string, SandboxUnavailable>
  /** Adds the sandbox's explanation to the output of a failed command. */
  readonly annotate: (command: string, output: string) => string
}

export class Sandbox extends Context.Tag("@toolwright/tools-builtin/Sandbox")<Sandbox, Service>() {}

const off: Service = { enabled: false, wrap: (script) => Effect.succeed(script), annotate: (_, output) => output }

const SIGNS = /Read-only file system|Permission denied|Operation not permitted|Could not resolve (proxy|host)|403/

const make = (settings: Settings) =>
  Effect.gen(function*() {
    if (settings.enabled !== true) return off
    // Loaded only when enabled: the runtime (and its TLS stack) would cost every start tens of milliseconds.
    const { SandboxManager } = yield* Effect.promise(() => ToolPlugin.importModule("@anthropic-ai/sandbox-runtime", () => import("@anthropic-ai/sandbox-runtime")))
    const ripgrep = { command: settings.ripgrepCommand ?? (yield* Effect.promise(rgPath)) }
    const supported = SandboxManager.isSupportedPlatform()
    const dependencies = supported ? SandboxManager.checkDependencies(ripgrep) : { errors: ["an unsupported platform"] }
    if (dependencies.errors.length > 0) {
      const message = `Bash is set to run commands in a sandbox (settings sandbox.enabled), but the sandbox cannot ` +
        `start: ${dependencies.errors.join(", ")}. Install what is missing (apt-get install bubblewrap socat), or ` +
        `set sandbox.enabled to false, or sandbox.allowUnsandboxed to true to run commands without it.`
      if (settings.allowUnsandboxed === true) {
        yield* Effect.logWarning(`${message} Running commands unsandboxed, as sandbox.allowUnsandboxed says.`)
        return off
      }
      return { ...off, enabled: true, wrap: () => Effect.fail(new SandboxUnavailable({ message })) } satisfies Service
    }
    const allowWrite = [...(settings.filesystem?.allowWrite ?? []), shellStateDir()]
    const denyRead = [...(settings.filesystem?.denyRead ?? [])]
    const allowedDomains = [...(settings.network?.allowedDomains ?? [])]
    const config: SandboxRuntimeConfig = {
      ripgrep,
      network: { allowedDomains, deniedDomains: [] },
      filesystem: { allowWrite, denyRead, denyWrite: [] }
    }
    yield* Effect.acquireRelease(
      Effect.promise(() => SandboxManager.initialize(config)),
      () => Effect.promise(() => SandboxManager.reset())
    )
    const note = `[sandbox] This command ran in a sandbox: it may write only in the working directory, ` +
      `${shellStateDir()}` +
      `${allowWrite.length > 1 ? ` and ${allowWrite.slice(0, -1).join(", ")}` : ""}, may not read ${
        denyRead.length === 0 ? "nothing extra" : denyRead.join(", ")
      }, and may reach only ${allowedDomains.length === 0 ? "no network host" : allowedDomains.join(", ")}. ` +
      `An operation outside that fails as above; ask the user to change settings sandbox if it is needed.`
    return {
      enabled: true,
      wrap: (script, cwd) =>
        Effect.promise(() =>
          SandboxManager.wrapWithSandbox(AWAIT_PROXIES + script, "bash", {
            ...config,
            filesystem: { allowWrite: [...allowWrite, cwd], denyRead, denyWrite: [] }
          })
        ),
      annotate: (command, output) => {
        const annotated = SandboxManager.annotateStderrWithSandboxFailures(command, output)
        return SIGNS.test(annotated) ? `${annotated}\n${note}` : annotated
      }
    } satisfies Service
  })

/**
 * Inside the sandbox the runtime starts its relays to the network proxies (socat listening on :3128 and :1080)
 * in the background right before the command, so a command that goes online at once could find nothing
 * listening (curl: exit 7, "Couldn't connect to server"). The command first waits, at most 2 s, until both
 * listen, read from the namespace's /proc/net/tcp (no connection is made); the variable is gone before it runs.
 */
const AWAIT_PROXIES = "__tw_wait=0\n" +
  "while [ \"$__tw_wait\" -lt 200 ] && ! { grep -qs ' 00000000:0C38 00000000:0000 0A' /proc/net/tcp && " +
  "grep -qs ' 00000000:0438 00000000:0000 0A' /proc/net/tcp; }; do sleep 0.01; __tw_wait=$((__tw_wait + 1)); done\n" +
  "unset __tw_wait\n"

/** The sandbox of a runtime per settings `sandbox`; closing it stops the sandbox's proxies. */
export const layer = (settings: Settings = {}): Layer.Layer<Sandbox> => Layer.scoped(Sandbox, make(settings))
