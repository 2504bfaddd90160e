/**
 * The services the Bash and task tools need, as one layer for the built-in plugin: the session's shell
 * state (cwd, settings `env`, kill grace), the background tasks, the sandbox and the loaded bash grammar.
 * Built once per runtime; closing it kills every task still running and stops the sandbox.
 */
import { Effect, Layer } from "effect"
import * as CommandSemantics from "./commandSemantics.js"
import * as TaskManager from "../tasks/TaskManager.js"
import * as Sandbox from "./Sandbox.js"
import * as ShellState from "./ShellState.js"

export type BashServices = ShellState.ShellState | TaskManager.TaskManager | Sandbox.Sandbox

export interface Options extends ShellState.Options {
  /** Settings `sandbox`: run every command under the sandbox runtime (off by default). */
  readonly sandbox?: Sandbox.Settings
}

/** Every service the shell tools need; `options.env` is settings `env`. */
export const layer = (options: Options = {}): Layer.Layer<BashServices> =>
  // The bash grammar starts loading with the layer but does not hold it up (~55 ms of every CLI start): until
  // it is in, lines analyse as opaque (not read-only, not concurrency-safe, asking), and Bash's validateInput
  // waits for it, so a command is never judged without it.
  Layer.mergeAll(
    ShellState.layer(options),
    TaskManager.layer,
    Sandbox.layer(options.sandbox),
    Layer.effectDiscard(Effect.forkDaemon(CommandSemantics.load))
  )
