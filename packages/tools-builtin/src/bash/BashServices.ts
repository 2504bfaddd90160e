/**
 * The services the Bash and task tools need, as one layer for the built-in plugin: the session's shell
 * state (cwd, settings `env`, kill grace), the background tasks, the sandbox and the loaded bash grammar.
 * Built once per runtime; closing it kills every task still running and stops the sandbox.
 */
import { Duration, Effect, Layer } from "effect"
import * as CommandSemantics from "./commandSemantics.js"
import * as TaskManager from "../tasks/TaskManager.js"
import * as Sandbox from "./Sandbox.js"
import * as ShellProcess from "./ShellProcess.js"
import * as Spawner from "./Spawner.js"
import * as ShellState from "./ShellState.js"

export type BashServices = ShellState.ShellState | TaskManager.TaskManager | Sandbox.Sandbox

export interface Options extends ShellState.Options {
  /** Settings `sandbox`: run every command under the sandbox runtime (off by default). */
  readonly sandbox?: Sandbox.Settings
}

/** Every service the shell tools need; `options.env` is settings `env`. */
export const layer = (options: Options = {}): Layer.Layer<BashServices> =>
  // The bash grammar (~55 ms of CPU, and wasm memory that brings on a full GC) loads in the background
  // once the start is over, so an MCP client's `tools/list` or a short command does not wait behind it; a
  // Bash call before then loads it at once (validateInput waits for it). Until it is in, lines analyse as
  // opaque (not read-only, not concurrency-safe, asking), so a command is never judged without it. The
  // preload ends with the layer: a command that is done does not stay alive to load it.
  Layer.mergeAll(
    ShellState.layer(options),
    TaskManager.layer,
    Sandbox.layer(options.sandbox),
    Layer.scopedDiscard(Effect.forkScoped(Effect.delay(
      Effect.zipRight(
        // The spawner helper starts then too (sandboxed commands are spawned here, without it).
        options.sandbox?.enabled === true ? Effect.void : Effect.sync(() => Spawner.warm(ShellProcess.shellStateDir())),
        CommandSemantics.load
      ),
      Duration.millis(PRELOAD_AFTER_MS)
    )))
  )

/** How long after the layer is built the grammar starts loading by itself. */
export const PRELOAD_AFTER_MS = 300
